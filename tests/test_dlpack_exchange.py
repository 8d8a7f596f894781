"""Framework tensors through the DLPack C exchange API, held to upstream.

Every case runs under upstream and under each front end of
``FRONTENDS_UNDER_TEST`` (a fresh interpreter each, ``frontend_harness``) and
must give upstream's result; the cases that pin a fact also give it here.

Two frameworks publish a ``DLPackExchangeAPI``: torch 2.13 (CPU build) and a
toy of our own (``kernels/toy_framework.c``), whose tensors may claim to live
on an accelerator so that a CPU-only machine sees what a call does with the
framework's stream; it counts what it exports, imports, allocates and frees.
The kernels (``kernels/exchange_kernels.cc``, upstream's headers) report what
they receive, the environment's stream and allocator during the call, and
return containers holding tensors.
"""

from __future__ import annotations

import os
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, NamedTuple

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST, run_frontend

HERE = os.path.dirname(os.path.abspath(__file__))

SETUP = r'''
import ctypes, gc, os

_toy = ctypes.PyDLL(TOY_PATH)
_toy.toy_table.restype = ctypes.c_void_p
_toy.toy_count.restype, _toy.toy_count.argtypes = ctypes.c_long, [ctypes.c_char_p]
_toy.toy_describe.restype, _toy.toy_describe.argtypes = ctypes.py_object, [ctypes.py_object]
_toy.toy_init.restype, _toy.toy_init.argtypes = None, [ctypes.py_object]
_NAME = ctypes.create_string_buffer(b"dlpack_exchange_api")
_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))


class ToyTensor:
    """The toy framework's tensor: a NumPy array it exports, or a tensor it imported."""

    __dlpack_c_exchange_api__ = _capsule(_toy.toy_table(), ctypes.addressof(_NAME), None)

    def __init__(self, array, device=None):
        self.array, self.device, self.capsule = array, device, None

    def _export(self):
        return self.array.__dlpack__(max_version=(1, 0))

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def describe(self):
        return _toy.toy_describe(self.capsule)


def _imported(capsule):
    tensor = ToyTensor.__new__(ToyTensor)
    tensor.array, tensor.device, tensor.capsule = None, None, capsule
    return tensor


_toy.toy_init(_imported)
COUNTERS = ("exported", "released", "imported", "streams", "allocated", "freed")


def counts():
    return [_toy.toy_count(name.encode()) for name in COUNTERS]


def delta(thunk):
    """(what thunk returned, how each toy counter moved meanwhile)."""
    before = counts()
    value = thunk()
    gc.collect()
    return value, [after - first for after, first in zip(counts(), before)]


def outcome(thunk):
    try:
        return ("ok", thunk())
    except Exception as error:
        return ("raises", type(error).__name__, str(error).splitlines()[0])


def name(value):
    """The class name; torch's prefixed, so that torch.Tensor is not our Tensor."""
    prefix = "torch." if type(value).__module__.split(".")[0] == "torch" else ""
    return prefix + type(value).__name__


def arange(*shape, dtype="float32"):
    size = 1
    for extent in shape:
        size *= extent
    return np.arange(size, dtype=dtype).reshape(shape)


A = arange(2, 3)
T = ToyTensor(A)
CUDA1 = ToyTensor(arange(4), device=(2, 1))
OURS = api.from_dlpack(arange(4))


class Stream:
    def __cuda_stream__(self):
        return (0, 0x55)


class Malformed:
    __dlpack_c_exchange_api__ = 1.5

    def __dlpack__(self, **kwargs):
        return A.__dlpack__(**kwargs)


class NoTable:
    pass


Wrapper = api.core.DLTensorTestWrapper

import torch
X = torch.arange(12, dtype=torch.float32).reshape(3, 4)
'''


class Case(NamedTuple):
    """A snippet (the kernel as ``k``, SETUP's names) and, when pinned, upstream's result."""

    id: str
    code: str
    expect: Any = None


def pt(*items: Any) -> List[Any]:
    return ["pytuple", list(items)]


def pl(*items: Any) -> List[Any]:
    return ["pylist", list(items)]


def s(text: str) -> List[Any]:
    return ["str", text]


def i(value: int) -> List[Any]:
    return ["int", value]


def b(value: bool) -> List[Any]:
    return ["bool", value]


def counters(exported=0, released=0, imported=0, streams=0, allocated=0, freed=0) -> List[Any]:
    return pl(*[i(v) for v in (exported, released, imported, streams, allocated, freed)])


CASES = [
    # -- arguments: through the table, memory shared, the export released after the call
    Case("arg.through_table",
         "d, moved = delta(lambda: k.describe(T))\n"
         "result = (list(d[0]), str(d[1]), d[2], d[3], d[4] == A.ctypes.data, moved)",
         pt(pl(i(2), i(3)), s("float32"), i(1), i(0), b(True), counters(1, 1))),
    Case("arg.many", "delta(lambda: [k.describe(T) for _ in range(50)])[1]",
         counters(50, 50)),
    Case("arg.refcounts_balance",
         "import sys\n"
         "before = (sys.getrefcount(T), sys.getrefcount(A), sys.getrefcount(X))\n"
         "for _ in range(100):\n"
         "    k.describe(T); k.echo(T); k.echo(X); k.pair_scale(X, X, 1.0)\n"
         "gc.collect()\n"
         "result = [after - first for after, first in zip((sys.getrefcount(T), "
         "sys.getrefcount(A), sys.getrefcount(X)), before)]", pl(i(0), i(0), i(0))),
    Case("arg.result_is_framework_tensor",
         "r, moved = delta(lambda: k.echo(T))\n"
         "result = (name(r), r.describe()[:3], r.describe()[3] == A.ctypes.data, moved[:3])",
         pt(s("ToyTensor"), pt(pt(i(2), i(3)), pt(i(2), i(32), i(1)), pt(i(1), i(0))), b(True),
            pl(i(1), i(0), i(1)))),
    Case("arg.any_framework_tensor_applies", "[name(k.second(OURS, T)), name(k.second(T, OURS))]",
         pl(s("ToyTensor"), s("ToyTensor"))),
    Case("arg.ours_stays_ours", "name(k.echo(OURS))", s("Tensor")),
    Case("arg.malformed_table", "[outcome(lambda: k.echo(Malformed())), "
         "outcome(lambda: api.from_dlpack(Malformed()))]"),
    Case("arg.skip_env",
         "os.environ['TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API'] = '1'\n"
         "class Skipped(ToyTensor): pass\n"
         "r, moved = delta(lambda: k.echo(Skipped(A)))\n"
         "del os.environ['TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API']\n"
         "result = (name(r), moved)"),
    Case("arg.in_a_list", "[name(k.echo([T, 1])[0]), name(k.echo({'a': T})['a']), "
         "k.echo([T, 1])[1]]", pl(s("ToyTensor"), s("ToyTensor"), i(1))),
    Case("arg.cuda_stream", "(k.echo(Stream()).value, api.convert(Stream()).__class__.__name__)",
         pt(i(0x55), s("Stream"))),
    Case("arg.test_wrapper",
         "w = Wrapper(OURS)\n"
         "r = k.echo(w)\n"
         "result = (name(r), r.data_ptr() == OURS.data_ptr(), list(k.describe(w)[0]), "
         "api.from_dlpack(w).data_ptr() == OURS.data_ptr(), name(k.make_array(w)[0]), "
         "w.__tvm_ffi_env_stream__())",
         pt(s("Tensor"), b(True), pl(i(4)), b(True), s("Tensor"), i(0))),
    # -- a table type met before (the fast front end's plain-path import): argument lists
    # mixing its tensors with scalars, NumPy arrays, another table's tensors and arguments that
    # need the general call; its errors; the environment it sets
    Case("arg.remembered_mixed",
         "k.describe(T); k.describe(A)\n"
         "result = [k.second(T, 1), name(k.second(1, T)), k.second(T, 2.5), "
         "k.second(T, 'a long string after a tensor'), list(k.second(T, [1, 2])), "
         "name(k.second(T, A)), name(k.second(A, T)), k.pair_scale(T, A, 0.5), "
         "name(k.second(T, X)), name(k.second(X, T)), name(k.second(T, OURS)), "
         "delta(lambda: [k.pair_scale(T, T, 1.0) for _ in range(3)])]"),
    Case("arg.remembered_errors",
         "k.describe(T)\n"
         "result = [delta(lambda: outcome(lambda: k.pair_scale(T, 5, 1.0)))[1], "
         "outcome(lambda: k.pair_scale(T, T))[:2], delta(lambda: outcome(lambda: k.describe(T, T)))[1]]"),
    Case("stream.remembered",
         "k.env_stream(CUDA1)\n"
         "got, moved = delta(lambda: hex(k.env_stream(CUDA1)))\n"
         "result = (got, moved[3], api.get_raw_stream(api.device('cuda', 1)))",
         pt(s("0x1021"), i(1), i(0))),
    Case("allocator.remembered",
         "k.alloc_like(T)\n"
         "r, moved = delta(lambda: name(k.alloc_like(T)))\n"
         "result = (r, moved, k.has_allocator())",
         pt(s("ToyTensor"), counters(1, 1, 1, 0, 1, 1), b(False))),
    # -- the framework's stream and allocator, during the call only
    Case("stream.accelerator",
         "dev = api.device('cuda', 1)\n"
         "before = api.get_raw_stream(dev)\n"
         "got, moved = delta(lambda: k.env_stream(CUDA1))\n"
         "result = (hex(got), before, api.get_raw_stream(dev), moved[3])",
         pt(s("0x1021"), i(0), i(0), i(1))),
    Case("stream.cpu_not_asked", "delta(lambda: k.env_stream(T))",
         pt(i(0), counters(1, 1))),
    Case("stream.user_stream_restored",
         "dev = api.device('cuda', 1)\n"
         "with api.use_raw_stream(dev, 0x77):\n"
         "    result = (hex(k.env_stream(CUDA1)), hex(api.get_raw_stream(dev)))",
         pt(s("0x1021"), s("0x77"))),
    Case("stream.container_argument",
         "arr = k.make_array(CUDA1)\n"
         "got, moved = delta(lambda: k.first_env_stream(arr))\n"
         "result = (hex(got), moved[3], api.get_raw_stream(api.device('cuda', 1)))",
         pt(s("0x1021"), i(1), i(0))),
    Case("stream.plain_list_argument", "[hex(k.first_env_stream([CUDA1, OURS])), "
         "hex(k.first_env_stream([OURS, CUDA1]))]", pl(s("0x1021"), s("0x0"))),
    Case("allocator.during_call_only",
         "r, moved = delta(lambda: k.alloc_like(T))\n"
         "result = (name(r), r.describe()[:3], moved, k.has_allocator())",
         pt(s("ToyTensor"), pt(pt(i(2), i(3)), pt(i(2), i(32), i(1)), pt(i(1), i(0))),
            counters(1, 1, 1, 0, 1, 0), b(False))),
    Case("allocator.freed_with_the_tensor",
         "def make():\n"
         "    r = k.alloc_like(T)\n"
         "    return name(r)\n"
         "result = delta(make)", pt(s("ToyTensor"), counters(1, 1, 1, 0, 1, 1))),
    Case("allocator.none_installed", "outcome(lambda: k.alloc_like(A))"),
    # -- containers remember the table
    Case("container.array",
         "r = k.make_array(T)\n"
         "result = (name(r), [name(x) for x in r], r[1], r[2], name(k.echo(r)[0]), "
         "name(r[0:1][0]))"),
    Case("container.nested",
         "r = k.make_nested(T)\n"
         "result = (name(r[0]), name(r[0][0]), name(r[1]), r[0][1])"),
    Case("container.list", "r = k.make_list(T)\nresult = (name(r), name(r[0]), r[1], "
         "name(r.pop(0)))"),
    Case("container.map",
         "m = k.make_map(T)\n"
         "result = (name(m), name(m['tensor']), name(m.get('tensor')), m['value'], "
         "name(m['inner']['t']), sorted(name(v) for v in m.values()), "
         "sorted(name(v) for _, v in m.items()), 'tensor' in m)"),
    Case("container.dict", "d = k.make_dict(T)\nresult = (name(d), name(d['tensor']), d['value'])"),
    Case("container.without_framework",
         "r = k.make_array(OURS)\nresult = (name(r[0]), name(k.echo(r)[0]))",
         pt(s("Tensor"), s("Tensor"))),
    # -- callbacks
    Case("callback.tensor_cls",
         "f = api.convert_func(lambda x: name(x), tensor_cls=ToyTensor)\n"
         "g = api.convert_func(lambda x: name(x))\n"
         "result = (k.call_with(f, OURS), k.call_with(g, OURS), "
         "k.call_with(api.convert(lambda x: name(x)), OURS), name(f))",
         pt(s("ToyTensor"), s("Tensor"), s("Tensor"), s("Function"))),
    Case("callback.tensor_cls_without_table",
         "outcome(lambda: api.convert_func(lambda x: x, tensor_cls=NoTable))"),
    Case("callback.view_argument",
         "def look(view):\n"
         "    return (name(view), list(view.shape), str(view.dtype), list(k.describe(view)[0]))\n"
         "result = k.call_with_view(look, OURS)",
         ["array", [s("Tensor"), ["array", [i(4)]], s("float32"), ["array", [i(4)]]]]),
    # -- from_dlpack
    Case("from_dlpack.through_table",
         "x, moved = delta(lambda: api.from_dlpack(T))\n"
         "result = (name(x), list(x.shape), x.data_ptr() == A.ctypes.data, moved[:2])",
         pt(s("Tensor"), pl(i(2), i(3)), b(True), pl(i(1), i(0)))),
    Case("from_dlpack.refused_falls_back",
         "odd = ToyTensor(np.arange(9, dtype='int8')[1:])\n"
         "result = delta(lambda: outcome(lambda: api.from_dlpack(odd, require_alignment=4096)))"),
    Case("from_dlpack.errors", "[outcome(lambda: api.from_dlpack(5)), "
         "outcome(lambda: api.from_dlpack(A, require_contiguous=True).shape), "
         "outcome(lambda: api.from_dlpack(A.T, require_contiguous=True))]"),
    Case("from_dlpack.capsules",
         "c = A.__dlpack__()\n"
         "t = api.from_dlpack(c)\n"
         "result = (list(t.shape), outcome(lambda: api.from_dlpack(c)), "
         "list(api.from_dlpack(A.__dlpack__(max_version=(1, 0))).shape))"),
    # -- torch 2.13, which publishes the table
    Case("torch.echo",
         "y = k.echo(X)\n"
         "result = (name(y), y.data_ptr() == X.data_ptr(), str(y.dtype), list(y.shape), "
         "k.pair_scale(X, X, 0.5), name(k.echo(api.from_dlpack(X))))",
         pt(s("torch.Tensor"), b(True), s("torch.float32"), pl(i(3), i(4)), ["float", (2.0).hex()],
            s("Tensor"))),
    Case("torch.alloc_like", "r = k.alloc_like(X)\nresult = (name(r), list(r.shape), str(r.dtype))",
         pt(s("torch.Tensor"), pl(i(3), i(4)), s("torch.float32"))),
    Case("torch.containers", "r = k.make_array(X)\nresult = (name(r[0]), "
         "r[0].data_ptr() == X.data_ptr(), name(k.make_map(X)['tensor']))",
         pt(s("torch.Tensor"), b(True), s("torch.Tensor"))),
    Case("torch.dtypes",
         "names = ['float16', 'bfloat16', 'float32', 'int8', 'uint8', 'bool', 'uint16', "
         "'float8_e4m3fn', 'float8_e5m2', 'complex64', 'float4_e2m1fn_x2']\n"
         "result = [(outcome(lambda d=getattr(torch, n): str(k.echo(d))), "
         "outcome(lambda d=getattr(torch, n): str(api.convert(d)))) for n in names]"),
    Case("torch.device", "(str(k.echo(torch.device('cuda', 1))), name(api.convert(torch.device('cpu'))))"),
    Case("torch.from_dlpack_layouts",
         "views = [X, X.T, X[:, ::2], X[1:, 1:], torch.zeros(0, 3), torch.zeros(()), "
         "torch.ones(2, 2, dtype=torch.bool), torch.ones(3, dtype=torch.bfloat16)]\n"
         "result = [(list(t.shape), list(t.strides), str(t.dtype), t.is_contiguous(), "
         "t.data_ptr() == v.data_ptr(), t.__dlpack_device__()) "
         "for v in views for t in [api.from_dlpack(v)]]"),
    Case("torch.from_ours",
         "ours = api.from_dlpack(X)\n"
         "back = torch.from_dlpack(ours)\n"
         "result = (back.data_ptr() == X.data_ptr(), list(back.shape), str(back.dtype))",
         pt(b(True), pl(i(3), i(4)), s("torch.float32"))),
    Case("torch.use_torch_stream", "ctx = api.use_torch_stream()\n"
         "result = (name(ctx), outcome(lambda: ctx.__enter__()))"),
]


#: With TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API=1 before any torch tensor is passed, torch
#: tensors cross by __dlpack__ and come back through torch.from_dlpack (upstream's fallback).
SKIP_SETUP = "import os\nos.environ['TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API'] = '1'\nimport torch\n"
SKIP_CASES = [
    Case("skip.torch_fallback",
         "f = api.convert(lambda a: a)\n"
         "x = torch.arange(4.0)\n"
         "y = f(x)\n"
         "result = (type(y).__module__, y.data_ptr() == x.data_ptr(), type(f([x])[0]).__module__)",
         pt(s("torch"), b(True), s("torch"))),
]


@pytest.fixture(scope="module")
def skip_results() -> Dict[str, Dict[str, Any]]:
    cases = [(case.id, case.code) for case in SKIP_CASES]
    return {fe: run_frontend(fe, cases, setup=SKIP_SETUP)
            for fe in ["upstream"] + FRONTENDS_UNDER_TEST}


@pytest.mark.parametrize("frontend", ["upstream"] + FRONTENDS_UNDER_TEST)
@pytest.mark.parametrize("case", SKIP_CASES, ids=lambda c: c.id)
def test_skipping_the_table(skip_results, frontend, case):
    assert skip_results[frontend][case.id] == case.expect


@pytest.fixture(scope="module")
def results(kernels) -> Dict[str, Dict[str, Any]]:
    pytest.importorskip("torch")
    with open(os.path.join(HERE, "kernels", "exchange_kernels.cc")) as f:
        kernel = kernels.build("exchange_kernels", f.read())
    with open(os.path.join(HERE, "kernels", "toy_framework.c")) as f:
        toy = kernels.build("toy_framework", f.read(), language="c",
                            extra_flags=("-std=gnu11", f"-I{sysconfig.get_paths()['include']}"))
    setup = f"TOY_PATH = {toy!r}\n" + SETUP
    cases = [(case.id, case.code) for case in CASES]
    frontends = ["upstream"] + FRONTENDS_UNDER_TEST
    with ThreadPoolExecutor(max_workers=2) as pool:
        outs = pool.map(lambda fe: run_frontend(fe, cases, setup=setup, libs={"k": kernel}),
                        frontends)
        return dict(zip(frontends, outs))


@pytest.mark.parametrize("case", [c for c in CASES if c.expect is not None], ids=lambda c: c.id)
def test_upstream_gives_the_pinned_result(results, case):
    assert results["upstream"][case.id] == case.expect


@pytest.mark.parametrize("frontend", FRONTENDS_UNDER_TEST)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_frontend_matches_upstream(results, frontend, case):
    assert results[frontend][case.id] == results["upstream"][case.id], case.code
