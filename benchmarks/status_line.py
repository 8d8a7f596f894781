"""Prints the README's benchmark status line from one run's JSON reports.

    python benchmarks/bench_calls.py --frontends upstream fast ref --rounds 3 --json calls.json
    python benchmarks/bench_limits.py --json limits.json
    python benchmarks/status_line.py calls.json limits.json

The line gives fast/upstream and ref/upstream (geometric mean and the worst row) over the call
rows, and fast/nanobind over the limit rows (fast as it runs by default, and with
``release_gil = False``), so the README states what one run measured rather than a number
copied by hand. Where the reports were made with ``--instructions``, the line ends with the same
ratios of instructions per call, and what counted them.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List


def _worst(rows: List[Dict[str, Any]], key: str) -> str:
    row = max((r for r in rows if key in r), key=lambda r: r[key])
    return f"{row[key]:.2f} ({row['shape']})"


def status_line(calls: Dict[str, Any], limits: Dict[str, Any]) -> str:
    """The one-line summary of a bench_calls report and a bench_limits report."""
    summary, rows = calls["summary"], calls["rows"]
    parts = [f"fast/upstream geomean {summary['fast/upstream geomean']:.2f}, "
             f"worst {_worst(rows, 'fast/upstream')}"]
    if "ref/upstream geomean" in summary:
        parts.append(f"ref/upstream geomean {summary['ref/upstream geomean']:.1f}")
    limit = limits["summary"]
    for key, label in (("fast/nanobind", "fast/nanobind on scalar calls"),
                       ("fast-held/nanobind", "with release_gil=False")):
        if f"{key} geomean" in limit:
            parts.append(f"{label} {limit[f'{key} geomean']:.2f} "
                         f"(worst {limit[f'{key} max']:.2f})")
    line = "Benchmarks, one run: " + "; ".join(parts) + "."
    counted = _instruction_ratios(calls, limits)
    return f"{line} {counted}" if counted else line


def _instruction_ratios(calls: Dict[str, Any], limits: Dict[str, Any]) -> str:
    """The instruction-count sentence (fast/upstream over the call rows, fast/nanobind over
    the limit rows), or "" when neither report counted instructions."""
    parts, sources = [], []
    for report, key in ((calls, "fast/upstream"), (limits, "fast/nanobind"),
                        (limits, "fast-held/nanobind")):
        found = report["summary"].get(f"{key}_instr geomean")
        if found is None:
            continue
        if report is calls:  # the call rows name their worst, as the times do
            worst = _worst(calls["rows"], f"{key}_instr")
            parts.append(f"{key} geomean {found:.2f}, worst {worst}")
        else:
            parts.append(f"{key} geomean {found:.2f} "
                         f"(worst {report['summary'][f'{key}_instr max']:.2f})")
        source = report["instructions"]["kind"]  # "perf" or "callgrind": the header says more
        if source not in sources:
            sources.append(source)
    if not parts:
        return ""
    return f"Instructions per call ({', '.join(sources)}): " + "; ".join(parts) + "."


def main(argv: List[str]) -> int:
    """Entry point: ``status_line.py CALLS_JSON LIMITS_JSON``."""
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        calls = json.load(f)
    with open(argv[1]) as f:
        limits = json.load(f)
    print(status_line(calls, limits))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
