"""benchmarks/bench_limits.py, the limit rows, run small: the plain C library is built, the fast
front end and the raw ctypes/cffi calls are timed side by side with ratios, and a binding that
is not installed is skipped with the reason (the nanobind and pybind11 modules themselves are
not built here: compiling nanobind takes a minute; ``pip install -e '.[bench]'`` and the
benchmark build them).
"""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks",
                      "bench_limits.py")
SHAPES = ("no-op call", "two ints", "two floats", "short str echo")


def run(args, tmp_path, prelude=""):
    code = (f"import runpy, sys\n{prelude}sys.argv = {[SCRIPT, *args]!r}\n"
            f"runpy.run_path({SCRIPT!r}, run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_limit_rows_time_fast_beside_raw_calls(tmp_path):
    out = run(["--runners", "fast", "fast-held", "ctypes", "cffi", "--rounds", "1",
               "--repeat", "1", "--scale", "0.1", "--cache", str(tmp_path / "cache")], tmp_path)
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["shape", "fast_ns", "fast-held_ns", "ctypes_ns", "cffi_ns"]
    for shape in SHAPES:
        row = next(line for line in lines if line.startswith(shape))
        cells = row[len(shape):].split()
        assert all(float(cell) > 0 for cell in cells[:4]), row
    assert "skipped" not in out


def test_a_binding_that_is_not_installed_is_skipped_with_the_reason(tmp_path):
    # sys.modules[name] = None makes the import fail as a missing package does
    out = run(["--runners", "fast", "nanobind", "pybind11", "--rounds", "1", "--repeat", "1",
               "--scale", "0.1", "--cache", str(tmp_path / "cache")], tmp_path,
              prelude="sys.modules['nanobind'] = sys.modules['pybind11'] = None\n")
    assert "skipped nanobind: nanobind is not installed" in out
    assert "skipped pybind11: pybind11 is not installed" in out
    assert "pip install -e '.[bench]'" in out
    row = next(line for line in out.splitlines() if line.startswith("two ints"))
    assert row.split()[2:5] == [row.split()[2], "n/a", "n/a"] and float(row.split()[2]) > 0
