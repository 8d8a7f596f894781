"""Upstream's ``tvm_ffi.stub``: type stubs for the functions and types TVM FFI libraries register.

``tvm-ffi-stubgen`` (:mod:`.cli`) rewrites the ``tvm-ffi-stubgen`` blocks of a
package's source files from the loaded registry, and with ``--init-*``
scaffolds the files a new package needs. The pipeline and its records are
language-neutral (:mod:`.utils`, :mod:`.file_utils`, :mod:`.lib_state`,
:mod:`.layout`); the text is a target's (:mod:`.python_generator`).
"""
