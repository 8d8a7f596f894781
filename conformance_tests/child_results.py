"""Normalization: a front end's values (and exceptions) as plain data, compared exactly
between workers; floats by their bits, str and bytes with the exactness of their class."""

from __future__ import annotations

import ctypes
import re
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:  # annotations only (a worker imports its modules as scripts)
    from child_env import Env

try:
    from .child_values import Opaque, bits_of_float
    from .torch_values import normalize_torch
except ImportError:  # run as a script: the worker process
    from child_values import Opaque, bits_of_float
    from torch_values import normalize_torch


def first_line(text: str) -> str:
    lines = str(text).splitlines()
    return lines[0] if lines else ""


#: What Python says when a property without a setter is assigned to changed with its version
#: (3.9: "can't set attribute", 3.10 names the attribute, 3.11 "property 'x' of 'T' object
#: has no setter"); PyPy words it as its Python version does, upstream runs on CPython 3.11.
_READ_ONLY_PROPERTY = re.compile(r"(can't set attribute( '[^']*')?"
                                 r"|property( '[^']*')? of '[^']*' object has no setter)")


def raised(error: BaseException) -> List[Any]:
    message = first_line(str(error))
    if isinstance(error, AttributeError) and _READ_ONLY_PROPERTY.fullmatch(message):
        message = "read-only property"
    return ["raises", type(error).__name__, message]


def normalize(env: Env, value: Any, depth: int = 0) -> Any:
    """Plain data for a result; floats by their bits, str/bytes with exactness of class.

    Objects that are not containers are reported by the probe (type key,
    header and body), so two front ends agree only if the objects agree.
    """
    api, np = env.api, env.np
    if depth > 40:
        return ["too-deep"]

    def norm(v):
        return normalize(env, v, depth + 1)

    if isinstance(value, BaseException):
        return ["exception", type(value).__name__, first_line(str(value))]
    if value is None:
        return ["none"]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int) and not isinstance(value, np.generic):
        return ["int", int(value)]
    if isinstance(value, float) and not isinstance(value, np.generic):
        return ["float", bits_of_float(value)]
    if isinstance(value, api.dtype):
        return ["dtype", str(value)]
    if isinstance(value, str):
        # A long string a kernel returns is a str subclass; a short one a plain str.
        return ["str" if type(value) is str else "String", str(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes" if type(value) is bytes else "Bytes", bytes(value).hex()]
    if isinstance(value, api.Device):
        return ["device", str(value)]
    if isinstance(value, api.Shape):
        return ["shape", [int(d) for d in value]]
    if isinstance(value, api.List):
        return ["list", [norm(item) for item in value]]
    if isinstance(value, api.Array):
        return ["array", [norm(item) for item in value]]
    if isinstance(value, api.Dict):
        return ["dict", [[norm(k), norm(v)] for k, v in value.items()]]
    if isinstance(value, api.Map):
        return ["map", [[norm(k), norm(v)] for k, v in value.items()]]
    as_torch = normalize_torch(value)
    if as_torch is not None:
        return as_torch
    if isinstance(value, api.Tensor):
        array = np.from_dlpack(value)
        return ["tensor", str(value.dtype), [int(d) for d in value.shape],
                [int(s) for s in value.strides], str(value.device),
                np.ascontiguousarray(array).tobytes().hex()]
    if isinstance(value, np.ndarray):
        return ["ndarray", str(value.dtype), list(value.shape),
                np.ascontiguousarray(value).tobytes().hex()]
    if isinstance(value, np.generic):
        return ["npscalar", str(value.dtype), value.tobytes().hex()]
    if isinstance(value, ctypes.c_void_p):
        return ["voidp", value.value]
    # Upstream's Error and OpaquePyObject classes do not derive from api.Object: go by name.
    if type(value).__name__ == "Error" and hasattr(value, "kind") and hasattr(value, "message"):
        return ["error-object", str(value.kind), str(value.message), env.dump(value)[0]]
    if type(value).__name__ == "OpaquePyObject" and hasattr(value, "pyobject"):
        return ["opaque-object", norm(value.pyobject())]
    held = env.__dict__.get("_held_class")  # by its field: its type index is the runtime's
    if held is not None and isinstance(value, held):
        return ["held", norm(value.value)]
    if isinstance(value, api.Function):
        return ["function"]
    if isinstance(value, api.Module):
        return ["module"]
    if isinstance(value, api.Object):
        return ["object", env.dump(value)[0]]
    if isinstance(value, tuple):
        return ["pytuple", [norm(item) for item in value]]
    if isinstance(value, list):
        return ["pylist", [norm(item) for item in value]]
    if isinstance(value, dict):
        return ["pydict", [[norm(k), norm(v)] for k, v in value.items()]]
    if isinstance(value, Opaque):
        return ["opaque", value.tag]
    return ["pyobject", type(value).__name__]


def attempt(env: Env, thunk) -> Any:
    """``normalize(thunk())``, or the exception it raised, as a result."""
    try:
        value = thunk()
    except Exception as error:  # noqa: BLE001 - the exception is the result
        return raised(error)
    try:
        return normalize(env, value)
    except Exception as error:  # noqa: BLE001
        return ["normalize-raises"] + raised(error)[1:]
