"""Not here: tvm_ffi_fast's runtime is C (``src/``), installed by ``import tvm_ffi_fast``.

This module exists so that ``tvm_ffi_fast.runtime`` cannot resolve, through
the ``__path__`` entry that shares tvm_ffi_ref's API modules, to the
reference runtime's package run as part of this one.
"""

raise ImportError("tvm_ffi_fast has no Python runtime: its runtime is the C in tvm_ffi_fast/src, "
                  "installed by `import tvm_ffi_fast`; the reference runtime is tvm_ffi_ref.runtime")
