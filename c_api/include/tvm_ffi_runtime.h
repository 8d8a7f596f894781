/*
 * tvm_ffi_runtime.h -- how a runtime plugs in behind libtvm_ffi.so.
 *
 * This header is this project's own, not part of the upstream ABI. Kernel
 * libraries never include it; the two runtimes (tvm_ffi_ref over ctypes,
 * tvm_ffi_fast in C) do.
 *
 * libtvm_ffi.so exports every TVMFFI* function of c_api.h and c_env_api.h.
 * Each export forwards to one slot of the TVMFFIRuntimeTable installed in the
 * process. At most one runtime is installed at a time: installing a second
 * one is refused (the caller shares the first or reports the refusal).
 *
 * A slot left NULL falls back to the built-in implementation. Built-ins exist
 * for what needs no type registry: reference counting, the thread-local raised
 * error, Error objects, Function objects made from C callbacks and calling
 * them, the custom allocator slot, one-time handle initialisation and
 * backtraces. Every other built-in fails cleanly: it raises
 * a RuntimeError naming the function and returns -1 (or NULL), so a kernel
 * called before any runtime is loaded gets an error, not a crash.
 */
#ifndef TVM_FFI_RUNTIME_H_
#define TVM_FFI_RUNTIME_H_

#include <stddef.h>
#include <tvm/ffi/extra/c_env_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every slot, in table order. Expand with three macros:
 *   VALUE(ret, name, params, args, fail)  a function returning ret; fail is
 *                                         what the failing built-in returns
 *   VOID(name, params, args)              a function returning void
 *   OUTPARAM(ret, name, params, args)     a function returning a struct by
 *                                         value; its slot instead takes a
 *                                         trailing `ret* out` (params and args
 *                                         here already include it), because
 *                                         ctypes callbacks cannot return
 *                                         structs
 * TVMFFIGetVersion has no slot: libtvm_ffi.so answers it itself.
 */
#define TVM_FFI_RUNTIME_SLOTS(VALUE, VOID, OUTPARAM)                                           \
  VALUE(int, TVMFFIObjectIncRef, (TVMFFIObjectHandle obj), (obj), -1)                         \
  VALUE(int, TVMFFIObjectDecRef, (TVMFFIObjectHandle obj), (obj), -1)                         \
  VALUE(int, TVMFFIObjectCreateOpaque,                                                        \
        (void* handle, int32_t type_index, void (*deleter)(void*), TVMFFIObjectHandle* out),  \
        (handle, type_index, deleter, out), -1)                                               \
  VALUE(TVMFFICustomAllocator*, TVMFFIGetCustomAllocator, (void), (), NULL)                   \
  VALUE(int, TVMFFISetCustomAllocator, (TVMFFICustomAllocator * allocator), (allocator), -1)  \
  VALUE(int, TVMFFITypeKeyToIndex, (const TVMFFIByteArray* type_key, int32_t* out_tindex),    \
        (type_key, out_tindex), -1)                                                           \
  VALUE(int, TVMFFIFunctionCreate,                                                            \
        (void* self, TVMFFISafeCallType safe_call, void (*deleter)(void*),                    \
         TVMFFIObjectHandle* out),                                                            \
        (self, safe_call, deleter, out), -1)                                                  \
  VALUE(int, TVMFFIFunctionGetGlobal, (const TVMFFIByteArray* name, TVMFFIObjectHandle* out), \
        (name, out), -1)                                                                      \
  VALUE(int, TVMFFIAnyViewToOwnedAny, (const TVMFFIAny* any_view, TVMFFIAny* out),            \
        (any_view, out), -1)                                                                  \
  VALUE(int, TVMFFIFunctionCall,                                                              \
        (TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result),      \
        (func, args, num_args, result), -1)                                                   \
  VOID(TVMFFIErrorMoveFromRaised, (TVMFFIObjectHandle * result), (result))                    \
  VOID(TVMFFIErrorSetRaised, (TVMFFIObjectHandle error), (error))                             \
  VOID(TVMFFIErrorSetRaisedFromCStr, (const char* kind, const char* message), (kind, message)) \
  VOID(TVMFFIErrorSetRaisedFromCStrParts,                                                     \
       (const char* kind, const char** message_parts, int32_t num_parts),                     \
       (kind, message_parts, num_parts))                                                      \
  VALUE(int, TVMFFIErrorCreate,                                                               \
        (const TVMFFIByteArray* kind, const TVMFFIByteArray* message,                         \
         const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out),                          \
        (kind, message, backtrace, out), -1)                                                  \
  VALUE(int, TVMFFIErrorCreateWithCauseAndExtraContext,                                       \
        (const TVMFFIByteArray* kind, const TVMFFIByteArray* message,                         \
         const TVMFFIByteArray* backtrace, TVMFFIObjectHandle cause_chain,                    \
         TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out),                          \
        (kind, message, backtrace, cause_chain, extra_context, out), -1)                      \
  VALUE(int, TVMFFITensorFromDLPack,                                                          \
        (DLManagedTensor * from, int32_t require_alignment, int32_t require_contiguous,       \
         TVMFFIObjectHandle* out),                                                            \
        (from, require_alignment, require_contiguous, out), -1)                               \
  VALUE(int, TVMFFITensorToDLPack, (TVMFFIObjectHandle from, DLManagedTensor * *out),         \
        (from, out), -1)                                                                      \
  VALUE(int, TVMFFITensorFromDLPackVersioned,                                                 \
        (DLManagedTensorVersioned * from, int32_t require_alignment,                          \
         int32_t require_contiguous, TVMFFIObjectHandle* out),                                \
        (from, require_alignment, require_contiguous, out), -1)                               \
  VALUE(int, TVMFFITensorToDLPackVersioned,                                                   \
        (TVMFFIObjectHandle from, DLManagedTensorVersioned * *out), (from, out), -1)          \
  VALUE(int, TVMFFITensorCreateUnsafeView,                                                    \
        (TVMFFIObjectHandle source, const DLTensor* prototype, TVMFFIObjectHandle* out),      \
        (source, prototype, out), -1)                                                         \
  VALUE(int, TVMFFIStringFromByteArray, (const TVMFFIByteArray* input, TVMFFIAny* out),       \
        (input, out), -1)                                                                     \
  VALUE(int, TVMFFIBytesFromByteArray, (const TVMFFIByteArray* input, TVMFFIAny* out),        \
        (input, out), -1)                                                                     \
  VALUE(int, TVMFFIBigIntFromByteArray, (const TVMFFIByteArray* input, TVMFFIAny* out),       \
        (input, out), -1)                                                                     \
  OUTPARAM(TVMFFIByteArray, TVMFFIBigIntGetContentByteArray,                                  \
           (const TVMFFIAny* value, TVMFFIByteArray* out), (value, out))                      \
  VALUE(int, TVMFFIDataTypeFromString, (const TVMFFIByteArray* str, DLDataType* out),         \
        (str, out), -1)                                                                       \
  VALUE(int, TVMFFIDataTypeToString, (const DLDataType* dtype, TVMFFIAny* out), (dtype, out), \
        -1)                                                                                   \
  VALUE(int, TVMFFIFunctionSetGlobal,                                                         \
        (const TVMFFIByteArray* name, TVMFFIObjectHandle f, int allow_override),              \
        (name, f, allow_override), -1)                                                        \
  VALUE(int, TVMFFIFunctionSetGlobalFromMethodInfo,                                           \
        (const TVMFFIMethodInfo* method_info, int allow_override),                            \
        (method_info, allow_override), -1)                                                    \
  VALUE(int, TVMFFITypeRegisterField, (int32_t type_index, const TVMFFIFieldInfo* info),      \
        (type_index, info), -1)                                                               \
  VALUE(int, TVMFFITypeRegisterMethod, (int32_t type_index, const TVMFFIMethodInfo* info),    \
        (type_index, info), -1)                                                               \
  VALUE(int, TVMFFITypeRegisterMetadata,                                                      \
        (int32_t type_index, const TVMFFITypeMetadata* metadata), (type_index, metadata), -1) \
  VALUE(int, TVMFFITypeRegisterAttr,                                                          \
        (int32_t type_index, const TVMFFIByteArray* attr_name, const TVMFFIAny* attr_value),  \
        (type_index, attr_name, attr_value), -1)                                              \
  VALUE(const TVMFFITypeAttrColumn*, TVMFFIGetTypeAttrColumn,                                 \
        (const TVMFFIByteArray* attr_name), (attr_name), NULL)                                \
  VALUE(const TVMFFIByteArray*, TVMFFIBacktrace,                                              \
        (const char* filename, int lineno, const char* func, int cross_ffi_boundary),         \
        (filename, lineno, func, cross_ffi_boundary), NULL)                                   \
  VALUE(int32_t, TVMFFITypeGetOrAllocIndex,                                                   \
        (const TVMFFIByteArray* type_key, int32_t static_type_index, int32_t type_depth,      \
         int32_t num_child_slots, int32_t child_slots_can_overflow,                           \
         int32_t parent_type_index),                                                          \
        (type_key, static_type_index, type_depth, num_child_slots, child_slots_can_overflow,  \
         parent_type_index),                                                                  \
        -1)                                                                                   \
  VALUE(const TVMFFITypeInfo*, TVMFFIGetTypeInfo, (int32_t type_index), (type_index), NULL)   \
  VALUE(int, TVMFFIHandleInitOnce, (void** handle_addr, int (*init_func)(void**)),            \
        (handle_addr, init_func), -1)                                                         \
  VALUE(int, TVMFFIHandleDeinitOnce, (void** handle_addr, int (*deinit_func)(void*)),         \
        (handle_addr, deinit_func), -1)                                                       \
  VALUE(int, TVMFFIEnvSetStream,                                                              \
        (int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,                   \
         TVMFFIStreamHandle* opt_out_original_stream),                                        \
        (device_type, device_id, stream, opt_out_original_stream), -1)                        \
  VALUE(TVMFFIStreamHandle, TVMFFIEnvGetStream, (int32_t device_type, int32_t device_id),     \
        (device_type, device_id), NULL)                                                       \
  VALUE(int, TVMFFIEnvSetDLPackManagedTensorAllocator,                                        \
        (DLPackManagedTensorAllocator allocator, int write_to_global_context,                 \
         DLPackManagedTensorAllocator* opt_out_original_allocator),                           \
        (allocator, write_to_global_context, opt_out_original_allocator), -1)                 \
  VALUE(DLPackManagedTensorAllocator, TVMFFIEnvGetDLPackManagedTensorAllocator, (void), (),   \
        NULL)                                                                                 \
  VALUE(int, TVMFFIEnvTensorAlloc, (DLTensor * prototype, TVMFFIObjectHandle* out),           \
        (prototype, out), -1)                                                                 \
  VALUE(int, TVMFFIEnvCheckSignals, (void), (), -1)                                           \
  VALUE(int, TVMFFIEnvRegisterCAPI, (const char* name, void* symbol), (name, symbol), -1)     \
  VALUE(int, TVMFFIEnvModLookupFromImports,                                                   \
        (TVMFFIObjectHandle library_ctx, const char* func_name, TVMFFIObjectHandle* out),     \
        (library_ctx, func_name, out), -1)                                                    \
  VALUE(int, TVMFFIEnvModRegisterContextSymbol, (const char* name, void* symbol),             \
        (name, symbol), -1)                                                                   \
  VALUE(int, TVMFFIEnvModRegisterSystemLibSymbol, (const char* name, void* symbol),           \
        (name, symbol), -1)

#define TVM_FFI_RUNTIME_VALUE_FIELD_(ret, name, params, args, fail) ret(*name) params;
#define TVM_FFI_RUNTIME_VOID_FIELD_(name, params, args) void(*name) params;
#define TVM_FFI_RUNTIME_OUTPARAM_FIELD_(ret, name, params, args) void(*name) params;

/*
 * The implementation of the C API a runtime installs. struct_size must be
 * sizeof(TVMFFIRuntimeTable) as the runtime was compiled, so a stale runtime
 * is refused instead of misread; name identifies the runtime in messages.
 */
typedef struct TVMFFIRuntimeTable {
  size_t struct_size;
  const char* name;
  TVM_FFI_RUNTIME_SLOTS(TVM_FFI_RUNTIME_VALUE_FIELD_, TVM_FFI_RUNTIME_VOID_FIELD_,
                        TVM_FFI_RUNTIME_OUTPARAM_FIELD_)
} TVMFFIRuntimeTable;

/* What tvm_ffi_runtime_install reports. */
typedef enum {
  kTVMFFIRuntimeInstalled = 0,        /* the table now serves the C API */
  kTVMFFIRuntimeAlreadyInstalled = 1, /* another runtime serves it; nothing changed */
  kTVMFFIRuntimeBadTable = -1         /* wrong struct_size, no name, or a partial error group */
} TVMFFIRuntimeInstallStatus;

/*
 * Makes table serve the C API. The table is copied (NULL slots filled with
 * built-ins), so it need not outlive the call, but the functions it points to
 * must stay callable until tvm_ffi_runtime_uninstall. The four raised-error
 * slots (SetRaised, SetRaisedFromCStr, SetRaisedFromCStrParts and
 * MoveFromRaised) share one thread-local slot, so they are set all together
 * or left all NULL.
 */
TVM_FFI_DLL int tvm_ffi_runtime_install(const TVMFFIRuntimeTable* table);

/*
 * Stops the installed runtime from serving calls (only the runtime of that
 * name may do so) and returns to the built-ins. A runtime written in a
 * language with a shutdown order (Python) calls this before its callbacks
 * become invalid.
 */
TVM_FFI_DLL int tvm_ffi_runtime_uninstall(const char* name);

/* The name of the installed runtime, or NULL when none is. */
TVM_FFI_DLL const char* tvm_ffi_runtime_name(void);

/* The table of built-ins alone, for runtimes that delegate part of a slot. */
TVM_FFI_DLL const TVMFFIRuntimeTable* tvm_ffi_runtime_builtins(void);

/*
 * Object deleters a runtime may store in the headers of objects it allocates
 * with malloc, so that objects with nothing of the runtime's own to release
 * die without calling back into it (a Python runtime's callbacks are slow).
 *
 * tvm_ffi_runtime_free_object frees the block when the weak count ends.
 * tvm_ffi_runtime_free_sequence does the same for an object whose cell is a
 * TVMFFISeqCell (Array, List): when the strong count ends it first releases
 * every live element and, through the cell's data_deleter if set, the buffer.
 */
TVM_FFI_DLL void tvm_ffi_runtime_free_object(void* self, int flags);
TVM_FFI_DLL void tvm_ffi_runtime_free_sequence(void* self, int flags);

/*
 * What a reference count's owner calls when its decrement took the strong
 * count to zero (before: the combined count before that decrement): runs the
 * object's deleter, or, when a deleter is already running on this thread,
 * queues the object for the outermost call to destroy, so that releasing a
 * chain of any length takes constant C stack. TVMFFIObjectDecRef ends there.
 */
TVM_FFI_DLL void tvm_ffi_runtime_strong_count_ended(TVMFFIObject* obj, uint64_t before);

/*
 * The buffer of a List (TVMFFISeqCell.data when not inline): ::operator new
 * and ::operator delete, because C++ compiled from upstream's headers grows a
 * List with ::operator new and keeps the cell's data_deleter, so a List's
 * data_deleter must be tvm_ffi_runtime_list_buffer_free and every buffer
 * behind it must come from tvm_ffi_runtime_list_buffer_alloc (NULL when out
 * of memory).
 */
TVM_FFI_DLL void* tvm_ffi_runtime_list_buffer_alloc(size_t bytes);
TVM_FFI_DLL void tvm_ffi_runtime_list_buffer_free(void* data);

/*
 * A Function (*out, a new reference) that calls safe_call with a NULL handle,
 * as upstream's library modules call an exported __tvm_ffi_<name> symbol, and
 * holds a reference to owner (the module, so its library stays loaded) until
 * it dies. The call path is C alone, for runtimes whose callbacks are slow.
 */
/*
 * ffi.BigInt's entries in the __any_hash__ / __any_equal__ type attribute
 * columns, in upstream's native convention (an opaque pointer to
 * TVMFFIAny fn(const Any&...), returning an int / a bool): the StableHashBytes
 * of the two's-complement words, and equality of the words.
 */
TVM_FFI_DLL TVMFFIAny tvm_ffi_runtime_bigint_any_hash(const TVMFFIAny* value);
TVM_FFI_DLL TVMFFIAny tvm_ffi_runtime_bigint_any_equal(const TVMFFIAny* lhs,
                                                       const TVMFFIAny* rhs);

/*
 * ffi.StructuralKey's entries in the same columns, for runtimes whose own code
 * C cannot call natively: the cached structural hash (int64 at offset 40), and
 * equality of two keys (the same object; or equal hashes and keys equal by the
 * installed runtime's ffi.StructuralEqual; an Error on failure).
 */
TVM_FFI_DLL TVMFFIAny tvm_ffi_runtime_structural_key_any_hash(const TVMFFIAny* value);
TVM_FFI_DLL TVMFFIAny tvm_ffi_runtime_structural_key_any_equal(const TVMFFIAny* lhs,
                                                               const TVMFFIAny* rhs);

TVM_FFI_DLL int tvm_ffi_runtime_function_with_owner(TVMFFISafeCallType safe_call,
                                                    TVMFFIObjectHandle owner,
                                                    TVMFFIObjectHandle* out);

/*
 * A Function (*out, a new reference) over an MLIR packed entry point
 * packed(void** args), args being the addresses of the safe-call handle (NULL),
 * args, num_args and result and of the int status packed writes back (MLIR's
 * execution engine exposes C functions this way). context, if release is not
 * NULL, is released by release(context) when the Function dies; on failure
 * nothing is released.
 */
TVM_FFI_DLL int tvm_ffi_runtime_mlir_packed_function(void (*packed)(void**), void* context,
                                                     void (*release)(void*),
                                                     TVMFFIObjectHandle* out);

/*
 * Modules and C++ (libtvm_ffi.so's C++ face). Upstream's ModuleObj is a C++
 * class whose vtable pointer sits 8 bytes before the object header. A runtime
 * allocates each Module object it makes with those 8 bytes in front, holding
 * tvm_ffi_runtime_module_vtable(): C++ code calling mod->GetFunction(...) on it
 * then reaches the runtime's own ffi.Module* globals.
 *
 * A module made by C++ (a ModuleObj subclass) has a vtable of its own:
 * tvm_ffi_runtime_module_is_foreign says so, and the runtime serves its
 * ffi.Module<method> globals on it with tvm_ffi_runtime_module_call(method,
 * args, ...) (args[0] the module, then the global's own arguments; method
 * one of GetFunction, ImplementsFunction, GetFunctionDoc, GetFunctionMetadata,
 * GetPropertyMask, InspectSource, GetKind, GetWriteFormats, WriteToFile,
 * ImportModule, ClearImports), which calls its virtual functions; 0 or -1
 * with an error raised. tvm_ffi_runtime_module_lookup_from_imports is
 * TVMFFIEnvModLookupFromImports on such a module (a borrowed Function).
 */
TVM_FFI_DLL void* tvm_ffi_runtime_module_vtable(void);
TVM_FFI_DLL int tvm_ffi_runtime_module_is_foreign(TVMFFIObjectHandle module);
TVM_FFI_DLL int tvm_ffi_runtime_module_call(const char* method, const TVMFFIAny* args,
                                            int32_t num_args, TVMFFIAny* result);
TVM_FFI_DLL int tvm_ffi_runtime_module_lookup_from_imports(TVMFFIObjectHandle module,
                                                           const char* name,
                                                           TVMFFIObjectHandle* out);

/*
 * Container locks (object_lock.c). Upstream leaves List and Dict to external
 * synchronization; here every operation on one holds its lock: each runtime
 * container function holds the List and Dict it was given, a front end holds
 * one across the steps of a Python-level operation and holds the List and
 * Dict arguments of a call for the whole call. Nothing is written into the
 * object.
 *
 * tvm_ffi_runtime_object_lock waits until no other thread holds obj, then
 * holds it; a thread may hold an object again (each lock needs its unlock).
 * 0, or -1 when out of memory (nothing raised). try_lock does not wait: 0
 * when it now holds obj, 1 when another thread does (nothing changes), -1
 * out of memory. unlock releases one hold of this thread's (nothing when it
 * holds none). held says whether this thread holds obj. NULL is never held.
 * A thread holding the Python GIL must not wait here (try, then wait with
 * the GIL released): the holder may be calling back into Python.
 */
TVM_FFI_DLL int tvm_ffi_runtime_object_lock(TVMFFIObjectHandle obj);
TVM_FFI_DLL int tvm_ffi_runtime_object_try_lock(TVMFFIObjectHandle obj);
TVM_FFI_DLL void tvm_ffi_runtime_object_unlock(TVMFFIObjectHandle obj);
TVM_FFI_DLL int tvm_ffi_runtime_object_held(TVMFFIObjectHandle obj);

/* Whether objects of this type index are the mutable containers locked as above. */
static inline int tvm_ffi_runtime_locks_type(int32_t type_index) {
  return type_index == kTVMFFIList || type_index == kTVMFFIDict;
}

/*
 * Whether the calling thread has less C stack left than a safe margin
 * (stack_room.c): callback entries then refuse to nest deeper, with
 * tvm_ffi_runtime_refuse_deeper_callback (a RecursionError raised, -1).
 */
TVM_FFI_DLL int tvm_ffi_runtime_stack_low(void);
TVM_FFI_DLL int tvm_ffi_runtime_refuse_deeper_callback(void);

/*
 * The native frames of the kernel code that called the Python callback now
 * failing, as backtrace lines with function names (innermost first; "" when
 * Python itself made the call): what a front end appends to the error's
 * backtrace after the callback's Python frames (native_frames.c).
 * python_runs is how many stretches of interpreter frames lie between the
 * caller and the callback's C entry (1 when called from the Python code the
 * callback runs). The text lives in thread-local storage until the next call.
 */
TVM_FFI_DLL const char* tvm_ffi_runtime_callback_caller_frames(int python_runs);

/*
 * A Function over a callback that may fail before it even starts, as a ctypes
 * callback does at Python's recursion limit (it returns 0 with the result
 * unwritten): such a call fails with a RecursionError, and so does one made
 * with the C stack nearly exhausted (checked_callback.c). release(self) runs
 * when the Function dies; on failure the caller keeps self.
 */
TVM_FFI_DLL int tvm_ffi_runtime_checked_callback_function(void* self,
                                                          TVMFFISafeCallType callback,
                                                          void (*release)(void* self),
                                                          TVMFFIObjectHandle* out);

/*
 * For a runtime written in Python (host_callbacks.c: its exit gate).
 * host_exit says the host's interpreter is finalizing: from then on, for good,
 * nothing below calls into the host -- releases are dropped (nothing called,
 * nothing freed: left to the process's end), traversal steps return None, and
 * host_exited is true (checked_callback.c then refuses calls).
 *
 * host_deleter is the deleter such a runtime stores in its objects' headers:
 * it calls the deleter last given to set_host_deleter (unless the host
 * exited). host_dlpack_deleter / host_dlpack_versioned_deleter are the
 * deleters of the DLPack managed tensors it exports: they call the deleter
 * given to set_host_dlpack_deleter with versioned 0 or 1 (unless it exited).
 *
 * host_visitor_vtable registers the runtime's visit step (NULL: none; a visit
 * then returns None) and returns the address of a StructuralVisitorVTable
 * (one entry, TVMFFIAny visit(visitor, AnyView value)) that calls it with
 * the value by pointer and the outcome written to *out (None, a
 * VisitInterrupt or an Error, owned). A visitor object made by the runtime
 * stores it at offset 24, so native __s_visit__ hooks can descend through it.
 */
typedef void (*TVMFFIRuntimeHostStep)(void* traversal, const TVMFFIAny* value, TVMFFIAny* out);
TVM_FFI_DLL void tvm_ffi_runtime_host_exit(void);
TVM_FFI_DLL int tvm_ffi_runtime_host_exited(void);
TVM_FFI_DLL void tvm_ffi_runtime_set_host_deleter(void (*deleter)(void* self, int flags));
TVM_FFI_DLL void tvm_ffi_runtime_host_deleter(void* self, int flags);
TVM_FFI_DLL void tvm_ffi_runtime_set_host_dlpack_deleter(void (*deleter)(void* managed,
                                                                         int versioned));
TVM_FFI_DLL void tvm_ffi_runtime_host_dlpack_deleter(void* managed);
TVM_FFI_DLL void tvm_ffi_runtime_host_dlpack_versioned_deleter(void* managed);
TVM_FFI_DLL const void* tvm_ffi_runtime_host_visitor_vtable(TVMFFIRuntimeHostStep visit);

/*
 * The same for a StructuralMutatorVTable (mutate, maybe_inplace_mutate,
 * var_remap_get, var_remap_set): each entry calls step with op 0, 1, 2 or 3,
 * the value (or variable) and, for var_remap_set, the mapped value as other
 * (NULL otherwise); *out receives the owned outcome (a replacement, the
 * Unchanged marker, the mapped value or None, or an Error).
 */
typedef void (*TVMFFIRuntimeHostMutatorStep)(void* traversal, int32_t op, const TVMFFIAny* value,
                                             const TVMFFIAny* other, TVMFFIAny* out);
TVM_FFI_DLL const void* tvm_ffi_runtime_host_mutator_vtable(TVMFFIRuntimeHostMutatorStep step);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TVM_FFI_RUNTIME_H_ */
