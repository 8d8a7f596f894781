"""The limit rows: scalar calls through TVM FFI (upstream, fast, ref) beside the same shapes
bound with nanobind and pybind11 and called raw through cffi and ctypes, in one run.

    python benchmarks/bench_limits.py [--rounds N] [--repeat N] [--runners ...] [--json FILE]
                                      [--cache DIR]

What a Python-to-C call can cost at best: nanobind is the fastest C++ binding, pybind11 the
common one; cffi (ABI mode, ``ffi.dlopen``) and ctypes call a plain C function
(``limits/plain.c``) with no calling convention on top. The shapes: a no-op call, two ints,
two floats, a short string echoed (ctypes and cffi pass and get back ``bytes``: neither
converts ``str``). The TVM FFI rows call ``bench_kernels.cc``'s kernels, built as
bench_calls.py builds them. A TVM FFI call releases the GIL around the kernel (as ctypes and
cffi do; nanobind and pybind11 keep it): "upstream-held" and "fast-held" are the same calls
with ``Function.release_gil = False``, to show what the two GIL hand-overs cost, and
"nanobind-released" is nanobind with the GIL released around the C++ call
(``nb::call_guard<nb::gil_scoped_release>``): the floor for a call that lets other threads run.

The nanobind and pybind11 modules are compiled from ``limits/*.cpp`` by this script, once, into
a cache directory (``--cache``; default a directory under the system's temporary one, named by
the sources' digest); they need ``pip install -e '.[bench]'`` (nanobind, pybind11 from PyPI),
and without them their columns print ``n/a`` with the reason. Each runner runs in its own fresh
interpreter, the runners taking turns for ``--rounds`` rounds; each timing is the best loop of
all rounds. Ratios are printed per row: fast/nanobind (the issue's limit target), fast/upstream,
upstream/nanobind, fast/pybind11. Machines here are shared and noisy: compare ratios within one
run. ``--instructions`` adds each runner's instructions per call (a ``*_instr`` column beside
its time, and the same ratios of them), counted after the timed rounds in one more process per
runner: by hardware counters where the machine has them, else under valgrind's callgrind
(``instruction_counts.py`` says how the loop's own cost is taken out).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import os
import subprocess
import sys
import sysconfig
import tempfile
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
LIMITS = os.path.join(HERE, "limits")
sys.path.insert(0, HERE)
import bench_calls  # noqa: E402  (the kernel library's build and the timing loop)
import instruction_counts  # noqa: E402  (--instructions)

#: Runners in column order: TVM FFI front ends, then the bindings and the raw calls.
TVM_RUNNERS = {"upstream": "tvm_ffi", "fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref",
               "upstream-held": "tvm_ffi", "fast-held": "tvm_ffi_fast"}
#: Binding runners -> the module they import ("-released": its functions that release the GIL).
BINDINGS = {"nanobind": "nanobind", "nanobind-released": "nanobind", "pybind11": "pybind11"}
RUNNERS = list(TVM_RUNNERS) + list(BINDINGS) + ["cffi", "ctypes"]
#: (name, iterations per loop) in table order.
#: Short loops, many of them (--repeat): on a loaded machine a loop of a few hundred
#: microseconds more often runs whole in one time slice, and the best of them is steadier.
SHAPES = [("no-op call", 5000), ("two ints", 5000), ("two floats", 5000),
          ("short str echo", 5000)]
#: Ratios printed per row: (numerator, denominator).
RATIOS = [("fast", "nanobind"), ("fast-held", "nanobind"), ("fast", "nanobind-released"),
          ("upstream", "nanobind-released"), ("fast", "upstream"),
          ("fast-held", "upstream-held"), ("upstream", "nanobind"), ("fast", "pybind11"),
          ("ref", "upstream")]


def default_cache() -> str:
    """Where compiled limit modules are kept between runs."""
    return os.path.join(tempfile.gettempdir(), "tvm_ffi_bench_limits")


def _digest(*paths: str) -> str:
    h = hashlib.sha1()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    h.update(sys.version.encode())
    return h.hexdigest()[:12]


def _compile(command: List[str], target: str) -> None:
    """Runs a compiler into ``target`` through a temporary name (a half-written module is
    never left under the final name)."""
    subprocess.run(command + ["-o", target + ".tmp"], check=True)
    os.replace(target + ".tmp", target)


def build_plain(cache: str) -> str:
    """``limits/plain.c`` as a shared library (for cffi and ctypes); returns its path."""
    source = os.path.join(LIMITS, "plain.c")
    target = os.path.join(cache, f"limit_plain-{_digest(source)}.so")
    if not os.path.exists(target):
        os.makedirs(cache, exist_ok=True)
        _compile([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", source], target)
    return target


def build_binding(kind: str, cache: str) -> str:
    """Compiles the nanobind or pybind11 module (``kind``) into ``cache``/``kind``-DIGEST/;
    returns that directory (to put on sys.path). Raises ImportError when the binding's
    package is not installed."""
    package = importlib.import_module(kind)
    source = os.path.join(LIMITS, f"{kind}_module.cpp")
    folder = os.path.join(cache, f"{kind}-{_digest(source)}-{package.__version__}")
    target = os.path.join(folder, f"limit_{kind}{sysconfig.get_config_var('EXT_SUFFIX')}")
    if os.path.exists(target):
        return folder
    os.makedirs(folder, exist_ok=True)
    flags = ["-std=c++17", "-O2", "-DNDEBUG", "-shared", "-fPIC", "-fvisibility=hidden",
             f"-I{sysconfig.get_paths()['include']}"]
    if kind == "nanobind":
        # nanobind's own library is compiled into the module (its one-file build).
        root = os.path.dirname(package.include_dir())
        flags += [f"-I{package.include_dir()}",
                  f"-I{os.path.join(root, 'ext', 'robin_map', 'include')}",
                  os.path.join(package.source_dir(), "nb_combined.cpp")]
    else:
        flags += [f"-I{package.get_include()}"]
    _compile([os.environ.get("CXX", "c++"), *flags, source], target)
    return folder


def prepare(runners: List[str], cache: str, python: str) -> Dict[str, Any]:
    """Builds what each runner needs; returns runner -> {"path": ...} or {"skip": reason}."""
    ready: Dict[str, Any] = {}
    kernels = bench_calls.build_kernels(python) if set(runners) & set(TVM_RUNNERS) else None
    for runner in runners:
        try:
            if runner in TVM_RUNNERS:
                ready[runner] = {"path": kernels}
            elif runner in BINDINGS:
                ready[runner] = {"path": build_binding(BINDINGS[runner], cache)}
            else:
                if runner == "cffi":
                    importlib.import_module("cffi")
                ready[runner] = {"path": build_plain(cache)}
        except ImportError as error:
            ready[runner] = {"skip": f"{runner} is not installed ({error}); "
                                     "pip install -e '.[bench]'"}
        except subprocess.CalledProcessError as error:
            ready[runner] = {"skip": f"building the {runner} module failed: {error}"}
    return ready


# ------------------------------------------------------------------ worker


def _functions(runner: str, path: str) -> Dict[str, Any]:
    """shape -> a no-argument callable making that call through ``runner``."""
    if runner in TVM_RUNNERS:
        api = importlib.import_module(TVM_RUNNERS[runner])
        mod = api.load_module(path)
        nop, add, mul, echo = mod.nop, mod.add_int, mod.mul2, mod.echo_str
        text = "abc"
        if runner.endswith("-held"):
            for function in (nop, add, mul, echo):
                function.release_gil = False
    elif runner in BINDINGS:
        sys.path.insert(0, path)
        mod = importlib.import_module(f"limit_{BINDINGS[runner]}")
        suffix = "_released" if runner.endswith("-released") else ""
        nop, add, mul, echo = (getattr(mod, name + suffix)
                               for name in ("nop", "add_int", "mul_float", "echo_str"))
        text = "abc"
    elif runner == "cffi":
        from cffi import FFI
        ffi = FFI()
        ffi.cdef("void nop(void); int64_t add_int(int64_t, int64_t);"
                 "double mul_float(double, double); const char *echo_str(const char *);")
        lib = ffi.dlopen(path)
        nop, add, mul, c_echo, string = lib.nop, lib.add_int, lib.mul_float, lib.echo_str, ffi.string
        echo = lambda s: string(c_echo(s))  # noqa: E731  (back to bytes, as ctypes gives)
        text = b"abc"
    else:
        import ctypes
        lib = ctypes.CDLL(path)
        nop = lib.nop
        nop.restype, nop.argtypes = None, []
        add = lib.add_int
        add.restype, add.argtypes = ctypes.c_int64, [ctypes.c_int64, ctypes.c_int64]
        mul = lib.mul_float
        mul.restype, mul.argtypes = ctypes.c_double, [ctypes.c_double, ctypes.c_double]
        echo = lib.echo_str
        echo.restype, echo.argtypes = ctypes.c_char_p, [ctypes.c_char_p]
        text = b"abc"
    assert add(1, 2) == 3 and mul(1.5, 2.0) == 3.0 and echo(text) == text
    return {"no-op call": lambda: nop(), "two ints": lambda: add(1, 2),
            "two floats": lambda: mul(1.5, 2.5), "short str echo": lambda: echo(text)}


def run_worker(runner: str, path: str, repeat: int, scale: float) -> Dict[str, Any]:
    """shape -> nanoseconds per call (the best of ``repeat`` loops) in this process; or, in a
    counting process (:func:`instruction_counts.worker_counter`), {"instr": shape ->
    instructions per call, "loop": the counting loop's own instructions per iteration}."""
    import time
    bodies = _functions(runner, path)
    counter = instruction_counts.worker_counter()
    if counter is not None:
        counts = {name: counter.count(bench_calls._timing_loop, name, bodies[name],
                                      max(1, int(iterations * scale)))
                  for name, iterations in SHAPES}
        return {"instr": counts, "loop": counter.loop_per_iteration}
    out = {}
    for name, iterations in SHAPES:
        iterations = max(1, int(iterations * scale))
        body, timed = bodies[name], bench_calls._timing_loop(name)
        timed(body, min(iterations, 500), time.perf_counter)  # warm up
        out[name] = min(timed(body, iterations, time.perf_counter)
                        for _ in range(repeat)) / iterations * 1e9
    return out


# ------------------------------------------------------------------ driver


def measure(runner: str, path: str, python: str, repeat: int, scale: float) -> Dict[str, Any]:
    """One fresh interpreter's timings for ``runner``, or {"skip": reason} when it failed."""
    done = subprocess.run([python, __file__, "--worker", runner, "--path", path,
                           "--repeat", str(repeat), "--scale", str(scale)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return {"skip": f"{runner} failed: {done.stderr.strip()[-500:]}"}
    return {"ns": json.loads(done.stdout.strip().splitlines()[-1])}


def report(results: Dict[str, Dict[str, Any]],
           instructions: Optional[Tuple[Dict[str, Dict[str, float]], Dict[str, Any]]] = None
           ) -> Dict[str, Any]:
    """Rows (ns per runner and the ratios) and geometric means of the ratios; with
    ``instructions`` (what :func:`instruction_counts.count_runners` returns) each runner's
    instructions per call and their ratios too."""
    rows = []
    for name, _ in SHAPES:
        row: Dict[str, Any] = {"shape": name}
        for runner, got in results.items():
            row[f"{runner}_ns"] = got.get("ns", {}).get(name)
            if instructions is not None:
                row[f"{runner}_instr"] = instructions[0].get(runner, {}).get(name)
        for top, bottom in RATIOS:
            a, b = row.get(f"{top}_ns"), row.get(f"{bottom}_ns")
            if a and b:
                row[f"{top}/{bottom}"] = a / b
        rows.append(row)
    summary = {}
    for top, bottom in RATIOS:
        ratios = [r[f"{top}/{bottom}"] for r in rows if f"{top}/{bottom}" in r]
        if ratios:
            summary[f"{top}/{bottom} geomean"] = bench_calls.geomean(ratios)
            summary[f"{top}/{bottom} max"] = max(ratios)
    skipped = {runner: got["skip"] for runner, got in results.items() if "skip" in got}
    rep = {"rows": rows, "summary": summary, "skipped": skipped}
    if instructions is not None:
        instruction_counts.add_ratios(rows, summary, RATIOS)
        rep["instructions"] = instructions[1]
    return rep


def print_report(rep: Dict[str, Any], runners: List[str]) -> None:
    """The report as a fixed-width table, then the skipped runners with their reasons."""
    counted = "instructions" in rep
    ratio_cols = [f"{a}/{b}{suffix}" for suffix in ("", "_instr") for a, b in RATIOS
                  if any(f"{a}/{b}{suffix}" in r for r in rep["rows"])]
    cols = [f"{r}{unit}" for r in runners for unit in (("_ns", "_instr") if counted else ("_ns",))]
    if counted:
        for line in instruction_counts.header_lines(rep["instructions"]):
            print(line)
    bench_calls.print_rows(rep["rows"], cols + ratio_cols, 17, 1)
    for key, value in rep["summary"].items():
        print(f"{key}: {value:.2f}")
    for runner, reason in rep["skipped"].items():
        print(f"skipped {runner}: {reason}")


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point: builds what is missing, runs every runner in turn, prints the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", nargs="+", choices=RUNNERS, default=RUNNERS)
    parser.add_argument("--rounds", type=int, default=3,
                        help="fresh processes per runner, taken in turn (best kept)")
    parser.add_argument("--repeat", type=int, default=30, help="loops per shape per process")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiplies every loop's iterations (a small value for a smoke test)")
    parser.add_argument("--cache", default=default_cache(),
                        help="where the compiled nanobind, pybind11 and plain C modules are kept")
    parser.add_argument("--json", help="also write the report as JSON to this file")
    parser.add_argument("--instructions", nargs="?", const="auto",
                        choices=["auto", instruction_counts.PERF, instruction_counts.CALLGRIND],
                        help="also count instructions per call (by default hardware counters "
                             "where the machine has them, else callgrind)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.path, args.repeat, args.scale)))
        return 0
    ready = prepare(args.runners, args.cache, sys.executable)
    best: Dict[str, Dict[str, Any]] = {r: dict(ready[r]) if "skip" in ready[r] else {"ns": {}}
                                       for r in args.runners}
    for _ in range(args.rounds):
        for runner in args.runners:
            if "skip" in best[runner]:
                continue
            got = measure(runner, ready[runner]["path"], sys.executable, args.repeat, args.scale)
            if "skip" in got:
                best[runner] = got
                continue
            for name, ns in got["ns"].items():
                kept = best[runner]["ns"].get(name, math.inf)
                best[runner]["ns"][name] = min(kept, ns)
    counts = None
    if args.instructions:
        # one process per runner, its loops short (--repeat does not apply: counts are steady)
        counts = instruction_counts.count_runners(instruction_counts.choose(args.instructions), {
            runner: best[runner]["skip"] if "skip" in best[runner] else
            [sys.executable, __file__, "--worker", runner, "--path", ready[runner]["path"],
             "--repeat", "1", "--scale", str(args.scale)]
            for runner in args.runners}, args.cache)
    rep = report(best, counts)
    print_report(rep, args.runners)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rep, f, indent=2)
    return 0 if not any("failed" in reason for reason in rep["skipped"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
