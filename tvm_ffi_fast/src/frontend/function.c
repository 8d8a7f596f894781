/*
 * function.c -- the packed call: Function.__call__ as vectorcall, and global lookups.
 *
 * A call encodes the arguments into TVMFFIAny slots on the C stack (encode.c),
 * calls the function's safe_call with the function object itself as handle
 * (what TVMFFIFunctionCall does, minus one hop) with the GIL released, as
 * upstream does by default and as ctypes does for the reference front end,
 * (the List and Dict arguments held for the whole call: holds.c), releases
 * what the encoding made for the call, then checks the status and
 * result against the calling convention (rules.c) and decodes the result
 * (decode.c) or raises the error (errors.c): tvm_ffi_ref's Function.__call__
 * and finish_call, step for step. When the arguments brought a framework's
 * DLPack exchange table or a device, its stream and allocator are the
 * environment's during the call and the result is seen through the table
 * (exchange.c).
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
 * The call with the framework's stream current and its allocator installed. A failure to
 * install them is the call's failure (its raised error); one to restore them leaves a Python
 * error pending, which supersedes the call's outcome (the caller discards it).
 */
static int call_in_environment(void* handle, TVMFFIAny* packed, int32_t n, TVMFFIAny* result,
                               const FxScope* scope, int release_gil) {
  FxEnvironment env;
  int status = fx_environment_enter(&env, scope);
  if (status == 0 && release_gil) {
    Py_BEGIN_ALLOW_THREADS;
    status = fx_safe_call_holding(handle, packed, n, result);
    Py_END_ALLOW_THREADS;
  } else if (status == 0) {
    status = fx_safe_call_holding(handle, packed, n, result);
  }
  (void)fx_environment_leave(&env, scope);
  return status;
}

PyObject* fx_function_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                                 PyObject* kwnames) {
  Py_ssize_t n = PyVectorcall_NARGS(nargsf), i;
  void* handle = ((FxObject*)self)->handle;
  TVMFFIAny stack[FX_STACK_ARGS], *packed = stack, result;
  FxScope scope;
  int status, release_gil;
  if (FX_UNLIKELY(kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
    return reject_keywords(kwnames);
  }
  if (FX_UNLIKELY(handle == NULL)) {
    /* AttributeError, as the reference raises it (an empty Function has no safe_call) */
    PyErr_SetString(PyExc_AttributeError,
                    "cannot call an empty Function: it holds no function object");
    return NULL;
  }
  if (FX_UNLIKELY(n > FX_STACK_ARGS)) {
    if (n > INT32_MAX) {
      PyErr_SetString(PyExc_OverflowError, "too many arguments for one TVM FFI call");
      return NULL;
    }
    packed = (TVMFFIAny*)PyMem_Malloc(sizeof(TVMFFIAny) * (size_t)n);
    if (packed == NULL) return PyErr_NoMemory();
  }
  fx_scope_init(&scope, NULL);
  for (i = 0; i < n; ++i) {
    if (FX_UNLIKELY(fx_encode(args[i], &packed[i], &scope) < 0)) {
      fx_scope_close(&scope);
      if (packed != stack) PyMem_Free(packed);
      return NULL;
    }
  }
  fx_any_clear(&result);
  release_gil = ((FxFunction*)self)->release_gil || fx_args_hold_containers(packed, (int32_t)n);
  if (FX_LIKELY(scope.device_type == -1 && scope.exchange_api == NULL)) {
    if (FX_LIKELY(release_gil)) {
      Py_BEGIN_ALLOW_THREADS;
      status = fx_safe_call_holding(handle, packed, (int32_t)n, &result);
      Py_END_ALLOW_THREADS;
    } else {
      status = fx_safe_call_holding(handle, packed, (int32_t)n, &result);
    }
  } else {
    status = call_in_environment(handle, packed, (int32_t)n, &result, &scope, release_gil);
  }
  if (packed != stack) PyMem_Free(packed);
  /*
   * What was made for the call goes before the result is looked at, as in the reference
   * (a scope that holds nothing has nothing to close: the common scalar call).
   */
  if (FX_UNLIKELY(!fx_scope_is_empty(&scope) ? fx_scope_close(&scope) < 0 || PyErr_Occurred()
                                             : PyErr_Occurred() != NULL)) {
    /*
     * An exception is pending: from that cleanup, or left in this thread by the
     * kernel's TVMFFIEnvCheckSignals (Ctrl-C), which it then stopped on
     * (EnvErrorAlreadySet) or not. It supersedes the call's own outcome.
     */
    discard_outcome(status, &result);
    return NULL;
  }
  return fx_finish_call(status, &result, scope.exchange_api);
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
