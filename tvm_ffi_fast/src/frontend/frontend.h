/*
 * frontend.h -- the CPython-facing C of tvm_ffi_fast: the module tvm_ffi_fast._frontend.
 *
 * The fast package's Python API is tvm_ffi_ref's shared pure-Python modules
 * over a compiled *core*. This directory is that core: the Object and
 * Function extension types, the packed call (Python values encoded to
 * TVMFFIAny, the call, the result decoded), the call-rule checks, errors in
 * both directions and Python callables as Function objects. The encoding
 * rules are tvm_ffi_ref/convert.py's, in its dispatch order; the rare kinds
 * are decided and written by tvm_ffi_fast/compiled_core/convert.py (Python) and reached
 * from here through hooks.
 *
 * The core speaks to the runtime through the C ABI alone (the TVMFFI*
 * exports of libtvm_ffi.so and the ffi.* global functions), so it works over
 * whichever runtime serves the process, exactly as tvm_ffi_ref's front end
 * does when it shares another runtime. Reference counts follow the header's
 * atomic protocol inline, as C++ compiled from upstream's headers does.
 *
 * Every function here runs with the GIL held unless it says otherwise (fx_decref
 * among them: it may run a deleter).
 */
#ifndef TVM_FFI_FAST_FRONTEND_H_
#define TVM_FFI_FAST_FRONTEND_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_ffi_runtime.h> /* the container locks and stack checks of libtvm_ffi.so */

#define FX_HIDDEN __attribute__((visibility("hidden")))
#define FX_LIKELY(x) __builtin_expect(!!(x), 1)
#define FX_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define FX_NOINLINE __attribute__((noinline))

/* The cells follow the 24-byte object header. */
#define FX_CELL(handle, type) ((type*)((char*)(handle) + sizeof(TVMFFIObject)))

#if PY_VERSION_HEX >= 0x030D0000
#define FX_FINALIZING() Py_IsFinalizing()
#else
#define FX_FINALIZING() _Py_IsFinalizing()
#endif

/* ------------------------------------------------------ reference counts */

/*
 * The combined count of the header (c_api.h): strong references in the low
 * 32 bits, weak in the high 32, all strong references together holding one
 * weak. The same protocol C++ kernels inline, so either side may drop the
 * last reference; only the end of the strong count calls into libtvm_ffi.so.
 */
static inline void fx_incref(void* handle) {
  __atomic_fetch_add(&((TVMFFIObject*)handle)->combined_ref_count, (uint64_t)1,
                     __ATOMIC_RELAXED);
}

/*
 * Ends an object whose strong count ended (before: the count before the last
 * decrement) with the GIL held, through tvm_ffi_runtime_strong_count_ended. A
 * deleter may run Python code (the reference runtime's and ctypes-made
 * deleters are Python callbacks), which must not see an exception the caller
 * is propagating: it is set aside meanwhile.
 */
FX_HIDDEN void fx_run_deleter(TVMFFIObject* obj, uint64_t before);

static inline void fx_decref(void* handle) {
  TVMFFIObject* obj = (TVMFFIObject*)handle;
  uint64_t before = __atomic_fetch_sub(&obj->combined_ref_count, 1, __ATOMIC_RELEASE);
  if ((before & 0xFFFFFFFFu) == 1) fx_run_deleter(obj, before);
}

static inline int32_t fx_header_index(const void* handle) {
  return ((const TVMFFIObject*)handle)->type_index;
}

/* type(x).__name__ for messages (heap types made from a spec carry their module in tp_name). */
static inline const char* fx_type_name(PyTypeObject* type) {
  const char* dot = strrchr(type->tp_name, '.');
  return dot ? dot + 1 : type->tp_name;
}

/* getattr(o, name, None) as a new reference or NULL; NULL with an exception set only for an
 * error other than AttributeError. */
static inline PyObject* fx_optional_attr(PyObject* o, PyObject* name) {
  PyObject* value = NULL;
#if PY_VERSION_HEX >= 0x030D0000
  (void)PyObject_GetOptionalAttr(o, name, &value);
#else
  (void)_PyObject_LookupAttr(o, name, &value);
#endif
  return value;
}

/* hasattr(o, name): 1 or 0, or -1 with an exception other than AttributeError. */
static inline int fx_has_attr(PyObject* o, PyObject* name) {
  PyObject* value = fx_optional_attr(o, name);
  if (value == NULL) return PyErr_Occurred() ? -1 : 0;
  Py_DECREF(value);
  return 1;
}

/* An address given from Python (an int; None, or a deleted attribute, for NULL): 0, or -1
 * with an exception. */
static inline int fx_address_arg(PyObject* value, void** out) {
  *out = (value == NULL || value == Py_None) ? NULL : PyLong_AsVoidPtr(value);
  return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

/*
 * An int of one digit (|x| < 2**30) read in place into *out: 1, or 0 when it has more digits
 * (or the interpreter has no such layout: PyPy) and needs the general conversion. value must
 * be an exact int.
 */
static inline int fx_long_compact(PyObject* value, int64_t* out) {
#if !defined(PYPY_VERSION) && PY_VERSION_HEX >= 0x030C0000
  if (FX_LIKELY(PyUnstable_Long_IsCompact((PyLongObject*)value))) {
    *out = (int64_t)PyUnstable_Long_CompactValue((PyLongObject*)value);
    return 1;
  }
#elif !defined(PYPY_VERSION) && PY_VERSION_HEX >= 0x030B0000
  Py_ssize_t size = Py_SIZE(value); /* the sign times the number of digits */
  if (FX_LIKELY(size >= -1 && size <= 1)) {
    *out = (int64_t)size * (int64_t)((PyLongObject*)value)->ob_digit[0];
    return 1;
  }
#else
  (void)value;
  (void)out;
#endif
  return 0;
}

/* A zeroed TVMFFIAny (kTVMFFINone): what every argument slot starts as. */
static inline void fx_any_clear(TVMFFIAny* value) {
  value->type_index = kTVMFFINone;
  value->zero_padding = 0;
  value->v_int64 = 0;
}

/* ------------------------------------------------------ extension types */

/*
 * An Object wrapper: owns one strong reference to `handle` (NULL when empty).
 * exchange_api: the DLPack exchange table a container result remembers (see
 * exchange.c; NULL for every other object).
 */
typedef struct {
  PyObject_HEAD
  void* handle;
  PyObject* weakreflist;
  const DLPackExchangeAPI* exchange_api;
} FxObject;

/* tensor.Tensor's base (TensorBase): an Object, or a view of a borrowed DLTensor. */
typedef struct {
  FxObject base;
  const DLTensor* view;
} FxTensor;

/* A Function wrapper: an Object plus its vectorcall entry and, as upstream's, a __dict__. */
typedef struct {
  FxObject base;
  vectorcallfunc vectorcall;
  PyObject* dict;
  /* upstream's Function.release_gil: whether a call lets other Python threads run */
  int release_gil;
} FxFunction;

/* object.c */
FX_HIDDEN extern PyTypeObject* fx_cobject_type; /* CObject: the base of every wrapper */
/* Object: CObject's subclass for every object type but functions and tensors */
FX_HIDDEN extern PyTypeObject* fx_object_type;
FX_HIDDEN extern PyTypeObject* fx_function_type;
FX_HIDDEN int fx_object_types_init(PyObject* module);
/* _frontend.set_object_metaclass(meta): CObject, Object, Function and TensorBase take it. */
FX_HIDDEN PyObject* fx_py_set_object_metaclass(PyObject* self, PyObject* meta);
/* A new instance of cls (tp_new, as cls.__new__(cls)) taking over `handle`; on failure the
 * reference is released. */
FX_HIDDEN PyObject* fx_object_adopt(PyTypeObject* cls, void* handle);
/* The handle of a CObject argument (Python error and NULL when empty). */
FX_HIDDEN void* fx_object_handle_checked(PyObject* value);

/* function.c */
FX_HIDDEN PyObject* fx_function_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                                           PyObject* kwnames);
/* Calls a Function handle's safe_call directly (what TVMFFIFunctionCall does, minus a hop). */
static inline int fx_safe_call(void* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return FX_CELL(func, TVMFFIFunctionCell)->safe_call(func, args, num_args, result);
}
/* The Python value of a finished call (status and owned result), or NULL with the exception;
 * api: the DLPack exchange table the call's arguments brought (NULL: none). */
FX_HIDDEN PyObject* fx_finish_call(int status, TVMFFIAny* result, const DLPackExchangeAPI* api);
FX_HIDDEN PyObject* fx_py_get_global_func(PyObject* self, PyObject* const* args,
                                          Py_ssize_t nargs, PyObject* kwnames);

/* ------------------------------------------------------ class table */

/* How a type index's Python class is made from an owned handle (set from object.py). */
typedef enum {
  FX_MODE_PLAIN = 0,  /* cls.__new__(cls), then the handle: Object._adopt */
  FX_MODE_STR = 1,    /* string.String._tvm_ffi_from_handle, done here */
  FX_MODE_BYTES = 2,  /* string.Bytes._tvm_ffi_from_handle, done here */
  FX_MODE_SHAPE = 3,  /* tensor.Shape._tvm_ffi_from_handle, done here */
  FX_MODE_FROM_HANDLE = 4, /* cls._tvm_ffi_from_handle(handle), in Python */
  FX_MODE_ADOPT = 5   /* cls._adopt(handle), in Python (the class overrides it) */
} FxWrapMode;

/* decode.c */
FX_HIDDEN int fx_register_class(int32_t type_index, PyObject* cls, int mode);
/* The class registered for type_index (borrowed), made on first sight; NULL with an error. */
FX_HIDDEN PyObject* fx_class_of_index(int32_t type_index);
/* The Python value for an owned object reference of type_index (takes the reference). */
FX_HIDDEN PyObject* fx_wrap_owned(void* handle, int32_t type_index);
/* The Python value of an owned TVMFFIAny (takes its reference, even on failure). */
FX_HIDDEN PyObject* fx_decode_owned(TVMFFIAny* value);
/* The Python value of a borrowed TVMFFIAny (a callback argument, a container element). */
FX_HIDDEN PyObject* fx_decode_borrowed(const TVMFFIAny* value);
/* base.__new__(cls, content) remembering the object at handle as _tvm_ffi_cached_object
 * (String, Bytes, Shape); takes content's and handle's references, even on failure. */
FX_HIDDEN PyObject* fx_native_with_object(PyTypeObject* base, PyObject* cls, PyObject* content,
                                          void* handle);
/* device.Device._from_pair, done here (held equal by the tests). */
FX_HIDDEN PyObject* fx_make_device(DLDevice device);

/* dtypes.c */
/* dtype.dtype_from_tuple, done here (held equal by the tests). */
FX_HIDDEN PyObject* fx_make_dtype(DLDataType dtype);
/* The runtime's spelling of a DLDataType (a str), and the DLDataType a spelling names. */
FX_HIDDEN PyObject* fx_dtype_to_text(DLDataType dtype);
FX_HIDDEN int fx_dtype_from_text(PyObject* text, DLDataType* out);

/* ------------------------------------------------------ encoding */

/*
 * What must outlive one call: references made for it (long strings, Arrays
 * made from lists, Functions made from callables, imported tensors), dropped
 * when it returns, and, only when a rare kind needed Python, the Python
 * CallScope (tvm_ffi_fast/compiled_core/convert.py) its setter used.
 */
#define FX_SCOPE_INLINE 8
typedef struct {
  void** owned;
  int n_owned;
  int cap_owned;
  void* owned_inline[FX_SCOPE_INLINE];
  PyObject* py_scope;  /* NULL until needed */
  int py_scope_given;  /* py_scope belongs to the caller: hand our references to it */
  /* the framework context the arguments reveal (CallScope's fields, exchange.c) */
  const DLPackExchangeAPI* exchange_api;
  int32_t device_type; /* -1: no device yet */
  int32_t device_id;
  void* stream;
} FxScope;

/* The kinds of Python value this file encodes itself (convert.py's chooser returns them). */
typedef enum {
  FX_KIND_NONE = 0,
  FX_KIND_OBJECT,
  FX_KIND_DLPACK,
  FX_KIND_BOOL,
  FX_KIND_INT,
  FX_KIND_FLOAT,
  FX_KIND_DTYPE,
  FX_KIND_DEVICE,
  FX_KIND_NATIVE_STR,
  FX_KIND_NATIVE_BYTES,
  FX_KIND_NATIVE_SHAPE,
  FX_KIND_STR,
  FX_KIND_BYTES,
  FX_KIND_SEQUENCE,
  FX_KIND_DICT,
  FX_KIND_VOID_P,
  FX_KIND_CALLABLE,
  FX_KIND_COUNT
} FxKind;

/* scope.c */
/* Copies a scope's framework context to its Python CallScope and back (Python setters). */
FX_HIDDEN int fx_context_to_python(const FxScope* scope, PyObject* py_scope);
FX_HIDDEN int fx_context_from_python(FxScope* scope, PyObject* py_scope);
/* A new scope; one given by Python also takes up that CallScope's framework context
 * (0, or -1 with an exception). Inline: every call starts one. */
static inline int fx_scope_init(FxScope* scope, PyObject* given_py_scope) {
  scope->owned = scope->owned_inline;
  scope->n_owned = 0;
  scope->cap_owned = FX_SCOPE_INLINE;
  scope->py_scope = given_py_scope;
  scope->py_scope_given = given_py_scope != NULL;
  scope->exchange_api = NULL;
  scope->device_type = -1;
  scope->device_id = 0;
  scope->stream = NULL;
  return given_py_scope == NULL ? 0 : fx_context_from_python(scope, given_py_scope);
}
/* Records a reference the scope releases; on failure releases it now and returns -1. */
FX_HIDDEN int fx_scope_own(FxScope* scope, void* handle);
/* fx_scope_close of a scope with a Python CallScope or grown storage (any scope, in fact). */
FX_HIDDEN int fx_scope_close_full(FxScope* scope);
/*
 * Closes the scope: runs the Python fixups and drops the references (a given Python scope gets
 * them and the framework context instead); keeps a pending exception. 0, or -1 exactly when an
 * exception is pending on return (the one pending before, or one from the cleanup). Inline:
 * most scopes, a call's among them, own only references in their inline storage, and closing
 * those is dropping them (fx_decref keeps a pending exception, so none is set aside here); the
 * rest is scope.c's.
 */
static inline int fx_scope_close(FxScope* scope) {
  int i;
  if (FX_UNLIKELY(scope->py_scope != NULL || scope->owned != scope->owned_inline)) {
    return fx_scope_close_full(scope);
  }
  for (i = 0; i < scope->n_owned; ++i) fx_decref(scope->owned[i]);
  scope->n_owned = 0;
  return PyErr_Occurred() != NULL ? -1 : 0;
}
/* Takes up the framework context of a nested conversion where the scope has none yet. */
FX_HIDDEN void fx_scope_inherit(FxScope* scope, const FxScope* nested);
/* The scope's Python CallScope, made on first need (borrowed; NULL with an exception). */
FX_HIDDEN PyObject* fx_scope_python(FxScope* scope);

/* encode.c */
/* Writes value into *out as a borrowed argument. 0, or -1 with a Python exception. */
FX_HIDDEN int fx_encode(PyObject* value, TVMFFIAny* out, FxScope* scope);
/* A framework tensor or DLPack producer of the type met last (before any dict lookup): written
 * into *out as fx_encode writes it, 1; 0 for any other value; -1 with a Python exception. */
FX_HIDDEN int fx_encode_remembered_tensor(PyObject* value, TVMFFIAny* out, FxScope* scope);
/* Writes value into *out as an owned value (a callback's result, convert()). */
FX_HIDDEN int fx_encode_owned(PyObject* value, TVMFFIAny* out);
/* An owned str/bytes value: inline when at most 7 bytes, else a String/Bytes object. */
FX_HIDDEN int fx_make_str_or_bytes(const char* data, Py_ssize_t size, int is_str,
                                   TVMFFIAny* out);
/* New owned Array / Map / Dict handles holding converted values; NULL with an exception.
 * parent: the scope of the call the container is an argument of (NULL: none). */
FX_HIDDEN void* fx_new_array(PyObject* const* items, Py_ssize_t n, FxScope* parent);
FX_HIDDEN void* fx_new_map(PyObject* const* flat, Py_ssize_t n_flat, int mutable_,
                           FxScope* parent);
FX_HIDDEN PyObject* fx_kind_cache(void);
/* An object made for a call, passed borrowed and owned by the scope (NULL handle: -1). */
FX_HIDDEN int fx_encode_made(void* handle, TVMFFIAny* out, FxScope* scope);

/* nested.c: lists, tuples and dicts (nested to any depth) as Arrays and Maps */
FX_HIDDEN int fx_encode_sequence(PyObject* value, TVMFFIAny* out, FxScope* scope);
FX_HIDDEN int fx_encode_dict(PyObject* value, TVMFFIAny* out, FxScope* scope);
/* [k0, v0, k1, v1, ...] of a list of pairs, as `[x for kv in pairs for x in kv]`. */
FX_HIDDEN PyObject* fx_flatten_pairs(PyObject* pairs);

/* dlpack.c */
/* A new Tensor handle of a framework tensor, DLPack producer or capsule: from_dlpack's rules. */
FX_HIDDEN void* fx_tensor_from_dlpack(PyObject* value, int32_t require_alignment,
                                      int32_t require_contiguous);
/* from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False) */
FX_HIDDEN PyObject* fx_py_from_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                                      PyObject* kwnames);
/* Hands a managed tensor to the runtime (TVMFFITensorFromDLPack[Versioned]). */
FX_HIDDEN void* fx_import_managed(void* managed, int versioned, int32_t require_alignment,
                                  int32_t require_contiguous);
/* A capsule's managed tensor handed to the runtime (the capsule marked used): a Tensor handle. */
FX_HIDDEN void* fx_import_capsule(PyObject* capsule, int32_t require_alignment,
                                  int32_t require_contiguous);
/* A new DLPack capsule of the Tensor at handle (versioned or legacy). */
FX_HIDDEN PyObject* fx_export_capsule(void* handle, int versioned);
/* A tuple of n int64 values (shapes and strides). */
FX_HIDDEN PyObject* fx_int64_tuple(const int64_t* values, int n);
/* The fields of the DLTensor at address, as the DLTensorFields struct sequence. */
FX_HIDDEN PyObject* fx_dltensor_fields(const DLTensor* tensor);
FX_HIDDEN int fx_dlpack_init(PyObject* module);

/* tensortype.c */
FX_HIDDEN extern PyTypeObject* fx_tensor_type;
FX_HIDDEN int fx_tensor_type_init(PyObject* module);
/* shortcuts.new_shape(cls, content): tensor.Shape(content), done here. */
FX_HIDDEN PyObject* fx_py_new_shape(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
/* The DLTensor of a Tensor wrapper (owned object or view); NULL with an exception if empty. */
FX_HIDDEN const DLTensor* fx_tensor_dltensor(PyObject* tensor);
/* A view of a borrowed DLTensor*, of the class Tensor objects come back as. */
FX_HIDDEN PyObject* fx_tensor_view(const DLTensor* tensor);

/* exchange.c: framework tensors through DLPack 1.3's C exchange API */
/* The table a kind-cache entry holds (a "dlpack_exchange_api" capsule), else NULL. */
FX_HIDDEN const DLPackExchangeAPI* fx_exchange_choice(PyObject* choice);
/* The table type publishes (__dlpack_c_exchange_api__), NULL if none; -1 if malformed. */
FX_HIDDEN int fx_published_table(PyTypeObject* type, const DLPackExchangeAPI** out);
/* A framework tensor argument: a Tensor through the table, the scope taking up its context. */
FX_HIDDEN int fx_encode_framework_tensor(const DLPackExchangeAPI* api, PyObject* value,
                                         TVMFFIAny* out, FxScope* scope);
/* An owned Tensor handle imported through the table with from_dlpack's requirements. */
FX_HIDDEN void* fx_import_framework_tensor(const DLPackExchangeAPI* api, PyObject* value,
                                           int32_t require_alignment, int32_t require_contiguous);
/* A container remembering a table is an argument: the call takes up the table and device. */
FX_HIDDEN int fx_note_container(FxScope* scope, const DLPackExchangeAPI* api, void* handle);
/* The value of an owned TVMFFIAny seen through a table (NULL api: fx_decode_owned). A Tensor
 * the framework cannot make stays ours, unless strict (a callback argument): then it raises. */
FX_HIDDEN PyObject* fx_decode_owned_api(TVMFFIAny* value, const DLPackExchangeAPI* api,
                                        int strict);
FX_HIDDEN PyObject* fx_decode_borrowed_api(const TVMFFIAny* value, const DLPackExchangeAPI* api,
                                           int strict);
/* The stream and allocator of a call, set around it and restored after. */
typedef struct {
  void* previous_stream;
  DLPackManagedTensorAllocator allocator, previous_allocator;
  int stream_set, allocator_set;
} FxEnvironment;
/* 0, or -1 with the runtime's raised error (the call then fails with it). */
FX_HIDDEN int fx_environment_enter(FxEnvironment* env, const FxScope* scope);
/* 0, or -1 with a Python RuntimeError (upstream's texts). */
FX_HIDDEN int fx_environment_leave(FxEnvironment* env, const FxScope* scope);

/* callback.c */
/* A new Function handle whose safe_call calls the Python callable (its Tensor arguments
 * through the DLPack exchange table api, when not NULL). */
FX_HIDDEN void* fx_function_from_callable(PyObject* callable, const DLPackExchangeAPI* api);

/* errors.c */
/* Raises the Python exception for this thread's raised error (always returns NULL). */
FX_HIDDEN PyObject* fx_raise_last_error(void);
/* The raised error as an Error wrapper (None when nothing was raised). */
FX_HIDDEN PyObject* fx_take_last_error(void);
/* Raises the exception for a failed status of a function we called ourselves. */
FX_HIDDEN PyObject* fx_raise_status(int status);
/* error_crossing.threads_remembering (a set; NULL before watch_crossings) and its settle():
 * after a call returns, an Error C++ caught and dropped lets its exception go (errors.c). */
FX_HIDDEN extern PyObject* fx_crossing_threads;
FX_HIDDEN int fx_settle_crossings(void);
FX_HIDDEN PyObject* fx_py_watch_crossings(PyObject* self, PyObject* args);
static inline int fx_crossings_remembered(void) {
  return fx_crossing_threads != NULL && PySet_GET_SIZE(fx_crossing_threads) != 0;
}
/* Moves the pending Python exception into the thread's raised error (a callback failed). */
FX_HIDDEN void fx_error_to_raised(void);

/* rules.c */
/* 0 when an owned result obeys the calling convention, else -1 with ABIViolation raised. */
FX_HIDDEN int fx_check_result(const TVMFFIAny* result);
FX_HIDDEN PyObject* fx_raise_violation(const char* rule, const char* format, ...);

/* globals.c: ffi.* functions the core calls, looked up once and kept. */
typedef enum {
  FX_G_ARRAY = 0,
  FX_G_MAP,
  FX_G_DICT,
  FX_G_MAP_GET_ITEM_OR_MISSING,
  FX_G_DICT_GET_ITEM_OR_MISSING,
  FX_G_CONTAINER_FIND_FIRST_NON_CPU_DEVICE,
  FX_G_SHAPE,
  FX_G_COUNT
} FxGlobal;
/* The function handle (borrowed, kept for the process) or NULL with an exception. */
FX_HIDDEN void* fx_global(FxGlobal which);
/* encode.c: a new owned object from a constructor global given items as arguments; NULL with an
 * exception. parent: the scope of the call the object is an argument of (NULL: none). */
FX_HIDDEN void* fx_construct(FxGlobal which, PyObject* const* items, Py_ssize_t n,
                             FxScope* parent);
/* The handle ffi.GetInvalidObject returns (the "missing" marker of map lookups). */
FX_HIDDEN void* fx_missing_marker(void);
/* Calls a runtime function with packed args, turning a failure into a Python exception. */
FX_HIDDEN int fx_call_runtime(void* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);

/* ------------------------------------------------------ module state */

/* Python objects the C reaches: resolved from the package's modules on first use. */
typedef enum {
  FX_HOOK_CHOOSE_SETTER = 0, /* convert._choose_setter(value) -> kind or Python setter */
  FX_HOOK_FALLBACK_SET,      /* convert._fallback_set(setter, address, value, scope) */
  FX_HOOK_CALL_SCOPE,        /* convert.CallScope */
  FX_HOOK_CLASS_FOR_INDEX,   /* object.class_for_type_index */
  FX_HOOK_DTYPE,             /* dtype.dtype */
  FX_HOOK_DEVICE,            /* device.Device */
  FX_HOOK_ABI_VIOLATION,     /* rules.ABIViolation */
  FX_HOOK_ERROR_RAISED,      /* error.exception_to_error_raised */
  FX_HOOK_C_VOID_P,          /* ctypes.c_void_p */
  FX_HOOK_INTEGRAL,          /* numbers.Integral */
  FX_HOOK_COUNT
} FxHook;

/* The hook (borrowed) or NULL with an exception. */
FX_HIDDEN PyObject* fx_hook(FxHook which);
/* Replaces a hook (device.set_device_class's class, say). */
FX_HIDDEN void fx_set_hook(FxHook which, PyObject* value);

/* Interned attribute names. */
typedef struct {
  PyObject* cached_object; /* _tvm_ffi_cached_object */
  PyObject* dtype_tuple;   /* _tvm_ffi_dtype_tuple */
  PyObject* dlpack;        /* __dlpack__ */
  PyObject* dlpack_device_type; /* dlpack_device_type */
  PyObject* type_;         /* _type */
  PyObject* index_;        /* _index */
  PyObject* index;         /* index */
  PyObject* value;         /* value */
  PyObject* py_error;      /* py_error */
  PyObject* close;         /* close */
  PyObject* owned;         /* owned */
  PyObject* items;         /* items */
  PyObject* adopt;         /* _adopt */
  PyObject* from_handle;   /* _tvm_ffi_from_handle */
  PyObject* exchange_attr; /* __dlpack_c_exchange_api__ */
  PyObject* env_stream;    /* __tvm_ffi_env_stream__ */
  PyObject* view_of;       /* _view_of_dltensor */
  PyObject* ctx_api;       /* exchange_api (CallScope's fields) */
  PyObject* ctx_device_type; /* device_type */
  PyObject* ctx_device_id; /* device_id */
  PyObject* ctx_stream;    /* stream */
  PyObject* empty_tuple;   /* () */
  PyObject* dlpack_keywords[4]; /* __dlpack__'s: stream, max_version, dl_device, copy */
} FxNames;
FX_HIDDEN extern FxNames fx_names;

/* callback.c: drops a reference C owned to a Python object (a deleter: any thread, any time). */
FX_HIDDEN void fx_drop_pyobject(void* self);

/* holds.c: the container locks. fx_hold waits (GIL released) until this thread holds obj;
 * -1 + MemoryError. fx_safe_call_holding: the call with its List and Dict arguments held (the
 * GIL released). fx_copy_list_element: element index of an Array or List, copied (owned) under
 * the List's lock; IndexError when out of range. */
FX_HIDDEN int fx_hold(void* obj);
FX_HIDDEN void fx_release(void* obj);
FX_HIDDEN int fx_safe_call_holding(void* func, TVMFFIAny* args, int32_t n, TVMFFIAny* result);
/* Whether a call with these arguments holds a container (its lock may have to be waited for,
   which is never done with the GIL held: a call of a Function with release_gil off still
   releases it then). */
FX_HIDDEN int fx_args_hold_containers(const TVMFFIAny* args, int32_t n);
FX_HIDDEN int fx_copy_list_element(void* list, Py_ssize_t index, TVMFFIAny* out);
FX_HIDDEN extern PyMethodDef fx_hold_methods[];

/* pyapi.c: the module's functions (what tvm_ffi_fast's Python modules call). */
FX_HIDDEN extern PyMethodDef fx_module_methods[];
/* fields.c: reflected field access and the field converter callback */
FX_HIDDEN extern PyMethodDef fx_field_methods[];
FX_HIDDEN int fx_field_types_init(PyObject* module);

#endif /* TVM_FFI_FAST_FRONTEND_H_ */
