"""Times the structural traversals and JSON text on values D levels deep under upstream
tvm_ffi, tvm_ffi_fast and tvm_ffi_ref, side by side.

    python benchmarks/bench_deep_traversals.py [--depths D ...] [--timeout S]
                                               [--frontends upstream fast ref] [--only TEXT ...]

Rows (each value built untimed, then the operation timed once):

* ``walk``: ``structural_walk`` with an int callback (post order) over a py_class chain
  (``Link(next, v)``) and over Arrays nested in Arrays;
* ``visit``: ``structural_visit`` with an int callback, same values;
* ``map``: ``structural_map`` adding 1 to every int (a rebuilt value), same values;
* ``json parse`` / ``json stringify``: ``ffi.json.Parse`` of ``[[[...1...]]]`` D deep and
  ``ffi.json.Stringify`` of the parsed value.

Every (front end, row, depth) runs in a fresh interpreter with a deadline, so a crash (stack
overflow) shows as ``crash`` and a slow case as ``>Ns``; an exception shows its type (the
depth limit is a ``ValueError``). Defaults: depths 1e4 and 1e6, timeout 300 s. Machines here
are shared and noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

FRONTENDS = {"upstream": "tvm_ffi", "fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref"}
ROWS = ["walk chain", "walk arrays", "visit chain", "visit arrays", "map chain", "map arrays",
        "json parse", "json stringify"]

CASE = r"""
import sys, time
from typing import Optional
import {module} as api
op, shape, N = {op!r}, {shape!r}, {depth}
sys.setrecursionlimit(10000)
if shape == "chain":
    @api.dataclasses.py_class("bench_deep.Link")
    class Link(api.Object):
        next: Optional[api.Object]
        v: int = 0
    value = None
    for i in range(N):
        value = Link(value, i % 7)
elif shape == "arrays":
    value = api.Array([1])
    for i in range(N - 1):
        value = api.Array([value, i % 7])
text = "[" * N + "1" + "]" * N
PARSE = api.get_global_func("ffi.json.Parse")
STRINGIFY = api.get_global_func("ffi.json.Stringify")
if op == "json stringify":
    value = PARSE(text)
count = [0]
def on_int(x):
    count[0] += 1
start = time.perf_counter()
if op == "walk":
    api.structural_walk(value, [(int, on_int)])
elif op == "visit":
    api.structural_visit(value, [(int, lambda x, visitor: on_int(x))])
elif op == "map":
    api.structural_map(value, [(int, lambda x: x + 1)])
elif op == "json parse":
    PARSE(text)
elif op == "json stringify":
    assert STRINGIFY(value, None) == text
print("TIME", time.perf_counter() - start)
"""


def run_case(module: str, row: str, depth: int, timeout: float) -> str:
    op, _, shape = row.rpartition(" ") if not row.startswith("json") else (row, "", "")
    code = CASE.format(module=module, op=op, shape=shape, depth=depth)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return f">{timeout:g}s"
    for line in done.stdout.splitlines():
        if line.startswith("TIME "):
            return f"{float(line.split()[1]):.3f}"
    if done.returncode < 0 or done.returncode == 139:
        return "crash"
    last = (done.stderr.strip().splitlines() or ["?"])[-1]
    return last.split(":")[0][:24]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=float, nargs="+", default=[1e4, 1e6])
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--frontends", nargs="+", default=list(FRONTENDS))
    parser.add_argument("--only", nargs="+", default=None)
    args = parser.parse_args()
    rows = [r for r in ROWS if not args.only or any(t in r for t in args.only)]
    header = f"{'row':16} {'depth':>6} " + " ".join(f"{f + ' s':>12}" for f in args.frontends)
    print(header, flush=True)
    for depth in (int(d) for d in args.depths):
        for row in rows:
            cells = [run_case(FRONTENDS[f], row, depth, args.timeout) for f in args.frontends]
            print(f"{row:16} {depth:6.0e} " + " ".join(f"{c:>12}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
