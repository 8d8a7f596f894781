"""The worker side of ``test_surface_edges.test_module_level_names``: the package's module-level
names that hold no runtime behaviour of their own but still must read as upstream's do.

``child.py`` serves :func:`handlers`' ``module_names`` op. Upstream keeps ``CAny`` and
``CContainerBase`` in ``tvm_ffi.core`` (ours exports them at the top too): each is looked up
where the front end has it.
"""

from __future__ import annotations

import ctypes
import inspect
import os
from typing import Any, Callable, Dict, List


def _core_name(api: Any, name: str) -> Any:
    return getattr(api, name, None) or getattr(api.core, name)


class _RecordingContext:
    """A stand-in for ``torch.cuda.stream(s)``: records how it is entered and left."""

    def __init__(self, calls: List[Any]) -> None:
        self.calls = calls

    def __enter__(self) -> "_RecordingContext":
        self.calls.append("enter")
        return self

    def __exit__(self, *args: Any) -> None:
        self.calls.append(["exit", args[0].__name__ if args and args[0] else None])


def handlers(build: Callable, attempt: Callable, raised: Callable) -> Dict[str, Callable]:

    def op_module_names(env, cases: List[Any]) -> List[Any]:
        """For each case, what a module-level name gives: the version constants, ``LIB`` (a
        ctypes library exporting the C API), ``CAny`` of a built value (repr, type index),
        ``CContainerBase`` of converted values, ``cpp`` (its names, signatures and
        ``to_cpp_dtype``) and ``use_torch_stream`` (with or without a context)."""
        api, out = env.api, []
        for kind, arg in cases:
            if kind == "version":
                out.append([api.__version__, list(api.__version_tuple__)])
            elif kind == "lib":
                lib = api.LIB
                found = hasattr(lib, arg)
                record = [type(lib).__name__, os.path.basename(lib._name), found]
                if arg == "TVMFFIGetVersion":
                    # through its address: a library of ours has argtypes bound on it
                    address = ctypes.cast(getattr(lib, arg), ctypes.c_void_p).value
                    version = (ctypes.c_uint32 * 3)()
                    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)(ctypes.addressof(version))
                    record.append(list(version))
                out.append(record)
            elif kind == "cany":
                cany = _core_name(api, "CAny")

                def made(recipe=arg):
                    value = cany(build(env, recipe))
                    return [repr(value), value.type_index]
                out.append(attempt(env, made))
            elif kind == "container_base":
                base = _core_name(api, "CContainerBase")

                def check(recipe=arg):
                    value = api.convert(build(env, recipe))
                    return [isinstance(value, base), type(value).__name__,
                            [issubclass(getattr(api, c), base)
                             for c in ("Array", "List", "Map", "Dict", "Shape", "Object")]]
                out.append(attempt(env, check))
            elif kind == "cpp":
                cpp = api.cpp
                names = sorted(cpp.__all__)
                # parameter names, kinds and defaults (annotations are spelled differently)
                out.append([names, [[[p.name, p.kind.name, repr(p.default)] for p in
                                     inspect.signature(getattr(cpp, n)).parameters.values()]
                                    for n in names],
                            attempt(env, lambda text=arg: cpp.to_cpp_dtype(text)),
                            attempt(env, lambda text=arg: cpp.to_cpp_dtype(api.dtype(text)))])
            elif kind == "torch_stream":
                calls: List[Any] = []
                context = _RecordingContext(calls) if arg else None
                try:
                    with api.use_torch_stream(context) if arg else api.use_torch_stream():
                        calls.append("inside")
                    result = ["returns"]
                except Exception as error:  # noqa: BLE001 - the exception is the result
                    result = raised(error)
                out.append([result, calls])
            else:
                raise ValueError(f"unknown module-level case {kind!r}")
        return out

    return {"module_names": op_module_names}
