"""The C++ demo extension both ``test_cpp_extension`` and ``test_stubgen`` build, once.

Both run :func:`build_snippet` with the same arguments in the same cache
directory (the session's ``cpp_cache_dir``), so the C++ compile (the slow
part) happens once per session whichever test comes first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Dict, Optional, Tuple

#: The demo's source (functions exported by name, globals and a type registered at load).
DEMO_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels", "stub_demo.cc")

#: What ``functions=`` exports, with docstrings.
DEMO_FUNCTIONS = {"add": "Adds two integers.\nReturns a + b.", "greet": "", "scale_sum": ""}


def build_snippet(api: str, variable: str = "lib_path") -> str:
    """Python source that builds the demo with ``<api>.cpp.build_inline`` into ``variable``."""
    return textwrap.dedent(f"""
        with open({DEMO_SOURCE!r}) as _f:
            _demo_source = _f.read()
        {variable} = {api}.cpp.build_inline(
            "stubdemo", cpp_sources=_demo_source, functions={DEMO_FUNCTIONS!r},
            extra_cflags=["-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1"])
    """)


def run(code: str, cache_dir: str, env: Optional[Dict[str, str]] = None,
        timeout: float = 600, check: bool = True) -> Tuple[str, str]:
    """Runs dedented ``code`` in a fresh interpreter with ``TVM_FFI_CACHE_DIR=cache_dir``;
    returns (stdout, stderr); fails on a nonzero exit when ``check``."""
    full_env = {k: v for k, v in os.environ.items() if k != "TVM_FFI_IMPL"}
    full_env.update(TVM_FFI_CACHE_DIR=cache_dir, **(env or {}))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=full_env)
    if check and done.returncode != 0:
        raise AssertionError(f"subprocess exited with {done.returncode}\n--- stdout\n"
                             f"{done.stdout}\n--- stderr\n{done.stderr}")
    return done.stdout, done.stderr
