"""``python -m conformance_tests.mutants``: the mutation score of the conformance suite.

Every mutant of :mod:`.catalog` is planted in a scratch copy of the project
(:mod:`.scratch`; C mutants relink the copy's extension, :mod:`.cbuild`) and
the suite's CI profile runs against it once per seed (:mod:`.runner`). The
table lists each mutant, where it lives, the test that killed it under each
seed, and the score; the exit status is 0 only when every mutant is killed
under every seed.

    python -m conformance_tests.mutants                      # all, seeds 1 2 3
    python -m conformance_tests.mutants --only ref-map-hash,front-small-str-6
    python -m conformance_tests.mutants --seeds 7 --jobs 1 --generated-only
    python -m conformance_tests.mutants --hints-only --seeds 1   # quick screening
    python -m conformance_tests.mutants --list
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

from . import cbuild, runner, scratch
from .catalog import BY_NAME, MUTANTS, Mutant


def default_cache() -> str:
    """Where compiled objects and kernels persist between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tvm_ffi_mutants")


def run_mutant(mutant: Mutant, seeds: List[int], cache: str, work: str,
               generated_only: bool = False, hints_only: bool = False) -> List[runner.Outcome]:
    """Plants ``mutant`` in a fresh copy under ``work`` and runs each seed against it."""
    root = os.path.join(work, mutant.name, "root")
    try:
        scratch.prepare(root, mutant, os.path.join(cache, "objects"))
    except (scratch.MutantDoesNotApply, cbuild.BuildFailed) as error:
        return [runner.Outcome(seed, "error", "", str(error)[:2000]) for seed in seeds]
    kernels = os.path.join(cache, "kernels")
    return [runner.run_seed(root, mutant.hints, seed, kernels, os.path.dirname(root),
                            generated_only, hints_only) for seed in seeds]


def short_test(test: str) -> str:
    return test.split("::")[-1] if test else "-"


def table(results: Dict[str, List[runner.Outcome]]) -> str:
    """The mutation score table: one row per mutant, one column per seed."""
    seeds = sorted({o.seed for outcomes in results.values() for o in outcomes})
    head = ["mutant", "area", "where"] + [f"seed {s}" for s in seeds] + ["bug"]
    rows = []
    for name, outcomes in results.items():
        mutant = BY_NAME[name]
        by_seed = {o.seed: o for o in outcomes}
        cells = []
        for s in seeds:
            o = by_seed.get(s)
            cells.append("-" if o is None else short_test(o.test) if o.verdict == "killed"
                         else o.verdict.upper())
        rows.append([name, mutant.area, mutant.where] + cells + [mutant.about])
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head) - 1)]
    lines = []
    for r in [head, ["-" * w for w in widths] + ["---"]] + rows:
        lines.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths + [0])) + " |")
    killed = sum(all(o.verdict == "killed" for o in out) and bool(out) for out in results.values())
    lines.append("")
    lines.append(f"mutation score: {killed}/{len(results)} mutants killed under every seed "
                 f"({100.0 * killed / max(1, len(results)):.0f}%)")
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance_tests.mutants",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated mutant names (default: all)")
    parser.add_argument("--seeds", default="1,2,3", help="hypothesis seeds (default 1,2,3)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--cache", default=default_cache(), help="object and kernel cache")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies")
    parser.add_argument("--generated-only", action="store_true",
                        help="no @example cases: only what the strategies generate")
    parser.add_argument("--hints-only", action="store_true",
                        help="screening: run only each mutant's hint tests, not the whole suite")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    chosen = MUTANTS if not args.only else [BY_NAME[n.strip()] for n in args.only.split(",")]
    if args.list:
        for m in chosen:
            print(f"{m.name:28} {m.area:15} {m.where:32} {m.about}")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")]
    work = tempfile.mkdtemp(prefix="tvm-ffi-mutants-")
    start = time.monotonic()
    results: Dict[str, List[runner.Outcome]] = {}

    def one(mutant: Mutant):
        outcomes = run_mutant(mutant, seeds, args.cache, work, args.generated_only,
                              args.hints_only)
        verdicts = ", ".join(f"seed {o.seed}: {o.verdict} {short_test(o.test)} ({o.seconds:.0f}s)"
                             for o in outcomes)
        print(f"{mutant.name}: {verdicts}", flush=True)
        for o in outcomes:
            if o.verdict == "error":
                print(f"  {o.detail}", flush=True)
        return mutant.name, outcomes

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, outcomes in pool.map(one, chosen):
            results[name] = outcomes
    cbuild.remove_stale_objects(os.path.join(args.cache, "objects"))
    if not args.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(results))
    print(f"{len(chosen)} mutants x {len(seeds)} seeds in {time.monotonic() - start:.0f} s"
          + (f"; scratch copies kept in {work}" if args.keep else ""))
    return 0 if all(all(o.verdict == "killed" for o in out) for out in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
