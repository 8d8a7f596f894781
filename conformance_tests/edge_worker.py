"""The worker side of ``test_edges``: behaviours no other property generates, as plain data.

``child.py`` serves each as an op (``handlers``): structural hashing and equality of
floats' edge values and of tensors, access paths (built step by step, and the ones a
mismatch reports for missing elements), the environment's streams set and restored,
DLPack import and export with their options, many arguments of different kinds in one
call, and C API entries called with the edge arguments their header gives a rule for.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List


#: The names a DLPack capsule can carry, for interpreters without ``PyCapsule_GetName``.
_CAPSULE_NAMES = (b"dltensor_versioned", b"dltensor", b"used_dltensor_versioned",
                  b"used_dltensor")


def _capsule_name(capsule: Any) -> str:
    """A capsule's name: through the interpreter on CPython (the upstream worker cannot import
    this project); on PyPy, whose ctypes has no ``pythonapi``, by asking the project's
    ``pycapi`` which of the DLPack names it carries (the PyPy workers run this project only)."""
    if hasattr(ctypes, "pythonapi"):
        name = ctypes.pythonapi.PyCapsule_GetName
        name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        return name(capsule).decode()
    from tvm_ffi_common import pycapi

    for candidate in _CAPSULE_NAMES:
        if pycapi.capsule_is_valid(capsule, candidate):
            return candidate.decode()
    return "(another name)"


def _path_text(path: Any) -> Any:
    return None if path is None else [str(path), int(path.depth), [
        [int(step.kind), str(step.key) if step.key is not None else None]
        for step in path.to_steps()]]


def handlers(build: Callable, attempt: Callable, raised: Callable) -> Dict[str, Callable]:

    def op_hash_edges(env, cases: List[Any]) -> List[Any]:
        """``(a, b)`` recipes: both hashes, equality both ways (and with free variables
        mapped), the first mismatch's paths, and whether the StructuralKeys are equal."""
        api, out = env.api, []
        for a_recipe, b_recipe in cases:
            a, b = build(env, a_recipe), build(env, b_recipe)
            out.append([
                attempt(env, lambda: api.structural_hash(a)),
                attempt(env, lambda: api.structural_hash(b)),
                attempt(env, lambda: api.structural_hash(a, map_free_vars=True)),
                attempt(env, lambda: [api.structural_equal(a, b), api.structural_equal(b, a),
                                      api.structural_equal(a, b, map_free_vars=True)]),
                attempt(env, lambda: [_path_text(p) for p in
                                      (api.get_first_structural_mismatch(a, b) or [None, None])]),
                attempt(env, lambda: api.StructuralKey(a) == api.StructuralKey(b)),
            ])
        return out

    def op_access_paths(env, programs: List[Any]) -> List[Any]:
        """Each program: steps applied to ``AccessPath.root()``; each step's path as text,
        depth and steps, its parent, prefix relations and equality with the path before."""
        AccessPath = env.api.access_path.AccessPath
        out = []
        for steps in programs:
            path, records = AccessPath.root(), []
            for method, key in steps:
                previous = path

                def step():
                    nxt = getattr(previous, method)(*([] if key is None else [build(env, key)]))
                    return nxt
                try:
                    path = step()
                except Exception as error:  # noqa: BLE001 - the exception is the result
                    records.append(raised(error))
                    continue
                records.append([_path_text(path), _path_text(path.parent),
                                previous.is_prefix_of(path), path.is_prefix_of(previous),
                                path == previous, path.parent == previous,
                                attempt(env, lambda: str(path.step)) if method != "root" else None])
            out.append(records)
        return out

    def op_streams(env, programs: List[Any]) -> List[Any]:
        """Each program: nested ``use_raw_stream`` contexts (some left by an exception), and
        after every step the stream of each device, through the API and through the C API."""
        api, lib, out = env.api, env.lib, []
        for devices, steps in programs:
            targets = [api.device(name, index) for name, index in devices]

            def streams():
                seen = []
                for (name, index), dev in zip(devices, targets):
                    raw = lib.TVMFFIEnvGetStream(int(dev.dlpack_device_type()), int(index))
                    seen.append([api.get_raw_stream(dev), raw or 0])
                return seen

            records = []

            def run(position: int):
                if position == len(steps):
                    return
                which, handle, raise_inside = steps[position]
                try:
                    with api.use_raw_stream(targets[which % len(targets)], handle):
                        records.append(["inside", streams()])
                        run(position + 1)
                        if raise_inside:
                            raise KeyError("leave the context by an exception")
                except KeyError:
                    records.append(["raised"])
                except Exception as error:  # noqa: BLE001 - a refused stream is a result
                    records.append(raised(error))
                records.append(["after", streams()])
            run(0)
            out.append(records)
        return out

    def op_dlpack_options(env, cases: List[Any]) -> List[Any]:
        """Each case: an array of any strides (unit dimensions' strides anywhere), imported with
        ``from_dlpack`` options, then exported with ``__dlpack__`` options and read back."""
        api, np, out = env.api, env.np, []
        for dtype, shape, strides, offset, import_kw, export_kw in cases:
            item = np.dtype(dtype).itemsize
            span = offset + sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + 1
            # The data starts ``offset`` items past a 256-byte boundary, whatever the allocator
            # did: alignment checks then see the same address bits in every worker.
            raw = np.zeros((max(span, 1) + 8) * item + 256, dtype=np.uint8)
            skip = (-raw.__array_interface__["data"][0]) % 256
            base = raw[skip:skip + (max(span, 1) + 8) * item].view(dtype)
            base[:] = np.arange(len(base)).astype(dtype)
            array = np.lib.stride_tricks.as_strided(base[offset:], shape=tuple(shape),
                                                    strides=tuple(s * item for s in strides))
            record = []
            try:
                tensor = api.from_dlpack(array, **import_kw)
            except Exception as error:  # noqa: BLE001
                out.append([raised(error)])
                continue
            record.append(attempt(env, lambda: [
                list(tensor.shape), list(tensor.strides), tensor.is_contiguous(), tensor.ndim,
                tensor.numel(), str(tensor.dtype), str(tensor.device),
                list(tensor.__dlpack_device__()),
                tensor.data_ptr() == array.__array_interface__["data"][0]]))

            def export():
                return _capsule_name(tensor.__dlpack__(**export_kw))
            record.append(attempt(env, export))

            class Producer:  # hands numpy the capsule made with the options
                def __dlpack__(self, **kw):
                    return tensor.__dlpack__(**export_kw)

                def __dlpack_device__(self):
                    return tensor.__dlpack_device__()
            record.append(attempt(env, lambda: np.from_dlpack(Producer())))
            record.append(attempt(env, lambda: np.from_dlpack(tensor)))
            out.append(record)
        return out

    def op_mixed_args(env, cases: List[Any]) -> List[Any]:
        """Each case: recipes passed together, as positions of one call: the probe's report of
        every position, the typed ``pair``/``concat`` kernels on the first two, and the typed
        ``mixed`` kernel (int, str, float, bool, dtype, Optional[int], Array) on the first seven
        (fewer: an arity error)."""
        out = []
        for recipes in cases:
            try:
                values = [build(env, r) for r in recipes]
            except Exception as error:  # noqa: BLE001
                out.append(["build-raises"] + raised(error)[1:])
                continue
            out.append([attempt(env, lambda: env.dump(*values)),
                        attempt(env, lambda: env.calls.pair(*values[:2])),
                        attempt(env, lambda: env.calls.concat(*values[:2])),
                        attempt(env, lambda: env.calls.mixed(*values[:7]))])
        return out

    def op_capi_edges(env, cases: List[Any]) -> List[Any]:
        """C API entries with the arguments their header gives a rule for (names that are not
        there, NULL optional outputs, nothing raised), each as status and outputs."""
        abi, lib, out = env.abi, env.lib, []

        def text(value: bytes):
            return abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(value), ctypes.c_void_p),
                                       len(value)) if hasattr(abi, "TVMFFIByteArray") else None
        for kind, arg in cases:
            if kind == "get_global":
                handle = ctypes.c_void_p(12345)
                name = arg.encode()
                rc = lib.TVMFFIFunctionGetGlobal(ctypes.byref(text(name)), ctypes.byref(handle))
                found = handle.value is not None and handle.value != 12345
                if handle.value:
                    lib.TVMFFIObjectDecRef(handle)
                out.append([rc, found, handle.value is None])
            elif kind == "type_key":
                index = ctypes.c_int32(-7)
                rc = lib.TVMFFITypeKeyToIndex(ctypes.byref(text(arg.encode())), ctypes.byref(index))
                error = ctypes.c_void_p()
                lib.TVMFFIErrorMoveFromRaised(ctypes.byref(error))
                if error.value:
                    lib.TVMFFIObjectDecRef(error)
                out.append([rc, index.value if arg.startswith("ffi.") else rc == 0,
                            error.value is not None])
            elif kind == "nothing_raised":
                error = ctypes.c_void_p(99)
                lib.TVMFFIErrorMoveFromRaised(ctypes.byref(error))
                out.append([error.value])
            elif kind == "set_stream":
                device_type, device_id, handle, want_original = arg
                original = ctypes.c_void_p(77)
                rc = lib.TVMFFIEnvSetStream(device_type, device_id, ctypes.c_void_p(handle),
                                            ctypes.byref(original) if want_original else None)
                now = lib.TVMFFIEnvGetStream(device_type, device_id)
                out.append([rc, original.value if want_original else None, now or 0])
            else:
                raise ValueError(f"unknown C API edge case {kind!r}")
        return out

    def op_dtype_methods(env, cases: List[Any]) -> List[Any]:
        """Each ``(text, lanes, triple)``: a dtype's properties, ``with_lanes``, ``is_dtype`` and
        ``from_dlpack_data_type`` of a raw triple."""
        dtype, out = env.api.dtype, []
        for text, lanes, triple in cases:
            try:
                d = dtype(text)
            except Exception as error:  # noqa: BLE001
                out.append(raised(error))
                continue
            out.append([attempt(env, lambda: [d.itemsize, d.is_bool, d.is_float, d.is_integer,
                                              d.is_handle]),
                        attempt(env, lambda: str(d.with_lanes(lanes))),
                        attempt(env, lambda: [dtype.is_dtype(d), dtype.is_dtype(text)]),
                        attempt(env, lambda: str(dtype.from_dlpack_data_type(tuple(triple))))])
        return out

    def op_device_methods(env, cases: List[Any]) -> List[Any]:
        """Each ``(a, b)`` device recipe pair: accessors, text forms, equality and hash equality."""
        out = []
        for a_recipe, b_recipe in cases:
            try:
                a, b = build(env, a_recipe), build(env, b_recipe)
            except Exception as error:  # noqa: BLE001
                out.append(["build-raises"] + raised(error)[1:])
                continue
            out.append([attempt(env, lambda: [a.type, a.index, repr(a), str(a),
                                              a.dlpack_device_type()]),
                        attempt(env, lambda: [a == b, a != b, hash(a) == hash(b)])])
        return out

    def op_default_factories(env, cases: List[Any]) -> List[Any]:
        """Each case: a ``@py_class`` whose fields have default factories; two instances made
        without arguments: each field's value, whether the two share it, whether a change
        through one shows in the other, and a deep copy's sharing with the original."""
        import copy

        api, out = env.api, []
        for key, fields in cases:
            shared = api.Array([1, "one object"])
            factories = {"pylist": list, "pydict": dict, "Array": lambda: api.Array([1, 2]),
                         "List": lambda: api.List([]), "Dict": lambda: api.Dict({}),
                         "same": lambda: shared, "int": lambda: 3, "str": lambda: "text"}
            import sys
            import types
            import typing
            # A module of its own, so that the annotations resolve in its globals.
            module = types.ModuleType("conformance_edges_" + key.replace(".", "_"))
            sys.modules[module.__name__] = module
            namespace = module.__dict__
            namespace.update(api=api, factories=factories, Any=typing.Any, Dict=typing.Dict,
                             List=typing.List, Optional=typing.Optional)
            lines = [f"@api.dataclasses.py_class({key!r})", "class Generated(api.Object):"]
            for i, (annotation, factory) in enumerate(fields):
                lines.append(f"    f{i}: {annotation} = api.dataclasses.field("
                             f"default_factory=factories[{factory!r}])")
            if not fields:
                lines.append("    pass")
            try:
                exec(compile("\n".join(lines), module.__name__, "exec", dont_inherit=True),
                     namespace)  # noqa: S102 - the generated class
                cls = namespace["Generated"]
                a, b = cls(), cls()
            except Exception as error:  # noqa: BLE001
                out.append(raised(error))
                continue
            record = []
            for i, _ in enumerate(fields):
                try:
                    x, y = getattr(a, f"f{i}"), getattr(b, f"f{i}")
                except Exception as error:  # noqa: BLE001
                    record.append(raised(error))
                    continue
                objects = isinstance(x, api.Object) and isinstance(y, api.Object)

                def change():
                    x.append(5) if isinstance(x, api.List) else x.__setitem__("k", 1)
                    return y
                record.append([attempt(env, lambda: x), objects and x.same_as(y), x is y,
                               attempt(env, change) if isinstance(x, (api.List, api.Dict))
                               else None])
            try:  # the front end's own exception (a field's value refusing a copy) is a result
                twin = copy.deepcopy(a)
                record.append([getattr(twin, f"f{i}").same_as(getattr(a, f"f{i}"))
                               if isinstance(getattr(a, f"f{i}"), api.Object) else None
                               for i in range(len(fields))])
            except Exception as error:  # noqa: BLE001
                record.append(raised(error))
            out.append(record)
        return out

    return {name[3:]: fn for name, fn in locals().items() if name.startswith("op_")}
