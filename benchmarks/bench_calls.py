"""Times the same calls under tvm_ffi_ref, tvm_ffi_fast and upstream tvm_ffi.

    python benchmarks/bench_calls.py [--json FILE] [--repeat N] [--rounds N] [--frontends ...]
                                     [--only TEXT ...] [--sustained]
    pypy3 benchmarks/bench_calls.py --cpython PYTHON   # PyPy-fast against upstream on CPython

The front ends "pypy-fast" and "pypy-ref" are ours run by PyPy (``--pypy`` names it, or the
interpreter running this script when it is PyPy); "upstream", "fast" and "ref" run on CPython
(``--cpython`` names one with upstream's package installed, or this interpreter when it is
CPython). Run by PyPy, the script compares pypy-fast with upstream by default.

Each front end runs in its own process (one runtime per process) against the
same kernel library, compiled from ``bench_kernels.cc`` against upstream's
headers. For every call shape the table shows nanoseconds per call under each
front end and the ratios fast/upstream and ref/upstream; the last rows are
the geometric means of the ratios, over all rows and over the PyTorch rows
(run when torch is installed; ``pip install torch==2.13.0`` gives the CPU
build) and the others apart; the reference skips the 1e4-object graph rows
(``REF_SKIPS``). Machines here are shared and noisy: compare the ratios of
one run, not absolute times across runs. Each timing is the best of
``--repeat`` loops in each of ``--rounds`` processes per front end, the front ends taking
turns (so that a change of load weighs on all of them). The best of short loops
can miss the pauses of a tracing collector (PyPy's, whose work for the objects a
loop made may fall in a later loop, or after the last); ``--sustained`` makes each
loop twenty times longer and takes the median of all loops of all rounds instead
of the best, for every front end alike: what a long run costs per call. For PyPy's
front ends a column gives the share of each row's timed loops that PyPy's collector
worked (``gc.get_stats().total_gc_time``): where a row loses to upstream, it tells the
call's own cost from the collector's (a row's share may include work left by the rows
before it, which run in the same process). Finalizers themselves run outside that share.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import instruction_counts  # noqa: E402  (--instructions)

FRONTENDS = {"upstream": "tvm_ffi", "fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref",
             "pypy-fast": "tvm_ffi_fast", "pypy-ref": "tvm_ffi_ref"}
ON_PYPY = sys.implementation.name == "pypy"

#: (name, iterations per round) in table order.
SHAPES = [
    ("no-op call", 20000),
    ("three ints", 20000),
    ("two floats", 20000),
    ("short str echo", 20000),
    ("100-byte str echo", 10000),
    ("two float32 arrays", 5000),
    ("list of 10 ints as Array", 5000),
    ("C++ calls a Python callback", 5000),
    ("returns a new Array of 10 ints", 5000),
    ("global function lookup", 10000),
    ("churn: 1e5 Arrays of 10 ints (per Array)", 1),
    ("Map of 1000 str keys: build + lookups (per key)", 1),
    ("structural_hash of a 1e4-object graph", 5),
    ("structural_equal of two 1e4-object graphs", 5),
    ("JSON graph round trip of a 1e4-object graph", 2),
    ("py_class: construct (int, float, str fields)", 5000),
    ("py_class: construct by keywords", 5000),
    ("py_class: read an int field", 20000),
    ("py_class: write a str field (converted)", 10000),
]

#: How much longer each timed loop of a short call is with ``--sustained`` (5000 calls become
#: 100,000: on PyPy several major collections, whose finalizer work a short loop may miss).
SUSTAINED_FACTOR = 20

#: Shapes the reference is not timed on: one round of each takes it seconds to minutes
#: (its walks are Python over ctypes), which says nothing new.
REF_SKIPS = {"structural_hash of a 1e4-object graph", "structural_equal of two 1e4-object graphs",
             "JSON graph round trip of a 1e4-object graph"}
#: Shapes the reference is not counted on under callgrind (``--instructions``): the counting
#: loops' four churns (1e5 Arrays each, ~2.5 s apiece natively) take it about ten minutes there.
REF_CALLGRIND_SKIPS = {"churn: 1e5 Arrays of 10 ints (per Array)"}
#: The PyTorch rows (measured when torch imports), in table order.
TORCH_SHAPES = [
    ("torch: two float32 tensors and a float", 20000),
    ("torch: kernel returns the tensor", 20000),
    ("torch: from_dlpack(torch tensor)", 20000),
    ("torch: torch.from_dlpack(our Tensor)", 10000),
    ("Tensor.shape", 50000),
    ("Tensor.dtype", 50000),
    ("Tensor.device", 50000),
    ("Tensor.strides", 50000),
    ("Shape((2, 3, 4))", 20000),
]


def upstream_dir(cpython: str) -> str:
    """Where upstream's package is installed for the CPython ``cpython`` (found, not imported)."""
    done = subprocess.run([cpython, "-c", "import importlib.util as u; s = u.find_spec('tvm_ffi'); "
                           "print(list(s.submodule_search_locations)[0] if s else '')"],
                          capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"upstream apache-tvm-ffi is needed (for its headers and as the baseline) by "
                 f"{cpython}: pip install -e '.[test]'")
    return done.stdout.strip()


def build_kernels(cpython: str) -> str:
    """Compiles bench_kernels.cc against upstream's headers once; returns the library path."""
    upstream = upstream_dir(cpython)
    with open(os.path.join(HERE, "bench_kernels.cc")) as f:
        source = f.read()
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    target = os.path.join(tempfile.gettempdir(), f"tvm_ffi_bench_kernels-{digest}.so")
    if not os.path.exists(target):
        subprocess.run(
            [os.environ.get("CXX", "c++"), "-std=c++17", "-O2", "-shared", "-fPIC",
             f"-I{os.path.join(upstream, 'include')}", os.path.join(HERE, "bench_kernels.cc"),
             f"-L{os.path.join(upstream, 'lib')}", "-ltvm_ffi", "-o", target + ".tmp"],
            check=True)
        os.replace(target + ".tmp", target)
    return target


# ------------------------------------------------------------------ worker


def _gc_seconds() -> float:
    """Seconds PyPy's collector has worked in this process so far (0 on CPython, whose
    reference counting frees as it goes and whose cycle collector these rows barely wake)."""
    return gc.get_stats().total_gc_time / 1000 if ON_PYPY else 0.0


_TIMING_LOOP = """
def timed(body, iterations, clock):
    start = clock()
    for _ in range(iterations):
        body()
    return clock() - start
"""


def _timing_loop(name: str) -> Any:
    """``timed(body, iterations, clock)``, seconds for ``iterations`` calls of ``body``, compiled
    anew for one row. PyPy's JIT compiles a loop per code object: one loop shared by every
    row is specialised to the first row's body, and each later row runs through bridges off
    it, paying for the rows before it (three ints cost 92-95 ns sustained that way, 35-37
    with a loop of their own)."""
    namespace: Dict[str, Any] = {}
    exec(compile(_TIMING_LOOP, f"<timing loop: {name}>", "exec"), namespace)
    return namespace["timed"]


def run_worker(module_name: str, library: str, repeat: int,
               only: Optional[List[str]] = None, sustained: bool = False) -> Dict[str, Any]:
    """Times every shape (or those whose name contains one of ``only``) in this process;
    returns {"ns": name -> nanoseconds per call (the best loop's), "gc": name -> the share of
    the loops' time spent in PyPy's collector (PyPy only)}. ``sustained``: each timed loop is
    ``SUSTAINED_FACTOR`` times longer, and "ns" gives every loop's nanoseconds per call. In a
    counting process (``--instructions``: :func:`instruction_counts.worker_counter`) returns
    {"instr": name -> instructions per call, "loop": the loop's own per iteration,
    "not_counted": name -> why}} instead."""
    import time

    import numpy as np

    api = importlib.import_module(module_name)
    mod = api.load_module(library)
    nop, add3, mul2, echo = mod.nop, mod.add3, mod.mul2, mod.echo_str
    tensor_pair, array_len, call_back, make_array10 = (
        mod.tensor_pair, mod.array_len, mod.call_back, mod.make_array10)
    a = np.zeros((4, 4), dtype="float32")
    b = np.ones((4, 4), dtype="float32")
    ints = list(range(10))
    short, long = "abc", "x" * 100
    callback = lambda x: x  # noqa: E731
    api.register_global_func("bench.identity", callback, override=True)
    keys = [f"key-{i:04d}" for i in range(1000)]
    graph, twin = mod.make_graph(10000), mod.make_graph(10000)
    to_json, from_json = api.serialization.to_json_graph_str, api.serialization.from_json_graph_str

    def churn():
        for _ in range(100000):
            api.Array(ints)

    # A Python-defined type with three annotated fields, its values checked and converted.
    @api.dataclasses.py_class(f"bench.Point3_{os.getpid()}")
    class Point3(api.Object):
        x: int
        y: float
        name: str

    point = Point3(1, 2.0, "a")

    def map_build_lookup():
        m = api.Map(dict.fromkeys(keys, 1))
        for k in keys:
            m[k]

    bodies = {
        "no-op call": lambda: nop(),
        "three ints": lambda: add3(1, 2, 3),
        "two floats": lambda: mul2(1.5, 2.5),
        "short str echo": lambda: echo(short),
        "100-byte str echo": lambda: echo(long),
        "two float32 arrays": lambda: tensor_pair(a, b),
        "list of 10 ints as Array": lambda: array_len(ints),
        "C++ calls a Python callback": lambda: call_back(callback, 1),
        "returns a new Array of 10 ints": lambda: make_array10(),
        "global function lookup": lambda: api.get_global_func("bench.identity"),
        "structural_hash of a 1e4-object graph": lambda: api.structural_hash(graph),
        "structural_equal of two 1e4-object graphs": lambda: api.structural_equal(graph, twin),
        "JSON graph round trip of a 1e4-object graph": lambda: from_json(to_json(graph)),
        "py_class: construct (int, float, str fields)": lambda: Point3(1, 2.0, "abc"),
        "py_class: construct by keywords": lambda: Point3(x=1, y=2.0, name="abc"),
        "py_class: read an int field": lambda: point.x,
        "py_class: write a str field (converted)": lambda: setattr(point, "name", "abc"),
    }
    per_call_divisor = {"churn: 1e5 Arrays of 10 ints (per Array)": 100000,
                        "Map of 1000 str keys: build + lookups (per key)": 1000}
    bodies["churn: 1e5 Arrays of 10 ints (per Array)"] = churn
    bodies["Map of 1000 str keys: build + lookups (per key)"] = map_build_lookup
    shapes = list(SHAPES)
    torch_bodies = _torch_bodies(api, mod)
    if torch_bodies:
        bodies.update(torch_bodies)
        shapes += TORCH_SHAPES
    results, gc_share, not_counted = {}, {}, {}
    counter = instruction_counts.worker_counter()  # a counting process (--instructions)
    for name, iterations in shapes:
        if module_name == FRONTENDS["ref"] and name in REF_SKIPS:
            continue
        if only and not any(part in name for part in only):
            continue
        if counter is not None:
            if module_name == FRONTENDS["ref"] and name in REF_CALLGRIND_SKIPS \
                    and counter.kind == instruction_counts.CALLGRIND:
                not_counted[name] = "about ten minutes under callgrind (REF_CALLGRIND_SKIPS)"
            else:
                results[name] = counter.count(_timing_loop, name, bodies[name], iterations) \
                    / per_call_divisor.get(name, 1)
            continue
        body, timed = bodies[name], _timing_loop(name)
        timed(body, min(iterations, 200), time.perf_counter)  # warm caches, dispatch tables
        if sustained and iterations >= 1000:  # (the others' loops are long already)
            iterations *= SUSTAINED_FACTOR
        loops, elapsed, collecting = [], 0.0, 0.0
        for _ in range(repeat):
            gc_before = _gc_seconds()
            took = timed(body, iterations, time.perf_counter)
            elapsed, collecting = elapsed + took, collecting + _gc_seconds() - gc_before
            loops.append(took / iterations / per_call_divisor.get(name, 1) * 1e9)
        # sustained: every loop, for the median across rounds; else the best
        results[name] = loops if sustained else min(loops)
        if ON_PYPY:
            gc_share[name] = collecting / elapsed
    if counter is not None:
        return {"instr": results, "loop": counter.loop_per_iteration, "not_counted": not_counted}
    return {"ns": results, "gc": gc_share}


def _torch_bodies(api, mod) -> Dict[str, object]:
    """The PyTorch rows' bodies, or {} without torch."""
    try:
        import torch
    except ImportError:
        return {}
    pair_scale, echo_tensor = mod.tensor_pair_scale, mod.echo_tensor
    x = torch.zeros((4, 4), dtype=torch.float32)
    y = torch.ones((4, 4), dtype=torch.float32)
    ours = api.from_dlpack(x)
    return {
        "torch: two float32 tensors and a float": lambda: pair_scale(x, y, 0.5),
        "torch: kernel returns the tensor": lambda: echo_tensor(x),
        "torch: from_dlpack(torch tensor)": lambda: api.from_dlpack(x),
        "torch: torch.from_dlpack(our Tensor)": lambda: torch.from_dlpack(ours),
        "Tensor.shape": lambda: ours.shape,
        "Tensor.dtype": lambda: ours.dtype,
        "Tensor.device": lambda: ours.device,
        "Tensor.strides": lambda: ours.strides,
        "Shape((2, 3, 4))": lambda: api.Shape((2, 3, 4)),
    }


# ------------------------------------------------------------------ driver


def measure(frontend: str, library: str, python: str,
            worker_args: List[str]) -> Optional[Dict[str, Dict[str, Any]]]:
    """Runs the worker for one front end in a fresh interpreter (``python``); returns what
    :func:`run_worker` returns, or None when it failed."""
    done = subprocess.run(
        [python, __file__, "--worker", FRONTENDS[frontend], "--library", library, *worker_args],
        capture_output=True, text=True)
    if done.returncode != 0:
        print(f"[{frontend}] failed:\n{done.stderr.strip()[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def geomean(values: List[float]) -> float:
    """The geometric mean of positive numbers."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def table(results: Dict[str, Optional[Dict[str, float]]],
          gc_shares: Optional[Dict[str, Dict[str, float]]] = None,
          instructions: Optional[Tuple[Dict[str, Dict[str, float]], Dict[str, Any]]] = None
          ) -> Dict:
    """Rows of ns per call and ratios against upstream, plus geometric means (all rows, the
    PyTorch rows, the others); ``gc_shares``: front end -> shape -> the share of its time
    spent collecting (PyPy's front ends), shown as a percentage column; ``instructions``
    (what :func:`instruction_counts.count_runners` returns): instructions per call and their
    ratios against upstream too."""
    rows = []
    base = results.get("upstream")
    measured = [values for values in results.values() if values]
    torch_names = {name for name, _ in TORCH_SHAPES}
    for name, _ in SHAPES + TORCH_SHAPES:
        if not any(name in values for values in measured):
            continue  # torch is not installed
        row = {"shape": name}
        for frontend, values in results.items():
            row[f"{frontend}_ns"] = None if values is None else values.get(name)
            if instructions is not None:
                row[f"{frontend}_instr"] = instructions[0].get(frontend, {}).get(name)
        for frontend in [f for f in results if f != "upstream"]:
            mine = results.get(frontend)
            if base and mine and name in base and name in mine:
                row[f"{frontend}/upstream"] = mine[name] / base[name]
        for frontend, shares in (gc_shares or {}).items():
            if name in shares:
                row[f"{frontend} GC %"] = 100 * shares[name]
        rows.append(row)
    summary = {}
    groups = (("", lambda name: True), (" (torch rows)", lambda name: name in torch_names),
              (" (other rows)", lambda name: name not in torch_names))
    for frontend in [f for f in results if f != "upstream"]:
        for label, member in groups:
            ratios = [r[f"{frontend}/upstream"] for r in rows
                      if f"{frontend}/upstream" in r and member(r["shape"])]
            if ratios:
                summary[f"{frontend}/upstream geomean{label}"] = geomean(ratios)
                summary[f"{frontend}/upstream max{label}"] = max(ratios)
    report = {"rows": rows, "summary": summary}
    if instructions is not None:
        instruction_counts.add_ratios(rows, summary,
                                      [(f, "upstream") for f in results if f != "upstream"])
        report["instructions"] = instructions[1]
    return report


def print_table(report: Dict, frontends: List[str]) -> None:
    """The report as a fixed-width table (with instructions per call: what counted them
    first, and a count beside each time)."""
    units = ("_ns", "_instr") if "instructions" in report else ("_ns",)
    cols = [f"{f}{unit}" for f in frontends for unit in units] + [
        f"{f}{suffix}" for suffix in ("/upstream", "/upstream_instr", " GC %") for f in frontends
        if any(f"{f}{suffix}" in r for r in report["rows"])]
    if "instructions" in report:
        for line in instruction_counts.header_lines(report["instructions"]):
            print(line)
    print_rows(report["rows"], cols, 14, 0)
    for key, value in report["summary"].items():
        print(f"{key}: {value:.2f}")


def print_rows(rows: List[Dict], cols: List[str], cell: int, ns_decimals: int) -> None:
    """Fixed-width rows: the shape, then each column (a ratio, with "/" in its name, to two
    decimals; an instruction count, "*_instr", whole; a time to ``ns_decimals``; ``n/a``
    where a row has no value)."""
    width = max(len(r["shape"]) for r in rows)
    widths = [max(cell, len(c)) for c in cols]  # (a long ratio's name widens its column)
    print(f"{'shape':<{width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cols, widths)))
    for row in rows:
        cells = []
        for c, w in zip(cols, widths):
            value = row.get(c)
            decimals = 2 if "/" in c else 0 if c.endswith("_instr") else ns_decimals
            cells.append(f"{'n/a':>{w}}" if value is None else f"{value:>{w}.{decimals}f}")
        print(f"{row['shape']:<{width}}  " + "  ".join(cells))


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: runs every front end and prints (or writes) the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the table as JSON to this file")
    parser.add_argument("--repeat", type=int, default=5, help="rounds per shape (best is kept)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="fresh processes per front end, taken in turn (best is kept): a "
                             "shared machine's load then weighs on each front end alike")
    parser.add_argument("--frontends", nargs="+", choices=list(FRONTENDS),
                        default=["upstream", "pypy-fast"] if ON_PYPY else ["upstream", "fast", "ref"])
    parser.add_argument("--cpython", default=None if ON_PYPY else sys.executable,
                        help="the CPython (with upstream installed) of upstream, fast and ref")
    parser.add_argument("--pypy", default=sys.executable if ON_PYPY else None,
                        help="the PyPy (with this project installed) of pypy-fast and pypy-ref")
    parser.add_argument("--only", nargs="+", metavar="TEXT",
                        help="time only the shapes whose name contains one of these")
    parser.add_argument("--sustained", action="store_true",
                        help=f"time loops {SUSTAINED_FACTOR} times longer and keep the median "
                             "of all loops: a collector's work then weighs on every timing, "
                             "where the best of short loops can miss it")
    parser.add_argument("--instructions", nargs="?", const="auto",
                        choices=["auto", instruction_counts.PERF, instruction_counts.CALLGRIND],
                        help="also count instructions per call, one more process per front "
                             "end (by default hardware counters where the machine has them, "
                             "else callgrind: about a minute per CPython front end)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.library, args.repeat, args.only,
                                    args.sustained)))
        return 0
    if args.cpython is None:
        parser.error("run by PyPy, --cpython names the CPython that runs upstream")
    if any(f.startswith("pypy-") for f in args.frontends) and args.pypy is None:
        parser.error("--pypy names the PyPy that runs the pypy-* front ends")
    library = build_kernels(args.cpython)
    worker_args = ["--repeat", str(args.repeat)] + (["--only", *args.only] if args.only else []) \
        + (["--sustained"] if args.sustained else [])
    loops: Dict[str, Optional[Dict[str, List[float]]]] = {f: {} for f in args.frontends}
    shares: Dict[str, Dict[str, List[float]]] = {f: {} for f in args.frontends}
    for _ in range(args.rounds):
        for f in args.frontends:
            measured = measure(f, library, args.pypy if f.startswith("pypy-") else args.cpython,
                               worker_args)
            kept = loops[f]
            if measured is None or kept is None:
                loops[f] = None
                continue
            for name, ns in measured["ns"].items():
                kept.setdefault(name, []).extend(ns if args.sustained else [ns])
            for name, share in measured["gc"].items():
                shares[f].setdefault(name, []).append(share)
    pick = statistics.median if args.sustained else min
    results: Dict[str, Optional[Dict[str, float]]] = {
        f: None if kept is None else {name: pick(ns) for name, ns in kept.items()}
        for f, kept in loops.items()}
    counts = None
    if args.instructions:
        choice = instruction_counts.choose(args.instructions)
        counts = instruction_counts.count_runners(choice, {
            f: "PyPy's JIT is not counted under callgrind (a few hundred iterations do not "
               "reach its steady state)" if f.startswith("pypy-")
            and choice[0] == instruction_counts.CALLGRIND else
            [args.pypy if f.startswith("pypy-") else args.cpython, __file__, "--worker",
             FRONTENDS[f], "--library", library, "--repeat", "1",
             *(["--only", *args.only] if args.only else [])]
            for f in args.frontends}, os.path.join(tempfile.gettempdir(), "tvm_ffi_bench_limits"))
    report = table(results, {f: {name: statistics.mean(s) for name, s in by_name.items()}
                             for f, by_name in shares.items() if by_name}, counts)
    print_table(report, args.frontends)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0 if all(v is not None for v in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
