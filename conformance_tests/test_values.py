"""Values: what each front end hands a kernel, bit for bit, and what comes back.

``test_*_encoding``: for generated Python values, the probe kernel reports
the 16 bytes of the ``TVMFFIAny`` it received (type index, padding or small
length, payload) and, for objects, the object body: header type index and
padding, reference counts, cells (lengths, where each pointer points:
inline offset, NULL or elsewhere), inline payloads (string bytes with their
NUL, BigInt words, shape dims, sequence and map slots, map metadata bytes and
links, tensor metadata and every element), recursively. Every front end must
produce upstream's report exactly.

``test_echo_roundtrip`` and ``test_convert``: the same values through
``calls.echo`` (a C++ ``Any -> Any`` kernel) and through ``api.convert``,
normalized (floats by their bits, plain str/bytes distinguished from their
object-backed subclasses, objects by the probe's report) must come back
exactly as upstream returns them.
"""

from __future__ import annotations

from hypothesis import assume, example, given
from hypothesis import strategies as st

from . import strategies as S
from .compare import assert_agree
from .known import without_known_divergences
from .profiles import conformance

BATCH = st.lists


def _check_dump(pool, recipes):
    recipes = without_known_divergences(recipes)
    assume(recipes)
    assert_agree(pool.run("dump", recipes), recipes, "values encode differently")


_LONG_KEYS = [("str", f"a-key-longer-than-one-word-{i}") for i in range(12)]


@conformance(examples=300)
@given(BATCH(st.one_of(S.ints, S.floats, S.bools, S.nones), min_size=1, max_size=8))
@example([("int", (1 << 63)), ("int", -(1 << 63) - 1), ("float", 0x8000000000000000),
          ("float", 0x7FF0000000000001), ("float", 0xFFF8000000000123)])
def test_scalar_encoding(pool, recipes):
    _check_dump(pool, recipes)


@conformance(examples=300)
@given(BATCH(st.one_of(S.strs, S.bytes_values), min_size=1, max_size=8))
@example([("str", "abcdefg"), ("str", "abcdefgh"), ("bytes", b"1234567"), ("bytes", b"12345678"),
          ("str", "\u00e9\u00e9\u00e9"), ("str", "\u00e9\u00e9\u00e9\u00e9"), ("str", "a\x00b")])
def test_string_encoding(pool, recipes):
    _check_dump(pool, recipes)


@conformance(examples=300)
@given(BATCH(st.one_of(S.dtypes, S.numpy_dtypes, S.devices, S.void_pointers, S.shapes,
                       S.numpy_scalars, S.exceptions, S.opaques), min_size=1, max_size=8))
def test_misc_encoding(pool, recipes):
    _check_dump(pool, recipes)


@conformance(examples=200)
@given(BATCH(st.one_of(S.ndarrays, S.tensors, S.torch_tensors, S.compact_tensors),
             min_size=1, max_size=4))
@example([("compact", "int32", [2, 3], 1), ("compact", "float64", [3, 1, 2], 2),
          ("compact", "uint8", [4], 3), ("compact", "bool", [], 4)])
def test_ndarray_encoding(pool, recipes):
    _check_dump(pool, recipes)


@conformance(examples=250)
@given(BATCH(S.nested, min_size=1, max_size=3))
@example([("dict", [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS)]),
          ("Map", [(k, ("str", "v" * i)) for i, k in enumerate(_LONG_KEYS[:5])])])
def test_container_encoding(pool, recipes):
    _check_dump(pool, recipes)


@conformance(examples=150)
@given(BATCH(S.callables(S.plain_values), min_size=1, max_size=4))
def test_callable_encoding(pool, recipes):
    _check_dump(pool, recipes)


@conformance(examples=300)
@given(BATCH(S.values, min_size=1, max_size=4))
@example([("str", "abcdefgh"), ("bytes", b"12345678"), ("int", 1 << 64),
          ("dict", [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS)])])
def test_echo_roundtrip(pool, recipes):
    recipes = without_known_divergences(recipes)
    assume(recipes)
    assert_agree(pool.run("echo", recipes), recipes, "values come back from C++ differently")


@conformance(examples=200)
@given(BATCH(S.values, min_size=1, max_size=4))
def test_convert(pool, recipes):
    recipes = without_known_divergences(recipes, context="convert")
    assume(recipes)
    assert_agree(pool.run("convert", recipes), recipes, "api.convert differs")
