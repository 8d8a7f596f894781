"""Running test code in a fresh interpreter.

Which runtime serves libtvm_ffi.so is process state, and upstream's library
must never share a process with ours, so such tests run their code here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Dict, Optional


def run_python(code: str, timeout: float = 120, env: Optional[Dict[str, str]] = None) -> str:
    """Runs dedented ``code`` with this interpreter (``env`` added to this process's
    environment); returns stdout, fails on a nonzero exit."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=timeout,
        env=dict(os.environ, **env) if env else None,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"subprocess exited with {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
    return done.stdout


#: How each implementation is imported as ``api`` in a child process.
IMPORTS = {"upstream": "import tvm_ffi as api", "ref": "import tvm_ffi_ref as api",
           "fast": "import tvm_ffi_fast as api"}


def run_under_each(body: str, library: str = "") -> dict:
    """Runs dedented ``body`` under upstream, ref and fast, each in its own process, with
    ``api`` (and, given a library, ``lib`` loaded from it and ``LIB_PATH``); outputs by name."""
    out = {}
    for name, line in IMPORTS.items():
        head = line + "\n"
        if library:
            head += f"lib = api.load_module({library!r})\nLIB_PATH = {library!r}\n"
        out[name] = run_python(head + textwrap.dedent(body))
    return out


def same_as_upstream(outputs: dict) -> str:
    """Asserts that ref's and fast's outputs equal upstream's; returns upstream's."""
    for name in ("ref", "fast"):
        assert outputs[name] == outputs["upstream"], (name, outputs[name], outputs["upstream"])
    return outputs["upstream"]
