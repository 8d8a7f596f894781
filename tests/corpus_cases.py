"""The kernel corpus: Python-API cases and the result upstream must give for each.

Every case is a snippet of Python written for upstream's ``tvm_ffi`` (bound
as ``api``) that calls one of the corpus kernels (``tests/kernels``), and the
exact normalized result (see ``frontend_harness.normalize``) upstream gives.
``test_kernel_corpus.py`` checks upstream against these expectations and each
front end under test against upstream.

Names a case can use: ``api``, ``np``, the kernels ``introspect``, ``values``,
``containers``, ``tensors``, ``callbacks``, ``objects`` (C++ against upstream's
headers) and ``ckernel`` (C99 against ours), and what ``SETUP`` defines.
Cases must not depend on one another: any case may run in a fresh
interpreter after a crash.
"""

from __future__ import annotations

import struct
from typing import Any, List, NamedTuple

from frontend_harness import (
    ARR, B, BY, DEV, DICT, DT, F, FUNCTION, I, LST, MAP, MODULE, ND, NONE, OBJ, PYDICT,
    PYLIST, PYTUPLE, RAISES, S, SHAPE, TENSOR, ints,
)


class Case(NamedTuple):
    """One snippet, what upstream returns for it, and what that proves."""

    id: str
    code: str
    expect: Any
    proves: str


#: Runs once per interpreter before the cases.
SETUP = '''
import gc
import struct


class CorpusError(RuntimeError):
    """An error kind known only to this test: registered both ways."""


api.register_error("CorpusError", CorpusError)


@api.register_object("corpus.Point")
class Point(api.Object):
    """corpus.Point from corpus_objects.cc; its fields and methods come from reflection."""


def raiser(cls, message):
    """A callback that raises cls(message) whatever it is called with."""
    def raise_it(*args):
        raise cls(message)
    return raise_it


class SubValueError(ValueError):
    """A subclass nobody registered: its kind falls back to RuntimeError."""


api.register_global_func("corpus.py_mul", lambda a, b: a * b)


api.register_global_func("corpus.py_neg", lambda x: -x)


@api.register_global_func("corpus.py_pair")
def py_pair(x):
    return [x, x]


def float_from_bits(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def first_error_class(thunk):
    """The class name of what thunk() raises (for errors whose text is platform noise)."""
    try:
        thunk()
    except Exception as error:
        return type(error).__name__
    return None
'''

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def _bits(value: float) -> int:
    return struct.unpack("<q", struct.pack("<d", value))[0]


def _float_from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _mismatch(func: str, signature: str, expected: str, got: str, index: int = 0) -> Any:
    return RAISES("TypeError", f"Mismatched type on argument #{index} when calling: `{func}{signature}`. "
                               f"Expected `{expected}` but got `{got}`")


def _squares(n: int) -> List[Any]:
    return [(S(f"k{i}"), I(i * i)) for i in range(n)]


NON_ASCII = "gr\u00fc\u00df \u4e16\u754c \U0001f389"

# --------------------------------------------------------------------------
# integers
# --------------------------------------------------------------------------

INTS = [
    Case("int.zero", "values.echo(0)", I(0), "0 round-trips as an int"),
    Case("int.max_from_cpp", "values.int64_max()", I(INT64_MAX), "INT64_MAX made in C++ reaches Python exactly"),
    Case("int.min_from_cpp", "values.int64_min()", I(INT64_MIN), "INT64_MIN made in C++ reaches Python exactly"),
    Case("int.bounds_roundtrip", f"[values.echo(v) for v in ({INT64_MAX}, {INT64_MIN}, -1)]",
         PYLIST(I(INT64_MAX), I(INT64_MIN), I(-1)), "int64 bounds survive Python -> C++ -> Python"),
    Case("int.wraps_in_cpp", f"values.int_add_wrapping({INT64_MAX}, 1)", I(INT64_MIN),
         "C++ sees a true int64 (wrap-around happens in C++, not in Python)"),
    Case("int.to_text", f"[values.int_to_text(v) for v in ({INT64_MIN}, 0, 42)]",
         PYLIST(S(str(INT64_MIN)), S("0"), S("42")), "C++ reads the int64 value itself, not a copy"),
    Case("int.encoding", f"[introspect.arg_type_index(v) for v in (0, -1, {INT64_MAX}, {INT64_MIN})]",
         PYLIST(*ints(1, 1, 1, 1)), "every int64-range int is passed as kTVMFFIInt"),
    Case("int.bool_accepted_as_int", "values.int_to_text(True)", S("1"), "a bool converts to an int64 parameter"),
    Case("int.float_rejected", "values.int_to_text(1.5)",
         _mismatch("int_to_text", "(0: int) -> str", "int", "float"), "a float is not an int64"),
    Case("int.small_str_rejected", "values.int_to_text('3')",
         _mismatch("int_to_text", "(0: int) -> str", "int", "ffi.SmallStr"),
         "a short str is passed as a small string (the error names its type key)"),
    Case("int.long_str_rejected", "values.int_to_text('three hundred')",
         _mismatch("int_to_text", "(0: int) -> str", "int", "ffi.String"), "a long str is passed as a String object"),
    Case("int.none_rejected", "values.int_to_text(None)",
         _mismatch("int_to_text", "(0: int) -> str", "int", "None"), "None is kTVMFFINone"),
    Case("int.numpy_scalars", "[values.echo(v) for v in (np.int8(-3), np.int64(2**62), np.uint64(2**63))]",
         PYLIST(I(-3), I(2**62), I(2**63)), "NumPy integer scalars convert like Python ints (beyond int64 too)"),
]

# --------------------------------------------------------------------------
# integers beyond int64 (BigInt)
# --------------------------------------------------------------------------

BIGINTS = [
    Case("bigint.encoding",
         f"[(introspect.arg_type_index(v), str(introspect.arg_type_key(v))) for v in ({INT64_MAX + 1}, {INT64_MIN - 1}, 2**200)]",
         PYLIST(*[PYTUPLE(I(78), S("ffi.BigInt"))] * 3), "ints outside int64 are passed as BigInt objects"),
    Case("bigint.just_beyond", f"[values.echo(v) for v in ({INT64_MAX + 1}, {INT64_MIN - 1}, 2**64, -(2**64))]",
         PYLIST(I(INT64_MAX + 1), I(INT64_MIN - 1), I(2**64), I(-(2**64))), "values just past the int64 bounds round-trip"),
    Case("bigint.huge", "[values.bigint_echo(v) for v in (2**200, -(2**200) + 7, 3**100)]",
         PYLIST(I(2**200), I(-(2**200) + 7), I(3**100)), "multi-word two's-complement values round-trip exactly"),
    Case("bigint.small_via_bigint_param", "[values.bigint_echo(v) for v in (5, -5, True)]",
         PYLIST(I(5), I(-5), I(1)), "a BigInt parameter accepts ordinary ints and bools"),
    Case("bigint.add_carries", f"values.bigint_add({INT64_MAX}, 1)", I(INT64_MAX + 1),
         "C++ BigInt arithmetic on int64 inputs yields a Python int beyond int64"),
    Case("bigint.mul", "values.bigint_mul(-(2**64), 2**64 + 1)", I(-(2**64) * (2**64 + 1)),
         "C++ reads two BigInts and returns a bigger one"),
    Case("bigint.pow2_from_cpp", "[values.bigint_pow2(n) for n in (62, 63, 64, 100)]",
         PYLIST(I(2**62), I(2**63), I(2**64), I(2**100)), "C++-built BigInts reach Python; those that fit int64 arrive as plain ints"),
    Case("bigint.rejected_by_int64", f"values.int_add_wrapping({INT64_MAX + 1}, 1)",
         _mismatch("int_add_wrapping", "(0: int, 1: int) -> int", "int", "ffi.BigInt"),
         "a BigInt does not silently truncate into int64"),
    Case("bigint.rejected_by_float", "values.float_echo(2**70)",
         _mismatch("float_echo", "(0: float) -> float", "float", "ffi.BigInt"), "a BigInt is not converted to a double"),
]

# --------------------------------------------------------------------------
# floats
# --------------------------------------------------------------------------

FLOATS = [
    Case("float.roundtrip", "[values.float_echo(x) for x in (1.5, -2.25, 1e308, 5e-324, 0.1)]",
         PYLIST(F(1.5), F(-2.25), F(1e308), F(5e-324), F(0.1)), "doubles round-trip bit for bit, subnormals included"),
    Case("float.nan_from_cpp", "values.float_nan()", F(float("nan")), "a C++ NaN is a Python NaN"),
    Case("float.inf_from_cpp", "values.float_inf()", F(float("inf")), "a C++ infinity is a Python inf"),
    Case("float.neg_inf_roundtrip", "values.float_echo(float('-inf'))", F(float("-inf")), "-inf round-trips"),
    Case("float.neg_zero_from_cpp", "values.float_neg_zero()", F(-0.0), "C++ -0.0 keeps its sign in Python"),
    Case("float.neg_zero_roundtrip", "values.float_echo(-0.0)", F(-0.0), "-0.0 keeps its sign both ways"),
    Case("float.neg_zero_bits", "(values.float_bits(-0.0), values.float_sign_bit(-0.0))",
         PYTUPLE(I(INT64_MIN), B(True)), "C++ receives the exact bits of -0.0"),
    Case("float.nan_bits", "(values.float_bits(float('nan')), values.float_is_nan(float('nan')))",
         PYTUPLE(I(_bits(float("nan"))), B(True)), "Python's NaN reaches C++ as the same quiet NaN"),
    Case("float.nan_payload",
         "[values.float_bits(float_from_bits(b)) for b in (0x7ff8000000000abc, 0xfff8000000000001)]",
         PYLIST(I(0x7FF8000000000ABC), I(_bits(_float_from_bits(0xFFF8000000000001)))),
         "NaN payloads and sign pass through untouched"),
    Case("float.nan_payload_back", "values.float_echo(float_from_bits(0x7ff8000000000abc)).hex()",
         S("nan"), "a NaN with a payload comes back as a NaN"),
    Case("float.from_int_and_bool", "(values.float_echo(3), values.float_echo(True), values.float_half(3))",
         PYTUPLE(F(3.0), F(1.0), F(1.5)), "ints and bools convert to a double parameter"),
    Case("float.encoding", "(introspect.arg_type_index(1.5), introspect.arg_payload_bits(1.5))",
         PYTUPLE(I(3), I(_bits(1.5))), "a float is kTVMFFIFloat carrying the IEEE bits"),
    Case("float.str_rejected", "values.float_echo('x')",
         _mismatch("float_echo", "(0: float) -> float", "float", "ffi.SmallStr"), "a str is not a double"),
    Case("float.numpy_scalars", "[values.echo(v) for v in (np.float64(2.5), np.float32(1.5), np.float16(-0.5))]",
         PYLIST(F(2.5), F(1.5), F(-0.5)), "NumPy float scalars convert to doubles"),
]

# --------------------------------------------------------------------------
# bools and None
# --------------------------------------------------------------------------

BOOLS_AND_NONE = [
    Case("bool.not", "[values.bool_not(v) for v in (True, False, 0, 1, 2)]",
         PYLIST(B(False), B(True), B(True), B(False), B(False)), "bools and ints convert to a bool parameter"),
    Case("bool.from_cpp", "values.bool_true()", B(True), "a C++ bool is a Python bool (not an int)"),
    Case("bool.encoding", "(introspect.arg_type_index(True), introspect.arg_payload_bits(True), introspect.arg_type_index(np.True_))",
         PYTUPLE(I(2), I(1), I(74)), "True is kTVMFFIBool with payload 1; a NumPy bool is an opaque Python object"),
    Case("bool.float_rejected", "values.bool_not(1.0)",
         _mismatch("bool_not", "(0: bool) -> bool", "bool", "float"), "a float is not a bool"),
    Case("bool.numpy_bool_roundtrip", "values.echo(np.True_)", ["npscalar", "bool", B(True)],
         "a NumPy bool travels as an opaque object and comes back as itself"),
    Case("none.void_return", "values.returns_void()", NONE, "a void C++ function returns None"),
    Case("none.null_any_return", "values.returns_null_any()", NONE, "a null Any returns None"),
    Case("none.is_none", "(values.is_none(None), values.is_none(0), values.is_none(False))",
         PYTUPLE(B(True), B(False), B(False)), "None is distinct from 0 and False in C++"),
    Case("none.encoding", "(introspect.arg_type_index(None), str(introspect.arg_type_key(None)))",
         PYTUPLE(I(0), S("None")), "None is kTVMFFINone"),
]

# --------------------------------------------------------------------------
# strings
# --------------------------------------------------------------------------

STRINGS = [
    Case("str.small_vs_long_encoding",
         "[introspect.arg_type_index(s) for s in ('', 'a', 'abcdefg', 'abcdefgh', 'x' * 1000)]",
         PYLIST(*ints(11, 11, 11, 65, 65)), "at most 7 bytes is a small string, more is a String object"),
    Case("str.small_counts_bytes_not_chars",
         "[introspect.arg_type_index(s) for s in ('\\u00e4\\u00f6\\u00fc', '\\u00e4\\u00f6\\u00fc\\u00df', '\\U0001f389')]",
         PYLIST(*ints(11, 65, 11)), "the 7-byte limit counts UTF-8 bytes (6 bytes small, 8 bytes long)"),
    Case("str.small_payload", "[introspect.arg_payload_bits(s) for s in ('', 'abc', 'abcdefg')]",
         PYLIST(I(0), I(0x636261), I(0x67666564636261)), "small strings are stored inline, NUL-padded, little-endian"),
    Case("str.utf8_length", f"values.str_byte_len({NON_ASCII!r})", I(len(NON_ASCII.encode())),
         "C++ receives UTF-8"),
    Case("str.utf8_bytes", "values.str_utf8('a\\x00\\u00e9')", BY(b"a\x00\xc3\xa9"),
         "C++ receives the exact UTF-8 bytes, embedded NUL included"),
    Case("str.nul_inside_long", "values.str_byte_len('0123456789\\x00abc')", I(14),
         "a long string with a NUL keeps its full length"),
    Case("str.of_len", "[values.str_of_len(n) for n in (0, 7, 8, 30)]",
         PYLIST(S(""), S("abcdefg"), S("abcdefgh"), S("abcdefghijklmnopqrstuvwxyzabcd")),
         "small and long strings made in C++ read back correctly"),
    Case("str.concat", "values.str_concat('short', ' and a longer tail')", S("short and a longer tail"),
         "a small and a long string combine in C++"),
    Case("str.repeat_long", "values.str_repeat('ab', 500)", S("ab" * 500), "a 1000-byte string made in C++"),
    Case("str.non_ascii_from_cpp", "values.str_non_ascii()", S(NON_ASCII), "UTF-8 from C++ decodes to the same text"),
    Case("str.nul_from_cpp", "values.str_with_nul()", S("ab\x00cd"), "an embedded NUL from C++ is kept"),
    Case("str.long_roundtrip", "values.echo('x' * 1000 + '\\u00e9')", S("x" * 1000 + "\u00e9"),
         "a long non-ASCII string round-trips"),
    Case("str.is_str", "[isinstance(values.str_of_len(n), str) for n in (3, 30)]", PYLIST(B(True), B(True)),
         "returned strings are str instances, small or long"),
    Case("str.bytes_rejected", "values.str_byte_len(b'abc')",
         _mismatch("str_byte_len", "(0: str) -> int", "str", "ffi.SmallBytes"), "bytes are not a str"),
    Case("str.surrogate_rejected", "first_error_class(lambda: values.echo('\\ud800'))", S("UnicodeEncodeError"),
         "a lone surrogate cannot be encoded as UTF-8"),
]

# --------------------------------------------------------------------------
# bytes
# --------------------------------------------------------------------------

BYTES = [
    Case("bytes.small_vs_long_encoding",
         "[introspect.arg_type_index(b) for b in (b'', b'1234567', b'12345678')]",
         PYLIST(*ints(12, 12, 66)), "at most 7 bytes is small bytes, more is a Bytes object"),
    Case("bytes.small_payload", "introspect.arg_payload_bits(b'ab')", I(0x6261), "small bytes are stored inline"),
    Case("bytes.hex_nul", "values.bytes_hex(b'\\x00\\xffab')", S("00ff6162"), "NUL and 0xff reach C++ intact"),
    Case("bytes.hex_long", "values.bytes_hex(bytes(range(20)))", S(bytes(range(20)).hex()),
         "long bytes reach C++ intact"),
    Case("bytes.nul_from_cpp", "values.bytes_with_nul()", BY(b"\x00x\x00y\xff"), "bytes with NULs come back from C++"),
    Case("bytes.of_len", "[values.bytes_of_len(n) for n in (0, 3, 300)]",
         PYLIST(BY(b""), BY(bytes(range(3))), BY(bytes(i & 0xFF for i in range(300)))), "small and long bytes from C++"),
    Case("bytes.bytearray", "values.bytes_hex(bytearray(b'ab'))", S("6162"), "a bytearray converts to bytes"),
    Case("bytes.str_rejected", "values.bytes_hex('abc')",
         _mismatch("bytes_hex", "(0: bytes) -> str", "bytes", "ffi.SmallStr"), "a str is not bytes"),
    Case("bytes.is_bytes", "[isinstance(values.bytes_of_len(n), bytes) for n in (3, 30)]",
         PYLIST(B(True), B(True)), "returned bytes are bytes instances, small or long"),
]

# --------------------------------------------------------------------------
# dtype and device
# --------------------------------------------------------------------------

DTYPES_AND_DEVICES = [
    Case("dtype.to_text", "[values.dtype_to_text(d) for d in (api.dtype('float32'), 'int8', np.dtype('float16'), 'bfloat16')]",
         PYLIST(S("float32"), S("int8"), S("float16"), S("bfloat16")),
         "api.dtype, dtype strings and NumPy dtypes all convert to DLDataType"),
    Case("dtype.fields", "[values.dtype_fields(d) for d in ('bfloat16', 'float32x4', 'bool', 'uint8')]",
         PYLIST(ARR(*ints(4, 16, 1)), ARR(*ints(2, 32, 4)), ARR(*ints(6, 8, 1)), ARR(*ints(1, 8, 1))),
         "dtype strings parse to the right code/bits/lanes"),
    Case("dtype.from_cpp", "[values.dtype_make(c, b, l) for c, b, l in ((2, 32, 1), (0, 32, 4), (1, 1, 1), (4, 16, 1), (6, 8, 1))]",
         PYLIST(DT("float32"), DT("int32x4"), DT("uint1"), DT("bfloat16"), DT("bool")),
         "DLDataType from C++ becomes api.dtype with upstream's names"),
    Case("dtype.encoding", "(introspect.arg_type_index(api.dtype('float32')), introspect.arg_payload_bits(api.dtype('float32')))",
         PYTUPLE(I(5), I(0x12002)), "a dtype is kTVMFFIDataType with the packed DLDataType"),
    Case("dtype.unknown", "api.dtype('notatype')", RAISES("ValueError", "unknown dtype `notatype`"),
         "unknown dtype names are rejected with upstream's message"),
    Case("dtype.unknown_string_arg", "values.dtype_to_text('notatype')", RAISES("ValueError", "unknown dtype `notatype`"),
         "a str passed to a DLDataType parameter is parsed (and can fail)"),
    Case("device.fields", "[values.device_fields(d) for d in (api.device('cpu'), api.device('cuda', 2), 'cpu:3', api.device('cuda:1'))]",
         PYLIST(ARR(*ints(1, 0)), ARR(*ints(2, 2)), ARR(*ints(1, 3)), ARR(*ints(2, 1))),
         "devices (and device strings) convert to DLDevice"),
    Case("device.from_cpp", "[values.device_make(t, i) for t, i in ((1, 0), (2, 1), (8, 0))]",
         PYLIST(DEV("cpu:0"), DEV("cuda:1"), DEV("metal:0")), "DLDevice from C++ becomes api.Device"),
    Case("device.encoding", "(introspect.arg_type_index(api.device('cuda:1')), introspect.arg_payload_bits(api.device('cuda:1')))",
         PYTUPLE(I(6), I(0x100000002)), "a device is kTVMFFIDevice with the packed DLDevice"),
    Case("device.equality", "(api.device('cpu', 0) == api.device('cpu:0'), str(api.device('cuda', 3)))",
         PYTUPLE(B(True), S("cuda:3")), "device spellings agree"),
    Case("device.unknown", "api.device('nonsense')", RAISES("ValueError", "Unknown device: nonsense"),
         "unknown device names are rejected"),
]

# --------------------------------------------------------------------------
# generic conversion through Any
# --------------------------------------------------------------------------

CONVERSIONS = [
    Case("any.tuple_is_array", "values.echo((1, 'x'))", ARR(I(1), S("x")), "a tuple converts to an Array"),
    Case("any.empty_containers", "(values.echo([]), values.echo({}))", PYTUPLE(ARR(), MAP()),
         "empty list and dict convert to empty Array and Map"),
    Case("any.opaque_identity", "o = object()\nresult = (values.echo(o) is o, str(introspect.arg_type_key(o)))",
         PYTUPLE(B(True), S("ffi.OpaquePyObject")), "an arbitrary Python object travels opaquely and comes back as itself"),
    Case("any.numpy_array_is_tensor", "(str(introspect.arg_type_key(np.zeros(2))), str(introspect.arg_type_key(np.array(5))))",
         PYTUPLE(S("ffi.Tensor"), S("ffi.Tensor")), "NumPy arrays (0-d included) are passed as Tensors"),
    Case("any.callable_is_function", "str(introspect.arg_type_key(lambda: 1))", S("ffi.Function"),
         "a Python callable is passed as a Function"),
    Case("any.convert_scalars", "[api.convert(v) for v in (1, 1.5, None, True, 'abc')]",
         PYLIST(I(1), F(1.5), NONE, B(True), S("abc")), "api.convert leaves scalars as Python values"),
    Case("any.convert_containers", "(api.convert([1, [2]]), api.convert({'a': (1,)}))",
         PYTUPLE(ARR(I(1), ARR(I(2))), MAP((S("a"), ARR(I(1))))), "api.convert builds Arrays and Maps recursively"),
    Case("any.convert_callable", "f = api.convert(lambda x: x * 3)\nresult = (isinstance(f, api.Function), f(5))",
         PYTUPLE(B(True), I(15)), "api.convert wraps a callable as a Function"),
]

# --------------------------------------------------------------------------
# Array
# --------------------------------------------------------------------------

ARRAYS = [
    Case("array.sum_list", "containers.array_sum_int([1, 2, 3])", I(6), "a list converts to Array<int>"),
    Case("array.sum_tuple", "containers.array_sum_int((4, 5))", I(9), "a tuple converts to Array<int>"),
    Case("array.sum_api_array", "containers.array_sum_int(api.Array([1, 2]))", I(3), "an api.Array passes as is"),
    Case("array.sum_api_list", "containers.array_sum_int(api.List([1, 2]))", I(3), "an api.List converts to Array<int>"),
    Case("array.bool_element", "containers.array_sum_int([1, True])", I(2), "a bool element converts to int"),
    Case("array.element_type_error", "containers.array_sum_int([1, 'x'])",
         _mismatch("array_sum_int", "(0: Array<int>) -> int", "Array<int>", "Array[index 1: ffi.SmallStr]"),
         "a wrong element is reported with its index and type key"),
    Case("array.float_element_error", "containers.array_sum_int([1, 2.0])",
         _mismatch("array_sum_int", "(0: Array<int>) -> int", "Array<int>", "Array[index 1: float]"),
         "floats are not ints inside an Array either"),
    Case("array.not_an_array", "containers.array_size(5)",
         _mismatch("array_size", "(0: Array<Any>) -> int", "Array<Any>", "int"), "an int is not an Array"),
    Case("array.iota", "(containers.array_iota(5), containers.array_iota(0))",
         PYTUPLE(ARR(*ints(0, 1, 2, 3, 4)), ARR()), "Arrays built in C++ read back in order"),
    Case("array.python_indexing", "a = containers.array_iota(5)\nresult = (len(a), a[0], a[-1], a[1:3], list(reversed(a)))",
         PYTUPLE(I(5), I(0), I(4), PYLIST(*ints(1, 2)), PYLIST(*ints(4, 3, 2, 1, 0))),
         "a C++ Array supports len, indexing (negative too), slicing and reversal"),
    Case("array.python_index_error", "containers.array_iota(5)[5]",
         RAISES("IndexError", "Index out of range. size: 5, got index 5"), "out-of-range indexing from Python"),
    Case("array.large_sum_in_python", "sum(containers.array_iota(10000))", I(49995000),
         "a 10000-element Array iterates fully"),
    Case("array.reverse_mixed", "containers.array_reverse([1, 'two', 3.0, None, [4]])",
         ARR(ARR(I(4)), NONE, F(3.0), S("two"), I(1)), "mixed elements survive a trip through Array<Any>"),
    Case("array.at_out_of_range", "containers.array_at([1, 2, 3], 3)",
         RAISES("IndexError", "Index 3 out of bounds 3"), "C++'s bounds check surfaces as IndexError"),
    Case("array.at_negative", "containers.array_at([1, 2, 3], -1)",
         RAISES("IndexError", "Index -1 out of bounds 3"), "C++ does not wrap negative indices"),
    Case("array.copy_on_write", "a = api.Array([1, 2])\nb = containers.array_appended(a, 3)\nresult = (a, b)",
         PYTUPLE(ARR(*ints(1, 2)), ARR(*ints(1, 2, 3))), "C++ push_back copies a shared Array; Python's is untouched"),
    Case("array.immutable_in_python", "first_error_class(lambda: api.Array([1]).append(2))", S("AttributeError"),
         "api.Array has no append"),
    Case("array.nested_from_cpp", "containers.array_nested()",
         ARR(ARR(*ints(1, 2)), ARR(I(3), ARR(I(4), S("five"))), ARR(), S("six"), NONE), "nested Arrays built in C++"),
    Case("array.nested_to_cpp", "(containers.nested_int_sum([1, [2, [3, 'x', [4]]], True]), containers.nested_depth([1, [2, [3, [4]]]]))",
         PYTUPLE(I(10), I(4)), "nested lists convert to nested Arrays that C++ walks"),
    Case("array.nested_roundtrip", "values.echo([[1, [2.5, ['deep', None]]], []])",
         ARR(ARR(I(1), ARR(F(2.5), ARR(S("deep"), NONE))), ARR()), "nesting survives a round trip"),
]

# --------------------------------------------------------------------------
# Map
# --------------------------------------------------------------------------

MAP300_PY = "{f'k{i}': i * i for i in range(300)}"
LONG_KEYS = "{'key-number-%04d' % i: i for i in range(300)}"

MAPS = [
    Case("map.three_from_cpp", "containers.map_squares(3)", MAP(*_squares(3)), "a 3-entry Map built in C++"),
    Case("map.three_to_cpp", "(containers.map_check_squares({'k0': 0, 'k1': 1, 'k2': 4}, 3), containers.map_sum_values({'k0': 0, 'k1': 1, 'k2': 4}))",
         PYTUPLE(I(3), I(5)), "a 3-entry dict: C++ looks up every key and iterates every value"),
    Case("map.three_key_order", "containers.map_keys({'b': 1, 'a': 2, 'c': 3})", ARR(S("b"), S("a"), S("c")),
         "C++ iterates a small Map in insertion order"),
    Case("map.300_from_cpp", "containers.map_squares(300)", MAP(*_squares(300)),
         "a 300-entry Map built in C++ reads fully in Python, in its iteration order"),
    Case("map.300_to_cpp_lookup", f"containers.map_check_squares({MAP300_PY}, 300)", I(300),
         "C++ finds all 300 keys of a Python-built Map (hashing and probing agree)"),
    Case("map.300_to_cpp_iterate", f"containers.map_sum_values({MAP300_PY})", I(sum(i * i for i in range(300))),
         "C++ iterates all 300 entries of a Python-built Map"),
    Case("map.300_key_order_in_cpp", f"list(containers.map_keys({MAP300_PY})) == [f'k{{i}}' for i in range(300)]",
         B(True), "C++ iterates a 300-entry Python-built Map in insertion order"),
    Case("map.300_roundtrip", f"values.echo({MAP300_PY})", MAP(*_squares(300)), "a 300-entry Map round-trips in order"),
    Case("map.300_cpp_built_cpp_checked", "containers.map_check_squares(containers.map_squares(300), 300)", I(300),
         "a C++-built Map handed back to C++"),
    Case("map.300_python_lookup", "m = containers.map_squares(300)\nresult = (len(m), m['k0'], m['k150'], m['k299'], 'k300' in m, m.get('nope'))",
         PYTUPLE(I(300), I(0), I(22500), I(89401), B(False), NONE), "Python looks up keys of a C++-built Map"),
    Case("map.long_string_keys", f"m = api.Map({LONG_KEYS})\nresult = [containers.map_get(m, 'key-number-%04d' % i) for i in (0, 150, 299)] + [containers.map_get(m, 'key-number-0300')]",
         PYLIST(I(0), I(150), I(299), NONE), "C++ hashes String-object keys the same way the Map was built"),
    Case("map.int_keys_300", "m = api.Map({i * 7 - 3: str(i) for i in range(300)})\nresult = [containers.map_get(m, k) for k in (-3, 1047, 2090, 5)]",
         PYLIST(S("0"), S("150"), S("299"), NONE), "int keys hash and compare the same on both sides"),
    Case("map.int_keys_from_cpp", "containers.map_int_keys(4)",
         MAP((I(-3), S("v0")), (I(4), S("v1")), (I(11), S("v2")), (I(18), S("v3"))), "int-keyed Map from C++"),
    Case("map.key_equality", "m = {1: 'one'}\nresult = (containers.map_get(m, 1), containers.map_get(m, True), containers.map_get(m, 1.0))",
         PYTUPLE(S("one"), NONE, NONE), "Map keys compare by FFI type: True and 1.0 are not the key 1"),
    Case("map.mixed_keys_from_cpp", "containers.map_mixed_keys()",
         MAP((I(1), S("int one")), (S("1"), S("str one")), (F(2.5), S("float")), (S("a long string key!"), I(99))),
         "keys of several types in one C++ Map"),
    Case("map.copy_on_write", "a = api.Map({'x': 1})\nb = containers.map_with(a, 'y', 2)\nresult = (a, b)",
         PYTUPLE(MAP((S("x"), I(1))), MAP((S("x"), I(1)), (S("y"), I(2)))), "C++ Set copies a shared Map"),
    Case("map.missing_key_in_python", "containers.map_squares(3)['nope']", RAISES("KeyError", "'key is not in Map'"),
         "a missing key raises KeyError from Python indexing"),
    Case("map.size", "(containers.map_size({'a': 1, 'b': 2, 'c': 3}), containers.map_size(api.Map({})))",
         PYTUPLE(I(3), I(0)), "C++ sees the right size"),
    Case("map.nested_values", "values.echo({'a': [1, {'b': None}], 'c': {'d': 'e'}})",
         MAP((S("a"), ARR(I(1), MAP((S("b"), NONE)))), (S("c"), MAP((S("d"), S("e"))))), "Maps nest in Arrays and Maps"),
    Case("map.python_api", "m = api.Map({'a': 1, 'b': 2})\nresult = (len(m), 'a' in m, 'z' in m, list(m.keys()), list(m.values()), list(m.items()))",
         PYTUPLE(I(2), B(True), B(False), PYLIST(S("a"), S("b")), PYLIST(I(1), I(2)),
                 PYLIST(PYTUPLE(S("a"), I(1)), PYTUPLE(S("b"), I(2)))), "api.Map behaves as a read-only mapping"),
]

# --------------------------------------------------------------------------
# Dict and List (mutable, shared)
# --------------------------------------------------------------------------

MUTABLES = [
    Case("dict.mutated_by_cpp", "d = api.Dict({'a': 1})\ncontainers.dict_set(d, 'b', [1, 2])\ncontainers.dict_erase(d, 'a')\nresult = d",
         DICT((S("b"), ARR(*ints(1, 2)))), "C++ Set and erase on a Python-held Dict are seen from Python"),
    Case("dict.filled_300_by_cpp", "d = api.Dict()\ncontainers.dict_fill_squares(d, 300)\nresult = d",
         DICT(*_squares(300)), "C++ grows a Python-held Dict to 300 entries (rehashing in place)"),
    Case("dict.cleared_by_cpp", "d = api.Dict({'a': 1, 'b': 2})\ncontainers.dict_clear(d)\nresult = (d, len(d))",
         PYTUPLE(DICT(), I(0)), "C++ clear empties the Python-held Dict"),
    Case("dict.plain_dict_is_copied", "d = {'a': 1}\ncontainers.dict_set(d, 'b', 2)\nresult = d",
         PYDICT((S("a"), I(1))), "a plain dict passed to a Dict parameter is a converted copy"),
    Case("dict.from_cpp", "containers.dict_squares(3)", DICT(*_squares(3)), "a Dict built in C++"),
    Case("dict.mutated_by_python", "d = containers.dict_squares(3)\nd['extra'] = 10\ndel d['k0']\nresult = (containers.dict_size(d), d)",
         PYTUPLE(I(3), DICT((S("k1"), I(1)), (S("k2"), I(4)), (S("extra"), I(10)))),
         "Python mutates a C++-built Dict; C++ sees the new size"),
    Case("list.mutated_by_cpp", "l = api.List([1])\ncontainers.list_append(l, 'two')\ncontainers.list_set_item(l, 0, 0.5)\nresult = l",
         LST(F(0.5), S("two")), "C++ push_back and Set on a Python-held List are seen from Python"),
    Case("list.grown_by_cpp", "l = api.List([-1])\ncontainers.list_grow(l, 100)\nresult = (len(l), l[0], l[100], sum(l))",
         PYTUPLE(I(101), I(-1), I(99), I(4949)), "C++ reallocates a Python-held List's buffer repeatedly"),
    Case("list.popped_and_cleared_by_cpp", "l = api.List([1, 2, 3])\ncontainers.list_pop(l)\nafter_pop = list(l)\ncontainers.list_clear(l)\nresult = (after_pop, l)",
         PYTUPLE(PYLIST(*ints(1, 2)), LST()), "C++ pop_back and clear"),
    Case("list.plain_list_is_copied", "l = [1]\ncontainers.list_append(l, 2)\nresult = l",
         PYLIST(I(1)), "a plain list passed to a List parameter is a converted copy"),
    Case("list.from_cpp", "containers.list_make(3)", LST(S(""), S("x"), S("xx")), "a List built in C++"),
    Case("list.mutated_by_python", "l = containers.list_make(2)\nl.append('abcdefghijk')\nl[0] = None\nresult = (containers.list_size(l), l)",
         PYTUPLE(I(3), LST(NONE, S("x"), S("abcdefghijk"))), "Python mutates a C++-built List; C++ sees it"),
    Case("list.set_out_of_range", "containers.list_set_item(api.List([1]), 5, 1)",
         RAISES("IndexError", "Index 5 out of bounds 1"), "C++ bounds check on List"),
]

# --------------------------------------------------------------------------
# Shape, Optional, Variant
# --------------------------------------------------------------------------

SHAPES_OPTIONALS_VARIANTS = [
    Case("shape.from_cpp", "containers.shape_from_array([2, 3, 4])", SHAPE(2, 3, 4), "a Shape built in C++"),
    Case("shape.to_cpp", "[containers.shape_product(s) for s in (api.Shape((2, 3, 4)), (2, 3, 4), [2, 3, 4])]",
         PYLIST(I(24), I(24), I(24)), "api.Shape, tuples and lists convert to a Shape parameter"),
    Case("shape.empty", "(containers.shape_ndim(api.Shape(())), containers.shape_product(api.Shape(())))",
         PYTUPLE(I(0), I(1)), "the empty Shape"),
    Case("shape.roundtrip", "containers.shape_echo(api.Shape((5,)))", SHAPE(5), "a Shape round-trips"),
    Case("shape.encoding", "(introspect.arg_type_index(api.Shape((1, 2))), introspect.arg_type_index((1, 2)))",
         PYTUPLE(I(69), I(71)), "an api.Shape is a Shape object; a plain tuple is an Array"),
    Case("shape.is_tuple", "s = containers.shape_from_array([2, 3])\nresult = (s == (2, 3), len(s), s[1])",
         PYTUPLE(B(True), I(2), I(3)), "a returned Shape behaves as a tuple"),
    Case("optional.int", "(containers.optional_int_or(None), containers.optional_int_or(5))",
         PYTUPLE(I(-1), I(5)), "None and a value both fit Optional<int>"),
    Case("optional.wrong_type", "containers.optional_int_or('x')",
         _mismatch("optional_int_or", "(0: Optional<int>) -> int", "Optional<int>", "ffi.SmallStr"),
         "Optional<int> still rejects a str"),
    Case("optional.from_cpp", "(containers.optional_str(True), containers.optional_str(False), containers.optional_array(2), containers.optional_array(-1))",
         PYTUPLE(S("here"), NONE, ARR(*ints(0, 1)), NONE), "empty Optionals from C++ are None"),
    Case("variant.to_cpp", "[containers.variant_kind(v) for v in (1, 's', 'a long string value', [1], (2,))]",
         PYLIST(S("int"), S("str"), S("str"), S("array"), S("array")), "values land in the right Variant alternative"),
    Case("variant.wrong_type", "containers.variant_kind(1.5)",
         _mismatch("variant_kind", "(0: Variant<int, str, Array<Any>>) -> str", "Variant<int, str, Array<Any>>", "float"),
         "a value fitting no alternative is rejected"),
    Case("variant.from_cpp", "(containers.variant_make(True), containers.variant_make(False))",
         PYTUPLE(I(7), S("seven")), "a Variant result is its held value"),
]

# --------------------------------------------------------------------------
# Tensors
# --------------------------------------------------------------------------


def _describe(ndim, shape, strides, dtype, contiguous, byte_offset=0, device=(1, 0)):
    return ARR(I(ndim), ARR(*ints(*shape)), ARR(*ints(*strides)), S(dtype), I(device[0]), I(device[1]),
               I(byte_offset), B(contiguous))


def _values(*xs: float) -> Any:
    return ARR(*[F(float(x)) for x in xs])


TENSORS = [
    Case("tensor.numpy_direct", "tensors.tensor_describe(np.arange(6.0).reshape(2, 3))",
         _describe(2, (2, 3), (3, 1), "float64", True), "a NumPy array is accepted directly as a Tensor"),
    Case("tensor.from_dlpack", "tensors.tensor_describe(api.from_dlpack(np.arange(6.0).reshape(2, 3)))",
         _describe(2, (2, 3), (3, 1), "float64", True), "api.from_dlpack gives the same view"),
    Case("tensor.transposed", "a = np.arange(6.0).reshape(2, 3).T\nresult = (tensors.tensor_describe(a), tensors.tensor_values(a))",
         PYTUPLE(_describe(2, (3, 2), (1, 3), "float64", False), _values(0, 3, 1, 4, 2, 5)),
         "a transposed array keeps its strides; C++ reads it in logical order"),
    Case("tensor.sliced", "a = np.arange(6.0).reshape(2, 3)[:, 1:]\nresult = (tensors.tensor_describe(a), tensors.tensor_values(a))",
         PYTUPLE(_describe(2, (2, 2), (3, 1), "float64", False), _values(1, 2, 4, 5)), "a sliced (offset) array"),
    Case("tensor.stepped", "a = np.arange(12.0).reshape(3, 4)[::2, ::3]\nresult = (tensors.tensor_describe(a), tensors.tensor_values(a))",
         PYTUPLE(_describe(2, (2, 2), (8, 3), "float64", False), _values(0, 3, 8, 11)), "a stepped array"),
    Case("tensor.zero_dim", "a = np.array(3.5)\nresult = (tensors.tensor_describe(a), tensors.tensor_values(a))",
         PYTUPLE(_describe(0, (), (), "float64", True), _values(3.5)), "a 0-d array"),
    Case("tensor.zero_dim_from_dlpack", "t = api.from_dlpack(np.array(2.5))\nresult = (t.shape, t.strides, tensors.tensor_values(t))",
         PYTUPLE(PYTUPLE(), PYTUPLE(), _values(2.5)), "a 0-d tensor through from_dlpack"),
    Case("tensor.empty", "tensors.tensor_describe(np.zeros((0, 3)))", _describe(2, (0, 3), (0, 0), "float64", True),
         "an empty array (what upstream sees of NumPy's strides for it)"),
    Case("tensor.dtypes", "[tensors.tensor_describe(a)[3] for a in (np.arange(4, dtype=np.int32), np.array([True, False]), np.arange(4, dtype=np.uint8)[1:], np.ones(2, dtype=np.float16), np.ones(2, dtype=np.int64))]",
         PYLIST(S("int32"), S("bool"), S("uint8"), S("float16"), S("int64")), "NumPy dtypes map to DLPack dtypes"),
    Case("tensor.bool_values", "tensors.tensor_values(np.array([True, False, True]))", _values(1, 0, 1),
         "bool tensors carry one byte per element"),
    Case("tensor.scalar_rejected", "tensors.tensor_describe(np.float64(3.5))",
         _mismatch("tensor_describe", "(0: ffi.Tensor) -> Array<Any>", "ffi.Tensor", "float"),
         "a NumPy scalar is a float, not a Tensor"),
    Case("tensor.written_by_cpp_transposed", "b = np.zeros((2, 3), dtype=np.float32)\ntensors.tensor_fill_iota(b.T, 10)\nresult = b",
         ND("float32", (2, 3), [10.0, 12.0, 14.0, 11.0, 13.0, 15.0]), "C++ writes through a strided view into NumPy's memory"),
    Case("tensor.written_by_cpp_stepped", "b = np.zeros((4, 4))\ntensors.tensor_fill_iota(b[::2, 1::2], 1)\nresult = b",
         ND("float64", (4, 4), [0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0]),
         "C++ writes a stepped view; the untouched elements stay zero"),
    Case("tensor.write_error", "tensors.tensor_fill_iota(np.zeros(3, dtype=np.int32), 1)",
         RAISES("TypeError", "TensorFillIota wants a float tensor"), "a kernel's TypeError about a tensor"),
    Case("tensor.env_alloc_without_allocator", "tensors.env_alloc((2, 3), 'float32')",
         RAISES("RuntimeError", "TVMFFIEnvTensorAlloc: allocator is nullptr, likely because TVMFFIEnvSetDLPackManagedTensorAllocator has not been called."),
         "with NumPy arguments only, no environment allocator is installed"),
    Case("tensor.env_alloc", "tensors.env_alloc_with_kernel_allocator((2, 3), 'float32')",
         TENSOR("float32", (2, 3), (3, 1), "cpu:0", [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
         "a tensor from TVMFFIEnvTensorAlloc (kernel-installed DLPack allocator) reads in NumPy"),
    Case("tensor.env_alloc_aligned", "tensors.tensor_is_aligned(tensors.env_alloc_with_kernel_allocator((5,), 'int64'), 64)",
         B(True), "the kernel allocator's 64-byte alignment is preserved"),
    Case("tensor.env_alloc_numpy_math", "float(np.from_dlpack(tensors.env_alloc_with_kernel_allocator((2, 3), 'float32')).sum())",
         F(7.5), "NumPy computes on a C++-allocated tensor"),
    Case("tensor.nd_alloc", "tensors.nd_alloc((3,), 'int64')", TENSOR("int64", (3,), (1,), "cpu:0", [-1, 2, 5]),
         "a tensor from Tensor::FromNDAlloc (malloc/free in the kernel)"),
    Case("tensor.nd_alloc_2d", "np.from_dlpack(tensors.nd_alloc(api.Shape((2, 2)), api.dtype('float32')))",
         ND("float32", (2, 2), [0.0, 0.5, 1.0, 1.5]), "np.from_dlpack on a C++-allocated tensor"),
    Case("tensor.shared_memory_after_cpp_write", "t = tensors.env_alloc_with_kernel_allocator((4,), 'float32')\na = np.from_dlpack(t)\ntensors.tensor_fill_iota(t, 100)\nresult = a",
         ND("float32", (4,), [100.0, 101.0, 102.0, 103.0]), "NumPy's view and the C++ tensor share memory"),
    Case("tensor.transpose_view", "tensors.transpose_view(np.arange(6.0).reshape(2, 3))",
         TENSOR("float64", (3, 2), (1, 3), "cpu:0", [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]),
         "a strided view made in C++ (TVMFFITensorCreateUnsafeView) reads correctly in NumPy"),
    Case("tensor.view_keeps_source_alive", "v = tensors.transpose_view(np.arange(6.0).reshape(2, 3) * 2)\ngc.collect()\nresult = np.from_dlpack(v).copy()",
         ND("float64", (3, 2), [0.0, 6.0, 2.0, 8.0, 4.0, 10.0]), "a view owns its source after Python drops the array"),
    Case("tensor.view_error", "tensors.transpose_view(np.arange(6.0))",
         RAISES("ValueError", "TransposeView wants 2-d, got 1"), "a kernel's ValueError"),
    Case("tensor.attributes", "t = api.from_dlpack(np.arange(6, dtype=np.int32).reshape(3, 2))\nresult = (t.shape, t.strides, t.dtype, t.device)",
         PYTUPLE(PYTUPLE(*ints(3, 2)), PYTUPLE(*ints(2, 1)), DT("int32"), DEV("cpu:0")), "Tensor shape/strides/dtype/device"),
    Case("tensor.from_dlpack_of_tensor", "api.from_dlpack(tensors.nd_alloc((3,), 'int64'))",
         TENSOR("int64", (3,), (1,), "cpu:0", [-1, 2, 5]), "api.from_dlpack accepts an api.Tensor"),
    Case("tensor.require_contiguous", "api.from_dlpack(np.arange(6.0).reshape(2, 3).T, require_contiguous=True)",
         RAISES("RuntimeError", "FromDLPack: Tensor is not contiguous."), "from_dlpack's contiguity check"),
    Case("tensor.require_alignment", "api.from_dlpack(np.arange(64.0)[1:], require_alignment=64)",
         RAISES("RuntimeError", "FromDLPack: Data is not aligned to 64 bytes."), "from_dlpack's alignment check"),
    Case("stream.default", "tensors.current_stream(api.device('cpu'))", I(0), "no stream is set by default"),
    Case("stream.raw_stream_context",
         "dev = api.device('cpu')\nwith api.use_raw_stream(dev, 0x1234):\n    inside = (tensors.current_stream(dev), api.get_raw_stream(dev))\nresult = (inside, tensors.current_stream(dev))",
         PYTUPLE(PYTUPLE(I(0x1234), I(0x1234)), I(0)), "use_raw_stream sets the stream C++ sees, and restores it"),
    Case("stream.per_device",
         "with api.use_raw_stream(api.device('cuda:1'), 77):\n    result = (tensors.current_stream(api.device('cuda:1')), tensors.current_stream(api.device('cuda:0')), tensors.current_stream(api.device('cpu')))",
         PYTUPLE(I(77), I(0), I(0)), "streams are per device (the table needs no GPU)"),
]

# --------------------------------------------------------------------------
# Functions both ways
# --------------------------------------------------------------------------

FUNCTIONS = [
    Case("callback.no_args", "callbacks.call0(lambda: 42)", I(42), "C++ calls a Python callable with no arguments"),
    Case("callback.one_arg", "callbacks.call1(lambda x: x * 2, 21)", I(42), "C++ passes an int to Python and reads the result"),
    Case("callback.sees_python_types",
         "callbacks.call1(lambda x: (isinstance(x, str), isinstance(x, api.Array)), 'a long string here')",
         ARR(B(True), B(False)), "a String argument arrives as a str (a returned tuple becomes an Array)"),
    Case("callback.packed_args", "callbacks.call_packed(lambda *a: a, [1, 'x', None])", ARR(I(1), S("x"), NONE),
         "C++ calls with a packed argument array"),
    Case("callback.packed_no_args", "callbacks.call_packed(lambda *a: len(a), [])", I(0), "zero packed arguments"),
    Case("callback.many_calls", "callbacks.sum_of_calls(lambda i: i * i, 100)", I(328350), "C++ calls back 100 times"),
    Case("callback.bad_result", "callbacks.sum_of_calls(lambda i: 'x', 2)",
         RAISES("TypeError", "Cannot convert from type `ffi.SmallStr` to `int`"), "C++ rejects a callback result of the wrong type"),
    Case("callback.map", "callbacks.map_with(lambda v: v + 1, [1, 2, 3])", ARR(*ints(2, 3, 4)), "a Python callable mapped over an Array in C++"),
    Case("callback.each_kind_values", "callbacks.call_with_each_kind(lambda *a: a)",
         ARR(I(-7), F(2.5), B(True), NONE, S("tiny"), S("a longer string"), BY(b"b\x00b"), ARR(I(1), S("x")),
             DT("float16"), DEV("cpu:0")), "every C++ value kind reaches a Python callback"),
    Case("callback.each_kind_types",
         "callbacks.call_with_each_kind(lambda *a: [type(a[0]) is int, type(a[1]) is float, type(a[2]) is bool, a[3] is None, isinstance(a[4], str), isinstance(a[5], str), isinstance(a[6], bytes), isinstance(a[7], api.Array), isinstance(a[8], api.dtype), isinstance(a[9], api.Device)])",
         ARR(*[B(True)] * 10), "callback arguments are proper Python values"),
    Case("callback.result_encoding",
         "[str(callbacks.result_type_key(lambda v=v: v)) for v in ('abc', 'abcdefgh', b'abc', b'abcdefgh', 2**64, [1], (1,), {1: 2}, None, 1.0, True, 3, object(), np.zeros(2), api.Shape((1,)), (lambda: 1), api.dtype('int8'), api.device('cpu'))]",
         PYLIST(*[S(k) for k in ("ffi.SmallStr", "ffi.String", "ffi.SmallBytes", "ffi.Bytes", "ffi.BigInt", "ffi.Array",
                                 "ffi.Array", "ffi.Map", "None", "float", "bool", "int", "ffi.OpaquePyObject", "ffi.Tensor",
                                 "ffi.Shape", "ffi.Function", "DataType", "Device")]),
         "values returned by Python callbacks are encoded exactly as upstream encodes them"),
    Case("callback.reentrant", "callbacks.call1(lambda x: callbacks.call1(lambda y: y * 2, x) + 1, 5)", I(11),
         "Python -> C++ -> Python -> C++ -> Python nesting"),
    Case("callback.cpp_function_as_callback", "callbacks.call1(callbacks.make_adder(3), 4)", I(7),
         "a C++ closure passed back to C++ as a callback"),
    Case("closure.adder", "f = callbacks.make_adder(10)\nresult = (f(5), isinstance(f, api.Function))",
         PYTUPLE(I(15), B(True)), "a C++ closure returned to Python is a callable Function"),
    Case("closure.counter", "c = callbacks.make_counter(5)\nresult = (c(), c(), c())", PYTUPLE(*ints(5, 6, 7)),
         "a C++ closure keeps state between Python calls"),
    Case("closure.compose_python", "callbacks.compose(lambda x: x + 1, lambda x: x * 10)(4)", I(41),
         "a C++ closure capturing two Python callables"),
    Case("closure.compose_cpp", "callbacks.compose(callbacks.make_adder(1), callbacks.make_adder(2))(4)", I(7),
         "a C++ closure capturing two C++ closures"),
    Case("closure.captures_objects", "f = callbacks.make_greeter('hello there', lambda s: s.upper())\ngc.collect()\nresult = f('bob')",
         S("HELLO THERE, BOB"), "a closure keeps its captured String and Python callable alive"),
    Case("closure.variadic", "callbacks.make_arg_counter()(1, 2, 'x', None)", I(4), "a packed C++ closure sees every argument"),
    Case("closure.arg_type_error", "callbacks.make_adder(1)('x')",
         _mismatch("", "(0: int) -> int", "int", "ffi.SmallStr"), "an anonymous typed closure reports a mismatch"),
    Case("closure.arg_count_error", "callbacks.make_adder(1)(1, 2)",
         RAISES("TypeError", "Mismatched number of arguments when calling: `(0: int) -> int`. Expected 1 but got 2 arguments"),
         "a typed closure checks the argument count"),
    Case("function.wrong_arg_count", "values.echo()",
         RAISES("TypeError", "Mismatched number of arguments when calling: `echo(0: Any) -> Any`. Expected 1 but got 0 arguments"),
         "exported functions check the argument count"),
]

# --------------------------------------------------------------------------
# errors: C++ -> Python
# --------------------------------------------------------------------------

CPP_ERRORS = [
    Case("error.cpp_value", "callbacks.throw_value_error(3)", RAISES("ValueError", "value 3 is not allowed"),
         "TVM_FFI_THROW(ValueError) raises ValueError with the streamed message"),
    Case("error.cpp_type", "callbacks.throw_type_error()", RAISES("TypeError", "wrong type here"), "TypeError"),
    Case("error.cpp_index", "callbacks.throw_index_error()", RAISES("IndexError", "index 9 out of range"), "IndexError"),
    Case("error.cpp_key", "callbacks.throw_key_error()", RAISES("KeyError", "'no such key: k'"),
         "KeyError (str() of a KeyError quotes its message)"),
    Case("error.cpp_attribute", "callbacks.throw_attribute_error()", RAISES("AttributeError", "no attribute z"), "AttributeError"),
    Case("error.cpp_runtime", "callbacks.throw_runtime_error()", RAISES("RuntimeError", "runtime trouble"), "RuntimeError"),
    Case("error.cpp_assertion", "callbacks.throw_assertion_error()", RAISES("AssertionError", "assertion failed"), "AssertionError"),
    Case("error.cpp_memory", "callbacks.throw_memory_error()", RAISES("MemoryError", "out of memory (pretend)"), "MemoryError"),
    Case("error.cpp_not_implemented", "callbacks.throw_not_implemented_error()", RAISES("RuntimeError", "not implemented yet"),
         "NotImplementedError is not a registered kind: it surfaces as RuntimeError"),
    Case("error.cpp_overflow", "callbacks.throw_overflow_error()", RAISES("RuntimeError", "too big"),
         "OverflowError is not a registered kind either"),
    Case("error.cpp_internal", "callbacks.throw_internal_error()", RAISES("RuntimeError", "internal invariant broken"),
         "InternalError surfaces as RuntimeError"),
    Case("error.cpp_unknown_kind", "callbacks.raise_kind('SomethingElse', 'se')", RAISES("RuntimeError", "se"),
         "an unknown kind surfaces as RuntimeError"),
    Case("error.cpp_custom_kind", "callbacks.throw_corpus_error()", RAISES("CorpusError", "custom kind from C++"),
         "a kind registered with register_error raises the registered class"),
    Case("error.cpp_custom_kind_dynamic", "callbacks.raise_kind('CorpusError', 'cc')", RAISES("CorpusError", "cc"),
         "the registered class is found by kind name at run time"),
    Case("error.cpp_custom_is_subclass", "first_error_class(callbacks.throw_corpus_error) == 'CorpusError' and issubclass(CorpusError, RuntimeError)",
         B(True), "the registered class is the user's own class"),
    Case("error.cpp_multiline", "callbacks.throw_multiline()", RAISES("ValueError", "first line"),
         "a multi-line message (first line compared)"),
    Case("error.cpp_multiline_full", "try:\n    callbacks.throw_multiline()\nexcept ValueError as e:\n    result = str(e)",
         S("first line\nsecond line\nthird"), "the whole multi-line message reaches Python"),
    Case("error.cpp_non_ascii", "callbacks.throw_non_ascii()", RAISES("ValueError", "caf\u00e9 \u2713"),
         "an error message is decoded as UTF-8"),
    Case("error.cpp_check_failed", "callbacks.fail_check(2)",
         RAISES("RuntimeError", "Check failed: x == 1 (2 vs. 1) : x must be one"), "TVM_FFI_ICHECK failures"),
    Case("error.cpp_std_exception", "callbacks.throw_std_exception()", RAISES("RuntimeError", "a std::runtime_error"),
         "a std::exception escaping a kernel becomes RuntimeError"),
    Case("error.python_exception_is_exception", "try:\n    callbacks.throw_value_error(1)\nexcept Exception as e:\n    result = (isinstance(e, ValueError), e.args)",
         PYTUPLE(B(True), PYTUPLE(S("value 1 is not allowed"))), "the raised exception is a real ValueError carrying the message"),
    Case("error.as_argument_becomes_error_object", "callbacks.call1(lambda e: type(e).__name__, ValueError('x'))", S("Error"),
         "an exception passed as an argument travels as an ffi.Error object"),
]

# --------------------------------------------------------------------------
# errors: Python -> C++ (-> Python)
# --------------------------------------------------------------------------


def _caught(kind: str, message: str) -> Any:
    return ARR(S("caught"), S(kind), S(message))


PY_ERRORS = [
    Case(f"error.py_{cls.lower()}_seen_by_cpp", f"callbacks.call_catching(raiser({cls}, {msg!r}), 0)", _caught(kind, seen),
         f"C++ sees a Python {cls} as kind {kind!r}")
    for cls, msg, kind, seen in [
        ("ValueError", "bad", "ValueError", "bad"),
        ("TypeError", "line1\nline2", "TypeError", "line1\nline2"),
        ("KeyError", "kk", "KeyError", "'kk'"),
        ("IndexError", "idx", "IndexError", "idx"),
        ("AttributeError", "at", "AttributeError", "at"),
        ("AssertionError", "as", "AssertionError", "as"),
        ("MemoryError", "mem", "MemoryError", "mem"),
        ("RuntimeError", "rt", "RuntimeError", "rt"),
        ("CorpusError", "cust", "CorpusError", "cust"),
        ("NotImplementedError", "ni", "RuntimeError", "ni"),
        ("ZeroDivisionError", "zd", "RuntimeError", "zd"),
        ("SubValueError", "sub", "RuntimeError", "sub"),
        ("Exception", "", "RuntimeError", ""),
    ]
] + [
    Case("error.py_division_seen_by_cpp", "callbacks.call_catching(lambda x: 1 / x, 0)", _caught("RuntimeError", "division by zero"),
         "a genuine Python error inside a callback"),
    Case("error.py_no_error", "callbacks.call_catching(lambda x: 1 / x, 2)", ARR(S("ok"), F(0.5)), "no error: C++ gets the value"),
    Case("error.cpp_error_through_python_to_cpp", "callbacks.call_catching(lambda x: callbacks.throw_value_error(x), 5)",
         _caught("ValueError", "value 5 is not allowed"), "a C++ error crossing Python back into C++ keeps its kind"),
] + [
    Case(f"error.py_{cls.lower()}_propagates", f"callbacks.call_propagating(raiser({cls}, {msg!r}), 0)", RAISES(pycls, shown),
         f"a Python {cls} raised in a callback propagates through C++ as {pycls}")
    for cls, msg, pycls, shown in [
        ("ValueError", "pv", "ValueError", "pv"),
        ("KeyError", "pk", "KeyError", "\"'pk'\""),
        ("IndexError", "pi", "IndexError", "pi"),
        ("CorpusError", "cp", "CorpusError", "cp"),
        ("ZeroDivisionError", "zd", "RuntimeError", "zd"),
        ("SubValueError", "sub", "RuntimeError", "sub"),
        # (not KeyboardInterrupt: upstream turns it into a RuntimeError, ours give it
        # back as itself, as issue 20 asks; tests/stress_cases.py checks that)
    ]
] + [
    Case("error.propagates_past_cpp_work", "callbacks.call_then_add(raiser(AttributeError, 'att'), 1)",
         RAISES("AttributeError", "att"), "the error unwinds C++ code after the callback"),
    Case("error.rethrown_with_new_kind", "callbacks.call_rethrowing_as(raiser(IndexError, 'orig'), 0, 'TypeError')",
         RAISES("TypeError", "wrapped IndexError: orig"), "C++ catches a Python error and raises its own kind"),
    Case("error.rethrown_as_custom_kind", "callbacks.call_rethrowing_as(raiser(CorpusError, 'orig'), 0, 'CorpusError')",
         RAISES("CorpusError", "wrapped CorpusError: orig"), "a custom kind both ways"),
    Case("error.cpp_through_python_propagates", "callbacks.call_propagating(lambda x: callbacks.throw_corpus_error(), 0)",
         RAISES("CorpusError", "custom kind from C++"), "C++ -> Python -> C++ -> Python keeps the custom kind"),
    Case("error.recovery", "try:\n    callbacks.call_propagating(raiser(ValueError, 'x'), 0)\nexcept ValueError:\n    pass\nresult = callbacks.call1(lambda x: x + 1, 1)",
         I(2), "calls work normally after an error"),
]

# --------------------------------------------------------------------------
# reflected objects and global functions
# --------------------------------------------------------------------------

POINT = OBJ("corpus.Point", ("x", I(3)), ("y", F(-1.5)), ("label", S("pt")), ("tags", ARR(I(1), S("a"))))

OBJECTS = [
    Case("object.fields", "objects.make_point(3, -1.5, 'pt', [1, 'a'])", POINT,
         "a reflected C++ object's fields read as Python attributes"),
    Case("object.registered_class", "p = objects.make_point(3, -1.5, 'pt', [])\nresult = (isinstance(p, Point), isinstance(p, api.Object), type(p).__name__)",
         PYTUPLE(B(True), B(True), S("Point")), "register_object makes returned objects instances of the class"),
    Case("object.method", "objects.make_point(3, -1.5, 'pt', []).norm1()", F(4.5), "a reflected method"),
    Case("object.method_returns_object", "objects.make_point(3, -1.5, 'pt', [1, 'a']).scaled(2.0)",
         OBJ("corpus.Point", ("x", I(6)), ("y", F(-3.0)), ("label", S("pt")), ("tags", ARR(I(1), S("a")))),
         "a reflected method returning an object"),
    Case("object.static_method", "Point.origin()",
         OBJ("corpus.Point", ("x", I(0)), ("y", F(0.0)), ("label", S("origin")), ("tags", ARR())), "a reflected static method"),
    Case("object.constructor", "p = Point(1, 2.0, 'ctor', [None])\nresult = (p, isinstance(p, Point))",
         PYTUPLE(OBJ("corpus.Point", ("x", I(1)), ("y", F(2.0)), ("label", S("ctor")), ("tags", ARR(NONE))), B(True)),
         "calling the registered class runs the reflected constructor"),
    Case("object.python_writes_field", "p = objects.make_point(3, -1.5, 'pt', [1, 2])\np.y = 9.25\nresult = objects.describe_point(p)",
         S("pt(3, 9.250000) tags=2"), "a def_rw field written from Python is seen by C++"),
    Case("object.cpp_writes_field", "p = objects.make_point(3, -1.5, 'pt', [])\nobjects.set_point_y(p, 4.0)\nresult = p.y",
         F(4.0), "a field written by C++ is seen from Python"),
    Case("object.readonly_field", "p = objects.make_point(3, -1.5, 'pt', [])\nresult = (first_error_class(lambda: setattr(p, 'x', 5)), p.x)",
         PYTUPLE(S("AttributeError"), I(3)), "a def_ro field cannot be set (the message is CPython's, so only the class is compared)"),
    Case("object.field_type_checked", "p = objects.make_point(3, -1.5, 'pt', [])\np.y = 'str'",
         RAISES("TypeError", "Cannot convert from type `ffi.SmallStr` to `float`"), "a field setter converts and checks"),
    Case("object.missing_attribute", "objects.make_point(3, -1.5, 'pt', []).nope",
         RAISES("AttributeError", "'Point' object has no attribute 'nope'"), "an unknown attribute"),
    Case("object.unregistered_type_fields", "c = objects.make_circle('c1', 2.0)\nresult = (c, isinstance(c, api.Object))",
         PYTUPLE(OBJ("corpus.Circle", ("name", S("c1")), ("radius", F(2.0))), B(True)),
         "an object of a type Python never registered still exposes its (inherited) fields"),
    Case("object.cpp_type_check", "(objects.is_shape_base(objects.make_circle('c', 1.0)), objects.is_shape_base(objects.make_point(0, 0.0, '', [])))",
         PYTUPLE(B(True), B(False)), "C++ checks the runtime type (type index and ancestors)"),
    Case("object.wrong_object_type", "objects.describe_point(objects.make_circle('c', 1.0))",
         _mismatch("describe_point", "(0: corpus.Point) -> str", "corpus.Point", "corpus.Circle"),
         "an object of the wrong type is rejected by type key"),
    Case("global.cpp_registered", "(api.get_global_func('corpus.cpp_add')(2, 3), api.get_global_func('corpus.cpp_join')(['a', 'b', 'c'], '-'))",
         PYTUPLE(I(5), S("a-b-c")), "global functions registered by a C++ kernel at load"),
    Case("global.cpp_registered_returns_object", "api.get_global_func('corpus.cpp_make_point')(1, 1.0, 'g', [])",
         OBJ("corpus.Point", ("x", I(1)), ("y", F(1.0)), ("label", S("g")), ("tags", ARR())), "a C++ global returning an object"),
    Case("global.missing", "api.get_global_func('corpus.nope')", RAISES("ValueError", "Cannot find global function corpus.nope"),
         "a missing global raises ValueError"),
    Case("global.missing_allowed", "api.get_global_func('corpus.nope', allow_missing=True)", NONE, "allow_missing returns None"),
    Case("global.python_registered_called_by_cpp", "objects.call_global('corpus.py_mul', [6, 7])", I(42),
         "C++ finds and calls a global registered from Python"),
    Case("global.python_decorator_registered", "(objects.call_global('corpus.py_pair', ['z']), api.get_global_func('corpus.py_pair')('q'))",
         PYTUPLE(ARR(S("z"), S("z")), ARR(S("q"), S("q"))), "register_global_func as a decorator"),
    Case("global.python_registered_is_function", "isinstance(api.get_global_func('corpus.py_mul'), api.Function)", B(True),
         "get_global_func returns a Function"),
    Case("global.duplicate_rejected", "api.register_global_func('corpus.py_mul', lambda a, b: 0)",
         RAISES("RuntimeError", "Global Function `corpus.py_mul` is already registered"), "re-registration needs override"),
    Case("global.override", "api.register_global_func('corpus.py_override', lambda: 1)\napi.register_global_func('corpus.py_override', lambda: 2, override=True)\nresult = (objects.call_global('corpus.py_override', []), api.get_global_func('corpus.py_override')())",
         PYTUPLE(I(2), I(2)), "override=True replaces a global for both sides"),
    Case("global.registered_by_cpp_at_runtime", "objects.register_adder('corpus.adder', 100)\nresult = api.get_global_func('corpus.adder')(1)",
         I(101), "a global C++ registers during a call is visible to Python"),
    Case("global.cpp_missing", "objects.call_global('corpus.missing', [])",
         RAISES("ValueError", "global function corpus.missing is not registered"), "C++ sees an absent global as absent"),
    Case("global.has", "(objects.has_global('corpus.py_mul'), objects.has_global('corpus.cpp_add'), objects.has_global('corpus.nothing'))",
         PYTUPLE(B(True), B(True), B(False)), "C++ lookup of Python, C++ and absent globals"),
]

# --------------------------------------------------------------------------
# modules
# --------------------------------------------------------------------------

MODULES = [
    Case("module.is_module", "(values, isinstance(values, api.Module), isinstance(values, api.Object))",
         PYTUPLE(MODULE, B(True), B(True)), "load_module returns a Module (an Object)"),
    Case("module.get_function", "(values.get_function('echo')(1), isinstance(values.echo, api.Function))",
         PYTUPLE(I(1), B(True)), "get_function and attribute access reach the same export"),
    Case("module.missing_attribute", "values.nope", RAISES("AttributeError", "Module has no function 'nope'"),
         "a missing export is an AttributeError"),
    Case("module.missing_get_function", "values.get_function('nope')", RAISES("AttributeError", "Module has no function 'nope'"),
         "get_function of a missing export"),
    Case("module.load_missing_file", "first_error_class(lambda: api.load_module('/nonexistent/libnothing.so'))", S("RuntimeError"),
         "loading a missing library raises RuntimeError"),
    Case("module.function_is_function", "values.echo", FUNCTION, "a module function normalizes as a Function"),
]

# --------------------------------------------------------------------------
# reference counts visible through the ABI
# --------------------------------------------------------------------------

REFCOUNTS = [
    Case("refcount.fresh_array", "introspect.arg_strong_count(api.convert([1, 2]))", I(1),
         "a fresh Array is held once, by its Python wrapper; passing it borrows"),
    Case("refcount.fresh_weak", "introspect.arg_weak_count(api.convert([1, 2]))", I(1), "a fresh object has weak count 1"),
    Case("refcount.shared_by_map", "a = api.convert([1])\nm = api.convert({'k': a})\nresult = introspect.arg_strong_count(a)",
         I(2), "converting a dict holding an Array shares the Array (no copy)"),
    Case("refcount.returned_same_object", "a = api.convert([1])\nm = api.convert({'k': a})\nb = containers.map_get(m, 'k')\nresult = introspect.arg_strong_count(a)",
         I(3), "a value C++ returns from a Map is the same object, with one more owner"),
    Case("refcount.string_object", "s = api.convert('a long string value')\nresult = (introspect.arg_strong_count(s), introspect.arg_strong_count(s))",
         PYTUPLE(I(1), I(1)), "a converted long str passes its String object, borrowed"),
    Case("refcount.function_object", "f = api.convert(lambda x: x)\nresult = introspect.arg_strong_count(f)", I(1),
         "a wrapped callable is held once"),
    Case("refcount.non_object", "(introspect.arg_strong_count(5), introspect.arg_strong_count('abc'))",
         PYTUPLE(I(-1), I(-1)), "PODs and small strings carry no object"),
    Case("refcount.released_after_call", "a = api.convert([1, 2, 3])\nfor _ in range(100):\n    values.echo(a)\n    callbacks.call1(lambda x: x, a)\ngc.collect()  # the results' wrappers are garbage (PyPy collects them late)\nresult = introspect.arg_strong_count(a)",
         I(1), "repeated calls leave the count where it was"),
    Case("refcount.error_through_callbacks",
         "import sys\n"
         "@api.dataclasses.py_class('corpus.HeldThroughError')\n"
         "class Held(api.Object):\n"
         "    value: int\n"
         "held = [api.convert([1, 2]), api.List([3]), api.convert({'k': 1}), api.from_dlpack(np.zeros(3)),\n"
         "        objects.make_point(3, -1.5, 'pt', []), Held(4)]\n"
         "def middle(x):\n"
         "    return callbacks.call1(lambda y: callbacks.throw_value_error(7), x)\n"
         "gc.disable()  # counts read with no cycle collection since the calls\n"
         "try:\n"
         "    for h in held:\n"
         "        for bottom in (middle, raiser(KeyError, 'k'), lambda x: callbacks.call1(raiser(IndexError, 'i'), x)):\n"
         "            try:\n"
         "                callbacks.call1(bottom, h)\n"
         "            except (ValueError, KeyError, IndexError):\n"
         "                pass\n"
         "    if sys.implementation.name != 'cpython':\n"
         "        gc.collect()  # PyPy: the wrappers made meanwhile are garbage until collected\n"
         "    result = [introspect.arg_strong_count(h) for h in held]\n"
         "finally:\n"
         "    gc.enable()",
         PYLIST(*ints(1, 1, 1, 1, 1, 1)),
         "an error raised through nested callbacks releases the callbacks' arguments when the "
         "call returns, with no cycle collection (the traceback's frames keep no stack alive)"),
    Case("refcount.error_caught_by_cpp",
         "import sys\n"
         "held = [api.List([1]), api.convert([1, 2]), objects.make_point(3, -1.5, 'pt', [])]\n"
         "def through_kernel(x):\n"
         "    return callbacks.throw_value_error(7)\n"
         "def nested(x):\n"
         "    return callbacks.call1(raiser(IndexError, 'i'), x)\n"
         "def settled(h):\n"
         "    if sys.implementation.name != 'cpython':\n"
         "        gc.collect()  # PyPy: the wrappers made meanwhile are garbage until collected\n"
         "    return introspect.arg_strong_count(h)\n"
         "gc.disable()  # counts read with no cycle collection since the calls\n"
         "try:\n"
         "    result = []\n"
         "    for h in held:\n"
         "        callbacks.call_catching(through_kernel, h)\n"
         "        result.append(settled(h))\n"
         "        callbacks.call_catching(nested, h)\n"
         "        result.append(settled(h))\n"
         "        try:\n"
         "            callbacks.call_rethrowing_as(through_kernel, h, 'IndexError')\n"
         "        except IndexError:\n"
         "            pass\n"
         "        result.append(settled(h))\n"
         "finally:\n"
         "    gc.enable()",
         PYLIST(*ints(1, 1, 1, 1, 1, 1, 1, 1, 1)),
         "an error a Python callback let through, which C++ catches and drops (returning "
         "normally, or raising another), releases the callback's arguments when the call "
         "returns: nothing keeps the exception for the Error C++ dropped"),
]

# --------------------------------------------------------------------------
# the C kernel (C99, our headers)
# --------------------------------------------------------------------------

C_KERNEL = [
    Case("c.type_index", "[ckernel.c_type_index(v) for v in (None, 1, True, 1.5, 'abc', 'abcdefgh', b'ab', [1], {}, api.Shape(()), np.zeros(1), lambda: 0, 2**64)]",
         PYLIST(*ints(0, 1, 2, 3, 11, 65, 12, 71, 72, 69, 70, 68, 78)), "a C kernel sees upstream's encoding of every value"),
    Case("c.mul", "(ckernel.c_mul(6, 7), ckernel.c_mul(-(2**62), 4))", PYTUPLE(I(42), I(0)), "ints in and out of C"),
    Case("c.mul_type_error", "ckernel.c_mul(6, 'x')", RAISES("TypeError", "c_mul wants two ints"), "a C kernel raises TypeError"),
    Case("c.arg_count", "ckernel.c_mul(6)", RAISES("TypeError", "c_mul expects 2 arguments, got 1"), "a C kernel checks its arguments"),
    Case("c.upper", "[ckernel.c_upper(s) for s in ('hello', 'hello world, long', 'h\\u00e9llo')]",
         PYLIST(S("HELLO"), S("HELLO WORLD, LONG"), S("H\u00e9LLO")), "a C kernel reads small and long strings and builds new ones"),
    Case("c.bytes", "(ckernel.c_bytes(3), ckernel.c_bytes(9))", PYTUPLE(BY(b"\xff\x00\xff"), BY(b"\xff\x00" * 4 + b"\xff")),
         "a C kernel builds small and long bytes with NULs"),
    Case("c.array_sum", "(ckernel.c_array_sum([1, 2, 3]), ckernel.c_array_sum(api.List([4, 5])), ckernel.c_array_sum((6,)))",
         PYTUPLE(I(6), I(9), I(6)), "a C kernel reads Array and List cells in place"),
    Case("c.array_sum_error", "ckernel.c_array_sum([1, 'x'])", RAISES("TypeError", "c_array_sum: non-int element"),
         "a C kernel inspects element type indices"),
    Case("c.shape_product", "ckernel.c_shape_product(api.Shape((2, 3, 4)))", I(24), "a C kernel reads a Shape cell"),
    Case("c.tuple_is_not_shape", "ckernel.c_shape_product((2, 3))", RAISES("TypeError", "c_shape_product wants a Shape"),
         "a tuple is encoded as an Array, not a Shape"),
    Case("c.callback", "(ckernel.c_call_twice(lambda x: x * 3, 2), ckernel.c_call_twice(lambda s: s + 'a', 'b'))",
         PYTUPLE(I(18), S("baa")), "a C kernel calls a Python callable through TVMFFIFunctionCall"),
    Case("c.callback_error", "ckernel.c_call_twice(raiser(KeyError, 'from python'), 0)", RAISES("KeyError", "\"'from python'\""),
         "a Python error propagates through a C kernel"),
    Case("c.raise_kinds", "[first_error_class(lambda k=k: ckernel.c_raise(k, 'm')) for k in ('ValueError', 'IndexError', 'CorpusError', 'Whatever')]",
         PYLIST(S("ValueError"), S("IndexError"), S("CorpusError"), S("RuntimeError")), "C-raised kinds map to Python classes"),
    Case("c.raise_message", "ckernel.c_raise('ValueError', 'from C')", RAISES("ValueError", "from C"), "a C-raised message"),
    Case("c.closure", "f = ckernel.c_make_adder(5)\nresult = (f(10), isinstance(f, api.Function), callbacks.call1(f, 1))",
         PYTUPLE(I(15), B(True), I(6)), "a C closure (TVMFFIFunctionCreate) called from Python and from C++"),
    Case("c.closure_error", "ckernel.c_make_adder(5)('x')", RAISES("TypeError", "c adder wants an int"), "a C closure raising"),
    Case("c.register_global", "ckernel.c_register_adder('corpus.c_adder', 1000)\nresult = (api.get_global_func('corpus.c_adder')(1), objects.call_global('corpus.c_adder', [2]))",
         PYTUPLE(I(1001), I(1002)), "a global registered from C is visible to Python and C++"),
    Case("c.call_python_global", "ckernel.c_call_global('corpus.py_neg', 5)", I(-5),
         "a C kernel looks up and calls a global registered from Python"),
    Case("c.call_missing_global", "ckernel.c_call_global('corpus.none', 5)", RAISES("KeyError", "'c_call_global: no such global function'"),
         "a C kernel sees a missing global as NULL"),
    Case("c.echo", "(ckernel.c_echo([1, 'two']), ckernel.c_echo('abcdefghijk'), ckernel.c_echo(2**70))",
         PYTUPLE(ARR(I(1), S("two")), S("abcdefghijk"), I(2**70)), "TVMFFIAnyViewToOwnedAny from C"),
]

ALL_CASES: List[Case] = (
    INTS + BIGINTS + FLOATS + BOOLS_AND_NONE + STRINGS + BYTES + DTYPES_AND_DEVICES + CONVERSIONS + ARRAYS
    + MAPS + MUTABLES + SHAPES_OPTIONALS_VARIANTS + TENSORS + FUNCTIONS + CPP_ERRORS + PY_ERRORS + OBJECTS
    + MODULES + REFCOUNTS + C_KERNEL
)
