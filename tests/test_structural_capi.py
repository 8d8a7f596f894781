"""The structural globals through the C API, each runtime's output equal to upstream's.

``test_structural.py`` pins behaviour through the Python API; here the
``ffi.*`` globals are called with hand-made ``TVMFFIAny`` values, so hash
numbers, access paths, JSON text and error kinds are compared line for line
with upstream's on random object graphs (``kernels/structural.cc`` types,
containers and every scalar kind), and reference counts are checked to
balance after every operation, the failing ones included.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from test_dataclass_ops import CAPI_HELPERS, RUNTIMES
from capi_harness import each_runtime, run_capi

KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels", "structural.cc")

HELPERS = CAPI_HELPERS + r'''
load_kernel(KERNEL_PATH)
NONE_ANY = abi.TVMFFIAny()
def mk(type_key, **fields):
    args = [mk_str(type_key)]
    for name, value in fields.items():
        args += [mk_str(name), value]
    return ok("ffi.MakeObjectFromPackedArgs", *args)
def EQ(a, b, free=False):
    return show(call("ffi.StructuralEqual", a, b, mk_bool(free), mk_bool(False)))
def HS(v, free=False):
    return show(call("ffi.StructuralHash", v, mk_bool(free), mk_bool(False)))
def MM(a, b, free=False):
    found = call("ffi.GetFirstStructuralMismatch", a, b, mk_bool(free), mk_bool(False))
    return found if isinstance(found, tuple) else R(found)
def JSON(v):
    return call("ffi.ToJSONGraphString", v, NONE_ANY)
'''


@pytest.fixture(scope="module")
def structural_kernel(kernels):
    with open(KERNEL) as f:
        return kernels.build("structural", f.read())


def same_as_upstream(snippet: str, kernel: str) -> str:
    """Runs ``snippet`` under upstream and our runtimes; asserts equal output; returns it."""
    import textwrap

    body = HELPERS + textwrap.dedent(snippet)
    outputs = each_runtime(["upstream", *RUNTIMES],
                           lambda rt: run_capi(rt, body, timeout=300, KERNEL_PATH=kernel))
    for runtime in RUNTIMES:
        actual, expected = outputs[runtime], outputs["upstream"]
        diff = [f"line {i}:\n  {runtime}: {a}\n  upstream: {e}"
                for i, (a, e) in enumerate(zip(actual.splitlines(), expected.splitlines()))
                if a != e][:5]
        assert actual == expected, (f"{runtime} differs from upstream:\n" + "\n".join(diff)
                                    + f"\n(lines: {len(actual.splitlines())} vs "
                                    f"{len(expected.splitlines())})")
    return outputs["upstream"]


def test_random_graphs_agree_with_upstream(structural_kernel):
    # A random graph and a twin (equal, or with leaves changed), or an unrelated graph:
    # equality with and without mapping free variables, the first mismatch, hashes
    # (address-free ones as numbers), the JSON graph and its round trip, and deep copy.
    out = same_as_upstream(r"""
    import random
    FLOATS = [0.0, -0.0, float("nan"), float("inf"), 1.5, 1e-7, 123456789.0]
    STRS = ["", "a", "seven!!", "eight!!!", "h\u00e9llo", "q\"\\"]
    def gen(rng, depth, scope, mutate):
        k = rng.randrange(11, 24) if depth == 0 else rng.randrange(24 if depth < 4 else 11)
        if mutate and k < 11 and rng.random() < mutate:
            return mk_int(rng.randrange(-2, 3))
        if k == 0: return abi.TVMFFIAny()
        if k == 1: return mk_bool(rng.random() < 0.5)
        if k == 2: return mk_int(rng.choice([0, 1, -1, 2**63 - 1, rng.randrange(-99, 99)]))
        if k == 3: return mk_float(rng.choice(FLOATS))
        if k == 4: return mk_str(rng.choice(STRS))
        if k == 5: return mk_bytes(rng.choice([b"", b"\x00\xff", b"long bytes value!"]))
        if k == 6: return mk_bigint(rng.choice([2**64, -2**70]))
        if k == 7: return mk_dtype(rng.choice([0, 2]), rng.choice([8, 32]), rng.choice([1, 4]))
        if k == 8: return mk_device(rng.choice([1, 2]), rng.choice([0, 1]))
        if k == 9: return ok("ffi.Shape", *[mk_int(rng.randrange(4)) for _ in range(rng.randrange(3))])
        if k == 10: return rng.choice(scope) if scope else mk_int(0)
        sub = lambda: gen(rng, depth + 1, scope, mutate)
        if k < 16:
            kind = ["ffi.Array", "ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict"][k - 11]
            n = rng.randrange(4) * (2 if kind in ("ffi.Map", "ffi.Dict") else 1)
            return ok(kind, *[sub() for _ in range(n)])
        if k < 18: return mk("stk.Node", a=sub(), b=sub())
        if k == 18: return mk("stk.Dag", a=sub(), b=sub())
        if k == 19: return mk("stk.Const", tag=mk_str("t"), payload=sub())
        if k == 20:
            params = [mk("stk.Var", name=mk_str("p")) for _ in range(rng.randrange(1, 3))]
            scope.extend(params)
            return mk("stk.Func", params=ok("ffi.Array", *params), body=sub(), comment=mk_str("c"))
        if k == 21:
            var = mk("stk.Var", name=mk_str("v"))
            value = sub()
            scope.append(var)
            return mk("stk.Let", var=var, value=value, body=sub())
        if k == 22: return mk("stk.Custom", key=sub(), defs=ok("ffi.Array", sub()), label=mk_str("l"))
        return mk("stk.Var", name=mk_str("free"))
    rng = random.Random(5)
    for case in range(120):
        state = rng.getstate()
        a = gen(rng, 0, [], 0.0)
        choice = rng.random()
        if choice < 0.75:
            twin = random.Random(); twin.setstate(state)
            b = gen(twin, 0, [], 0.0 if choice < 0.35 else 0.1)
        else:
            b = gen(rng, 0, [], 0.0)
        text = JSON(a)
        if isinstance(text, tuple):
            json_line = text
        else:
            back = ok("ffi.FromJSONGraphString", text)
            json_line = (show(text), EQ(back, a), show(JSON(back)) == show(text))
        copy = call("ffi.DeepCopy", a)
        copy_line = copy if isinstance(copy, tuple) else (R(copy), EQ(copy, a), EQ(copy, a, True))
        print(case, EQ(a, b), EQ(a, b, True), MM(a, b), MM(a, b, True), HS(a, True), HS(b, True),
              HS(a) == HS(b), EQ(a, b) is False or HS(a) == HS(b))
        print("  json", json_line)
        print("  copy", copy_line)
    """, structural_kernel)
    assert len(out.splitlines()) == 360


def test_reference_counts_balance(structural_kernel):
    # Every operation, the failing ones included, leaves each object's count as it was.
    out = same_as_upstream(r"""
    var = mk("stk.Var", name=mk_str("x"))
    shared = mk("stk.Node", a=mk_int(1), b=mk_str("a long string value"))
    fn = mk("stk.Func", params=ok("ffi.Array", var), body=ok("ffi.Array", var, shared, shared),
            comment=mk_str("c"))
    plain = mk("stk.Plain", x=mk_int(1))
    nocopy = mk("stk.NoCopy", x=mk_int(1))
    table = ok("ffi.Map", mk_str("k"), fn, shared, ok("ffi.List", var))
    pair = ok("ffi.Array", fn, plain)
    held = [var, shared, fn, plain, nocopy, table, pair]
    before = [refs(v) for v in held]
    def drop(result):
        if not isinstance(result, tuple):
            decref_any(result)
        return result if isinstance(result, tuple) else "ok"
    for _ in range(3):
        outcomes = []
        for v in (fn, table, plain, pair, nocopy):
            outcomes.append(drop(call("ffi.StructuralHash", v, mk_bool(False), mk_bool(False))))
            outcomes.append(drop(call("ffi.StructuralEqual", v, fn, mk_bool(True), mk_bool(False))))
            outcomes.append(drop(call("ffi.GetFirstStructuralMismatch", v, table, mk_bool(False),
                                      mk_bool(False))))
            outcomes.append(drop(call("ffi.DeepCopy", v)))
            text = JSON(v)
            if not isinstance(text, tuple):
                outcomes.append(drop(call("ffi.FromJSONGraphString", text)))
            outcomes.append(drop(text))
            key = call("ffi.StructuralKey", v)
            outcomes.append(drop(key))
    print(outcomes)
    print(before == [refs(v) for v in held], before)
    """, structural_kernel)
    assert out.splitlines()[1].startswith("True ")
    assert "'StructuralHash is not supported" not in out  # the error text is upstream's
    assert "Cannot deep copy object of type \"stk.NoCopy\"" in out


def test_argument_errors_are_upstreams(structural_kernel):
    out = same_as_upstream(r"""
    for name, args in [("ffi.StructuralEqual", [mk_int(1)]),
                       ("ffi.StructuralEqual", [mk_int(1), mk_int(1), mk_str("no"), mk_bool(False)]),
                       ("ffi.StructuralHash", [mk_int(1), mk_bool(False), mk_float(1.5)]),
                       ("ffi.GetFirstStructuralMismatch", [mk_int(1), mk_int(2), mk_bool(False)]),
                       ("ffi.ToJSONGraphString", [mk_int(1), mk_int(3)]),
                       ("ffi.FromJSONGraphString", [mk_int(1)]),
                       ("ffi.FromJSONGraph", [mk_str("{}")]),
                       ("ffi.json.Parse", [mk_int(1)]),
                       ("ffi.json.Stringify", [mk_int(1), mk_str("x")]),
                       ("ffi.DeepCopy", []),
                       ("ffi.StructuralWalk", [mk_int(1), mk_int(2), mk_int(3)]),
                       ("ffi.StructuralVisitorVisit", [mk_int(1), mk_int(2)])]:
        print(name, show(call(name, *args)))
    """, structural_kernel)
    assert out.count("('err', 'TypeError',") >= 10, out


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_cycles_and_deep_graphs_raise_instead_of_crashing(runtime, structural_kernel):
    # Upstream recurses until the stack overflows. The reference stops at a fixed depth, in the
    # main thread and in another (whose stack is smaller); fast walks over heap work lists, so
    # depth costs it no C stack and it has no limit: it names a cycle instead. JSON graphs name
    # a cycle as upstream. (Each walk to the limit takes the reference a second or two.)
    import textwrap

    out = run_capi(runtime, HELPERS + textwrap.dedent(r"""
    import threading
    OPS = {"equal": ("ffi.StructuralEqual", lambda v: (v, v, mk_bool(False), mk_bool(False))),
           "hash": ("ffi.StructuralHash", lambda v: (v, mk_bool(False), mk_bool(False))),
           "mismatch": ("ffi.GetFirstStructuralMismatch",
                        lambda v: (v, v, mk_bool(False), mk_bool(False))),
           "json": ("ffi.ToJSONGraphString", lambda v: (v, NONE_ANY)),
           "copy": ("ffi.DeepCopy", lambda v: (v,))}
    def run(value, ops):
        # each operation's error, or "ok"
        outcomes = []
        for op in ops.split():
            name, args = OPS[op]
            result = call(name, *args(value))
            outcomes.append(result if isinstance(result, tuple) else "ok")
            if not isinstance(result, tuple):
                decref_any(result)
        return outcomes
    def in_thread(value, ops):
        found = []
        worker = threading.Thread(target=lambda: found.append(run(value, ops)))
        worker.start(); worker.join()
        return found[0]
    def deep(depth):
        value = mk_int(0)
        for _ in range(depth):
            value = ok("ffi.Array", value)
        return value
    ring = ok("ffi.List", mk_int(1)); call("ffi.ListAppend", ring, ring)
    print(run(ring, "equal hash mismatch json copy"), in_thread(ring, "hash"))
    below = deep(16000)
    print(run(below, "hash copy"), in_thread(below, "hash"))
    above = deep(16500)
    print(run(above, "equal hash json copy"), in_thread(above, "hash"))
    """), timeout=300, KERNEL_PATH=structural_kernel)
    cycle = "the value graph has a cycle (a value contains itself)"

    def has_cycle(who):
        return ("err", "ValueError", f"{who}: {cycle}")

    json_cycle = ("err", "ValueError", "Cycle detected during serialization: a List contains itself")
    # Both runtimes walk equality, hashing, JSON graphs and deep copy over an explicit work list
    # (no depth limit): a cycle is named as one, and 16,500 levels are fine.
    assert out.splitlines() == [
        str([has_cycle("StructuralEqual"), has_cycle("StructuralHash"),
             has_cycle("StructuralEqual"), json_cycle, "ok"])
        + " " + str([has_cycle("StructuralHash")]),
        "['ok', 'ok'] ['ok']",
        str(["ok", "ok", "ok", "ok"]) + " " + str(["ok"]),
    ]


#: A walk callback entry (``entries``) whose Function fails with ValueError("seven") at 7.
FAIL_ON_SEVEN = r'''
@abi.TVMFFISafeCallType
def fail_on_seven(handle, args, num_args, result):
    if args[0].type_index == TI.kTVMFFIInt and args[0].v_int64 == 7:
        lib.TVMFFIErrorSetRaisedFromCStr(b"ValueError", b"seven")
        return -1
    result[0] = abi.TVMFFIAny()
    return 0
h = ctypes.c_void_p()
assert lib.TVMFFIFunctionCreate(None, fail_on_seven, None, ctypes.byref(h)) == 0
callback = abi.TVMFFIAny(type_index=TI.kTVMFFIFunction); callback.v_ptr = h.value
entries = ok("ffi.Array", ok("ffi.Array", mk_int(TI.kTVMFFIInt), callback))
'''


def test_errors_record_where_in_the_graph_they_happened(structural_kernel):
    # A callback fails at the leaf 7; the error leaves the walk (or map) carrying an
    # ffi.VisitErrorContext, whose objects ffi.VisitErrorContext.FindAccessPaths turns into
    # the access paths from the root to the failure (exact, and allowing a prefix match).
    out = same_as_upstream(FAIL_ON_SEVEN + textwrap.dedent(r"""
    def node(a, b=NONE_ANY):
        return mk("stk.Node", a=a, b=b)
    var = mk("stk.Var", name=mk_str("v"))
    leaf = node(mk_int(7))
    root = node(mk("stk.Func", params=ok("ffi.Array", var), comment=mk_str("c"),
                   body=ok("ffi.Array", var, node(mk_int(1), ok("ffi.Map", mk_str("k"), leaf)))),
                ok("ffi.Array", leaf))
    def error_of(name, *args):
        packed = (abi.TVMFFIAny * len(args))(*args)
        h = ctypes.c_void_p(); lib.TVMFFIFunctionGetGlobal(byte_array(name), ctypes.byref(h))
        out = abi.TVMFFIAny()
        assert lib.TVMFFIFunctionCall(h, packed, len(args), ctypes.byref(out)) != 0
        error = ctypes.c_void_p(); lib.TVMFFIErrorMoveFromRaised(ctypes.byref(error))
        return error.value
    for name, order in (("ffi.StructuralWalk", 0), ("ffi.StructuralWalk", 1),
                        ("ffi.StructuralMap", 1)):
        error = error_of(name, root, entries, ok("ffi.Array"), mk_int(order))
        cell = abi.TVMFFIErrorCell.from_address(error + ctypes.sizeof(abi.TVMFFIObject))
        context = cell.extra_context
        print(name, order, ctypes.string_at(cell.message.data, cell.message.size),
              context is not None)
        if context:
            view = abi.TVMFFIAny(); view.type_index = abi.TVMFFIObject.from_address(context).type_index
            view.v_ptr = context
            for prefix in (False, True):
                print("  ", R(ok("ffi.VisitErrorContext.FindAccessPaths", root, view, mk_bool(prefix))))
            print("  ", R(ok("ffi.VisitErrorContext.FindAccessPaths", leaf, view, mk_bool(True))))
        lib.TVMFFIObjectDecRef(error)
    """), structural_kernel)
    paths = ('   S:(<root>.a.params[0], <root>.a.body[0], <root>.a.body[1].b["k"], '
             '<root>.b[0])')
    for i, head in enumerate(["ffi.StructuralWalk 0", "ffi.StructuralWalk 1",
                              "ffi.StructuralMap 1"]):
        assert out.splitlines()[4 * i:4 * i + 4] == [f"{head} b'seven' True", "   S:()", paths,
                                                     "   S:()"]


def test_errors_deep_in_the_graph_are_found(structural_kernel):
    # The same as above 20,000 levels down (past the 16,384 levels the walk and the search
    # used to stop at; upstream's walk overflows its stack long before): a chain of stk.Node
    # whose bottom holds 7. The walk's error context records every Node on the way, and
    # FindAccessPaths finds the one path <root>.b.b...b from the root to the failing Node.
    depth = 20_000
    body = HELPERS + FAIL_ON_SEVEN + rf"""
root = mk("stk.Node", a=mk_int(7), b=NONE_ANY)
for _ in range({depth}):
    root = mk("stk.Node", a=mk_int(1), b=root)
packed = (abi.TVMFFIAny * 4)(root, entries, ok("ffi.Array"), mk_int(1))
fn = ctypes.c_void_p(); lib.TVMFFIFunctionGetGlobal(byte_array("ffi.StructuralWalk"), ctypes.byref(fn))
out = abi.TVMFFIAny()
assert lib.TVMFFIFunctionCall(fn, packed, 4, ctypes.byref(out)) != 0
error = ctypes.c_void_p(); lib.TVMFFIErrorMoveFromRaised(ctypes.byref(error))
cell = abi.TVMFFIErrorCell.from_address(error.value + ctypes.sizeof(abi.TVMFFIObject))
view = abi.TVMFFIAny(); view.type_index = abi.TVMFFIObject.from_address(cell.extra_context).type_index
view.v_ptr = cell.extra_context
text = R(ok("ffi.VisitErrorContext.FindAccessPaths", root, view, mk_bool(False)))
print(ctypes.string_at(cell.message.data, cell.message.size), text.count("<root>"),
      text.count(".b"), text[-12:])
lib.TVMFFIObjectDecRef(error)
"""
    outputs = each_runtime(RUNTIMES, lambda rt: run_capi(rt, body, timeout=600,
                                                         KERNEL_PATH=structural_kernel))
    for runtime in RUNTIMES:
        assert outputs[runtime].strip() == f"b'seven' 1 {depth} .b.b.b.b.b,)", runtime
