/*
 * scope.c -- what must outlive one call (FxScope): the references made for it, the
 * Python CallScope when a rare kind's setter needed one, and the framework context the
 * arguments reveal (a DLPack exchange table, a device and its stream: exchange.c).
 *
 * A scope given by Python (set_arg / pack_into, called from a Python setter of an
 * enclosing conversion) starts from that CallScope's context and hands everything back
 * to it when closed; otherwise closing runs the Python fixups and drops the references.
 * Most scopes (every call's with only plain arguments and tensors among them) own only
 * references in their inline storage: fx_scope_close (frontend.h) drops those inline, and
 * leaves any other scope to fx_scope_close_full here.
 */
#include "frontend.h"

void fx_scope_inherit(FxScope* scope, const FxScope* nested) {
  if (scope->device_type == -1) {
    scope->device_type = nested->device_type;
    scope->device_id = nested->device_id;
    scope->stream = nested->stream;
  }
  if (scope->exchange_api == NULL) scope->exchange_api = nested->exchange_api;
}

int fx_scope_own(FxScope* scope, void* handle) {
  if (FX_UNLIKELY(scope->n_owned == scope->cap_owned)) {
    int capacity = scope->cap_owned * 2;
    void** grown = (void**)PyMem_Malloc(sizeof(void*) * (size_t)capacity);
    if (grown == NULL) {
      fx_decref(handle);
      PyErr_NoMemory();
      return -1;
    }
    memcpy(grown, scope->owned, sizeof(void*) * (size_t)scope->n_owned);
    if (scope->owned != scope->owned_inline) PyMem_Free(scope->owned);
    scope->owned = grown;
    scope->cap_owned = capacity;
  }
  scope->owned[scope->n_owned++] = handle;
  return 0;
}

PyObject* fx_scope_python(FxScope* scope) {
  if (scope->py_scope == NULL) {
    PyObject* cls = fx_hook(FX_HOOK_CALL_SCOPE);
    if (cls == NULL) return NULL;
    scope->py_scope = PyObject_CallNoArgs(cls);
  }
  return scope->py_scope;
}

/* Hands our references to the caller's Python scope (whose close() drops them). */
static int scope_hand_over(FxScope* scope) {
  PyObject* owned = PyObject_GetAttr(scope->py_scope, fx_names.owned);
  int i, status = owned == NULL ? -1 : 0;
  for (i = 0; i < scope->n_owned; ++i) {
    PyObject* handle = status == 0 ? PyLong_FromVoidPtr(scope->owned[i]) : NULL;
    if (handle == NULL || PyList_Append(owned, handle) < 0) {
      status = -1;
      fx_decref(scope->owned[i]);
    }
    Py_XDECREF(handle);
  }
  Py_XDECREF(owned);
  return status;
}

/*
 * The whole of closing, for any scope (fx_scope_close keeps the common case inline): the
 * caller's pending exception is set aside while Python code runs, a given Python scope takes
 * the references and context, an own one runs its fixups first, then the references go.
 */
int fx_scope_close_full(FxScope* scope) {
  int status = 0, i;
  PyObject *type = NULL, *value = NULL, *traceback = NULL;
  int pending = PyErr_Occurred() != NULL;
  if (scope->py_scope != NULL || pending) PyErr_Fetch(&type, &value, &traceback);
  if (scope->py_scope_given) {
    if (scope->n_owned != 0 && scope_hand_over(scope) < 0) status = -1;
    if (fx_context_to_python(scope, scope->py_scope) < 0) status = -1;
  } else {
    if (scope->py_scope != NULL) {
      /* the Python fixups first (rvalue references settle), as CallScope.close does */
      PyObject* done = PyObject_CallMethodNoArgs(scope->py_scope, fx_names.close);
      if (done == NULL) status = -1;
      Py_XDECREF(done);
      Py_CLEAR(scope->py_scope);
    }
    for (i = 0; i < scope->n_owned; ++i) fx_decref(scope->owned[i]);
  }
  scope->n_owned = 0;
  if (scope->owned != scope->owned_inline) {
    PyMem_Free(scope->owned);
    scope->owned = scope->owned_inline;
    scope->cap_owned = FX_SCOPE_INLINE;
  }
  if (pending) {
    /* the call's own error wins; one raised while cleaning up is reported, not lost */
    if (status != 0) PyErr_WriteUnraisable(NULL);
    PyErr_Restore(type, value, traceback);
    return -1;
  }
  if (type != NULL) PyErr_Restore(type, value, traceback);
  return status;
}

/* ------------------------------------------------------------ the context in Python */

/* The scope's context as CallScope's fields (addresses as ints, 0 for none). */
int fx_context_to_python(const FxScope* scope, PyObject* py_scope) {
  PyObject* values[4];
  PyObject* names[4] = {fx_names.ctx_api, fx_names.ctx_device_type, fx_names.ctx_device_id,
                        fx_names.ctx_stream};
  int i, status = 0;
  values[0] = PyLong_FromVoidPtr((void*)scope->exchange_api);
  values[1] = PyLong_FromLong(scope->device_type);
  values[2] = PyLong_FromLong(scope->device_id);
  values[3] = PyLong_FromVoidPtr(scope->stream);
  for (i = 0; i < 4; ++i) {
    if (status == 0 && (values[i] == NULL || PyObject_SetAttr(py_scope, names[i], values[i]) < 0)) {
      status = -1;
    }
    Py_XDECREF(values[i]);
  }
  return status;
}

static int read_pointer(PyObject* py_scope, PyObject* name, void** out) {
  PyObject* value = PyObject_GetAttr(py_scope, name);
  if (value == NULL) return -1;
  *out = value == Py_None ? NULL : PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

static int read_int32(PyObject* py_scope, PyObject* name, int32_t* out) {
  PyObject* value = PyObject_GetAttr(py_scope, name);
  long number;
  if (value == NULL) return -1;
  number = PyLong_AsLong(value);
  Py_DECREF(value);
  if (number == -1 && PyErr_Occurred()) return -1;
  *out = (int32_t)number;
  return 0;
}

int fx_context_from_python(FxScope* scope, PyObject* py_scope) {
  void *api, *stream;
  int32_t device_type, device_id;
  if (read_pointer(py_scope, fx_names.ctx_api, &api) < 0 ||
      read_pointer(py_scope, fx_names.ctx_stream, &stream) < 0 ||
      read_int32(py_scope, fx_names.ctx_device_type, &device_type) < 0 ||
      read_int32(py_scope, fx_names.ctx_device_id, &device_id) < 0) {
    return -1;
  }
  scope->exchange_api = (const DLPackExchangeAPI*)api;
  scope->device_type = device_type;
  scope->device_id = device_id;
  scope->stream = stream;
  return 0;
}
