/*
 * errors.c -- errors crossing between the raised-error slot and Python exceptions.
 *
 * Coming in (a call returned -1): the thread's raised Error is moved out,
 * wrapped as error.Error, and its py_error() (shared error.py: the class
 * registered for its kind, the backtrace appended as traceback frames) is
 * raised. -1 with nothing raised is the "error-raised" ABIViolation.
 *
 * Going out (a Python callback raised): error.exception_to_error_raised,
 * in Python, makes the Error (kind by the exception's exact class, message
 * str(exception), the traceback as backtrace) and leaves it raised.
 */
#include "frontend.h"

PyObject* fx_take_last_error(void) {
  TVMFFIObjectHandle handle = NULL;
  TVMFFIErrorMoveFromRaised(&handle);
  if (handle == NULL) Py_RETURN_NONE;
  /* Error._adopt(handle): the class registered for ffi.Error, whatever the header says */
  return fx_wrap_owned(handle, kTVMFFIError);
}

static int kind_is(void* error, const char* kind) {
  const TVMFFIByteArray* text = &FX_CELL(error, TVMFFIErrorCell)->kind;
  size_t n = strlen(kind);
  return text->size == n && memcmp(text->data, kind, n) == 0;
}

PyObject* fx_raise_last_error(void) {
  PyObject *error, *exception;
  TVMFFIObjectHandle handle = NULL;
  TVMFFIErrorMoveFromRaised(&handle);
  /*
   * EnvErrorAlreadySet: the kernel stopped because TVMFFIEnvCheckSignals failed,
   * and the real error (KeyboardInterrupt, say) is Python's own, still set in
   * this thread: raise that, as tvm_ffi_ref does.
   */
  if (handle != NULL && PyErr_Occurred() && fx_header_index(handle) == kTVMFFIError &&
      kind_is(handle, "EnvErrorAlreadySet")) {
    fx_decref(handle);
    return NULL;
  }
  error = handle == NULL ? (Py_INCREF(Py_None), Py_None) : fx_wrap_owned(handle, kTVMFFIError);
  if (error == NULL) return NULL;
  if (error == Py_None) {
    Py_DECREF(error);
    return fx_raise_violation("error-raised",
                              "the function returned -1 but left no error in the raised-error "
                              "slot (TVMFFIErrorSetRaised)");
  }
  exception = PyObject_CallMethodNoArgs(error, fx_names.py_error);
  Py_DECREF(error);
  if (exception == NULL) return NULL;
  /* PyErr_SetObject keeps the exception's own __traceback__ (the backtrace frames) */
  PyErr_SetObject((PyObject*)Py_TYPE(exception), exception);
  Py_DECREF(exception);
  return NULL;
}

PyObject* fx_raise_status(int status) {
  if (status == -1) return fx_raise_last_error();
  if (status == -2) {
    /* an error already pending in this frontend: Python's own */
    PyErr_SetString(PyExc_RuntimeError, "a callee reported an error already set in Python");
    return NULL;
  }
  return fx_raise_violation("status",
                            "the function returned status %d; the ABI allows 0 (success), -1 "
                            "(error raised) and -2 (error pending in the frontend)",
                            status);
}

void fx_error_to_raised(void) {
  PyObject *type, *value, *traceback, *hook, *done = NULL;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (value != NULL && traceback != NULL) PyException_SetTraceback(value, traceback);
  hook = fx_hook(FX_HOOK_ERROR_RAISED);
  if (hook != NULL && value != NULL) done = PyObject_CallOneArg(hook, value);
  if (done == NULL) {
    /* could not even describe the error: report that much, never return -1 with nothing */
    PyErr_Clear();
    TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                 "a Python callback failed and its error could not be converted");
  }
  Py_XDECREF(done);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
}
