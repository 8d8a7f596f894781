"""The public surface the conformance suite must cover, listed from the code and headers.

:func:`c_api_names` reads the ``TVMFFI*`` functions declared ``TVM_FFI_DLL`` in
``c_api/include/tvm/ffi/c_api.h`` and ``extra/c_env_api.h``. :func:`python_names` lists
the shared API as a front end exports it (``tvm_ffi_api/public.py``): every name of the
package's ``__all__``, the public members of its classes (methods and properties, plus
the protocol methods a user reaches through syntax: ``len``, ``[]``, ``del``, ``==``,
``hash``, calls, DLPack), and the ``__all__`` of the submodules upstream exposes with
functions of their own (``access_path``, ``serialization``, ``dataclasses``). Enum
members are constants, not behaviour, and are left out.

Run as a script (``python surface.py``) it prints the Python names as JSON: the test
runs it in a subprocess of its own, since a front end and upstream never share a
process. :func:`surface_map` reads the table of ``README.md`` that gives each name its
comparing property.
"""

from __future__ import annotations

import enum
import json
import os
import re
import sys
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

C_HEADERS = [os.path.join("c_api", "include", "tvm", "ffi", "c_api.h"),
             os.path.join("c_api", "include", "tvm", "ffi", "extra", "c_env_api.h")]

#: Protocol methods reached through syntax, listed where a public class defines them.
PROTOCOL_METHODS = ("__getitem__", "__setitem__", "__delitem__", "__len__", "__iter__",
                    "__contains__", "__eq__", "__lt__", "__hash__", "__call__", "__bool__",
                    "__dlpack__", "__dlpack_device__", "__copy__", "__deepcopy__",
                    "__reduce__", "__int__", "__float__", "__str__", "__repr__")

#: Submodules whose own ``__all__`` is public surface (the others are listed as modules).
SUBMODULES = ("access_path", "serialization", "dataclasses")

_DECLARATION = re.compile(r"TVM_FFI_DLL\b[^;{(]*?\b(TVMFFI\w+)\s*\(")


def c_api_names(root: str = ROOT) -> List[str]:
    """The ``TVMFFI*`` functions libtvm_ffi.so exports, as its headers declare them."""
    names = set()
    for header in C_HEADERS:
        with open(os.path.join(root, header)) as f:
            names.update(_DECLARATION.findall(f.read()))
    return sorted(names)


def _lookup(cls: type, name: str):
    """What ``cls.name`` resolves to, without running descriptors."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def _members(cls: type, prefix: str, public: List[type]) -> List[str]:
    """``prefix.member`` for each public callable or property the project defines on ``cls``,
    except those it inherits unchanged from another public class (listed there once)."""
    out = set()
    bases = [b for b in cls.__mro__[1:] if b in public]
    for klass in cls.__mro__:
        if not (getattr(klass, "__module__", "") or "").startswith("tvm_ffi"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") and name not in PROTOCOL_METHODS:
                continue
            if isinstance(value, enum.Enum) or (isinstance(klass, enum.EnumMeta)
                                                and name in klass.__members__):
                continue
            if not (callable(value) or hasattr(value, "__get__")):
                continue
            resolved = _lookup(cls, name)
            if any(_lookup(base, name) is resolved for base in bases):
                continue
            out.add(f"{prefix}.{name}")
    return sorted(out)


def python_names(api) -> List[str]:
    """The shared API's public names, as exported by the front-end package ``api``."""
    listed = [(name, getattr(api, name)) for name in api.__all__]
    # The base of every wrapper (Function and Tensor too), public as upstream's core.CObject.
    listed.append(("core.CObject", api.core.CObject))
    for module_name in SUBMODULES:
        module = getattr(api, module_name)
        listed += [(f"{module_name}.{name}", getattr(module, name))
                   for name in getattr(module, "__all__", ())]
    public = [value for _, value in listed if isinstance(value, type)]
    names = set()
    seen = set()
    for name, value in listed:
        names.add(name)
        if isinstance(value, type) and id(value) not in seen:
            seen.add(id(value))  # a class exported twice has its members listed once
            names.update(_members(value, name, public))
    return sorted(names)


_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]*?)\s*\|\s*$")


def surface_map(readme: str = os.path.join(HERE, "README.md")) -> Dict[str, str]:
    """``{name: property or "not covered: why"}`` from the README's surface-map tables."""
    rows: Dict[str, str] = {}
    inside = False
    with open(readme) as f:
        for line in f:
            if line.startswith("## "):
                inside = line.strip() == "## Surface map"
                continue
            match = _ROW.match(line) if inside else None
            if match:
                if match.group(1) in rows:
                    raise ValueError(f"surface map: {match.group(1)!r} has two rows")
                rows[match.group(1)] = match.group(2)
    return rows


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    import tvm_ffi_ref  # the shared API as a front end exports it

    json.dump(python_names(tvm_ffi_ref), sys.stdout)
