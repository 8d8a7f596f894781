"""Every command line of the project answers bad input with one line and a non-zero exit.

The same set of bad inputs (a missing file, a directory where a file goes, an
output path that cannot be written, a file that is not a shared library, a
bad number, an unknown option) is fed to each CLI: ``tvm-ffi-check``,
``tvm-ffi-explain``, ``tvm-ffi-demo`` and the stub generator. Each must print
exactly one line on stderr naming the argument or path at fault, no
traceback, and exit non-zero (2 for usage errors).

The stub generator is run through its function, not its console script (whose
name may change: it collides with upstream's ``tvm-ffi-stubgen``).

``python tests/test_cli_bad_input.py`` prints the table of what each CLI says.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import List, NamedTuple, Tuple

import pytest

#: A file that exists but is not a shared library, and a directory.
_TEXT_FILE = os.path.abspath(__file__)
_DIRECTORY = os.path.dirname(_TEXT_FILE)
_MISSING = "/nonexistent/tvm-ffi-bad-input/lib.so"
#: A path that exists but cannot be written, even by root.
_UNWRITABLE = "/proc/version"

_CHECK = ["-m", "tvm_ffi_check"]
_EXPLAIN = ["-m", "tvm_ffi_explain"]
_DEMO = ["-m", "tvm_ffi_explain.demo"]
_STUBGEN = ["-c", "import sys; sys.argv[0] = 'tvm-ffi-stubgen'; "
                  "from tvm_ffi_common.console import stubgen; stubgen()"]


class Case(NamedTuple):
    cli: str
    command: List[str]
    args: List[str]
    #: A word the one line must contain (the argument or the path at fault).
    names: str
    #: The exit status expected, or 0 for "any non-zero".
    status: int = 2


def _cases() -> List[Case]:
    cases = [
        Case("tvm-ffi-check", _CHECK, [_MISSING], _MISSING),
        Case("tvm-ffi-check", _CHECK, [_DIRECTORY], _DIRECTORY),
        Case("tvm-ffi-check", _CHECK, [_TEXT_FILE], _TEXT_FILE),
        Case("tvm-ffi-check", _CHECK, ["--json", _UNWRITABLE], _UNWRITABLE),
        Case("tvm-ffi-check", _CHECK, ["--junit-xml", _UNWRITABLE], _UNWRITABLE),
        Case("tvm-ffi-check", _CHECK, ["--junit-xml", _DIRECTORY], _DIRECTORY),
        Case("tvm-ffi-check", _CHECK, ["--json", _MISSING], _MISSING),
        Case("tvm-ffi-check", _CHECK, ["--examples", "abc"], "--examples"),
        Case("tvm-ffi-check", _CHECK, ["--examples", "0"], "--examples"),
        Case("tvm-ffi-check", _CHECK, ["--timeout", "soon"], "--timeout"),
        Case("tvm-ffi-check", _CHECK, ["--threads", "x"], "--threads"),
        Case("tvm-ffi-check", _CHECK, ["--limit-memory", "lots"], "--limit-memory"),
        Case("tvm-ffi-check", _CHECK, ["--bogus"], "--bogus"),
        Case("tvm-ffi-explain", _EXPLAIN, ["1", "--svg", _UNWRITABLE], _UNWRITABLE),
        Case("tvm-ffi-explain", _EXPLAIN, ["1", "--svg", _MISSING], _MISSING),
        Case("tvm-ffi-explain", _EXPLAIN, ["1", "--svg", _DIRECTORY], _DIRECTORY),
        Case("tvm-ffi-explain", _EXPLAIN, ["--trace", "demo.kernels().add_int(1, 2)",
                                           "--svg", _UNWRITABLE], _UNWRITABLE),
        Case("tvm-ffi-explain", _EXPLAIN, ["1", "--max-items", "abc"], "--max-items"),
        Case("tvm-ffi-explain", _EXPLAIN, ["1", "--depth", "-1"], "--depth"),
        Case("tvm-ffi-explain", _EXPLAIN, ["load_module('" + _MISSING + "')"], _MISSING),
        Case("tvm-ffi-explain", _EXPLAIN, ["--bogus"], "--bogus"),
        Case("tvm-ffi-demo", _DEMO, ["--bogus"], "--bogus"),
        Case("tvm-ffi-demo", _DEMO, [_MISSING], _MISSING),
        Case("stubgen", _STUBGEN, ["--dlls", _MISSING, _DIRECTORY], _MISSING),
        Case("stubgen", _STUBGEN, ["--dlls", _DIRECTORY, _DIRECTORY], _DIRECTORY),
        Case("stubgen", _STUBGEN, ["--dlls", _TEXT_FILE, _DIRECTORY], _TEXT_FILE),
        Case("stubgen", _STUBGEN, [_MISSING], _MISSING),
        Case("stubgen", _STUBGEN, ["--coverage-out", _UNWRITABLE], _UNWRITABLE),
        Case("stubgen", _STUBGEN, ["--indent", "abc", _DIRECTORY], "--indent"),
        Case("stubgen", _STUBGEN, ["--bogus"], "--bogus"),
    ]
    return cases


CASES = _cases()


def run_case(case: Case, cwd: str) -> Tuple[int, str]:
    """The exit status and stderr of one bad-input run (the test's temp dir as cwd)."""
    done = subprocess.run([sys.executable, *case.command, *case.args], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env=dict(os.environ, NO_COLOR="1", TERM="dumb"))
    return done.returncode, done.stderr


@pytest.mark.parametrize("case", CASES, ids=[f"{c.cli} {' '.join(c.args)}" for c in CASES])
def test_bad_input_gets_one_line_and_a_nonzero_exit(case, tmp_path):
    status, stderr = run_case(case, str(tmp_path))
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    assert case.names in lines[0], lines[0]
    assert lines[0].startswith(f"{case.cli if case.cli != 'stubgen' else 'tvm-ffi-stubgen'}: ")
    assert status == case.status if case.status else status != 0, (status, stderr)
    assert not os.listdir(tmp_path), os.listdir(tmp_path)  # nothing left behind


def _table() -> str:
    rows = ["| CLI | input | stderr (first line; lines) | exit |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as cwd:
        for case in CASES:
            status, stderr = run_case(case, cwd)
            lines = stderr.strip().splitlines() or [""]
            shown = lines[-1] if "Traceback" in stderr else lines[0]
            traceback = " (traceback)" if "Traceback" in stderr else ""
            rows.append(f"| {case.cli} | `{' '.join(case.args)}` | "
                        f"`{shown[:150]}`; {len(lines)}{traceback} | {status} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(_table())
