"""Runs the reliability cases of issue 20 under upstream, fast and ref, and counts outcomes.

    python benchmarks/bench_reliability.py [--repeat N] [--scale S] [--frontends ...]
                                           [--cases SUBSTRING ...] [--timeout SECONDS]
                                           [--json FILE]

The cases are ``tests/stress_cases.py``'s (the same code ``tests/test_stress.py``
runs bounded in CI); each run is a fresh interpreter, so a crash or a hang
ends only that run. For every case and front end the table gives how many of
the ``--repeat`` runs were ok / wrong / crash / hang, the median seconds of a
run, and the facts of the first run that was not ok (or, for timed cases,
of the first run). Seeds differ between repeats (0, 1, 2, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(os.path.dirname(HERE), "tests")
sys.path.insert(0, TESTS)

import stress_cases  # noqa: E402  (tests/ is put on the path just above)
from conftest import KernelBuilder, upstream_package_dir  # noqa: E402

OUTCOMES = ("ok", "wrong", "crash", "hang")
#: Facts worth showing even when a run is ok.
SHOWN_FACTS = ("frames", "raised", "raise_seconds", "got", "reached", "results")


def build_library() -> str:
    """Compiles kernels/stress.cc against upstream's headers (cached in the temp directory)."""
    directory = os.path.join(tempfile.gettempdir(), "tvm_ffi_stress_kernels")
    os.makedirs(directory, exist_ok=True)
    with open(stress_cases.KERNEL_SOURCE) as f:
        source = f.read()
    return KernelBuilder(directory, upstream_package_dir()).build("stress", source)


def measure(cases: List[str], frontends: List[str], library: str, repeat: int, scale: float,
            timeout: float) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """case -> front end -> {counts, median seconds, facts of the first telling run}."""
    results: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for case in cases:
        for frontend in frontends:
            runs = [stress_cases.run_case(case, frontend, library, scale=scale, seed=seed,
                                          timeout=timeout) for seed in range(repeat)]
            telling = next((r for r in runs if r["outcome"] != "ok"), runs[0])
            results.setdefault(case, {})[frontend] = {
                "counts": {o: sum(r["outcome"] == o for r in runs) for o in OUTCOMES},
                "median_seconds": statistics.median(r["seconds"] for r in runs),
                "facts": telling,
            }
            line = _cell(results[case][frontend])
            print(f"{case:58s} {frontend:9s} {line}", flush=True)
    return results


def _cell(result: Dict[str, Any]) -> str:
    counts = " ".join(f"{o}={n}" for o, n in result["counts"].items() if n)
    facts = result["facts"]
    shown = {k: facts[k] for k in facts if k not in ("outcome",) and
             (facts["outcome"] != "ok" or k in SHOWN_FACTS)}
    return f"{counts:28s} median {result['median_seconds']:7.2f}s  {json.dumps(shown)[:400]}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--frontends", nargs="+", default=list(stress_cases.MODULES))
    parser.add_argument("--cases", nargs="*", default=[],
                        help="run only the cases whose name contains one of these")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    cases = [c for c in stress_cases.CASES if not args.cases or any(s in c for s in args.cases)]
    library = build_library()
    results = measure(cases, args.frontends, library, args.repeat, args.scale, args.timeout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
