"""Instructions per call in the benchmarks (benchmarks/instruction_counts.py, ``--instructions``
of bench_calls.py and bench_limits.py): one cheap call counted under callgrind (or hardware
counters where valgrind is absent), its count positive, the same twice, and clearly larger for
a body that does the call twice; the limit-row table prints the counts beside the times; and
with no counter source the columns say ``n/a`` and why.

Each counting process runs Python under valgrind (about 5-10 s here), so the rows are few.
Skipped only where valgrind is not installed and the machine has no hardware counter (a VM
that does not expose them): .ci/run installs valgrind where it can.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")
sys.path.insert(0, BENCH)
import bench_calls  # noqa: E402
import instruction_counts  # noqa: E402
from test_bench_limits import run as run_limits  # noqa: E402  (bench_limits.py in a child)

sys.path.remove(BENCH)

#: Counted in a worker: add_int(1, 2) through tvm_ffi_fast twice, then a body that calls it
#: twice; prints the three counts and the loop's own cost as JSON.
WORKER = """
import json, sys
sys.path.insert(0, {bench!r})
import bench_calls, instruction_counts
import tvm_ffi_fast
add = tvm_ffi_fast.load_module({library!r}).add_int
assert add(1, 2) == 3
counter = instruction_counts.worker_counter()
loop = bench_calls._timing_loop
once = [counter.count(loop, "add", lambda: add(1, 2), 100) for _ in range(2)]
twice = counter.count(loop, "add twice", lambda: (add(1, 2), add(3, 4)), 100)
print(json.dumps({{"instr": {{"once": once, "twice": twice}}, "loop": counter.loop_per_iteration}}))
"""


def _source():
    """callgrind where valgrind is installed (exact counts), else hardware counters."""
    for wanted in (instruction_counts.CALLGRIND, instruction_counts.PERF):
        kind, _ = instruction_counts.choose(wanted)
        if kind is not None:
            return kind
    pytest.skip("no instruction counter here: " + instruction_counts.choose("auto")[1])


def test_a_call_counts_the_same_twice_and_two_calls_count_more(tmp_path):
    kind = _source()
    library = bench_calls.build_kernels(sys.executable)
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(bench=BENCH, library=library))
    got = instruction_counts.count_process(kind, [sys.executable, str(script)],
                                           str(tmp_path / "cache"))
    assert "skip" not in got, got
    (first, second), twice = got["instr"]["once"], got["instr"]["twice"]
    # the loop's own step (an empty lambda's call) is a few hundred instructions
    assert 50 < got["loop"] < 5000, got
    assert first > 100, got
    # callgrind is exact (up to a few instructions of allocator state); hardware counts wander
    tolerance = 5 if kind == instruction_counts.CALLGRIND else 0.02 * first
    assert abs(first - second) <= tolerance, got
    assert twice - first > 0.8 * first, got


def test_the_limit_table_prints_counts_beside_times(tmp_path):
    kind = _source()
    out = run_limits(["--runners", "ctypes", "--rounds", "1", "--repeat", "1",
                       "--scale", "0.02", "--instructions", kind,
                       "--cache", str(tmp_path / "cache"), "--json", str(tmp_path / "r.json")],
                      tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith(f"instructions per call (*_instr): {kind}"), out
    header = next(line for line in lines if line.startswith("shape"))
    assert header.split() == ["shape", "ctypes_ns", "ctypes_instr"]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["instructions"]["kind"] == kind
    for row in report["rows"]:
        assert row["ctypes_instr"] > 0 and row["ctypes_ns"] > 0, row
    # ctypes converts its arguments through argtypes: two ints cost it more than no argument
    rows = {row["shape"]: row for row in report["rows"]}
    assert rows["two ints"]["ctypes_instr"] > rows["no-op call"]["ctypes_instr"] + 100, rows
    assert set(report["instructions"]["seconds"]) == {"ctypes"}
    assert 0 < report["instructions"]["loop_per_iteration"]["ctypes"] < 5000


def test_without_a_counter_the_columns_say_na_and_why(tmp_path):
    # callgrind asked for, and valgrind hidden from the script
    prelude = ("import shutil\n_which = shutil.which\n"
               "shutil.which = lambda name, *a, **k: None if name == 'valgrind' "
               "else _which(name, *a, **k)\n")
    out = run_limits(["--runners", "ctypes", "--rounds", "1", "--repeat", "1", "--scale",
                       "0.02", "--instructions", "callgrind", "--cache", str(tmp_path / "cache")],
                      tmp_path, prelude)
    assert out.splitlines()[0] == ("instructions per call: n/a (valgrind is not installed "
                                   "(apt-get install valgrind))"), out
    row = next(line for line in out.splitlines() if line.startswith("two ints"))
    assert row.split()[2:] == [row.split()[2], "n/a"] and float(row.split()[2]) > 0


def test_the_status_line_adds_instruction_ratios_only_when_counted():
    sys.path.insert(0, BENCH)
    try:
        import status_line
    finally:
        sys.path.remove(BENCH)
    calls = {"summary": {"fast/upstream geomean": 0.5, "ref/upstream geomean": 20.0},
             "rows": [{"shape": "no-op call", "fast/upstream": 0.61},
                      {"shape": "two floats", "fast/upstream": 0.4}]}
    limits = {"summary": {"fast/nanobind geomean": 1.4, "fast/nanobind max": 1.7}}
    plain = status_line.status_line(calls, limits)
    assert plain == ("Benchmarks, one run: fast/upstream geomean 0.50, worst 0.61 (no-op call); "
                     "ref/upstream geomean 20.0; fast/nanobind on scalar calls 1.40 (worst 1.70).")
    source = {"kind": "callgrind", "source": "callgrind (valgrind-3.19.0); no hardware counter"}
    calls.update(instructions=source)
    calls["summary"].update({"fast/upstream_instr geomean": 0.46, "fast/upstream_instr max": 0.62})
    calls["rows"][0]["fast/upstream_instr"], calls["rows"][1]["fast/upstream_instr"] = 0.3, 0.62
    limits.update(instructions=source)
    limits["summary"].update({"fast/nanobind_instr geomean": 1.9, "fast/nanobind_instr max": 2.25})
    assert status_line.status_line(calls, limits) == plain + (
        " Instructions per call (callgrind): fast/upstream geomean 0.46, "
        "worst 0.62 (two floats); fast/nanobind geomean 1.90 (worst 2.25).")


def test_hardware_counters_are_read_or_refused_with_the_reason():
    kind, text = instruction_counts.choose(instruction_counts.PERF)
    if kind is None:  # a VM without counters, as here: the reason names the system call
        assert text.startswith("no hardware counter: ") and "perf_event_open" in text, text
        return
    assert text == "hardware counter (perf_event_open, instructions:u)"
    clock = instruction_counts._PerfClock()
    before = clock()
    sum(range(100000))  # a hundred thousand additions: well over 100,000 instructions
    assert clock() - before > 100000
