"""Running test code in a fresh interpreter.

Which runtime serves libtvm_ffi.so is process state, and upstream's library
must never share a process with ours, so such tests run their code here.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_python(code: str, timeout: float = 120) -> str:
    """Runs dedented ``code`` with this interpreter; returns stdout, fails on a nonzero exit."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=timeout,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"subprocess exited with {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
    return done.stdout
