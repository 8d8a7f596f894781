"""The worker side of ``test_surface_edges.test_c_api_surface``: C API entries no kernel calls.

``child.py`` serves :func:`handlers`' ``c_api_surface`` op: each case calls one entry of
``libtvm_ffi.so`` through ctypes (``env.lib``) with the edge arguments its header gives a rule
for, and reports return codes, outputs, reference counts and the raised error's kind and
message (an error raised in C carries the native stack as backtrace, which is the process's
own: never compared).
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List


def handlers(build: Callable, attempt: Callable, raised: Callable) -> Dict[str, Callable]:

    def op_c_api_surface(env, cases: List[Any]) -> List[Any]:
        """C API entries no kernel of the suite calls, each with the edge arguments its header
        gives a rule for, as return codes, outputs and the raised error (kind, message)."""
        api, abi, lib, out = env.api, env.abi, env.lib, []
        keep = env.__dict__.setdefault("_c_callbacks", [])  # symbols must outlive the call

        def raised_error():
            handle = ctypes.c_void_p()
            lib.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
            if not handle.value:
                return None
            # Kind and message: the backtrace of an error raised in C is the native stack,
            # which upstream records and ours does not (nothing to compare).
            record = _error_cell(abi, handle.value)[:2]
            lib.TVMFFIObjectDecRef(handle)
            return record

        def text(value: bytes):
            keep.append(value)
            return ctypes.byref(abi.TVMFFIByteArray(
                ctypes.cast(ctypes.c_char_p(value), ctypes.c_void_p), len(value)))
        # An error an earlier Python-level step left in this thread's raised slot (upstream's
        # refused enum definitions leave one) is no result of the entries below.
        raised_error()
        for kind, arg in cases:
            if kind == "version":
                version = abi.TVMFFIVersion()
                lib.TVMFFIGetVersion(ctypes.byref(version))
                out.append([version.major, version.minor, version.patch])
            elif kind == "decref_null":  # upstream ignores a NULL handle
                out.append([lib.TVMFFIObjectDecRef(None), raised_error()])
            elif kind == "signals":
                out.append([lib.TVMFFIEnvCheckSignals(), raised_error()])
            elif kind == "init_once":
                init_rc, deinit_rc, preset = arg
                handle, calls = ctypes.c_void_p(preset), []

                @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
                def init(address):
                    calls.append("init")
                    if init_rc:
                        lib.TVMFFIErrorSetRaisedFromCStr(b"RuntimeError", b"init refused")
                    else:
                        address[0] = 0x5000
                    return init_rc

                @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
                def deinit(value):
                    calls.append(["deinit", value])
                    if deinit_rc:
                        lib.TVMFFIErrorSetRaisedFromCStr(b"RuntimeError", b"deinit refused")
                    return deinit_rc
                record = []
                for _ in range(2):
                    record.append([lib.TVMFFIHandleInitOnce(ctypes.byref(handle),
                                                            ctypes.cast(init, ctypes.c_void_p)),
                                   handle.value, raised_error()])
                for _ in range(2):
                    record.append([lib.TVMFFIHandleDeinitOnce(
                        ctypes.byref(handle), ctypes.cast(deinit, ctypes.c_void_p)),
                        handle.value, raised_error()])
                out.append([record, calls])
            elif kind == "error_parts":
                error_kind, parts = arg
                encoded = [p.encode() for p in parts]
                array = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
                lib.TVMFFIErrorSetRaisedFromCStrParts(error_kind.encode(), array, len(encoded))
                out.append(raised_error())
            elif kind == "error_cause":
                error_kind, message, backtrace, with_cause, with_context = arg
                cause = ctypes.c_void_p()
                if with_cause:
                    lib.TVMFFIErrorCreate(text(b"CauseError"), text(b"first"), text(b""),
                                          ctypes.byref(cause))
                context = api.Array([1, "context"]) if with_context else None
                made = ctypes.c_void_p()
                rc = lib.TVMFFIErrorCreateWithCauseAndExtraContext(
                    text(error_kind.encode()), text(message.encode()), text(backtrace.encode()),
                    cause, ctypes.c_void_p(context.__chandle__() if context is not None else 0),
                    ctypes.byref(made))
                record = [rc, _error_cell(abi, made.value) if made.value else None]
                if made.value:
                    cell = abi.TVMFFIErrorCell.from_address(made.value + ctypes.sizeof(
                        abi.TVMFFIObject))
                    record.append([cell.cause_chain == cause.value,
                                   cell.extra_context == (context.__chandle__()
                                                          if context is not None else None),
                                   _strong_count(abi, cause.value) if cause.value else None])
                    lib.TVMFFIObjectDecRef(made)
                if cause.value:
                    record.append(_strong_count(abi, cause.value))
                    lib.TVMFFIObjectDecRef(cause)
                out.append(record)
            elif kind == "set_global":
                name, override, twice = arg
                function = ctypes.c_void_p()
                lib.TVMFFIFunctionGetGlobal(text(b"ffi.String"), ctypes.byref(function))
                record = []
                for _ in range(2 if twice else 1):
                    record.append([lib.TVMFFIFunctionSetGlobal(text(name.encode()), function,
                                                               int(override)), raised_error()])
                lib.TVMFFIObjectDecRef(function)
                record.append(attempt(env, lambda: api.get_global_func(name)("abc")))
                out.append(record)
            elif kind == "tensor_alloc":
                code, bits, lanes, shape, device_type = arg
                dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
                prototype = abi.DLTensor()
                prototype.ndim, prototype.shape = len(shape), dims
                prototype.dtype = abi.DLDataType(code, bits, lanes)
                prototype.device = abi.DLDevice(device_type, 0)
                made = ctypes.c_void_p()
                rc = lib.TVMFFIEnvTensorAlloc(ctypes.byref(prototype), ctypes.byref(made))
                record = [rc, raised_error(), bool(lib.TVMFFIEnvGetDLPackManagedTensorAllocator())]
                if made.value:
                    record.append(_tensor_fields(abi, made.value, "nonnull"))
                    lib.TVMFFIObjectDecRef(made)
                out.append(record)
            elif kind == "unsafe_view":
                shape, strides, offset_items = arg
                source = api.from_dlpack(env.np.arange(24, dtype="int32"))
                handle = source.__chandle__()
                base = _tensor_fields(abi, handle, None)
                dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
                steps = (ctypes.c_int64 * max(len(strides), 1))(*strides)
                prototype = abi.DLTensor()
                prototype.data = ctypes.c_void_p(base["data"])
                prototype.ndim, prototype.shape = len(shape), dims
                prototype.strides = steps if strides else None
                prototype.byte_offset = offset_items * 4
                prototype.dtype = abi.DLDataType(0, 32, 1)
                prototype.device = abi.DLDevice(1, 0)
                before = _strong_count(abi, handle)
                made = ctypes.c_void_p()
                rc = lib.TVMFFITensorCreateUnsafeView(handle, ctypes.byref(prototype),
                                                      ctypes.byref(made))
                record = [rc, raised_error()]
                if made.value:
                    record.append(_tensor_fields(abi, made.value, base["data"]))
                    record.append(_strong_count(abi, handle) - before)
                    lib.TVMFFIObjectDecRef(made)
                    record.append(_strong_count(abi, handle) - before)
                out.append(record)
            elif kind == "system_lib":
                name, value, prefix = arg

                def safe_call(handle, args, num_args, result, value=value):
                    result[0].type_index = 1  # kTVMFFIInt
                    result[0].v_int64 = value + num_args
                    return 0
                callback = abi.TVMFFISafeCallType(safe_call)
                keep.append(callback)
                rc = lib.TVMFFIEnvModRegisterSystemLibSymbol(
                    ("__tvm_ffi_" + prefix + name).encode(), ctypes.cast(callback,
                                                                         ctypes.c_void_p))
                # Looked up through the prefix it was registered with, through none and through
                # another: a system library tries prefix + name, then the name alone.
                record = [rc, attempt(env, lambda: api.system_lib().kind)]
                for lookup_prefix in (prefix, "", "other_"):
                    for lookup_name in (name, prefix + name):
                        record.append([attempt(env, lambda: api.system_lib(lookup_prefix)
                                               .get_function(lookup_name)(1, 2)),
                                       attempt(env, lambda: api.system_lib(lookup_prefix)
                                               .implements_function(lookup_name))])
                out.append(record)
            elif kind == "symbols":
                which, name = arg
                symbol = ctypes.c_void_p(0x1000)
                entry = (lib.TVMFFIEnvModRegisterContextSymbol if which == "context"
                         else lib.TVMFFIEnvRegisterCAPI)
                out.append([entry(name.encode(), symbol), raised_error()])
            elif kind in ("method_info", "type_method"):
                name, doc, metadata, override = arg
                function = ctypes.c_void_p()
                lib.TVMFFIFunctionGetGlobal(text(b"ffi.String"), ctypes.byref(function))
                info = abi.TVMFFIMethodInfo()
                for field, value in (("name", name), ("doc", doc), ("metadata", metadata)):
                    encoded = value.encode()
                    keep.append(encoded)
                    setattr(info, field, abi.TVMFFIByteArray(ctypes.cast(
                        ctypes.c_char_p(encoded), ctypes.c_void_p), len(encoded)))
                info.method.type_index = int(abi.TVMFFITypeIndex.kTVMFFIFunction)
                info.method.v_ptr = function.value
                if kind == "type_method":  # on stk.Plain, then read back from its type info
                    index = ctypes.c_int32()
                    lib.TVMFFITypeKeyToIndex(text(b"stk.Plain"), ctypes.byref(index))
                    info.flags = int(override)  # bit 0: a static method
                    rc = lib.TVMFFITypeRegisterMethod(index.value, ctypes.byref(info))
                    lib.TVMFFIObjectDecRef(function)
                    type_info = lib.TVMFFIGetTypeInfo(index.value).contents
                    methods = [type_info.methods[i] for i in range(type_info.num_methods)]
                    out.append([rc, raised_error(), [
                        [ctypes.string_at(m.name.data, m.name.size).decode(),
                         ctypes.string_at(m.doc.data, m.doc.size).decode() if m.doc.size else "",
                         m.flags] for m in methods if m.name.size]])
                    continue
                rc = lib.TVMFFIFunctionSetGlobalFromMethodInfo(ctypes.byref(info), int(override))
                lib.TVMFFIObjectDecRef(function)
                out.append([rc, raised_error(),
                            attempt(env, lambda: api.get_global_func(name)("abc")),
                            attempt(env, lambda: api.get_global_func_metadata(name))])
            elif kind == "allocators":
                out.append(_allocators(env, arg, raised_error))
            else:
                raise ValueError(f"unknown C API case {kind!r}")
        return out

    def op_environment_kernels(env, programs: List[Any]) -> List[Any]:
        """Programs on the ``environment`` kernel (``kernels/environment.cc``), loaded afresh
        for each: signals raised to the process while a kernel checks for them, and functions
        looked up from the kernel's imports (``TVMFFIEnvModLookupFromImports``)."""
        return [_environment_program(env, program, attempt) for program in programs]

    return {"c_api_surface": op_c_api_surface, "environment_kernels": op_environment_kernels}


def _environment_program(env: Any, program: List[Any], attempt: Callable) -> List[Any]:
    import signal

    api, out = env.api, []
    module = api.load_module(env.kernel_paths["environment"])
    hits: List[int] = []

    def handler(behaviour):
        def on_signal(signo, frame):
            hits.append(signo)
            if behaviour == "raise":
                raise ValueError(f"signal {signo}, hit {len(hits)}")
            if behaviour == "interrupt":
                raise KeyboardInterrupt
        return on_signal

    for step in program:
        kind = step[0]
        if kind == "signal":  # a kernel raising a signal, then failing the call if told to
            _, name, behaviour = step
            signo = int(getattr(signal, name)) if name else 0
            previous = signal.getsignal(signal.SIGUSR1) if name == "SIGUSR1" else None
            if name == "SIGUSR1":
                signal.signal(signal.SIGUSR1, handler(behaviour))
            try:
                try:
                    result = ["returns", module.signal_check(signo, 1)]
                except BaseException as error:  # noqa: BLE001 - KeyboardInterrupt is the result
                    result = ["raises", type(error).__name__, str(error)]
            finally:
                if previous is not None:
                    signal.signal(signal.SIGUSR1, previous)
            out.append([result, list(hits), module.last_signal_status()])
        elif kind == "import":  # the calls kernel, fresh, or through a fresh probe
            _, nested = step
            calls = api.load_module(env.kernel_paths["calls"])
            if nested:
                middle = api.load_module(env.kernel_paths["probe"])
                middle.import_module(calls)
                calls = middle
            module.import_module(calls)
            out.append("imported")
        elif kind == "register":  # a global function, registered or replaced from Python
            _, name, tag = step
            api.register_global_func(name, lambda *args, tag=tag: [tag, len(args)],
                                     override=True)
            out.append("registered")
        elif kind == "lookup":
            _, name, args = step
            out.append(attempt(env, lambda: module.lookup_from_imports(name, *args)))
        else:
            raise ValueError(f"unknown environment step {kind!r}")
    return out


def _allocators(env: Any, arg: Any, raised_error: Callable) -> List[Any]:
    """The process's object allocator (read, set again, reset to the default and back) and a
    DLPack tensor allocator set for this thread that refuses: what TVMFFIEnvTensorAlloc does."""
    abi, lib = env.abi, env.lib
    write_global, shape = arg
    current = lib.TVMFFIGetCustomAllocator()
    address = ctypes.cast(current, ctypes.c_void_p).value
    record = [address is not None, bool(current and current.contents.allocate)]
    record.append([lib.TVMFFISetCustomAllocator(current), ctypes.cast(
        lib.TVMFFIGetCustomAllocator(), ctypes.c_void_p).value == address])
    reset = lib.TVMFFISetCustomAllocator(None)
    default = lib.TVMFFIGetCustomAllocator()
    record.append([reset, bool(default), lib.TVMFFISetCustomAllocator(current)])

    @abi.DLPackManagedTensorAllocator
    def refuse(prototype, out, error_ctx, set_error):
        abi.DLPackSetError(set_error)(error_ctx, b"MemoryError",
                                       b"refused %d dims" % prototype[0].ndim)
        return -1
    original = ctypes.c_void_p()
    rc = lib.TVMFFIEnvSetDLPackManagedTensorAllocator(refuse, int(write_global),
                                                      ctypes.byref(original))
    now = lib.TVMFFIEnvGetDLPackManagedTensorAllocator()
    record.append([rc, ctypes.cast(now, ctypes.c_void_p).value == ctypes.cast(
        refuse, ctypes.c_void_p).value, bool(original.value)])
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    prototype = abi.DLTensor()
    prototype.ndim, prototype.shape = len(shape), dims
    prototype.dtype, prototype.device = abi.DLDataType(2, 32, 1), abi.DLDevice(1, 0)
    made = ctypes.c_void_p()
    record.append([lib.TVMFFIEnvTensorAlloc(ctypes.byref(prototype), ctypes.byref(made)),
                   made.value, raised_error()])
    before = abi.DLPackManagedTensorAllocator(original.value) if original.value else None
    record.append(lib.TVMFFIEnvSetDLPackManagedTensorAllocator(before, int(write_global), None))
    env.__dict__.setdefault("_c_callbacks", []).append(refuse)
    return record


def _error_cell(abi: Any, handle: int) -> List[Any]:
    """An Error object's kind, message and backtrace, read from its cell."""
    cell = abi.TVMFFIErrorCell.from_address(handle + ctypes.sizeof(abi.TVMFFIObject))
    return [ctypes.string_at(part.data, part.size).decode("utf-8", "replace")
            for part in (cell.kind, cell.message, cell.backtrace)]


def _strong_count(abi: Any, handle: int) -> int:
    return abi.TVMFFIObject.from_address(handle).combined_ref_count & 0xFFFFFFFF


def _tensor_fields(abi: Any, handle: int, base: Any) -> Dict[str, Any]:
    """A Tensor object's DLTensor: data (relative to ``base`` when given, whether it is set
    for ``"nonnull"``), shape, strides,
    dtype, device and byte offset."""
    t = abi.DLTensor.from_address(handle + ctypes.sizeof(abi.TVMFFIObject))
    data = t.data or 0
    return {"data": bool(data) if base == "nonnull" else data - base if base is not None
            else data,
            "shape": [t.shape[i] for i in range(t.ndim)],
            "strides": [t.strides[i] for i in range(t.ndim)] if t.strides else None,
            "dtype": [t.dtype.code, t.dtype.bits, t.dtype.lanes],
            "device": [t.device.device_type, t.device.device_id], "offset": t.byte_offset}
