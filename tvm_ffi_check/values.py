"""Argument values the checker generates, as plain picklable data.

Hypothesis runs in the checker's main process; the kernel runs in a worker
process. Arguments therefore cross a pipe as plain Python values (``None``,
``bool``, ``int`` of any size, ``float``, ``str``, ``bytes``, ``list``,
``tuple``, ``dict``) and the small frozen records below for what has no plain
Python form. The worker turns each record into what ``tvm_ffi_ref`` passes
(:func:`materialize`), and each value then crosses the ABI exactly as
upstream's Python encodes it (a str of at most 7 bytes inline, a longer one
as a String object, a list as an Array, ...). The records' ``repr`` is what
the report prints, so a failing call reads like Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, Tuple


@dataclass(frozen=True)
class TensorArg:
    """A CPU tensor: ``dtype``, ``shape``, contents seeded by ``seed``.

    ``layout`` is ``"contiguous"``, ``"transposed"`` (a strided view, 2-D and
    up) or ``"offset"`` (a view that starts one element in, so ``data`` or
    ``byte_offset`` is not the allocation's start). ``as_pointer`` passes a
    borrowed ``DLTensor*`` (``kTVMFFIDLTensorPtr``) instead of a Tensor object.
    """

    dtype: str
    shape: Tuple[int, ...]
    seed: int = 0
    layout: str = "contiguous"
    as_pointer: bool = False

    def __repr__(self) -> str:
        dims = ", ".join(map(str, self.shape))
        extra = "" if self.layout == "contiguous" else f", {self.layout}"
        kind = "DLTensor*" if self.as_pointer else "tensor"
        return f"{kind}({self.dtype}[{dims}]{extra})"


@dataclass(frozen=True)
class DeviceArg:
    """A ``DLDevice`` (``kTVMFFIDevice``)."""

    kind: str = "cpu"
    index: int = 0

    def __repr__(self) -> str:
        return f"device({self.kind!r}, {self.index})"


@dataclass(frozen=True)
class DTypeArg:
    """A ``DLDataType`` (``kTVMFFIDataType``) named as upstream prints it."""

    name: str

    def __repr__(self) -> str:
        return f"dtype({self.name!r})"


#: What a callable argument does when the kernel calls it.
FUNCTION_BEHAVIOURS = ("identity", "constant", "raises")


@dataclass(frozen=True)
class FunctionArg:
    """A Python callable passed as a Function object.

    ``identity`` returns its first argument (None without one), ``constant``
    returns 1, ``raises`` raises ``ValueError``.
    """

    behaviour: str = "identity"

    def __repr__(self) -> str:
        return f"<callable {self.behaviour}>"


@dataclass(frozen=True)
class OpaquePtrArg:
    """A ``void*`` (``kTVMFFIOpaquePtr``): NULL, or a 4 KiB scratch buffer (one per worker)."""

    kind: str = "null"

    def __repr__(self) -> str:
        return "c_void_p(None)" if self.kind == "null" else "c_void_p(<4 KiB zeroed buffer>)"


@dataclass(frozen=True)
class ShapeArg:
    """A Shape object."""

    dims: Tuple[int, ...]

    def __repr__(self) -> str:
        return f"Shape({self.dims!r})"


@dataclass(frozen=True)
class ListArg:
    """A mutable List object (a plain Python list becomes an Array)."""

    items: Tuple[Any, ...]

    def __repr__(self) -> str:
        return f"List({list(self.items)!r})"


@dataclass(frozen=True)
class DictArg:
    """A mutable Dict object (a plain Python dict becomes a Map)."""

    items: Tuple[Tuple[Any, Any], ...]

    def __repr__(self) -> str:
        return f"Dict({dict(self.items)!r})"


@dataclass(frozen=True)
class ErrorArg:
    """An Error object of ``kind`` with ``message``."""

    kind: str = "ValueError"
    message: str = "an error passed as an argument"

    def __repr__(self) -> str:
        return f"{self.kind}({self.message!r})"


@dataclass(frozen=True)
class RawStrArg:
    """A str passed as a borrowed ``const char*`` (``kTVMFFIRawStr``), as C++ callers do."""

    text: str

    def __repr__(self) -> str:
        return f"c_str({self.text!r})"


@dataclass(frozen=True)
class ObjectArg:
    """An object of one of the library's own types, made in the worker (:mod:`.objects`).

    ``via`` is the type's method that makes it (``__ffi_init__`` or a static
    method) called with ``args``, or ``""``: made from its fields, ``fields``
    naming each of ``args`` (``ffi.MakeObjectFromPackedArgs``).
    """

    type_key: str
    via: str
    args: Tuple[Any, ...] = ()
    fields: Tuple[str, ...] = ()

    def __repr__(self) -> str:
        if not self.via:
            inner = ", ".join(f"{n}={format_value(v)}" for n, v in zip(self.fields, self.args))
            return f"{self.type_key}({inner})"
        inner = ", ".join(format_value(v) for v in self.args)
        where = self.type_key if self.via == "__ffi_init__" else f"{self.type_key}.{self.via}"
        return f"{where}({inner})"


@dataclass(frozen=True)
class PooledArg:
    """An object of ``type_key`` that a call of the library returned (:mod:`.pool`), made
    again in the worker by calling ``target`` (a :class:`~tvm_ffi_check.targets.Target`'s
    ``ref()``, shown as ``name``) with ``args``."""

    type_key: str
    target: Tuple[Any, ...]
    name: str
    args: Tuple[Any, ...] = ()

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(format_value(v) for v in self.args)})"


def format_value(value: Any, limit: int = 120) -> str:
    """A short, Python-like rendering of one argument."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_call(name: str, args: Sequence[Any], limit: int = 400) -> str:
    """``name(arg, arg, ...)`` for a report."""
    text = f"{name}({', '.join(format_value(a) for a in args)})"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------- worker side


def _tensor_array(spec: TensorArg):
    import numpy as np

    from .guard import guarded_bytes

    rng = np.random.default_rng(spec.seed)
    dtype = np.dtype("bool" if spec.dtype == "bool" else spec.dtype)
    shape = tuple(spec.shape)
    if spec.layout == "transposed" and len(shape) >= 2:
        base_shape = tuple(reversed(shape))
    else:
        base_shape = shape
    count = 1
    for d in base_shape:
        count *= d
    extra = 1 if spec.layout == "offset" else 0
    if dtype.kind == "f":
        values = rng.standard_normal(count + extra)
    elif dtype.kind == "b":
        values = rng.integers(0, 2, count + extra)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -100), min(info.max, 100), count + extra,
                              endpoint=True)
    # The data ends against a guard page: an access past it faults (guard.py).
    flat = guarded_bytes((count + extra) * dtype.itemsize, repr(spec)).view(dtype)
    flat[:] = values.astype(dtype)
    array = flat[extra:].reshape(base_shape)
    if spec.layout == "transposed" and len(shape) >= 2:
        array = array.transpose()
    return array


def materialize(value: Any, keep: list) -> Any:
    """The Python value ``tvm_ffi_ref`` passes for a generated ``value``.

    ``keep`` collects what must outlive the call (buffers, arrays).
    Top-level ``DLTensor*`` and ``const char*`` arguments are packed by the
    worker itself; nested ones become Tensor objects and str.
    """
    import ctypes

    import tvm_ffi_ref as api

    if isinstance(value, (bool, int, float, str, bytes)) or value is None:
        return value
    if isinstance(value, list):
        return [materialize(v, keep) for v in value]
    if isinstance(value, tuple):
        return tuple(materialize(v, keep) for v in value)
    if isinstance(value, dict):
        return {materialize(k, keep): materialize(v, keep) for k, v in value.items()}
    if isinstance(value, TensorArg):
        array = _tensor_array(value)
        keep.append(array)
        return array
    if isinstance(value, DeviceArg):
        return api.device(value.kind, value.index)
    if isinstance(value, DTypeArg):
        return api.dtype(value.name)
    if isinstance(value, FunctionArg):
        return _CALLABLES[value.behaviour]
    if isinstance(value, OpaquePtrArg):
        if value.kind == "null":
            return ctypes.c_void_p(None)
        # One buffer for the whole worker: the same argument is the same pointer on
        # every call and in every thread, so a kernel returning it is deterministic.
        if not _SCRATCH:
            _SCRATCH.append(ctypes.create_string_buffer(4096))
        return ctypes.c_void_p(ctypes.addressof(_SCRATCH[0]))
    if isinstance(value, ShapeArg):
        return api.Shape(value.dims)
    if isinstance(value, ListArg):
        return api.List([materialize(v, keep) for v in value.items])
    if isinstance(value, DictArg):
        return api.Dict({materialize(k, keep): materialize(v, keep) for k, v in value.items})
    if isinstance(value, ErrorArg):
        return api.Error(value.kind, value.message)
    if isinstance(value, RawStrArg):
        return value.text
    if isinstance(value, (ObjectArg, PooledArg)):
        from .objects import make, make_pooled

        args = [materialize(v, keep) for v in value.args]
        for hook in MAKING:
            hook(True)
        try:
            return (make if isinstance(value, ObjectArg) else make_pooled)(value, args)
        finally:
            for hook in MAKING:
                hook(False)
    raise TypeError(f"cannot pass a generated {type(value).__name__}")


_SCRATCH: list = []
#: Called with True before the library's code makes an argument object, False after (the
#: worker reports the phase, so that a crash there is not blamed on the function checked).
MAKING: list = []


def _identity(*args):
    return args[0] if args else None


def _constant(*args):
    return 1


def _raises(*args):
    raise ValueError("raised by a callable the checker passed")


_CALLABLES = {"identity": _identity, "constant": _constant, "raises": _raises}
