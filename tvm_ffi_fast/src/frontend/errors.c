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

/*
 * The exception an Error carries as itself (error.py's Error.py_error states the rule: an
 * OpaquePyObject extra context holding an exception), borrowed; NULL when none. Looked at
 * here, without Python code, because it is how a callback that failed at the recursion
 * limit comes back, where any Python frame would fail again.
 */
static PyObject* carried_exception(void* error) {
  void* extra = FX_CELL(error, TVMFFIErrorCell)->extra_context;
  PyObject* value;
  if (extra == NULL || fx_header_index(extra) != kTVMFFIOpaquePyObject) return NULL;
  value = *(PyObject**)FX_CELL(extra, TVMFFIOpaqueObjectCell);
  return value != NULL && PyExceptionInstance_Check(value) ? value : NULL;
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
  if (handle != NULL && fx_header_index(handle) == kTVMFFIError &&
      (exception = carried_exception(handle)) != NULL) {
    Py_INCREF(exception);
    fx_decref(handle);
    PyErr_SetObject((PyObject*)Py_TYPE(exception), exception);
    Py_DECREF(exception);
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
  if (exception == NULL && kind_is(handle, "RecursionError")) {
    /* no room left for py_error's Python frames: the error is a RecursionError all the same */
    const TVMFFIByteArray* message = &FX_CELL(handle, TVMFFIErrorCell)->message;
    PyErr_Clear();
    PyErr_Format(PyExc_RecursionError, "%.*s", (int)message->size, message->data);
  }
  Py_DECREF(error);
  if (exception == NULL) return NULL;
  /* PyErr_SetObject keeps the exception's own __traceback__ (the backtrace frames) */
  PyErr_SetObject((PyObject*)Py_TYPE(exception), exception);
  Py_DECREF(exception);
  return NULL;
}

PyObject* fx_crossing_threads = NULL;
static PyObject* crossing_settle = NULL;

/* watch_crossings(threads, settle): error_crossing's set and function (see frontend.h) */
PyObject* fx_py_watch_crossings(PyObject* self, PyObject* args) {
  PyObject *threads, *settle;
  (void)self;
  if (!PyArg_ParseTuple(args, "O!O:watch_crossings", &PySet_Type, &threads, &settle)) return NULL;
  if (!PyCallable_Check(settle)) {
    PyErr_SetString(PyExc_TypeError, "watch_crossings: settle must be callable");
    return NULL;
  }
  Py_INCREF(threads);
  Py_INCREF(settle);
  Py_XSETREF(fx_crossing_threads, threads);
  Py_XSETREF(crossing_settle, settle);
  Py_RETURN_NONE;
}

int fx_settle_crossings(void) {
  PyObject* done;
  if (!fx_crossings_remembered() || crossing_settle == NULL) return 0;
  done = PyObject_CallNoArgs(crossing_settle);
  if (done == NULL) return -1;
  Py_DECREF(done);
  return 0;
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

/*
 * When converting in Python fails too (the callback failed at the recursion limit, or out of
 * memory): an Error made here, of the exception's class name, carrying the exception itself
 * as an OpaquePyObject (as the shared error.py carries a BaseException), so that it comes
 * back to Python as itself.
 */
static void raise_carrying(PyObject* value) {
  const char* kind = Py_TYPE(value)->tp_name;
  const char* dot = strrchr(kind, '.');
  PyObject* text = PyObject_Str(value);
  const char* message = text == NULL ? NULL : PyUnicode_AsUTF8AndSize(text, NULL);
  TVMFFIByteArray kind_bytes, message_bytes, backtrace = {"", 0};
  TVMFFIObjectHandle opaque = NULL, error = NULL;
  if (message == NULL) {
    PyErr_Clear();
    message = "";
  }
  if (dot != NULL) kind = dot + 1;
  kind_bytes.data = kind;
  kind_bytes.size = strlen(kind);
  message_bytes.data = message;
  message_bytes.size = strlen(message);
  Py_INCREF(value);
  if (TVMFFIObjectCreateOpaque(value, kTVMFFIOpaquePyObject, fx_drop_pyobject, &opaque) != 0) {
    Py_DECREF(value);
    opaque = NULL;
    TVMFFIErrorMoveFromRaised(&error); /* drop what the failure raised */
    if (error != NULL) fx_decref(error);
    error = NULL;
  }
  if (TVMFFIErrorCreateWithCauseAndExtraContext(&kind_bytes, &message_bytes, &backtrace, NULL,
                                                opaque, &error) == 0) {
    TVMFFIErrorSetRaised(error);
    fx_decref(error);
  } else {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                 "a Python callback failed and its error could not be converted");
  }
  if (opaque != NULL) fx_decref(opaque);
  Py_XDECREF(text);
}

void fx_error_to_raised(void) {
  PyObject *type, *value, *traceback, *hook, *done = NULL;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (value != NULL && traceback != NULL) PyException_SetTraceback(value, traceback);
  hook = fx_hook(FX_HOOK_ERROR_RAISED);
  if (hook != NULL && value != NULL) done = PyObject_CallOneArg(hook, value);
  if (done == NULL) {
    /* could not convert it in Python: carry it as it is, never return -1 with nothing */
    PyErr_Clear();
    if (value != NULL) {
      raise_carrying(value);
    } else {
      TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                   "a Python callback failed and its error could not be "
                                   "converted");
    }
  }
  Py_XDECREF(done);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
}
