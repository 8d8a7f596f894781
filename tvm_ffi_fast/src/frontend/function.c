/*
 * function.c -- the packed call: Function.__call__ as vectorcall, and global lookups.
 *
 * A call encodes the arguments into TVMFFIAny slots on the C stack, calls the function's
 * safe_call with the function object itself as handle (what TVMFFIFunctionCall does, minus
 * one hop) with the GIL released, as upstream does by default and as ctypes does for the
 * reference front end, releases what the encoding made for the call (fx_scope_close), then
 * checks the status and result against the calling convention (rules.c) and decodes the result
 * (decode.c) or raises the error (errors.c): tvm_ffi_ref's Function.__call__ and finish_call,
 * step for step. The kernel is called in one place, kernel_call (in the framework environment
 * the arguments brought: scoped_call), inlined into each path below with may_hold a constant
 * there.
 *
 * Three paths. Plain arguments (scalars, short ASCII str, Objects other than List/Dict:
 * encode_plain) make nothing, hold nothing and bring no framework context, so they are
 * written in place and the call goes straight on. Tensors of the framework type or DLPack
 * producer type met last (a torch tensor, a NumPy array: encode.c remembers them) are imported
 * into a scope among plain arguments, and the call ends in tensor_call: no container to hold,
 * the framework's environment set around the call, the imports dropped after it. Any other
 * argument sends the call through encode.c with a scope (general_call): its List and Dict
 * arguments held for the whole call (holds.c), and, when the arguments brought a framework's
 * DLPack exchange table or a device, its stream and allocator the environment's during the
 * call and the result seen through the table (exchange.c).
 */
#include "frontend.h"

#define FX_STACK_ARGS 8

PyObject* fx_finish_call(int status, TVMFFIAny* result, const DLPackExchangeAPI* api) {
  if (FX_LIKELY(status == 0)) {
    PyObject* value;
    if (FX_UNLIKELY(fx_check_result(result) < 0)) return NULL;
    value = api == NULL ? fx_decode_owned(result) : fx_decode_owned_api(result, api, 0);
    /* an Error the kernel caught and dropped: its exception goes now (error_crossing.py) */
    if (FX_UNLIKELY(fx_crossings_remembered()) && value != NULL && fx_settle_crossings() < 0) {
      Py_DECREF(value);
      return NULL;
    }
    return value;
  }
  return fx_raise_status(status); /* py_error settles (error.py) */
}

static PyObject* reject_keywords(PyObject* kwnames) {
  PyErr_Format(PyExc_TypeError, "Function.__call__() got an unexpected keyword argument '%U'",
               PyTuple_GET_ITEM(kwnames, 0));
  return NULL;
}

/* Releases what a call returned (its result, or its raised error); a pending exception stays. */
static void discard_outcome(int status, TVMFFIAny* result) {
  if (status == 0) {
    if (result->type_index >= kTVMFFIStaticObjectBegin && result->v_ptr != NULL) {
      fx_decref(result->v_ptr);
    }
  } else if (status == -1) {
    TVMFFIObjectHandle error = NULL;
    TVMFFIErrorMoveFromRaised(&error);
    if (error != NULL) fx_decref(error);
  }
}

/*
 * The kernel call itself: safe_call with the GIL released unless release_gil is 0, through
 * fx_safe_call_holding when the arguments may include a List or Dict (may_hold), which then
 * holds them for the call. Every call goes through here; inlined, may_hold is a constant at
 * each site and only that site's branch is compiled in.
 */
static inline int kernel_call(void* handle, TVMFFIAny* packed, int32_t n, TVMFFIAny* result,
                              int release_gil, int may_hold) {
  int status;
  if (FX_LIKELY(release_gil)) {
    Py_BEGIN_ALLOW_THREADS;
    status = may_hold ? fx_safe_call_holding(handle, packed, n, result)
                      : fx_safe_call(handle, packed, n, result);
    Py_END_ALLOW_THREADS;
  } else {
    status = may_hold ? fx_safe_call_holding(handle, packed, n, result)
                      : fx_safe_call(handle, packed, n, result);
  }
  return status;
}

/*
 * The kernel call in the environment the scope's arguments brought: with the framework's
 * stream current and its allocator installed when there is one (exchange.c), else as it is.
 * A failure to install them is the call's failure (its raised error); one to restore them
 * leaves a Python error pending, which supersedes the call's outcome (the caller discards it).
 */
static inline int scoped_call(void* handle, TVMFFIAny* packed, int32_t n, TVMFFIAny* result,
                              const FxScope* scope, int release_gil, int may_hold) {
  FxEnvironment env;
  int status;
  if (FX_LIKELY(scope->device_type == -1 && scope->exchange_api == NULL)) {
    return kernel_call(handle, packed, n, result, release_gil, may_hold);
  }
  status = fx_environment_enter(&env, scope);
  if (status == 0) status = kernel_call(handle, packed, n, result, release_gil, may_hold);
  (void)fx_environment_leave(&env, scope);
  return status;
}

/*
 * The general call: any arguments. stack holds FX_STACK_ARGS slots of which the first
 * `encoded` are written already (plain ones and remembered tensors, before the first that is
 * neither); NULL when there are more arguments than that. begun: the scope the tensors among
 * those went to (NULL: none yet).
 */
static FX_NOINLINE PyObject* general_call(PyObject* self, void* handle, PyObject* const* args,
                                          Py_ssize_t n, TVMFFIAny* stack, Py_ssize_t encoded,
                                          FxScope* begun) {
  TVMFFIAny *packed = stack, result;
  FxScope local, *scope = begun;
  Py_ssize_t i;
  int status, release_gil;
  if (scope == NULL) {
    scope = &local;
    fx_scope_init(scope, NULL);
  }
  if (packed == NULL) {
    if (n > INT32_MAX) {
      PyErr_SetString(PyExc_OverflowError, "too many arguments for one TVM FFI call");
      return NULL;
    }
    packed = (TVMFFIAny*)PyMem_Malloc(sizeof(TVMFFIAny) * (size_t)n);
    if (packed == NULL) return PyErr_NoMemory();
  }
  for (i = encoded; i < n; ++i) {
    if (FX_UNLIKELY(fx_encode(args[i], &packed[i], scope) < 0)) {
      fx_scope_close(scope);
      if (packed != stack) PyMem_Free(packed);
      return NULL;
    }
  }
  fx_any_clear(&result);
  release_gil = ((FxFunction*)self)->release_gil || fx_args_hold_containers(packed, (int32_t)n);
  status = scoped_call(handle, packed, (int32_t)n, &result, scope, release_gil, 1);
  if (packed != stack) PyMem_Free(packed);
  /* what was made for the call goes before the result is looked at, as in the reference */
  if (FX_UNLIKELY(fx_scope_close(scope) < 0)) {
    /*
     * An exception is pending: from that cleanup, or left in this thread by the
     * kernel's TVMFFIEnvCheckSignals (Ctrl-C), which it then stopped on
     * (EnvErrorAlreadySet) or not. It supersedes the call's own outcome.
     */
    discard_outcome(status, &result);
    return NULL;
  }
  return fx_finish_call(status, &result, scope->exchange_api);
}

/*
 * An argument that needs nothing made for the call, no lock held and no framework context:
 * None, a bool, an int of one digit, a float, a str of at most 7 ASCII characters, an Object
 * other than a List or Dict that remembers no exchange table. Written into *out as fx_encode
 * writes it (the same 16 bytes); 0 for anything else, left to fx_encode.
 */
static inline int encode_plain(PyObject* value, TVMFFIAny* out) {
  PyTypeObject* type = Py_TYPE(value);
  if (type == &PyLong_Type) {
    out->type_index = kTVMFFIInt;
    out->zero_padding = 0;
    return fx_long_compact(value, &out->v_int64);
  }
  if (type == &PyFloat_Type) {
    out->type_index = kTVMFFIFloat;
    out->zero_padding = 0;
    out->v_float64 = PyFloat_AS_DOUBLE(value);
    return 1;
  }
  if (value == Py_None) {
    fx_any_clear(out);
    return 1;
  }
  if (type == &PyBool_Type) {
    out->type_index = kTVMFFIBool;
    out->zero_padding = 0;
    out->v_int64 = value == Py_True;
    return 1;
  }
#ifndef PYPY_VERSION
  if (type == &PyUnicode_Type) {
    Py_ssize_t size;
    if (!PyUnicode_IS_COMPACT_ASCII(value) || (size = PyUnicode_GET_LENGTH(value)) > 7) return 0;
    /* inline, NUL-padded, as fx_make_str_or_bytes writes it (ASCII is its own UTF-8) */
    out->type_index = kTVMFFISmallStr;
    out->small_str_len = (uint32_t)size;
    out->v_int64 = 0;
    memcpy(out->v_bytes, PyUnicode_DATA(value), (size_t)size);
    return 1;
  }
#endif
  if (PyObject_TypeCheck(value, fx_cobject_type)) {
    FxObject* o = (FxObject*)value;
    if (o->handle == NULL || o->exchange_api != NULL ||
        tvm_ffi_runtime_locks_type(fx_header_index(o->handle))) {
      return 0;
    }
    out->type_index = fx_header_index(o->handle);
    out->zero_padding = 0;
    out->v_ptr = o->handle;
    return 1;
  }
  return 0;
}

/*
 * A scalar result made in place: 1 with *out set (NULL with an exception if making it failed),
 * or 0 for any other outcome, left to fx_finish_call. The rules pass every POD index but the
 * borrowed-only ones, which fx_finish_call rejects; an Error C++ caught and dropped meanwhile
 * needs fx_finish_call too.
 */
static inline int scalar_result(int status, const TVMFFIAny* result, PyObject** out) {
  if (FX_UNLIKELY(status != 0) || fx_crossings_remembered()) return 0;
  switch (result->type_index) {
    case kTVMFFIInt:
      *out = PyLong_FromLongLong(result->v_int64);
      return 1;
    case kTVMFFIFloat:
      *out = PyFloat_FromDouble(result->v_float64);
      return 1;
    case kTVMFFINone:
      Py_INCREF(Py_None);
      *out = Py_None;
      return 1;
    case kTVMFFIBool:
      *out = PyBool_FromLong(result->v_int64 != 0);
      return 1;
    default:
      return 0;
  }
}

/*
 * The end of a call whose arguments are all plain or remembered tensors, at least one a tensor
 * (fx_encode_remembered_tensor): none is a List or Dict, so no lock is held, and the scope owns
 * only the imported tensors (at most FX_STACK_ARGS, no Python CallScope), dropped right after
 * the call, before the result is looked at. A framework's table or a device makes the call's
 * environment (its allocator, its stream) as in general_call.
 */
static FX_NOINLINE PyObject* tensor_call(PyObject* self, void* handle, TVMFFIAny* packed,
                                         int32_t n, FxScope* scope) {
  TVMFFIAny result;
  PyObject* value;
  int status;
  fx_any_clear(&result);
  status = scoped_call(handle, packed, n, &result, scope, ((FxFunction*)self)->release_gil, 0);
  if (FX_UNLIKELY(fx_scope_close(scope) < 0)) {
    /* from restoring the environment, or the kernel's TVMFFIEnvCheckSignals */
    discard_outcome(status, &result);
    return NULL;
  }
  if (scalar_result(status, &result, &value)) return value;
  return fx_finish_call(status, &result, scope->exchange_api);
}

/*
 * Function.__call__. Most calls pass only plain arguments (encode_plain): then nothing
 * outlives the call, no container is held and no framework context is set, so the call goes
 * straight to safe_call, and a scalar result is made here. Tensors of the framework or DLPack
 * producer type met last (a torch tensor, a NumPy array) are imported into a scope and the call
 * ends in tensor_call. Anything else is general_call's.
 */
PyObject* fx_function_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                                 PyObject* kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf), i;
  void* handle = ((FxObject*)self)->handle;
  TVMFFIAny packed[FX_STACK_ARGS], result;
  PyObject* value;
  FxScope scope;
  int status, scoped = 0;
  if (FX_UNLIKELY(kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
    return reject_keywords(kwnames);
  }
  if (FX_UNLIKELY(handle == NULL)) {
    /* AttributeError, as the reference raises it (an empty Function has no safe_call) */
    PyErr_SetString(PyExc_AttributeError,
                    "cannot call an empty Function: it holds no function object");
    return NULL;
  }
  if (FX_UNLIKELY(n > FX_STACK_ARGS)) return general_call(self, handle, args, n, NULL, 0, NULL);
  for (i = 0; i < n; ++i) {
    int found;
    if (encode_plain(args[i], &packed[i])) continue;
    if (!scoped) {
      fx_scope_init(&scope, NULL);
      scoped = 1;
    }
    found = fx_encode_remembered_tensor(args[i], &packed[i], &scope);
    if (found == 0) return general_call(self, handle, args, n, packed, i, &scope);
    if (FX_UNLIKELY(found < 0)) {
      fx_scope_close(&scope);
      return NULL;
    }
  }
  if (scoped) return tensor_call(self, handle, packed, (int32_t)n, &scope);
  fx_any_clear(&result);
  status = kernel_call(handle, packed, (int32_t)n, &result, ((FxFunction*)self)->release_gil, 0);
  if (FX_UNLIKELY(PyErr_Occurred() != NULL)) {
    /* left by the kernel's TVMFFIEnvCheckSignals: it supersedes the call's outcome */
    discard_outcome(status, &result);
    return NULL;
  }
  if (scalar_result(status, &result, &value)) return value;
  return fx_finish_call(status, &result, NULL);
}

/* get_global_func(name, allow_missing=False) */
PyObject* fx_py_get_global_func(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                                PyObject* kwnames) {
  PyObject *name = NULL, *allow_missing = Py_False;
  Py_ssize_t i, n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  TVMFFIByteArray key;
  TVMFFIObjectHandle handle = NULL;
  Py_ssize_t size;
  int status;
  (void)self;
  if (nargs > 2) {
    PyErr_Format(PyExc_TypeError,
                 "get_global_func() takes from 1 to 2 positional arguments but %zd were given",
                 nargs);
    return NULL;
  }
  if (nargs >= 1) name = args[0];
  if (nargs >= 2) allow_missing = args[1];
  for (i = 0; i < n_kw; ++i) {
    PyObject* keyword = PyTuple_GET_ITEM(kwnames, i);
    PyObject* value = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(keyword, "name") == 0 && nargs < 1) {
      name = value;
    } else if (PyUnicode_CompareWithASCIIString(keyword, "allow_missing") == 0 && nargs < 2) {
      allow_missing = value;
    } else {
      PyErr_Format(PyExc_TypeError, "get_global_func() got an unexpected keyword argument '%U'",
                   keyword);
      return NULL;
    }
  }
  if (name == NULL) {
    PyErr_SetString(PyExc_TypeError,
                    "get_global_func() missing 1 required positional argument: 'name'");
    return NULL;
  }
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "get_global_func: name must be a str, got %s",
                 fx_type_name(Py_TYPE(name)));
    return NULL;
  }
  key.data = PyUnicode_AsUTF8AndSize(name, &size);
  if (key.data == NULL) return NULL;
  key.size = (size_t)size;
  /*
   * Without the GIL: a runtime that drops a Python callback's Function while
   * holding its table lock (the fast runtime no longer does) would otherwise
   * deadlock against this thread, the deleter waiting for the GIL.
   */
  Py_BEGIN_ALLOW_THREADS;
  status = TVMFFIFunctionGetGlobal(&key, &handle);
  Py_END_ALLOW_THREADS;
  if (status != 0) return fx_raise_last_error();
  if (handle == NULL) {
    int missing_ok = PyObject_IsTrue(allow_missing);
    if (missing_ok < 0) return NULL;
    if (missing_ok) Py_RETURN_NONE;
    PyErr_Format(PyExc_ValueError, "Cannot find global function %U", name);
    return NULL;
  }
  return fx_object_adopt(fx_function_type, handle);
}
