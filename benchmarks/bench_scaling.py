"""Times container and structural work at growing sizes under upstream tvm_ffi, tvm_ffi_fast
and tvm_ffi_ref, side by side, with the ratios to upstream and how each scales, against
CPython's own containers doing the same work.

    python benchmarks/bench_scaling.py [--quick] [--sizes N ...] [--depths N ...]
                                       [--timeout S] [--repeat R] [--only TEXT ...]
                                       [--frontends ...] [--ref-max N]
                                       [--json FILE]

Two groups of rows:

* **wide**: Map built from N keys then every key looked up, Dict filled key by key then looked
  up, List appended N times, structural hash of an Array of N small Arrays, structural equality
  of two such values, a JSON graph round trip of one, and ``copy.deepcopy`` of one; at 1e2, 1e4
  and 1e6 elements (``--quick``: 1e2, 1e3, 1e4).
* **deep**: a chain of py_class objects each holding the next, and Arrays nested in Arrays, D
  levels deep (1e4 and 1e6; ``--quick``: 1e3 and 1e4), each released, structurally hashed,
  JSON round-tripped, deep-copied and printed (``repr``). Upstream's ``release`` cell of the
  py_class chain times nothing: its chain is not freed (after ``del`` and ``gc.collect()`` its
  1e5-link chain's ~150,000 tracked Python objects remain), so that row has no upstream baseline.

A fourth column, ``python``, is the baseline of the wide rows (``builtin_containers.py``):
CPython's dict, list and tuple doing the same work in the same run. Past the CPU's caches every
structure's cost per element grows (a million entries and their keys miss on nearly every
access), so the last table also gives each front end's ``cpu flat`` over the baseline's: 1.0
means it grows no more than CPython's own containers do on this machine.

The reference runs sizes up to ``--ref-max`` (1e5) only; larger cells show ``not run``.
Memory: each case's process reports its peak RSS growth from after the import to the end
(``B/el``: bytes per element; C allocations count, which tracemalloc would miss), and the
ratio to upstream's. The slope table adds ``flat``: the per-element time at the last size over
that at the second (1.0 flat; 1e4 to 1e6 by default), on wall time and on the process's CPU time
(``cpu``; also per element in the first table). On a shared machine the CPU time is the one to
judge growth by: at a load of 10-15 on 2 cores a case's wall time is several times its CPU time,
by a factor that differs between a 30 ms case and a 10 s one.

Every (front end, row, size) runs in a fresh interpreter with a deadline (``--timeout``), so a
crash or a stack overflow shows as ``crash`` and a slow case as ``>Ns`` rather than ending the
run. Building the value is not timed (its time is shown apart for the wide rows whose building
is not the row itself). A size is skipped (``skip``) for a front end when the size before it,
scaled linearly, would already take past three deadlines. The table gives seconds, the ratio to
upstream, and microseconds per element; the last table gives each front end's slope from the
second size to the last (log of the time ratio over log of the size ratio: 1.0 is linear, 2.0
quadratic). Machines here are shared and noisy: compare within one run, and use ``--repeat``
(each case built and timed R times in its process, the best kept) where sizes are small, and
the CPU columns (each case's own CPU time, which other processes' load disturbs less).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional

FRONTENDS = {"upstream": "tvm_ffi", "fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref",
             "python": "builtin_containers"}
#: The baseline of the wide rows (builtin_containers.py): CPython's dict, list and tuple doing
#: the same work. It has no py_class or deep structural walks, so it runs no deep row.
BASELINE = "python"
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))

#: Wide rows: name -> (build code, timed code). ``api`` is the front end's module, ``N`` the
#: size; the build code's names are visible to the timed code.
_ARRAY_OF_ARRAYS = "value = api.Array([api.Array([i, 'k%d' % i]) for i in range(N)])\n"
WIDE = {
    "Map: build from N str keys": (
        "keys = {'key-%d' % i: i for i in range(N)}\n",
        "m = api.Map(keys)\n"),
    "Map: look up every key": (
        "keys = ['key-%d' % i for i in range(N)]\nm = api.Map(dict.fromkeys(keys, 1))\n",
        "for k in keys:\n    m[k]\n"),
    "Dict: insert N str keys": (
        "keys = ['key-%d' % i for i in range(N)]\n",
        "d = api.Dict()\nfor i, k in enumerate(keys):\n    d[k] = i\n"),
    "Dict: look up every key": (
        "keys = ['key-%d' % i for i in range(N)]\nd = api.Dict(dict.fromkeys(keys, 1))\n",
        "for k in keys:\n    d[k]\n"),
    "List: append N ints": (
        "",
        "lst = api.List()\nfor i in range(N):\n    lst.append(i)\n"),
    "structural_hash: Array of N Arrays": (
        _ARRAY_OF_ARRAYS,
        "api.structural_hash(value)\n"),
    "structural_equal: two Arrays of N Arrays": (
        _ARRAY_OF_ARRAYS + "twin = api.Array([api.Array([i, 'k%d' % i]) for i in range(N)])\n",
        "assert api.structural_equal(value, twin)\n"),
    "JSON graph round trip: Array of N Arrays": (
        _ARRAY_OF_ARRAYS,
        "api.serialization.from_json_graph_str(api.serialization.to_json_graph_str(value))\n"),
    "deepcopy: Array of N Arrays": (
        _ARRAY_OF_ARRAYS,
        "copy.deepcopy(value)\n"),
}

#: Deep values: name -> build code leaving the outermost level in ``head``.
DEEP_VALUES = {
    "py_class chain": (
        "from typing import Optional\n"
        "if 'Link' not in globals():  # once per process (--repeat builds again)\n"
        "    @api.dataclasses.py_class('bench.ScalingLink')\n"
        "    class Link(api.Object):\n"
        "        next: Optional[api.Object]\n"
        "head = None\n"
        "for _ in range(N):\n"
        "    head = Link(head)\n"),
    "nested Array": (
        "head = api.Array([])\n"
        "for _ in range(N - 1):\n"
        "    head = api.Array([head])\n"),
}
DEEP_OPS = {
    "release": "del head\n",
    "structural_hash": "api.structural_hash(head)\n",
    "JSON round trip": "api.serialization.from_json_graph_str("
                       "api.serialization.to_json_graph_str(head))\n",
    "deepcopy": "copy.deepcopy(head)\n",
    "repr": "repr(head)\n",
}

SIZES, QUICK_SIZES = [100, 10_000, 1_000_000], [100, 1_000, 10_000]
#: The reference's largest size by default, and why.
REF_MAX_SIZE = 100_000
REF_CAP_REASON = ("the reference is Python over ctypes: its 1e6 rows take 20 s to about 10 "
                  "minutes each (JSON), building the value (not timed) as long again, "
                  "and --ref-max 1e6 adds about an hour to a run")
DEPTHS, QUICK_DEPTHS = [10_000, 1_000_000], [1_000, 10_000]


def rows(sizes: List[int], depths: List[int]) -> List[Dict[str, Any]]:
    """Every row of the run: name, sizes, build code and timed code."""
    out = [{"row": name, "sizes": sizes, "build": build, "timed": timed, "baseline": True}
           for name, (build, timed) in WIDE.items()]
    for value, build in DEEP_VALUES.items():
        for op, timed in DEEP_OPS.items():
            out.append({"row": f"deep {value}: {op}", "sizes": depths, "build": build,
                        "timed": timed})
    return out


# ------------------------------------------------------------------ worker

_WORKER = """
import copy, gc, json, resource, sys, time
sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
sys.path.insert(0, {bench_dir!r})
import {module} as api
N = {size}
best = None
def rss_bytes():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * resource.getpagesize()
gc.collect()
rss_start = rss_bytes()
best_cpu = None
for _ in range({repeat}):
    start = time.perf_counter()
{build}
    built = time.perf_counter() - start
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
{timed}
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    best = seconds if best is None else min(best, seconds)
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
print(json.dumps({{"seconds": best, "cpu": best_cpu, "build": built,
                  "peak_bytes": max(0, peak - rss_start)}}))
sys.stdout.flush()
"""


def _indent(code: str) -> str:
    return "".join("    " + line + "\n" for line in code.splitlines())


def run_case(frontend: str, row: Dict[str, Any], size: int, timeout: float,
             repeat: int = 1) -> Dict[str, Any]:
    """One row at one size under one front end, in a fresh interpreter: {"seconds", "build"}
    (the best of ``repeat`` builds and timings, wall and CPU time), or
    {"error": "crash" | "timeout" | message}."""
    code = _WORKER.format(module=FRONTENDS[frontend], bench_dir=BENCH_DIR, size=size,
                          repeat=repeat,
                          build=_indent(row["build"]), timed=_indent(row["timed"]))
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        last = lines[-1] if lines else ""
        if done.returncode < 0 or not last:
            return {"error": "crash"}
        return {"error": last[:120]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ driver


def measure(frontends: List[str], all_rows: List[Dict[str, Any]], timeout: float,
            repeat: int = 1, log=print, caps: Optional[Dict[str, int]] = None) -> Dict[str, Dict[str, Dict[int, Dict[str, Any]]]]:
    """row -> front end -> size -> result, the front ends taking turns at each size (so a
    change of load weighs on all of them); ``caps``: front end -> the largest size it runs
    (larger ones are "not run")."""
    caps = caps or {}
    results: Dict[str, Dict[str, Dict[int, Dict[str, Any]]]] = {}
    for row in all_rows:
        by_frontend = results.setdefault(row["row"], {f: {} for f in frontends})
        previous: Dict[str, Optional[tuple]] = {f: None for f in frontends}
        for size in row["sizes"]:
            for f in frontends:
                if size > caps.get(f, size) or (f == BASELINE and not row.get("baseline")):
                    by_frontend[f][size] = {"error": "not run"}
                    continue
                before = previous[f]
                if before is not None:
                    prev_size, prev_result = before
                    if "error" in prev_result:
                        got = {"error": "skip"}
                        by_frontend[f][size] = got
                        previous[f] = (size, got)
                        continue
                    if prev_result["seconds"] * size / prev_size > 3 * timeout:
                        got = {"error": "skip"}
                        by_frontend[f][size] = got
                        previous[f] = (size, got)
                        continue
                got = run_case(f, row, size, timeout, repeat)
                by_frontend[f][size] = got
                previous[f] = (size, got)
                log(f"  {row['row']} N={size} {f}: "
                    + (got["error"] if "error" in got else f"{got['seconds']:.4f} s"),
                    file=sys.stderr)
    return results


def _cell(result: Optional[Dict[str, Any]], timeout: float) -> str:
    if result is None:
        return "n/a"
    if "error" in result:
        return f">{timeout:.0f}s" if result["error"] == "timeout" else result["error"][:10]
    return f"{result['seconds']:.4f}"


def _ends(by_size: Dict[int, Dict[str, Any]], clock: str) -> Optional[tuple]:
    """(n_second, t_second, n_last, t_last) on ``clock`` ("seconds": wall, "cpu": the process's
    CPU time) over the sizes measured, or None."""
    sizes = [n for n in sorted(by_size) if "error" not in by_size[n] and clock in by_size[n]]
    if len(sizes) < 2:
        return None
    lo, hi = (sizes[1] if len(sizes) > 2 else sizes[0]), sizes[-1]
    t_lo, t_hi = by_size[lo][clock], by_size[hi][clock]
    if t_lo <= 0 or t_hi <= 0 or hi == lo:
        return None
    return lo, t_lo, hi, t_hi


def slope(by_size: Dict[int, Dict[str, Any]], clock: str = "seconds") -> Optional[float]:
    """log(t_last / t_second) / log(n_last / n_second) over the sizes measured, or None."""
    ends = _ends(by_size, clock)
    if ends is None:
        return None
    lo, t_lo, hi, t_hi = ends
    return math.log(t_hi / t_lo) / math.log(hi / lo)


def per_element_growth(by_size: Dict[int, Dict[str, Any]],
                       clock: str = "seconds") -> Optional[float]:
    """The per-element cost at the last size measured over that at the second (1.0: flat), or
    None; the same sizes as :func:`slope`."""
    ends = _ends(by_size, clock)
    if ends is None:
        return None
    lo, t_lo, hi, t_hi = ends
    return (t_hi / hi) / (t_lo / lo)


def _bytes_per_element(result: Optional[Dict[str, Any]], size: int) -> str:
    """Peak RSS growth of the case's process (from after import to the end) per element."""
    if not result or "error" in result or "peak_bytes" not in result:
        return "-"
    return f"{result['peak_bytes'] / size:.0f}"


def print_report(results, frontends: List[str], timeout: float) -> None:
    """The tables: seconds, ratio to upstream and microseconds per element; then slopes."""
    others = [f for f in frontends if f != "upstream"]
    head = (["row", "N"] + [f"{f} s" for f in frontends]
            + [f"{f}/up" for f in others if "upstream" in frontends]
            + [f"{f} us/el" for f in frontends] + [f"{f} cpu us/el" for f in frontends]
            + [f"{f} B/el" for f in frontends]
            + [f"{f}/up mem" for f in others if "upstream" in frontends])
    lines = [head]
    for name, by_frontend in results.items():
        sizes = sorted({n for f in frontends for n in by_frontend[f]})
        for size in sizes:
            line = [name, f"{size:.0e}".replace("e+0", "e")]
            for f in frontends:
                line.append(_cell(by_frontend[f].get(size), timeout))
            base = by_frontend.get("upstream", {}).get(size)
            for f in others:
                if "upstream" not in frontends:
                    continue
                mine = by_frontend[f].get(size)
                if base and mine and "error" not in base and "error" not in mine \
                        and base["seconds"] > 0:
                    line.append(f"{mine['seconds'] / base['seconds']:.1f}")
                else:
                    line.append("-")
            for f in frontends:
                got = by_frontend[f].get(size)
                line.append(f"{got['seconds'] / size * 1e6:.3f}"
                            if got and "error" not in got else "-")
            for f in frontends:
                got = by_frontend[f].get(size)
                line.append(f"{got['cpu'] / size * 1e6:.3f}"
                            if got and "error" not in got and "cpu" in got else "-")
            for f in frontends:
                line.append(_bytes_per_element(by_frontend[f].get(size), size))
            for f in others:
                if "upstream" not in frontends:
                    continue
                mine, up = by_frontend[f].get(size), by_frontend["upstream"].get(size)
                ok = mine and up and "error" not in mine and "error" not in up \
                    and mine.get("peak_bytes") and up.get("peak_bytes")
                line.append(f"{mine['peak_bytes'] / up['peak_bytes']:.2f}" if ok else "-")
            lines.append(line)
    _print_columns(lines)
    print()
    judged = [f for f in frontends if f != BASELINE] if BASELINE in frontends else []
    slopes = [["row (slope, 1.0 = linear; flat: per-element cost at the last size / at the "
               "second; cpu: on CPU time)"] + [f"{f} slope" for f in frontends]
              + [f"{f} flat" for f in frontends] + [f"{f} cpu flat" for f in frontends]
              + [f"{f} cpu flat/{BASELINE}" for f in judged]]
    for name, by_frontend in results.items():
        cells = []
        for measure, clock in ((slope, "seconds"), (per_element_growth, "seconds"),
                               (per_element_growth, "cpu")):
            for f in frontends:
                s = measure(by_frontend[f], clock)
                cells.append("-" if s is None else f"{s:.2f}")
        for f in judged:
            growth = flat_against_baseline(by_frontend, f)
            cells.append("-" if growth is None else f"{growth:.2f}")
        slopes.append([name] + cells)
    _print_columns(slopes)


def flat_against_baseline(by_frontend: Dict[str, Dict[int, Dict[str, Any]]],
                          frontend: str) -> Optional[float]:
    """A front end's growth in CPU time per element over the baseline's on the same row (1.0:
    it grows no more than CPython's own containers do on this machine), or None."""
    mine = per_element_growth(by_frontend.get(frontend, {}), "cpu")
    floor = per_element_growth(by_frontend.get(BASELINE, {}), "cpu")
    return None if mine is None or floor is None else mine / floor


def _print_columns(lines: List[List[str]]) -> None:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        print("  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i])
                        for i, cell in enumerate(line)))


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: measures every row under every front end and prints the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="sizes 1e2, 1e3, 1e4 and depths 1e3, 1e4 (a minute or two)")
    parser.add_argument("--sizes", type=int, nargs="+", help="the wide rows' sizes")
    parser.add_argument("--depths", type=int, nargs="+", help="the deep rows' depths")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds one case may take (default 300; --quick: 60)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="build and time each case this many times in its process, keep "
                             "the best (the deadline covers them all)")
    parser.add_argument("--only", nargs="+", metavar="TEXT",
                        help="run only the rows whose name contains one of these")
    parser.add_argument("--frontends", nargs="+", choices=list(FRONTENDS),
                        default=list(FRONTENDS))
    parser.add_argument("--ref-max", type=int, default=REF_MAX_SIZE,
                        help=f"the largest size or depth the reference runs (default "
                             f"{REF_MAX_SIZE:.0e}): {REF_CAP_REASON}")
    parser.add_argument("--json", help="also write the results as JSON to this file")
    args = parser.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    depths = args.depths or (QUICK_DEPTHS if args.quick else DEPTHS)
    timeout = args.timeout or (60.0 if args.quick else 300.0)
    selected = [r for r in rows(sizes, depths)
                if not args.only or any(part in r["row"] for part in args.only)]
    results = measure(args.frontends, selected, timeout, args.repeat,
                      caps={"ref": args.ref_max})
    print_report(results, args.frontends, timeout)
    if "ref" in args.frontends and max(sizes + depths) > args.ref_max:
        print(f"\nref: sizes above {args.ref_max:.0e} not run ({REF_CAP_REASON}; --ref-max "
              "raises the cap)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({row: {fe: {str(n): r for n, r in by.items()} for fe, by in fe_map.items()}
                       for row, fe_map in results.items()}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
