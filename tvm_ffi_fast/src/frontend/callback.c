/*
 * callback.c -- Python callables as Function objects, callable from anywhere.
 *
 * TVMFFIFunctionCreate(self = the callable, safe_call, deleter): the
 * Function owns one Python reference to the callable, dropped by the
 * deleter. safe_call may run on any thread, with or without the GIL (the
 * calling front end releases it around kernel calls; a C++ thread never had
 * it), so it takes the GIL itself. Arguments arrive borrowed and become
 * Python values (decode.c); the result is written back owned (encode.c); an
 * exception (any BaseException, as in tvm_ffi_ref) becomes the raised error.
 * A callback entered with the C stack nearly exhausted refuses with a
 * RecursionError (tvm_ffi_runtime_stack_low) instead of overflowing it.
 *
 * A callback made with a DLPack exchange table (convert_func's tensor_cls)
 * has a small closure as self instead, the callable and the table, and its
 * Tensor arguments become the framework's tensors (exchange.c).
 */
#include "frontend.h"

#define FX_STACK_ARGS 8

typedef struct {
  PyObject* callable;
  const DLPackExchangeAPI* api;
} FxClosure;

static int run_callback(PyObject* callable, const DLPackExchangeAPI* api, const TVMFFIAny* args,
                        int32_t num_args, TVMFFIAny* result) {
  PyGILState_STATE gil;
  PyObject *stack[FX_STACK_ARGS], **values = stack, *value;
  int32_t decoded = 0, i;
  int status = -1;
  /* callbacks nested thousands deep (recursion limit raised) must not run off the C stack */
  if (FX_UNLIKELY(tvm_ffi_runtime_stack_low())) return tvm_ffi_runtime_refuse_deeper_callback();
  gil = PyGILState_Ensure();
  if (num_args > FX_STACK_ARGS) {
    values = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * (size_t)num_args);
    if (values == NULL) {
      PyErr_NoMemory();
      goto fail;
    }
  }
  for (; decoded < num_args; ++decoded) {
    values[decoded] = api == NULL ? fx_decode_borrowed(&args[decoded])
                                  : fx_decode_borrowed_api(&args[decoded], api, 1);
    if (values[decoded] == NULL) goto fail;
  }
  value = PyObject_Vectorcall(callable, values, (size_t)num_args, NULL);
  if (value == NULL) goto fail;
  status = fx_encode_owned(value, result);
  Py_DECREF(value);
  if (status == 0) goto done;
fail:
  status = -1;
  fx_error_to_raised();
done:
  for (i = 0; i < decoded; ++i) Py_DECREF(values[i]);
  if (values != stack) PyMem_Free(values);
  PyGILState_Release(gil);
  return status;
}

static int py_safe_call(void* self, const TVMFFIAny* args, int32_t num_args,
                        TVMFFIAny* result) {
  return run_callback((PyObject*)self, NULL, args, num_args, result);
}

static int closure_safe_call(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  FxClosure* closure = (FxClosure*)self;
  return run_callback(closure->callable, closure->api, args, num_args, result);
}

void fx_drop_pyobject(void* self) {
  PyGILState_STATE gil;
  /* after (or during) interpreter shutdown the object is gone with everything else */
  if (!Py_IsInitialized() || FX_FINALIZING()) return;
  gil = PyGILState_Ensure();
  Py_DECREF((PyObject*)self);
  PyGILState_Release(gil);
}

static void closure_deleter(void* self) {
  FxClosure* closure = (FxClosure*)self;
  fx_drop_pyobject(closure->callable);
  PyMem_RawFree(closure);
}

void* fx_function_from_callable(PyObject* callable, const DLPackExchangeAPI* api) {
  TVMFFIObjectHandle handle = NULL;
  FxClosure* closure = NULL;
  int status;
  Py_INCREF(callable);
  if (api == NULL) {
    status = TVMFFIFunctionCreate(callable, py_safe_call, fx_drop_pyobject, &handle);
  } else {
    /* raw memory: the deleter may run on any thread, without the GIL */
    closure = (FxClosure*)PyMem_RawMalloc(sizeof(FxClosure));
    if (closure == NULL) {
      Py_DECREF(callable);
      return PyErr_NoMemory(), NULL;
    }
    closure->callable = callable;
    closure->api = api;
    status = TVMFFIFunctionCreate(closure, closure_safe_call, closure_deleter, &handle);
  }
  if (status != 0) {
    Py_DECREF(callable);
    PyMem_RawFree(closure);
    return fx_raise_last_error(), NULL;
  }
  return handle;
}
