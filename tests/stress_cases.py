"""The reliability cases of issue 20, each run in a fresh interpreter under one front end.

Every case is a piece of Python run with ``api`` (the front end's package:
upstream's ``tvm_ffi``, ``tvm_ffi_fast`` or ``tvm_ffi_ref``), ``mod`` (the
kernels of ``kernels/stress.cc``), ``scale`` (how much work, a factor: 1 for
the fast front end in CI, less for the reference, whose every operation is
Python, more when measuring), ``seed`` (for the random choices) and ``report(ok, **facts)``.
:func:`run_case` runs one and classifies the outcome the way the issue counts
them:

* ``ok``: the case ran and everything it checked held;
* ``wrong``: it ran to the end but something was lost, invented, wrapped, or
  came back as the wrong exception (a silently wrong result);
* ``crash``: the interpreter died (a signal, or an exit without a report);
* ``hang``: it did not finish within the timeout.

``tests/test_stress.py`` runs them bounded under both of our front ends and
requires ``ok``; ``benchmarks/bench_reliability.py`` runs them repeatedly
under all three front ends and prints the table (with each case's timings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import Any, Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_SOURCE = os.path.join(HERE, "kernels", "stress.cc")

#: The package each front end is imported as.
MODULES = {"upstream": "tvm_ffi", "fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref",
           "fast-cffi": "tvm_ffi_fast"}
#: Environment a front end needs beyond its module ("fast-cffi": the cffi core PyPy runs).
FRONTEND_ENV = {"fast-cffi": {"TVM_FFI_FAST_CORE": "cffi"}}

_PRELUDE = r'''
import importlib, json, os, sys, threading, time, random
api = importlib.import_module(os.environ["STRESS_MODULE"])
mod = api.load_module(os.environ["STRESS_LIBRARY"])
scale = float(os.environ["STRESS_SCALE"])


def scaled(n):
    """n scaled (at least 1)."""
    return max(1, int(n * scale))

seed = int(os.environ["STRESS_SEED"])


def report(ok, **facts):
    facts["ok"] = bool(ok)
    sys.stdout.write("\nSTRESS-REPORT " + json.dumps(facts, default=repr) + "\n")
    sys.stdout.flush()


def describe(error):
    return "%s: %s" % (type(error).__name__, str(error)[:200])


def run_threads(targets):
    """Starts one thread per callable, joins them, returns the failures they recorded."""
    failures = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # every failure is a finding
            failures.append(describe(error))

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures
'''

#: Shared by the Dict cases. Each Python thread owns a range of int keys: it
#: sets each to itself, reads it back, pops about half (seeded; `popped`
#: records them) and checks `in`, `len` and `get` along the way. Between
#: those it sets, pops and reads keys of a small range all threads share
#: (HOT, negative), where any key may be present or not but none may hold
#: anything but itself.
_DICT_WORKERS = r'''
N = scaled(1500)
HOT = range(-64, 0)
popped = set()
lost = []


def python_worker(t, d):
    def work():
        rng = random.Random(seed * 100 + t)
        for k in range(t * N, (t + 1) * N):
            d[k] = k
            got = d.get(k)
            if got != k:
                lost.append("get(%d) -> %r" % (k, got))
            if rng.random() < 0.5:
                value = d.pop(k)
                if value != k:
                    lost.append("pop(%d) -> %r" % (k, value))
                popped.add(k)
            elif k not in d:
                lost.append("%d not in the Dict" % k)
            hot = rng.choice(HOT)
            if rng.random() < 0.5:
                d[hot] = hot
            elif d.pop(hot, hot) != hot:
                lost.append("pop(%d) gave another value" % hot)
            if d.get(rng.choice(HOT), rng.choice(HOT)) not in HOT:
                lost.append("get of a hot key gave a stranger")
            len(d)
    return work


def check_dict(d, expected, failures):
    """The Dict holds exactly `expected` (key == value), and any HOT keys, read two ways."""
    items = dict(d.items())
    wrong = [k for k, v in items.items() if not (isinstance(k, int) and k == v)]
    present = set(items) - set(HOT)
    missing = sorted(set(expected) - present)[:5]
    invented = sorted(present - set(expected), key=repr)[:5]
    ok = (not failures and not lost and not wrong and not missing and not invented
          and len(d) == len(items))
    report(ok, failures=failures[:5], lost=lost[:5], wrong=wrong[:5], missing=missing,
           invented=invented, size=len(d), expected=len(expected))
'''

CASES: Dict[str, str] = {}

CASES["dict: 4 Python threads set/get/pop"] = _DICT_WORKERS + r'''
d = api.Dict()
failures = run_threads([python_worker(t, d) for t in range(4)])
check_dict(d, [k for k in range(4 * N) if k not in popped], failures)
'''

CASES["dict: 3 Python threads and a C++ kernel inserting"] = _DICT_WORKERS + r'''
d = api.Dict()
BASE, ROUNDS, BLOCK = 10 ** 6, scaled(15), 100
kernel_kept = []


def kernel_worker():
    for r in range(ROUNDS):
        start = BASE + r * BLOCK
        mod.dict_insert(d, start, BLOCK)       # header code, in place
        mod.dict_erase(d, start, BLOCK // 2)   # the first half again
        kernel_kept.extend(range(start + BLOCK // 2, start + BLOCK))


failures = run_threads([python_worker(t, d) for t in range(3)] + [kernel_worker])
check_dict(d, [k for k in range(3 * N) if k not in popped] + kernel_kept, failures)
'''

CASES["dict: iterating while threads and a kernel mutate"] = _DICT_WORKERS + r'''
d = api.Dict({k: k for k in range(-1000, -100)})
stop = []
changed = [0]
bad = []


def iterate_python():
    while not stop:
        try:
            for k, v in d.items():
                if k != v:
                    bad.append((k, v))
        except RuntimeError as error:
            if "changed size during iteration" not in str(error):
                raise
            changed[0] += 1


def iterate_kernel():
    while not stop:
        count = mod.dict_count_entries(d)   # header code iterating in place
        if count < 0:
            bad.append(("kernel", count))


def mutators():
    run_threads([python_worker(t, d) for t in range(2)]
                + [lambda: [mod.dict_insert(d, 10 ** 6 + 50 * r, 50) for r in range(scaled(10))]])
    stop.append(True)


failures = run_threads([mutators, iterate_python, iterate_kernel])
expected = list(range(-1000, -100)) + [k for k in range(2 * N) if k not in popped]
expected += list(range(10 ** 6, 10 ** 6 + 50 * scaled(10)))
lost.extend(bad)
check_dict(d, expected, failures)
'''

CASES["dict: changed during iteration, one thread"] = r'''
outcomes = {}
for name, mutate in [("clear", lambda d, k: d.clear()), ("insert", lambda d, k: d.__setitem__(-k - 1, 0)),
                     ("pop", lambda d, k: d.pop(k))]:
    for size in (3, 40):   # the small and the dense layout
        d = api.Dict({k: k for k in range(size)})
        try:
            for k in d:
                mutate(d, k)
            outcomes[name, size] = "no error"
        except RuntimeError as error:
            outcomes[name, size] = describe(error)
        except BaseException as error:
            outcomes[name, size] = describe(error)
expected = "RuntimeError: dictionary changed size during iteration"
report(all(v == expected for v in outcomes.values()), outcomes=sorted(outcomes.items()))
'''

CASES["list: 4 Python threads and a C++ kernel"] = r'''
lst = api.List()
N = scaled(1500)
taken = [[] for _ in range(4)]
added = [[] for _ in range(5)]


def only_ints(items):
    for x in items:
        if not isinstance(x, int):
            raise AssertionError("invented element %r" % (x,))


def python_worker(t):
    def work():
        rng = random.Random(seed * 100 + t)
        for i in range(N):
            value = t * N + i
            lst.append(value)
            added[t].append(value)
            if rng.random() < 0.4:
                taken[t].append(lst.pop())
            if len(lst) > 0:
                lst[-1] if rng.random() < 0.5 else lst[0]
            if i % 200 == 0:
                only_ints(lst[:])   # a slice is one read under the List's lock
                try:   # iterating reads by index, as upstream does: a List that other
                    only_ints(lst)   # threads shrink meanwhile raises IndexError
                except IndexError as error:
                    if "out of bounds" not in str(error):
                        raise
    return work


def kernel_worker():
    for r in range(scaled(15)):
        start = 10 ** 6 + r * 100
        mod.list_append(lst, start, 100)
        added[4].extend(range(start, start + 100))
        mod.list_sum(lst)


failures = run_threads([python_worker(t) for t in range(4)] + [kernel_worker])
everything = sorted(v for part in added for v in part)
remaining = list(lst)
accounted = sorted(remaining + [v for part in taken for v in part])
report(not failures and accounted == everything, failures=failures[:5],
       lost=sorted(set(everything) - set(accounted))[:5],
       invented=sorted(set(accounted) - set(everything), key=repr)[:5],
       size=len(remaining), expected=len(everything) - sum(map(len, taken)))
'''

CASES["map/array: shared by threads and a kernel"] = r'''
shared_map = api.Map({k: k for k in range(100)})
shared_array = api.Array(list(range(100)))
d = api.Dict()


def work(t):
    def body():
        for i in range(scaled(120)):
            assert shared_map[i % 100] == i % 100
            assert shared_array[i % 100] == i % 100
            merged = api.Map({**dict(shared_map.items()), t: i})
            assert len(merged) == 100 + (t >= 100)
            assert sum(shared_array) == 4950
            assert mod.dict_count_entries(d) >= 0
    return body


def kernel():
    for r in range(scaled(20)):
        mod.dict_insert(d, r * 10, 10)


failures = run_threads([work(t) for t in range(3)] + [kernel])
report(not failures and len(d) == 10 * scaled(20), failures=failures[:5], size=len(d))
'''

CASES["globals: threads register, call and remove"] = r'''
def work(t):
    def body():
        for i in range(scaled(200)):
            name = "stress.g%d.%d" % (t, i % 5)
            api.register_global_func(name, lambda x, t=t: x + t, override=True)
            f = api.get_global_func(name)   # each thread has names of its own
            assert f(i) == i + t, (f(i), i + t)
            api.registry.remove_global_func(name)
            mod.dict_count_entries(api.Dict({i: i}))
    return body


failures = run_threads([work(t) for t in range(4)])
left = [n for n in api.registry.list_global_func_names() if n.startswith("stress.")]
report(not failures and not left, failures=failures[:5], left=left[:5])
'''

CASES["callbacks: raise through 18 levels"] = r'''
import traceback
DEPTH = 18


def level(n):
    if n == 0:
        raise ValueError("the bottom")
    return mod.call1(level, n - 1)


def raise_through(depth):
    start = time.perf_counter()
    try:
        level(depth)
        outcome = None
    except BaseException as error:
        outcome = error
    return outcome, time.perf_counter() - start


raise_through(1)  # the first error a runtime raises may load what it needs to
outcome, seconds = raise_through(DEPTH)
frames = len(traceback.extract_tb(outcome.__traceback__)) if outcome is not None else 0
report(isinstance(outcome, ValueError) and str(outcome) == "the bottom" and frames < 20 * DEPTH,
       raised=describe(outcome) if outcome is not None else None, frames=frames,
       raise_seconds=round(seconds, 4))
'''

CASES["callbacks: recursion limit reached inside a callback"] = r'''
sys.setrecursionlimit(400)
calls = [0]


def recurse(n):
    calls[0] += 1
    return mod.call1(recurse, n + 1)


try:
    result = recurse(0)
    got = "returned %r" % (result,)
except RecursionError as error:
    got = "RecursionError"
except BaseException as error:
    got = describe(error)
report(got == "RecursionError", got=got, calls=calls[0])
'''

CASES["callbacks: 4000 nested levels, recursion limit raised"] = r'''
sys.setrecursionlimit(10 ** 6)
reached = [0]


def nest(n):
    reached[0] = max(reached[0], n)
    if n == 4000:
        return n
    return mod.call1(nest, n + 1)


try:
    got = "returned %r" % (nest(0),)
    ok = got == "returned 4000"
except RecursionError as error:   # refused cleanly where the C stack ends
    got, ok = describe(error), True
except BaseException as error:
    got, ok = describe(error), False
report(ok, got=got, reached=reached[0])
'''

CASES["callbacks: nested in a thread with a 1 MiB stack"] = r'''
sys.setrecursionlimit(10 ** 6)
threading.stack_size(1 << 20)
outcome = []


def nest(n):
    if n == 3000:
        return n
    return mod.call1(nest, n + 1)


def run():
    try:
        outcome.append("returned %r" % (nest(0),))
    except RecursionError as error:   # refused cleanly where the thread's stack ends
        outcome.append(describe(error))
    except BaseException as error:
        outcome.append("unexpected " + describe(error))


thread = threading.Thread(target=run)
thread.start()
thread.join()
report(outcome and not outcome[0].startswith("unexpected"), got=outcome)
'''

CASES["callbacks: BaseException subclasses come back as themselves"] = r'''
class Custom(BaseException):
    pass


results = {}
for exc in [KeyboardInterrupt("interrupted"), SystemExit(3), Custom("custom", 7),
            GeneratorExit("gen")]:
    def raise_it(x, exc=exc):
        raise exc
    for depth in (1, 2):
        try:
            if depth == 1:
                mod.call1(raise_it, 0)
            else:
                mod.call1(lambda x: mod.call1(raise_it, x), 0)
            got = "no exception"
        except BaseException as error:
            got = error
        results[type(exc).__name__, depth] = (
            "same" if got is exc else
            "equal" if type(got) is type(exc) and got.args == exc.args else
            describe(got) if isinstance(got, BaseException) else got)
report(all(v in ("same", "equal") for v in results.values()), results=sorted(results.items()))
'''

CASES["narrowing: out-of-range fields"] = r'''
class DLPackDevice:
    def __init__(self, pair):
        self.pair = pair

    def __dlpack_device__(self):
        return self.pair


class DLPackDType:
    def __init__(self, triple):
        self.triple = triple

    def __dlpack_data_type__(self):
        return self.triple


core = api.core
probes = {
    "device('cpu:4294967296')": lambda: mod.device_fields(api.device("cpu:4294967296")),
    "device('cpu:2147483648')": lambda: mod.device_fields(api.device("cpu:2147483648")),
    "Device('cpu', -2**31 - 1)": lambda: mod.device_fields(api.Device("cpu", -2 ** 31 - 1)),
    "Device(2**31, 0)": lambda: mod.device_fields(api.Device(2 ** 31, 0)),
    "__dlpack_device__ (1, 2**32)": lambda: mod.device_fields(DLPackDevice((1, 2 ** 32))),
    "__dlpack_data_type__ (0, 256, 1)": lambda: mod.dtype_fields(DLPackDType((0, 256, 1))),
    "__dlpack_data_type__ (0, 8, 65536)": lambda: mod.dtype_fields(DLPackDType((0, 8, 65536))),
    "dtype('int8').with_lanes(70000)": lambda: mod.dtype_fields(api.dtype("int8").with_lanes(70000)),
    "Shape((2**63,))": lambda: mod.shape_entries(api.Shape((2 ** 63,))),
    "stream of device id 2**31": lambda: core._env_get_current_stream(1, 2 ** 31),
    "set stream of device type 2**40": lambda: core._env_set_current_stream(2 ** 40, 0, 0),
}
results = {}
for label, probe in probes.items():
    try:
        value = probe()
        results[label] = "returned %r" % (list(value) if hasattr(value, "__len__") else value,)
    except BaseException as error:
        results[label] = type(error).__name__
expected = {label: "OverflowError" for label in probes}
expected["Shape((2**63,))"] = "ValueError"
wrong = {k: v for k, v in results.items() if v != expected[k]}
report(not wrong, wrong=sorted(wrong.items()), results=sorted(results.items()))
'''

CASES["depth: nested lists and dicts 20000 deep"] = r'''
DEPTH = scaled(20000)  # upstream converts 20,000 deep; a recursive conversion stops near 1,000
nested = []
for _ in range(DEPTH):
    nested = [nested]
facts = {}
try:
    facts["list"] = mod.nesting_depth(nested)
except BaseException as error:
    facts["list"] = describe(error)
try:
    facts["convert"] = len(api.convert(nested))
except BaseException as error:
    facts["convert"] = describe(error)
tree = {}
for _ in range(DEPTH):
    tree = {"k": tree}
try:
    converted = api.convert(tree)
    depth = 0
    while len(converted):
        converted, depth = converted["k"], depth + 1
    facts["dict"] = depth
except BaseException as error:
    facts["dict"] = describe(error)
report(facts == {"list": DEPTH + 1, "convert": 1, "dict": DEPTH}, **facts)
'''


def run_case(name: str, frontend: str, library: str, *, scale: float = 1, seed: int = 0,
             timeout: float = 120) -> Dict[str, Any]:
    """Runs one case in a fresh interpreter; returns its facts with ``outcome`` and ``seconds``."""
    env = dict(os.environ)
    env.pop("TVM_FFI_IMPL", None)  # upstream's tvm_ffi must be upstream's
    env.pop("TVM_FFI_FAST_CORE", None)
    env.update(FRONTEND_ENV.get(frontend, {}))
    env.update(STRESS_MODULE=MODULES[frontend], STRESS_LIBRARY=library,
               STRESS_SCALE=str(scale), STRESS_SEED=str(seed), PYTHONFAULTHANDLER="")
    code = _PRELUDE + textwrap.dedent(CASES[name])
    start = time.perf_counter()
    try:
        # run from a neutral directory: `-c` puts the working directory first on the path
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "seconds": round(time.perf_counter() - start, 2)}
    seconds = round(time.perf_counter() - start, 2)
    facts = _report_of(done.stdout)
    if facts is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"outcome": "crash", "seconds": seconds, "returncode": done.returncode,
                "tail": tail}
    facts["outcome"] = "ok" if facts.pop("ok") else "wrong"
    facts["seconds"] = seconds
    if done.returncode != 0:  # reported, then died (at exit, say)
        facts["outcome"] = "crash"
        facts["returncode"] = done.returncode
        facts["tail"] = done.stderr.strip().splitlines()[-3:]
    return facts


def _report_of(stdout: str) -> Optional[Dict[str, Any]]:
    for line in reversed(stdout.splitlines()):
        if line.startswith("STRESS-REPORT "):
            return json.loads(line[len("STRESS-REPORT "):])
    return None
