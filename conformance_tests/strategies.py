"""Hypothesis strategies that make *recipes*: plain data every worker turns into the same value.

A recipe is a tuple whose first item is a tag (``child_recipes.build`` is the
interpreter). Recipes, not values, are generated because the value must be
constructed inside each front end's own process. The strategies lean on the
boundaries the ABI draws: int64 and beyond (BigInt), 7 and 8 bytes (small
string vs. String object), NaN payloads and -0.0, map sizes around the small
map's 4 slots, string keys longer than one 8-byte hash word.
"""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from . import config

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# ---------------------------------------------------------------- scalars

ints = st.deferred(lambda: _ints)
_ints = st.one_of(
    st.integers(INT64_MIN, INT64_MAX),
    st.sampled_from([0, 1, -1, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
                     1 << 31, -(1 << 31), (1 << 32) - 1, 1 << 62]),
    # just beyond int64 on either side, and far beyond: BigInt objects
    st.integers(INT64_MAX + 1, INT64_MAX + 1000),
    st.integers(INT64_MIN - 1000, INT64_MIN - 1),
    st.integers(1 << 63, 1 << 300),
    st.integers(-(1 << 300), -(1 << 63) - 1),
    st.sampled_from([1 << 64, -(1 << 64), (1 << 64) - 1, (1 << 127), -(1 << 127) - 1,
                     (1 << 128) - 1, -(1 << 128)]),
).map(lambda v: ("int", v))


def _bits(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


_EXP_ALL_ONES = 0x7FF0000000000000
#: NaNs with arbitrary sign and payload (quiet and signalling), and infinities.
nan_bits = st.builds(lambda sign, payload: (sign << 63) | _EXP_ALL_ONES | payload,
                     st.integers(0, 1), st.integers(1, (1 << 52) - 1))
floats = st.one_of(
    st.floats(allow_nan=False).map(_bits),
    st.sampled_from([_bits(0.0), _bits(-0.0), _bits(float("inf")), _bits(float("-inf")),
                     _bits(float("nan")), 1, (1 << 63) | 1, _bits(5e-324), _bits(1.7976931348623157e308)]),
    nan_bits,
    st.integers(0, (1 << 64) - 1),  # any bit pattern at all
).map(lambda bits: ("float", bits))

bools = st.booleans().map(lambda b: ("bool", b))
nones = st.just(("none",))

#: Characters of 1, 2, 3 and 4 UTF-8 bytes, NUL, and surrogate-free text.
_chars = st.one_of(st.sampled_from(["a", "Z", "0", "\x00", "\x7f", "\u00e9", "\u4e16", "\U0001f389", " "]),
                   st.characters(blacklist_categories=("Cs",)))


def _text_with_byte_length(n: int):
    """ASCII text of exactly ``n`` bytes (so byte-length boundaries are hit exactly)."""
    return st.text(st.characters(min_codepoint=0, max_codepoint=127), min_size=n, max_size=n)


texts = st.one_of(
    st.sampled_from(["", "a", "abcdefg", "abcdefgh", "\x00", "a\x00b\x00c\x00d", "\u00e9\u00e9\u00e9",
                     "\u00e9\u00e9\u00e9\u00e9", "\U0001f389\U0001f389"]),
    st.integers(500, 3000).map(lambda n: "x" * n),
    st.integers(0, 16).flatmap(_text_with_byte_length),  # around the 7/8-byte boundary
    st.text(_chars, max_size=12),
    st.text(_chars, min_size=20, max_size=300),  # long, non-ASCII
)
strs = texts.map(lambda s: ("str", s))

byte_strings = st.one_of(
    st.integers(0, 16).flatmap(lambda n: st.binary(min_size=n, max_size=n)),
    st.binary(min_size=17, max_size=200),
    st.sampled_from([b"", b"\x00", b"\x00" * 7, b"\x00" * 8, b"\xff" * 7, b"\xff" * 8]),
)
bytes_values = st.one_of(byte_strings.map(lambda b: ("bytes", b)),
                         byte_strings.map(lambda b: ("bytearray", b)))

#: dtype strings upstream accepts (``dtype_strings`` in ``test_runtime_state`` widens this).
DTYPE_BASES = ["int", "uint", "float", "bfloat", "bool", "handle", "float8_e3m4", "float8_e4m3",
               "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
               "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
               "float4_e2m1fn"]
SIMPLE_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "bfloat16", "bool", "handle", "int1", "int4",
                 "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float6_e2m3fn",
                 "float8_e8m0fnu", "int32x4", "float32x8", "uint8x16", "int64x2", "float16x2"]
dtypes = st.sampled_from(SIMPLE_DTYPES).map(lambda name: ("dtype", name))

#: The NumPy dtypes upstream's argument setter accepts (``numpy.dtype`` objects).
NUMPY_ARG_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64"]
#: NumPy dtypes it rejects (``numpy.dtype("bool")`` among them).
NUMPY_REJECTED_DTYPES = ["bool", "complex64", "complex128", "float128", "object", ">i4", "U3",
                         "datetime64[s]"]
numpy_dtypes = st.sampled_from(NUMPY_ARG_DTYPES + NUMPY_REJECTED_DTYPES).map(
    lambda name: ("npdtype", name))

DEVICE_NAMES = ["cpu", "cuda", "opencl", "vulkan", "metal", "vpi", "rocm", "ext_dev", "webgpu",
                "hexagon", "maia", "trn"]
devices = st.builds(lambda name, index: ("device", name, index),
                    st.sampled_from(DEVICE_NAMES),
                    st.one_of(st.integers(0, 8), st.integers(0, (1 << 31) - 1)))

void_pointers = st.one_of(st.integers(0, (1 << 64) - 1), st.sampled_from([0, 1, 4096])).map(
    lambda v: ("voidp", v))

EXCEPTION_NAMES = ["ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError",
                   "AttributeError", "AssertionError", "ZeroDivisionError",
                   "NotImplementedError", "ConformanceError"]
messages = st.one_of(st.sampled_from(["", "boom", "multi\nline", "\u00e9t\u00e9"]),
                     st.text(_chars, max_size=40))
exceptions = st.builds(lambda cls, msg: ("exception", cls, msg),
                       st.sampled_from(EXCEPTION_NAMES), messages)

shapes = st.lists(st.one_of(st.integers(0, 16), st.integers(INT64_MIN, INT64_MAX)),
                  max_size=6).map(lambda dims: ("Shape", dims))

numpy_scalars = st.one_of(
    st.builds(lambda v: ("npscalar", "int32", v), st.integers(-(1 << 31), (1 << 31) - 1)),
    st.builds(lambda v: ("npscalar", "uint64", v), st.integers(0, (1 << 64) - 1)),
    st.builds(lambda v: ("npscalar", "float32", v), st.floats(width=32, allow_nan=False)),
    st.builds(lambda v: ("npscalar", "float64", v), st.floats(allow_nan=False)),
    st.builds(lambda v: ("npscalar", "bool", v), st.booleans()),
)

opaques = st.integers(0, 100).map(lambda tag: ("opaque", tag))

# ---------------------------------------------------------------- arrays

#: Every NumPy dtype that crosses as a Tensor (DLPack-exportable).
NDARRAY_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "complex64", "complex128"]


@st.composite
def _layouts(draw, max_dims: int):
    """(shape, view, seed): 0-d to ``max_dims``-d, maybe empty, sliced or transposed."""
    ndim = draw(st.integers(0, max_dims))
    shape = [draw(st.integers(0 if draw(st.booleans()) else 1, 5)) for _ in range(ndim)]
    view = []
    if ndim and draw(st.booleans()):
        for dim in shape:
            if draw(st.booleans()):
                start = draw(st.integers(0, max(0, dim)))
                stop = draw(st.integers(start, max(start, dim)))
                step = draw(st.integers(1, 3))
                view.append((start, stop, step))
            else:
                view.append(None)
    if ndim >= 2 and draw(st.booleans()):
        view.append("T")
    seed = draw(st.integers(0, 1000))
    return shape, view, seed


@st.composite
def ndarray_recipes(draw, tag: str = "ndarray", max_dims: int = 4):
    """A NumPy array of any supported dtype, 0-d to 4-d, maybe sliced (strides, offset) or transposed."""
    dtype = draw(st.sampled_from(NDARRAY_DTYPES))
    return (tag, dtype) + draw(_layouts(max_dims))


ndarrays = ndarray_recipes()
tensors = ndarray_recipes(tag="tensor")

#: The torch dtypes a tensor crosses as (all but the complex ones, which upstream refuses).
TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"]


@st.composite
def torch_tensor_recipes(draw, max_dims: int = 4):
    """A CPU torch tensor of any dtype upstream takes, 0-d to 4-d, maybe zero-size, sliced
    (strides, offset) or with its axes reversed (``torch_values.make_torch_tensor``)."""
    return ("torch", draw(st.sampled_from(TORCH_DTYPES))) + draw(_layouts(max_dims))


#: No torch tensors when PyPy runs the front ends: torch has no PyPy build.
torch_tensors = torch_tensor_recipes() if config.TORCH_IN_WORKERS else st.nothing()

#: Compact arrays from a DLPack producer that leaves ``strides`` NULL (``dlpack_values.py``):
#: the runtime fills the row-major strides itself.
compact_tensors = st.builds(lambda dtype, shape, seed: ("compact", dtype, shape, seed),
                            st.sampled_from(NDARRAY_DTYPES),
                            st.lists(st.integers(0, 5), max_size=4), st.integers(0, 1000))

# ---------------------------------------------------------------- callables


def callables(values):
    """Python callables with a behaviour the worker reproduces (see ``child_recipes.make_callback``)."""
    return st.one_of(
        st.just(("callable", ("identity",))),
        values.map(lambda v: ("callable", ("return", v))),
        st.builds(lambda cls, msg: ("callable", ("raise", cls, msg)),
                  st.sampled_from(EXCEPTION_NAMES), messages),
        st.integers(0, 9).map(lambda tag: ("callable", ("record", tag))),
    )


# ---------------------------------------------------------------- nesting

#: Keys whose hash is by value under every runtime (object keys hash by
#: address, which differs between processes, so they would make dense-map
#: layouts incomparable).
long_keys = st.one_of(st.integers(9, 40).flatmap(_text_with_byte_length),
                      st.text(_chars, min_size=9, max_size=30)).map(lambda s: ("str", s))
map_keys = st.deferred(lambda: st.one_of(
    strs, long_keys, long_keys,
    st.integers(-50, 50).map(lambda v: ("int", v)), ints, floats, bools, nones,
    byte_strings.map(lambda b: ("bytes", b)), dtypes,
))

def _named(strategy):
    """``strategy`` behind a short repr (hypothesis prints strategy reprs in its events)."""
    return st.deferred(lambda: strategy)


scalars = _named(st.one_of(ints, floats, bools, nones, strs, bytes_values, dtypes, devices, shapes))
leaves = _named(st.one_of(scalars, ints, strs, floats, numpy_dtypes, void_pointers, exceptions,
                          numpy_scalars, opaques, ndarrays, torch_tensors))


def _extend(children):
    items = st.lists(children, max_size=6)
    pairs = st.lists(st.tuples(map_keys, children), max_size=12)
    return st.one_of(
        items.map(lambda xs: ("list", xs)),
        items.map(lambda xs: ("tuple", xs)),
        pairs.map(lambda kv: ("dict", kv)),
        items.map(lambda xs: ("Array", xs)),
        items.map(lambda xs: ("List", xs)),
        pairs.map(lambda kv: ("Map", kv)),
        pairs.map(lambda kv: ("Dict", kv)),
        # api.convert of plain Python containers: the Array/Map it makes is then passed on.
        st.one_of(items.map(lambda xs: ("list", xs)), items.map(lambda xs: ("tuple", xs)),
                  pairs.map(lambda kv: ("dict", kv))).map(lambda x: ("converted", x)),
    )


nested = _named(st.recursive(leaves, _extend, max_leaves=20))

#: Every encodable Python value (and a few the encoder must reject).
values = _named(st.one_of(scalars, leaves, nested, callables(scalars), tensors))

#: Values that are plain data (no callables, tensors or opaque objects): good map values.
plain_values = _named(st.recursive(scalars, _extend, max_leaves=10))


# ---------------------------------------------------------------- call programs

#: A register reference: the i-th value the program holds (modulo their number).
registers = st.integers(0, 15).map(lambda i: ("reg", i))

_int_like = st.one_of(ints, st.integers(-100, 100).map(lambda v: ("int", v)), bools, floats, strs,
                      nones, numpy_scalars)
_str_like = st.one_of(strs, bytes_values, ints, nones)
_seq_like = st.one_of(st.lists(st.one_of(ints, strs, floats), max_size=5).map(lambda xs: ("list", xs)),
                      st.lists(ints, max_size=5).map(lambda xs: ("Array", xs)),
                      st.lists(ints, max_size=5).map(lambda xs: ("tuple", xs)),
                      st.lists(plain_values, max_size=4).map(lambda xs: ("List", xs)),
                      ints, strs, nones)
_map_like = st.one_of(st.lists(st.tuples(map_keys, plain_values), max_size=8).map(lambda kv: ("dict", kv)),
                      st.lists(st.tuples(map_keys, plain_values), max_size=8).map(lambda kv: ("Map", kv)),
                      ints, nones, strs)
_dtype_like = st.one_of(dtypes, numpy_dtypes, st.sampled_from(SIMPLE_DTYPES + ["int", "float", "nope"]).map(
    lambda s: ("str", s)), ints)
_device_like = st.one_of(devices, st.sampled_from(["cpu", "cuda:1", "cuda", "rocm:3", "bogus:1", ""]).map(
    lambda s: ("str", s)), ints)
_tensor_like = st.one_of(ndarrays, tensors, torch_tensors, compact_tensors, ints, nones)


def _callback(depth_values):
    return st.one_of(
        callables(depth_values),
        st.builds(lambda fn, extra: ("callable", ("reenter", fn, extra)),
                  st.sampled_from(["pair", "echo", "add_int", "concat", "hold"]), depth_values),
        # Objects crossing back: the callback hands C++ an object the program holds
        # (alone or inside a list), whose count every later step reads.
        registers.map(lambda r: ("callable", ("return", r))),
        st.lists(registers, min_size=1, max_size=3).map(
            lambda rs: ("callable", ("return", ("list", rs)))),
        st.builds(lambda fn, r: ("callable", ("reenter", fn, r)),
                  st.sampled_from(["pair", "hold", "echo"]), registers),
    )


def _call(name, *args):
    return st.tuples(st.just("call"), st.just(name), st.tuples(*args).map(list))


def _maybe_reg(strategy):
    return st.one_of(strategy, strategy, registers)


_small_values = st.one_of(scalars, st.lists(ints, max_size=3).map(lambda xs: ("list", xs)))
_callbacks = _callback(_small_values)

#: One call into the ``calls`` kernel: well-typed arguments mostly, wrong ones often enough.
calls = _named(st.one_of(
    _call("echo", _maybe_reg(values)),
    _call("add_int", _maybe_reg(_int_like), _maybe_reg(_int_like)),
    _call("mul_float", _maybe_reg(st.one_of(floats, _int_like)), _maybe_reg(floats)),
    _call("not_bool", _maybe_reg(st.one_of(bools, _int_like))),
    _call("concat", _maybe_reg(_str_like), _maybe_reg(_str_like)),
    _call("str_len", _maybe_reg(_str_like)),
    _call("bytes_twice", _maybe_reg(st.one_of(bytes_values, strs))),
    _call("dtype_text", _maybe_reg(_dtype_like)),
    _call("device_parts", _maybe_reg(_device_like)),
    _call("optional_int", _maybe_reg(st.one_of(nones, ints, strs))),
    _call("int_or_str", _maybe_reg(st.one_of(ints, strs, floats, nones))),
    _call("tensor_info", _maybe_reg(_tensor_like)),
    _call("shape_of", _maybe_reg(_tensor_like)),
    _call("make_shape", _maybe_reg(_seq_like)),
    _call("shape_sum", _maybe_reg(st.one_of(shapes, _seq_like))),
    _call("array_len", _maybe_reg(_seq_like)),
    _call("array_get", _maybe_reg(_seq_like), _maybe_reg(st.integers(-6, 6).map(lambda v: ("int", v)))),
    _call("sum_ints", _maybe_reg(_seq_like)),
    _call("map_at", _maybe_reg(_map_like), _maybe_reg(map_keys)),
    _call("map_len", _maybe_reg(_map_like)),
    _call("map_with", _maybe_reg(_map_like), map_keys, plain_values),
    _call("pair", _maybe_reg(values), _maybe_reg(values)),
    _call("call", _maybe_reg(_callbacks), st.lists(_maybe_reg(_small_values), max_size=3).map(
        lambda xs: ("list", xs))),
    _call("call_twice", _maybe_reg(_callbacks), _maybe_reg(_small_values)),
    _call("call_each", st.lists(_callbacks, max_size=3).map(lambda xs: ("list", xs)), _small_values),
    _call("raise_error", st.one_of(st.sampled_from(EXCEPTION_NAMES + ["CustomKind", ""]).map(
        lambda s: ("str", s)), strs), st.one_of(messages.map(lambda m: ("str", m)), ints)),
    _call("hold", _maybe_reg(values)),
    _call("held", st.integers(-3, 3).map(lambda v: ("int", v))),
    _call("release"),
    # wrong arity: upstream's typed wrapper reports it
    st.tuples(st.just("call"), st.sampled_from(["add_int", "echo", "concat", "release"]),
              st.lists(_small_values, max_size=4)),
))

steps = st.one_of(calls, calls, calls,
                  st.integers(0, 15).map(lambda i: ("drop", i)),
                  st.just(("counts",)))

programs = _named(st.fixed_dictionaries({
    "init": st.lists(st.one_of(values, st.lists(ints, max_size=3).map(lambda xs: ("List", xs))),
                     max_size=4),
    "steps": st.lists(steps, min_size=1, max_size=10),
}))


# ---------------------------------------------------------------- container programs

_small_ints = st.integers(-8, 8)


#: Map sizes at every form and growth threshold: the small form's 2 and 4 slots (a 5th
#: entry makes it dense), and dense tables of 16, 32 and 64 slots, full at 99% load.
MAP_THRESHOLD_SIZES = [0, 1, 2, 3, 4, 5, 6, 15, 16, 17, 31, 32, 33, 63, 64]
#: List lengths at its capacities: 4 to start, then doubled.
LIST_THRESHOLD_SIZES = [0, 1, 3, 4, 5, 7, 8, 9, 16, 17]


def positions(size: int) -> list:
    """Indices at every position of a sequence of ``size``: first, middle, last, one past
    the end, and the negative ones."""
    return sorted({0, size // 2, max(0, size - 1), size, -1, -max(1, size), size + 1})


@st.composite
def container_programs(draw):
    """A container (made in Python or by C++) and operations on it, from both sides.

    Keys of lookups and mutations are mostly keys already in the map (its first,
    middle and last entries as likely as any), so hits, misses, overwrites and
    erasures (with their metadata and links) all occur; sizes sit around every
    form and growth threshold as often as anywhere, and runs of insertions
    (``py_extend``, fresh keys) carry a container across them.
    """
    kind = draw(st.sampled_from(["Map", "Dict", "Array", "List"]))
    is_map = kind in ("Map", "Dict")
    if is_map:
        size = draw(st.one_of(st.integers(0, 6), st.integers(0, 40),
                              st.sampled_from(MAP_THRESHOLD_SIZES)))
        pairs = draw(st.lists(st.tuples(map_keys, plain_values), min_size=size, max_size=size))
        keys = [k for k, _ in pairs]
        if draw(st.booleans()):
            make = ("py", (kind, pairs))
        else:
            make = ("cpp", kind.lower(), [x for kv in pairs for x in kv])
        if keys:
            ends = [keys[0], keys[len(keys) // 2], keys[-1]]
            key = st.one_of(st.sampled_from(keys), st.sampled_from(ends), map_keys, long_keys)
        else:
            key = st.one_of(map_keys, long_keys)
    else:
        size = draw(st.one_of(st.integers(0, 20), st.sampled_from(LIST_THRESHOLD_SIZES)))
        items = draw(st.lists(plain_values, min_size=size, max_size=size))
        if draw(st.booleans()):
            make = ("py", (kind, items))
        else:
            make = ("cpp", kind.lower(), items)
        key = st.one_of(_small_ints, st.sampled_from(positions(size))).map(lambda i: ("int", i))
    reads = [st.just(("py_items",)), st.just(("py_len",)), st.just(("dump",)),
             st.tuples(st.just("py_get"), key), st.tuples(st.just("py_contains"), plain_values)]
    if is_map:
        lookup = "cpp_map_lookup" if kind == "Map" else "cpp_dict_lookup"
        reads += [st.tuples(st.just("py_getdefault"), key), st.tuples(st.just(lookup), key),
                  st.tuples(st.just("py_contains"), key), st.tuples(st.just("cpp_map_count"), key),
                  st.just(("cpp_map_items",) if kind == "Map" else ("cpp_dict_items",)),
                  st.tuples(st.just("cpp_map_with"), key, plain_values)]
    else:
        reads += [st.tuples(st.just("py_slice"), st.one_of(st.none(), _small_ints),
                            st.one_of(st.none(), _small_ints),
                            st.one_of(st.none(), st.sampled_from([1, 2, -1, 3]))),
                  st.just(("cpp_seq_items",)), st.just(("cpp_list_items",))]
    writes = []
    if kind == "Dict":
        writes = [st.tuples(st.just("py_set"), key, plain_values),
                  st.tuples(st.just("py_del"), key), st.tuples(st.just("py_pop"), key),
                  st.tuples(st.just("cpp_dict_set"), key, plain_values),
                  st.tuples(st.just("cpp_dict_erase"), key), st.just(("py_clear",)),
                  st.just(("cpp_dict_clear",))]
    elif kind == "List":
        writes = [st.tuples(st.just("py_set"), key, plain_values), st.tuples(st.just("py_del"), key),
                  st.tuples(st.just("py_append"), plain_values),
                  st.tuples(st.just("py_insert"), st.one_of(_small_ints, st.sampled_from(
                      positions(size))), plain_values),
                  st.tuples(st.just("py_pop"), st.one_of(st.none(), key)),
                  st.just(("py_clear",)), st.just(("py_reverse",)),
                  st.tuples(st.just("py_extend"), st.lists(plain_values, max_size=9)),
                  st.tuples(st.just("cpp_list_push"), plain_values),
                  st.tuples(st.just("cpp_list_insert"), key, plain_values),
                  st.tuples(st.just("cpp_list_erase"), key),
                  st.tuples(st.just("cpp_list_set"), key, plain_values),
                  st.just(("cpp_list_pop_back",)),
                  st.tuples(st.just("cpp_list_reserve"), st.integers(0, 40).map(lambda n: ("int", n)))]
    # Writes weigh double: mutation sequences are what move a map between its forms.
    op = st.one_of(*(reads + writes + writes))
    ops = draw(st.lists(op, max_size=draw(st.sampled_from([4, 12, 30]))))
    return {"make": make, "ops": ops}


# ---------------------------------------------------------------- runtime state


@st.composite
def type_registrations(draw):
    """A registration sequence ``(key suffix, parent position, child slots, can overflow)``.

    Upstream's allocator: a type with ``n`` child slots owns a pool of ``n + 1``
    indices (its own first); a child with ``c`` slots takes ``c + 1`` from its
    parent's pool while they last, then (only if the parent may overflow, which
    a child of a non-overflowing parent never may) ``c + 1`` fresh indices.
    Upstream *aborts the process* when neither works, which is no behaviour
    to compare (``test_exhausted_child_slots`` covers ours), so parents are
    chosen among those that can take the child. A later entry may repeat an
    earlier key: GetOrAlloc returns the first index whatever the arguments.
    """
    count = draw(st.integers(1, 12))
    entries = []
    pool = []  # [allocated, size, can_overflow] per fresh entry; None for repeats
    for i in range(count):
        if entries and draw(st.integers(0, 5)) == 0:
            earlier = entries[draw(st.integers(0, len(entries) - 1))]
            entries.append(earlier)
            pool.append(None)
            continue
        child_slots = draw(st.integers(0, 4))
        candidates = [-1] + [j for j, p in enumerate(pool)
                             if p is not None and (p[0] + child_slots + 1 <= p[1] or p[2])]
        parent = draw(st.sampled_from(candidates))
        can_overflow = draw(st.booleans())
        if parent >= 0:
            p = pool[parent]
            if p[0] + child_slots + 1 <= p[1]:
                p[0] += child_slots + 1
            can_overflow = can_overflow and p[2]
        entries.append((f"T{i}", parent, child_slots, can_overflow))
        pool.append([1, child_slots + 1, can_overflow])
    return entries


#: dtype strings: upstream's grammar (base, bits, lanes, scalable lanes) and its near misses.
dtype_texts = st.one_of(
    st.builds(lambda base, bits, lanes: base + bits + lanes,
              st.sampled_from(DTYPE_BASES),
              st.one_of(st.just(""), st.integers(0, 300).map(str), st.sampled_from(["8", "16", "32", "64"])),
              st.one_of(st.just(""), st.integers(0, 70000).map(lambda n: f"x{n}"),
                        st.integers(1, 20).map(lambda n: f"xvscalex{n}"),
                        st.sampled_from(["x", "x0", "x-1", "xvscale", "xvscalex", "x4x4"]))),
    st.sampled_from(SIMPLE_DTYPES + ["void", "", "int", "float", "uint", "custom[foo]32",
                                     "complex64", "Int32", " int32", "int32 ", "float32x"]),
    st.text(st.sampled_from(list("intuflobax0123456789_ev[]")), max_size=14),
    st.text(_chars, max_size=10),
)

dtype_triples = st.tuples(
    st.one_of(st.integers(0, 20), st.sampled_from([63, 64, 127, 128, 129, 200, 255])),
    st.one_of(st.sampled_from([0, 1, 4, 6, 8, 16, 32, 64, 128, 255]), st.integers(0, 255)),
    st.one_of(st.sampled_from([0, 1, 2, 4, 16, 65535, 65532, 65534]), st.integers(0, 65535)),
)


# ---------------------------------------------------------------- forged results

#: Object recipes and the type index of the object each makes.
OBJECT_RECIPES = [
    (st.lists(ints, max_size=3).map(lambda xs: ("Array", xs)), 71),
    (st.lists(ints, max_size=3).map(lambda xs: ("List", xs)), 75),
    (st.lists(st.tuples(strs, ints), max_size=3).map(lambda kv: ("Map", kv)), 72),
    (st.lists(st.tuples(strs, ints), max_size=3).map(lambda kv: ("Dict", kv)), 76),
    (st.text(_chars, min_size=8, max_size=20).filter(lambda s: len(s.encode()) > 7).map(
        lambda s: ("str", s)), 65),
    (st.binary(min_size=8, max_size=20).map(lambda b: ("bytes", b)), 66),
    (st.integers(1 << 63, 1 << 200).map(lambda v: ("int", v)), 78),
    (st.lists(st.integers(0, 9), max_size=4).map(lambda d: ("Shape", d)), 69),
    (st.just(("callable", ("identity",))), 68),
    (st.integers(0, 9).map(lambda t: ("opaque", t)), 74),
    (st.builds(lambda m: ("exception", "ValueError", m), messages), 67),
    (ndarray_recipes(tag="tensor", max_dims=2), 70),
]
#: Type indices registered under every front end (static ones and those registered at load).
REGISTERED_OBJECT_INDICES = list(range(64, 79)) + list(range(128, 138))
#: Indices registered under none (79..127 are never allocated; huge ones are beyond any table).
UNREGISTERED_OBJECT_INDICES = st.one_of(st.integers(79, 127), st.integers(100_000, (1 << 31) - 1))


def _raw(type_index: int, padding: int, payload: int) -> bytes:
    return struct.pack("<iIQ", type_index, padding, payload)


_paddings = st.one_of(st.just(0), st.integers(0, (1 << 32) - 1))
_payloads = st.one_of(st.just(0), st.integers(0, (1 << 64) - 1), floats.map(lambda r: r[1]),
                      st.integers(-(1 << 63), (1 << 63) - 1).map(lambda v: v & ((1 << 64) - 1)))
_small_content = st.one_of(
    texts.map(lambda s: s.encode()[:8]), st.binary(max_size=8)).map(
    lambda b: int.from_bytes(b.ljust(8, b"\0"), "little"))


@st.composite
def forged_results(draw):
    """``(raw 16 bytes, object recipe or None, status)`` for ``probe.forge``: results a kernel
    could return, valid (any POD payload and padding, small strings of 0-7 bytes, objects of
    their own type) and invalid (borrowed-only kinds, lengths over 7, type indices no type
    has, object indices that contradict the header, NULL objects, bad statuses)."""
    kind = draw(st.sampled_from(["pod", "pod", "small", "small", "borrowed", "bad-index",
                                 "object", "object", "mismatch", "null-object", "unregistered",
                                 "dltensor", "status"]))
    pad = draw(_paddings)
    if kind == "pod":
        index = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 13]))
        payload = draw(_payloads)
        if index == 6 and draw(st.booleans()):  # mostly devices with a name
            payload = draw(st.integers(0, 20)) | (draw(st.integers(0, (1 << 32) - 1)) << 32)
        return (_raw(index, pad, payload), None, 0)
    if kind == "small":
        length = draw(st.one_of(st.integers(0, 7), st.integers(0, 7), st.integers(8, 300),
                                st.sampled_from([8, 9, (1 << 32) - 1])))
        return (_raw(draw(st.sampled_from([11, 12])), length, draw(_small_content)), None, 0)
    if kind == "borrowed":
        return (_raw(draw(st.sampled_from([8, 9, 10])), pad, draw(_payloads)), None, 0)
    if kind == "bad-index":
        index = draw(st.one_of(st.integers(14, 63), st.integers(-(1 << 31), -1)))
        return (_raw(index, pad, draw(_payloads)), None, 0)
    if kind in ("object", "mismatch", "unregistered"):
        recipe_strategy, own_index = draw(st.sampled_from(OBJECT_RECIPES))
        recipe = draw(recipe_strategy)
        if kind == "object":
            index = own_index
        elif kind == "mismatch":
            index = draw(st.sampled_from([i for i in REGISTERED_OBJECT_INDICES if i != own_index]))
        else:
            index = draw(UNREGISTERED_OBJECT_INDICES)
        return (_raw(index, pad, 0), recipe, 0)
    if kind == "null-object":
        return (_raw(draw(st.sampled_from(REGISTERED_OBJECT_INDICES)), pad, 0), None, 0)
    if kind == "dltensor":
        return (_raw(7, pad, 0), draw(ndarray_recipes(tag="tensor", max_dims=2)), 0)
    status = draw(st.sampled_from([1, 2, 5, -1, -2, -3, (1 << 31) - 1, -(1 << 31)]))
    return (_raw(draw(st.sampled_from([0, 1, 3])), 0, draw(_payloads)), None, status)


#: The object a forged result's recipe makes, by recipe tag: its own type index.
def object_index_of(recipe) -> int:
    tag = recipe[0]
    return {"Array": 71, "List": 75, "Map": 72, "Dict": 76, "str": 65, "bytes": 66, "int": 78,
            "Shape": 69, "callable": 68, "opaque": 74, "exception": 67, "tensor": 70}[tag]
