"""``dtype``: an element type, spelled as a string, carried as a 4-byte ``DLDataType``.

A ``dtype`` is a ``str`` (so ``dtype("float32") == "float32"``) that also
knows its DLPack triple ``(code, bits, lanes)``. Parsing and printing go
through the runtime (``TVMFFIDataTypeFromString`` / ``ToString``), so every
name any kernel library understands is understood here, and the text of a
dtype made from a triple is the runtime's canonical one.
"""

from __future__ import annotations

import builtins
import enum
from typing import Any, ClassVar, Dict, Tuple

from tvm_ffi_common import abi

from . import shortcuts, upcalls
from .c_integers import narrow

TI = abi.TVMFFITypeIndex


class DataTypeCode(enum.IntEnum):
    """The DLPack type codes (``DLDataType.code``)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    Float8E3M4 = 7
    Float8E4M3 = 8
    Float8E4M3B11FNUZ = 9
    Float8E4M3FN = 10
    Float8E4M3FNUZ = 11
    Float8E5M2 = 12
    Float8E5M2FNUZ = 13
    Float8E8M0FNU = 14
    Float6E2M3FN = 15
    Float6E3M2FN = 16
    Float4E2M1FN = 17


def lanes_as_int16(lanes: int) -> int:
    """``DLDataType.lanes`` as upstream's Python API reads it: a signed 16-bit value.

    The C field is ``uint16_t``, but a scalable vector stores ``-factor`` in it
    (``float32xvscalex4`` has lanes ``-4``), so every lane count with the top
    bit set reads as negative (``intx32768``: ``-32768``).
    """
    return (lanes + 0x8000) % 0x10000 - 0x8000


def parse(text: str) -> Tuple[int, int, int]:
    """``(code, bits, lanes)`` of a dtype string; raises what the runtime raises."""
    code, bits, lanes = shortcuts.dtype_from_string(text)
    return code, bits, lanes_as_int16(lanes)


def format_triple(code: int, bits: int, lanes: int) -> str:
    """The runtime's canonical spelling of ``(code, bits, lanes)``."""
    return shortcuts.dtype_to_string(code, bits, lanes)


class _TripleFields:
    """The fields of a ``(code, bits, lanes)`` triple held as ``_tvm_ffi_dtype_tuple``."""

    __slots__ = ()
    _tvm_ffi_dtype_tuple: Tuple[int, int, int]

    @property
    def type_code(self) -> int:
        """The DLPack type code."""
        return self._tvm_ffi_dtype_tuple[0]

    @property
    def bits(self) -> int:
        """Bits per lane."""
        return self._tvm_ffi_dtype_tuple[1]

    @property
    def lanes(self) -> int:
        """Number of lanes (1 for scalars, negative for a scalable vector's factor)."""
        return self._tvm_ffi_dtype_tuple[2]

    @property
    def itemsize(self) -> int:
        """Bytes per element: ``(bits * lanes + 7) // 8``."""
        code, bits, lanes = self._tvm_ffi_dtype_tuple
        if lanes < 0:  # a scalable vector: its size is only known at run time
            raise ValueError("Cannot determine itemsize for scalable vector types")
        return (bits * lanes + 7) // 8


class dtype(str, _TripleFields):  # noqa: N801 - the public name matches upstream's
    """An element data type: a ``str`` that also knows its ``(code, bits, lanes)``."""

    _tvm_ffi_dtype_tuple: Tuple[int, int, int]
    _NUMPY_DTYPE_TO_STR: ClassVar[Dict[Any, str]] = {}
    _INTEGER_CODES: ClassVar[frozenset] = frozenset({DataTypeCode.INT, DataTypeCode.UINT})
    _FLOAT_CODES: ClassVar[frozenset] = frozenset(
        {DataTypeCode.FLOAT, DataTypeCode.BFLOAT} | set(range(7, 18)))

    def __new__(cls, content: Any) -> "dtype":
        text = str(content)
        self = str.__new__(cls, text)
        self._tvm_ffi_dtype_tuple = parse(text)
        return self

    @staticmethod
    def from_dlpack_data_type(triple: Tuple[int, int, int]) -> "dtype":
        """The dtype of a DLPack ``(code, bits, lanes)`` triple.

        Each item must fit its ``DLDataType`` field as upstream declares it
        (code and bits ``uint8``, lanes ``int16``), else ``OverflowError``.
        """
        return dtype_from_python_triple(triple[0], triple[1], triple[2])

    def __repr__(self) -> str:
        return f"dtype('{self}')"

    def __reduce__(self):
        return (dtype, (str(self),))

    def with_lanes(self, lanes: int) -> "dtype":
        """The vector type of this element type with ``lanes`` lanes (``int16``, negative:
        scalable)."""
        code, bits, _ = self._tvm_ffi_dtype_tuple
        return dtype_from_python_triple(code, bits, lanes)

    @property
    def is_bool(self) -> builtins.bool:
        """Whether elements are booleans."""
        return self.type_code == DataTypeCode.BOOL

    @property
    def is_integer(self) -> builtins.bool:
        """Whether elements are signed or unsigned integers."""
        return self.type_code in self._INTEGER_CODES

    @property
    def is_float(self) -> builtins.bool:
        """Whether elements are floating point (any width or format)."""
        return self.type_code in self._FLOAT_CODES

    @property
    def is_handle(self) -> builtins.bool:
        """Whether elements are opaque handles."""
        return self.type_code == DataTypeCode.HANDLE

    @staticmethod
    def is_dtype(arg: Any) -> builtins.bool:
        """Whether ``arg`` is a dtype or a string the runtime parses as one."""
        if isinstance(arg, dtype):
            return True
        if not isinstance(arg, str):
            return False
        try:
            parse(arg)
        except Exception:  # noqa: BLE001 - any parse failure means "not a dtype"
            return False
        return True


class DataType(_TripleFields):
    """A bare ``DLDataType`` (upstream's ``core.DataType``): the triple without the string.

    Internal to upstream; user code wants :class:`dtype`. Passed to a function
    it travels as ``kTVMFFIDataType``, as a dtype does.
    """

    __slots__ = ("_tvm_ffi_dtype_tuple",)

    def __init__(self, dtype_str: str) -> None:
        self._tvm_ffi_dtype_tuple = parse(dtype_str)

    def __reduce__(self) -> Any:
        return (create_data_type, (type(self), *self._tvm_ffi_dtype_tuple))

    def __eq__(self, other: object) -> builtins.bool:
        return (isinstance(other, DataType) and
                self._tvm_ffi_dtype_tuple == other._tvm_ffi_dtype_tuple)

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._tvm_ffi_dtype_tuple)

    def __str__(self) -> str:
        return format_triple(*self._tvm_ffi_dtype_tuple)


def create_data_type(cls: type, code: int, bits: int, lanes: int) -> Any:
    """A ``cls`` (:class:`DataType` or a subclass) holding the triple, unchecked (for pickle)."""
    made = cls.__new__(cls)
    made._tvm_ffi_dtype_tuple = (code, bits, lanes)
    return made


def dtype_from_tuple(code: int, bits: int, lanes: int) -> dtype:
    """The dtype of a ``DLDataType`` read from C, spelled canonically (lanes read as int16)."""
    lanes = lanes_as_int16(lanes)
    self = str.__new__(dtype, format_triple(code, bits, lanes))
    self._tvm_ffi_dtype_tuple = (code, bits, lanes)
    return self


def dtype_from_python_triple(code: Any, bits: Any, lanes: Any) -> dtype:
    """The dtype of a triple given from Python, each item checked as upstream stores it.

    Raises ``TypeError`` for a non-number and ``OverflowError`` (with Cython's
    words) for a value that does not fit ``uint8`` (code, bits) or ``int16`` (lanes).
    """
    return dtype_from_tuple(narrow(code, "uint8_t"), narrow(bits, "uint8_t"),
                            narrow(lanes, "int16_t"))


#: The NumPy dtypes upstream accepts, by name, with their ``(code, bits, lanes)``;
#: every other numpy.dtype (bool, complex, big-endian, ...) is refused.
_NUMPY_TRIPLES = (
    ("int8", (0, 8, 1)), ("int16", (0, 16, 1)), ("int32", (0, 32, 1)), ("int64", (0, 64, 1)),
    ("uint8", (1, 8, 1)), ("uint16", (1, 16, 1)), ("uint32", (1, 32, 1)), ("uint64", (1, 64, 1)),
    ("float16", (2, 16, 1)), ("float32", (2, 32, 1)), ("float64", (2, 64, 1)),
)

#: The ml_dtypes types upstream adds when ml_dtypes is installed (the second group
#: exists from ml_dtypes 0.5, which added int2).
_ML_DTYPES_TRIPLES = (
    ("int4", (0, 4, 1)), ("uint4", (1, 4, 1)), ("bfloat16", (4, 16, 1)),
    ("float8_e4m3b11fnuz", (9, 8, 1)), ("float8_e4m3fn", (10, 8, 1)),
    ("float8_e4m3fnuz", (11, 8, 1)), ("float8_e5m2", (12, 8, 1)), ("float8_e5m2fnuz", (13, 8, 1)),
)
_ML_DTYPES_0_5_TRIPLES = (
    ("int2", (0, 2, 1)), ("uint2", (1, 2, 1)), ("float8_e3m4", (7, 8, 1)),
    ("float8_e4m3", (8, 8, 1)), ("float8_e8m0fnu", (14, 8, 1)), ("float6_e2m3fn", (15, 6, 1)),
    ("float6_e3m2fn", (16, 6, 1)), ("float4_e2m1fn", (17, 4, 1)),
)

_numpy_table: Dict[Any, Tuple[int, int, int]] = {}


def numpy_dtype_table() -> Dict[Any, Tuple[int, int, int]]:
    """numpy.dtype -> ``(code, bits, lanes)`` for the NumPy (and ml_dtypes) types upstream
    accepts; made on first use (only a numpy.dtype asks, so NumPy is already imported)."""
    if not _numpy_table:
        import numpy

        table = {numpy.dtype(name): triple for name, triple in _NUMPY_TRIPLES}
        try:
            import ml_dtypes
        except ImportError:
            ml_dtypes = None
        if ml_dtypes is not None:
            groups = _ML_DTYPES_TRIPLES + (_ML_DTYPES_0_5_TRIPLES if hasattr(ml_dtypes, "int2")
                                           else ())
            table.update({numpy.dtype(getattr(ml_dtypes, name)): triple
                          for name, triple in groups})
        _numpy_table.update(table)
    return _numpy_table


def numpy_dtype_triple(value: Any) -> Tuple[int, int, int]:
    """The ``(code, bits, lanes)`` a numpy.dtype argument travels as.

    Only upstream's table is accepted; any other numpy.dtype raises upstream's
    ``ValueError("Unsupported numpy or ml_dtypes dtype: ", value)``.
    """
    table = numpy_dtype_table()
    if value not in table:
        raise ValueError("Unsupported numpy or ml_dtypes dtype: ", value)
    return table[value]


#: The torch dtypes upstream accepts, by attribute name, with their ``(code, bits, lanes)``
#: (aliases such as ``torch.half`` are the same objects); the names a torch build lacks are
#: left out. Every other torch.dtype (complex, ...) is refused.
_TORCH_TRIPLES = (
    ("int8", (0, 8, 1)), ("int16", (0, 16, 1)), ("int32", (0, 32, 1)), ("int64", (0, 64, 1)),
    ("uint8", (1, 8, 1)), ("float16", (2, 16, 1)), ("float32", (2, 32, 1)),
    ("float64", (2, 64, 1)), ("bfloat16", (4, 16, 1)), ("bool", (6, 8, 1)),
    ("uint16", (1, 16, 1)), ("uint32", (1, 32, 1)), ("uint64", (1, 64, 1)),
    ("float8_e4m3fn", (10, 8, 1)), ("float8_e4m3fnuz", (11, 8, 1)), ("float8_e5m2", (12, 8, 1)),
    ("float8_e5m2fnuz", (13, 8, 1)), ("float8_e8m0fnu", (14, 8, 1)),
    ("float4_e2m1fn_x2", (17, 4, 2)),
)

_torch_table: Dict[Any, Tuple[int, int, int]] = {}


def torch_dtype_table() -> Dict[Any, Tuple[int, int, int]]:
    """torch.dtype -> ``(code, bits, lanes)`` for the torch types upstream accepts; made on
    first use (only a torch.dtype asks, so torch is already imported)."""
    if not _torch_table:
        import torch

        _torch_table.update({getattr(torch, name): triple for name, triple in _TORCH_TRIPLES
                             if hasattr(torch, name)})
    return _torch_table


#: The dtype constants upstream exports.
DTYPE_NAMES = (
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float64 float32 float16 bfloat16 "
    "float8_e3m4 float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2 "
    "float8_e5m2fnuz float8_e8m0fnu float6_e2m3fn float6_e3m2fn float4_e2m1fn float4_e2m1fnx2"
).split()

#: Each of :data:`DTYPE_NAMES` as a dtype (``DTYPE_CONSTANTS["float32"]``), which
#: the packages export as attributes (``tvm_ffi.float32``), as upstream does.
DTYPE_CONSTANTS: Dict[str, dtype] = {name: dtype(name) for name in DTYPE_NAMES}

upcalls.install("dtype", DataType=DataType, dtype=dtype, dtype_from_tuple=dtype_from_tuple,
                torch_dtype_table=torch_dtype_table, numpy_dtype_triple=numpy_dtype_triple)
