"""Behaviours at their edges that no other property generates (``edge_worker.py`` runs them).

* structural hashing and equality of floats' edge values (``-0.0``, NaNs of any sign and
  payload, infinities, subnormals) alone and inside containers, and of tensors (equal
  twins, a different dtype, shape or element);
* access paths: built step by step (attributes, items, map keys, and the ``*_missing``
  steps), and the paths a mismatch reports where one side lacks an element or a key;
* the environment's streams: nested ``use_raw_stream`` contexts on several devices, some
  left by an exception, each device's stream read through the API and the C API;
* DLPack: arrays with unit dimensions whose strides are anything, empty and strided ones,
  imported with ``require_contiguous``/``require_alignment`` and exported with ``copy=``,
  ``max_version=``, ``dl_device=`` and ``stream=``;
* one call with several arguments of different kinds (each position's encoding), and the
  typed two-parameter kernels on them (conversion per position);
* C API entries with the arguments their header gives a rule for;
* dataclass fields with default factories: what each instance gets, whether instances share
  it, and what a deep copy shares;
* dtype properties and methods at the edges of lanes and raw triples, and Device accessors,
  text forms, equality and hashes.
"""

from __future__ import annotations

import itertools
import struct

from hypothesis import example, given
from hypothesis import strategies as st

from . import strategies as S
from .compare import assert_agree
from .profiles import conformance


def _float(value: float):
    return ("float", struct.unpack("<Q", struct.pack("<d", value))[0])


_EDGE_FLOATS = st.one_of(
    st.sampled_from([_float(x) for x in (0.0, -0.0, float("inf"), float("-inf"), float("nan"),
                                         -float("nan"), 5e-324, -5e-324, 1.0, -1.0)]),
    S.nan_bits.map(lambda bits: ("float", bits)), S.floats)
_small_tensors = S.ndarray_recipes(tag="tensor", max_dims=2)


def _nest(leaf):
    return st.one_of(leaf, st.lists(leaf, max_size=3).map(lambda xs: ("Array", xs)),
                     st.lists(st.tuples(st.sampled_from([("str", "a"), ("int", 1)]), leaf),
                              max_size=2).map(lambda kv: ("Map", kv)))


@st.composite
def _hash_pairs(draw):
    a = draw(st.one_of(_nest(_EDGE_FLOATS), _nest(_small_tensors), _nest(S.scalars)))
    if draw(st.booleans()):
        return (a, a)  # the same recipe built twice: equal twins
    return (a, draw(st.one_of(_nest(_EDGE_FLOATS), _nest(_small_tensors), _nest(S.scalars))))


@conformance(examples=60)
@given(st.lists(_hash_pairs(), min_size=1, max_size=6))
@example([(_float(0.0), _float(-0.0)), (_float(float("nan")), _float(-float("nan"))),
          (("Array", [_float(-0.0)]), ("Array", [_float(0.0)])),
          (("tensor", "float32", [2, 3], [], 1), ("tensor", "float32", [2, 3], [], 1)),
          (("tensor", "float32", [2, 3], [], 1), ("tensor", "float32", [3, 2], [], 1)),
          (("tensor", "int8", [0], [], 1), ("tensor", "uint8", [0], [], 1))])
def test_structural_hash_edges(pool, cases):
    assert_agree(pool.run("hash_edges", cases), cases, "structural hashing differs")


_keys = st.one_of(S.map_keys, S.ints, st.integers(-3, 5).map(lambda i: ("int", i)))
_path_steps = st.one_of(
    st.tuples(st.sampled_from(["attr", "attr_missing"]),
              st.sampled_from(["x", "", "a.b", "\u00e9"]).map(lambda s: ("str", s))),
    st.tuples(st.sampled_from(["array_item", "array_item_missing"]),
              st.integers(-2, 40).map(lambda i: ("int", i))),
    st.tuples(st.sampled_from(["map_item", "map_item_missing"]), _keys),
    st.just(("root", None)))


@st.composite
def _missing_pairs(draw):
    """Two containers where one lacks elements or keys the other has, maybe nested."""
    items = draw(st.lists(S.plain_values, max_size=5))
    cut = draw(st.integers(0, len(items)))
    keys = draw(st.lists(S.map_keys, max_size=5, unique_by=repr))
    values = draw(st.lists(S.scalars, min_size=len(keys), max_size=len(keys)))
    drop = draw(st.integers(0, len(keys)))
    pairs = list(zip(keys, values))
    kind = draw(st.sampled_from(["Array", "List"]))
    a = ("Array", [(kind, items), ("Map", pairs)])
    b = ("Array", [(kind, items[:cut]), ("Map", pairs[:drop] + pairs[drop + 1:])])
    return (a, b) if draw(st.booleans()) else (b, a)


@conformance(examples=60)
@given(st.lists(st.lists(_path_steps, max_size=6), min_size=1, max_size=3),
       st.lists(_missing_pairs(), min_size=1, max_size=3))
@example([[("attr", ("str", "x")), ("array_item_missing", ("int", 3)),
           ("map_item_missing", ("str", "k")), ("attr_missing", ("str", "y"))]],
         [(("Array", [("int", 1), ("int", 2)]), ("Array", [("int", 1)])),
          (("Map", [(("str", "a"), ("int", 1))]), ("Map", []))])
def test_access_paths_to_missing(pool, programs, pairs):
    assert_agree(pool.run("access_paths", programs), programs, "access paths differ")
    assert_agree(pool.run("hash_edges", pairs), pairs, "mismatch paths of missing elements differ")


_DEVICES = [("cuda", 0), ("cuda", 1), ("cpu", 0), ("rocm", 2)]
_streams = st.one_of(st.sampled_from([0, 1, 0xFFFF, (1 << 64) - 1, 1 << 40]),
                     st.integers(0, (1 << 64) - 1))


@conformance(examples=40)
@given(st.lists(st.tuples(st.lists(st.sampled_from(_DEVICES), min_size=1, max_size=3,
                                   unique=True),
                          st.lists(st.tuples(st.integers(0, 3), _streams, st.booleans()),
                                   max_size=4)),
                min_size=1, max_size=3))
@example([([("cuda", 0), ("cuda", 1)], [(0, 1234, False), (0, 99, True), (1, 7, False)])])
def test_stream_environment(pool, programs):
    assert_agree(pool.run("streams", programs), programs, "streams differ")


#: complex64 is left out: upstream cannot print a complex dtype (its own ValueError).
_DLPACK_DTYPES = ["float32", "int8", "uint16", "float64", "bool", "uint8"]


@st.composite
def _dlpack_cases(draw):
    ndim = draw(st.integers(0, 4))
    shape = [draw(st.sampled_from([0, 1, 1, 2, 3])) for _ in range(ndim)]
    strides, running = [], 1
    for n in reversed(shape):
        # A unit (or empty) dimension's stride may be anything; others contiguous or not.
        strides.insert(0, draw(st.sampled_from([running, 0, 7, -1, 1000])) if n <= 1
                       else draw(st.sampled_from([running, running, running * 2])))
        running *= max(n, 1)
    strides = [max(s, 0) for s in strides]
    offset = draw(st.integers(0, 3))
    import_kw = draw(st.fixed_dictionaries({}, optional={
        "require_contiguous": st.booleans(), "require_alignment": st.sampled_from([0, 1, 8, 64])}))
    export_kw = draw(st.fixed_dictionaries({}, optional={
        # A major version below 1 is left out: upstream's export then fails inside itself
        # (an AttributeError on a private name), no behaviour to copy.
        "copy": st.sampled_from([None, True, False]), "max_version": st.sampled_from(
            [None, (1, 0), (1, 5), (2, 0)]), "dl_device": st.sampled_from([None, (1, 0), (2, 0)]),
        "stream": st.sampled_from([None, -1, 1])}))
    return (draw(st.sampled_from(_DLPACK_DTYPES)), shape, strides, offset, import_kw, export_kw)


@conformance(examples=80)
@given(st.lists(_dlpack_cases(), min_size=1, max_size=4))
@example([("float32", [1, 3, 1], [100, 1, 7], 0, {}, {"copy": False}),
          ("float32", [1, 3], [5, 1], 1, {"require_contiguous": True}, {"copy": True}),
          ("int8", [2, 1], [1, 0], 0, {"require_alignment": 64}, {"max_version": (1, 0)}),
          ("float32", [2], [1], 0, {}, {"copy": False, "max_version": (1, 0)}),
          ("float32", [2], [1], 0, {}, {"copy": False, "max_version": (1, 5),
                                        "dl_device": (1, 0)})])
def test_dlpack_options(pool, cases):
    assert_agree(pool.run("dlpack_options", cases), cases, "DLPack options differ")


_ARGUMENT = st.one_of(S.scalars, S.void_pointers, S.numpy_dtypes, S.opaques,
                      S.ndarray_recipes(tag="tensor", max_dims=2), S.nested)


@conformance(examples=80)
# up to 12: a call of more than 8 arguments leaves the fast core's stack buffer
@given(st.lists(st.lists(_ARGUMENT, min_size=2, max_size=12), min_size=1, max_size=4))
@example([[("int", 7), ("str", "seven"), _float(-0.0), ("bool", True), ("none",),
           ("dtype", "float32"), ("device", "cuda", 1), ("bytes", b"xy")],
          [("int", i) for i in range(9)] + [("str", "tenth"), _float(-0.0)],
          [("int", -1), ("str", "s"), _float(-0.0), ("bool", False), ("dtype", "int8"),
           ("none",), ("Array", [("int", 1)])],
          [("bool", True), ("str", "long enough text"), ("int", 3), ("int", 0),
           ("dtype", "float32x4"), ("int", 5), ("list", [])],
          [("str", "a"), ("int", 1)], [("int", 1), ("str", "a")]])
def test_mixed_positional_arguments(pool, cases):
    assert_agree(pool.run("mixed_args", cases), cases, "mixed arguments differ")


_CAPI_CASES = st.one_of(
    st.tuples(st.just("get_global"), st.sampled_from(
        ["ffi.String", "ffi.Array", "no.such.function", "", "ffi.MakeObjectFromPackedArgs"])),
    st.tuples(st.just("type_key"), st.sampled_from(
        ["ffi.Array", "ffi.Map", "ffi.Tensor", "ffi.Object", "no.such.type", ""])),
    st.tuples(st.just("nothing_raised"), st.none()),
    st.tuples(st.just("set_stream"), st.tuples(st.sampled_from([1, 2, 10]), st.integers(0, 3),
                                               _streams, st.booleans())))


@conformance(examples=30)
@given(st.lists(_CAPI_CASES, min_size=1, max_size=8))
@example([("get_global", "no.such.function"), ("nothing_raised", None),
          ("set_stream", (2, 0, 5, True)), ("set_stream", (2, 0, 0, False)),
          ("type_key", "no.such.type")])
def test_c_api_edges(pool, cases):
    assert_agree(pool.run("capi_edges", cases), cases, "C API edge cases differ")


_FACTORY_KEYS = (f"conformance.edges.Factory{i}" for i in itertools.count())
_FIELDS = st.lists(st.sampled_from([
    ("Any", "pylist"), ("Any", "pydict"), ("Any", "Array"), ("Any", "List"), ("Any", "Dict"),
    ("Any", "same"), ("int", "int"), ("str", "str"), ("List[int]", "pylist"),
    ("Dict[str, int]", "pydict"), ("Optional[Any]", "same"), ("int", "pylist")]), max_size=4)


@conformance(examples=30)
@given(st.lists(_FIELDS, min_size=1, max_size=3))
@example([[("Any", "List"), ("Any", "same"), ("Any", "pylist"), ("Any", "Dict")]])
def test_default_factories_and_deepcopy_sharing(pool, field_lists):
    # A fresh type key per class, the same in every worker (one request to all).
    cases = [(next(_FACTORY_KEYS), fields) for fields in field_lists]
    assert_agree(pool.run("default_factories", cases), cases, "default factories differ")


@conformance(examples=40)
@given(st.lists(st.tuples(st.one_of(S.dtype_texts, st.sampled_from(
    ["float32x4", "bool", "handle", "int8", "uint1", "bfloat16", "float8_e4m3fn"])),
    st.sampled_from([1, 2, 4, 0, -1, -4, 65536]),
    st.tuples(st.integers(0, 20), st.sampled_from([0, 1, 8, 16, 32, 64, 256]),
              st.sampled_from([1, 4, 0, -1, 65535]))), min_size=1, max_size=8))
def test_dtype_methods(pool, cases):
    assert_agree(pool.run("dtype_methods", cases), cases, "dtype methods differ")


_ANY_DEVICE = st.one_of(S.devices, st.sampled_from(["cpu", "cuda:1", "cuda", "rocm:3", "bogus:1",
                                                    "", "cuda:-1", "metal:0"]).map(
    lambda text: ("device", text, None)))


@conformance(examples=30)
@given(st.lists(st.tuples(_ANY_DEVICE, _ANY_DEVICE), min_size=1, max_size=8))
def test_device_methods(pool, cases):
    assert_agree(pool.run("device_methods", cases), cases, "device methods differ")
