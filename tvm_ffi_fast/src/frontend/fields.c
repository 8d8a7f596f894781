/*
 * fields.c -- reflected fields read and written from Python, and the callback
 * through which a field's setter converts values in Python.
 *
 * The shared API's TypeField (tvm_ffi_api/type_records.py) describes a field
 * by its getter (a TVMFFIFieldGetter), its setter (a C TVMFFIFieldSetter, or a
 * Function when the flags have kTVMFFIFieldFlagBitSetterIsFunctionObj) and its
 * offset from the object header. These do the access in C:
 *
 *   field_get(getter, offset, obj)             -> the field's value
 *   field_set(setter, flags, offset, obj, v)   -> None
 *   field_convert_callback()                   -> the address of fx_field_convert
 *
 * fx_field_convert is the f_convert a @py_class field's setter (made by
 * ffi.MakeFieldSetter) calls: its `converter` is a Python callable (kept alive
 * by the API) taking the value and returning it converted, or raising.
 */
#include "frontend.h"

static void* field_address(PyObject* obj, PyObject* offset_obj) {
  long long offset;
  void* handle;
  if (!PyObject_TypeCheck(obj, fx_cobject_type)) {
    PyErr_Format(PyExc_TypeError, "a field belongs to an object, not %s",
                 fx_type_name(Py_TYPE(obj)));
    return NULL;
  }
  handle = ((FxObject*)obj)->handle;
  if (handle == NULL) {
    PyErr_Format(PyExc_ValueError, "cannot access a field of an empty %s (no object)",
                 fx_type_name(Py_TYPE(obj)));
    return NULL;
  }
  offset = PyLong_AsLongLong(offset_obj);
  if (offset == -1 && PyErr_Occurred()) return NULL;
  return (char*)handle + offset;
}

static PyObject* field_get(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  TVMFFIFieldGetter getter;
  TVMFFIAny result;
  void* address;
  (void)self;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "field_get(getter, offset, obj) takes 3 arguments");
    return NULL;
  }
  getter = (TVMFFIFieldGetter)PyLong_AsVoidPtr(args[0]);
  if (getter == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "the field has no getter");
    return NULL;
  }
  address = field_address(args[2], args[1]);
  if (address == NULL) return NULL;
  fx_any_clear(&result);
  if (getter(address, &result) != 0) return fx_raise_last_error();
  return fx_decode_owned(&result);
}

static PyObject* field_set(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* setter;
  long long flags;
  void* address;
  TVMFFIAny packed[2], result;
  FxScope scope;
  int status;
  (void)self;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError,
                    "field_set(setter, flags, offset, obj, value) takes 5 arguments");
    return NULL;
  }
  setter = PyLong_AsVoidPtr(args[0]);
  if (setter == NULL && PyErr_Occurred()) return NULL;
  flags = PyLong_AsLongLong(args[1]);
  if (flags == -1 && PyErr_Occurred()) return NULL;
  address = field_address(args[3], args[2]);
  if (address == NULL) return NULL;
  if (setter == NULL) {
    PyErr_SetString(PyExc_AttributeError, "the field has no setter");
    return NULL;
  }
  fx_scope_init(&scope, NULL);
  fx_any_clear(&packed[0]);
  packed[0].type_index = kTVMFFIOpaquePtr;
  packed[0].v_ptr = address;
  if (fx_encode(args[4], &packed[1], &scope) != 0) {
    fx_scope_close(&scope);
    return NULL;
  }
  if (flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) {
    fx_any_clear(&result);
    status = fx_safe_call(setter, packed, 2, &result);
    if (status == 0) fx_any_clear(&result); /* a setter returns None */
  } else {
    status = ((TVMFFIFieldSetter)setter)(address, &packed[1]);
  }
  if (fx_scope_close(&scope) != 0 && status == 0) return NULL;
  if (status != 0) return fx_raise_last_error();
  Py_RETURN_NONE;
}

/* The f_convert of ffi.MakeFieldSetter: converter(value) in Python, the result written owned. */
static int fx_field_convert(void* converter, const TVMFFIAny* value, TVMFFIAny* result) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* given = fx_decode_borrowed(value);
  PyObject* converted = NULL;
  int status = -1;
  if (given != NULL) {
    converted = PyObject_CallOneArg((PyObject*)converter, given);
    Py_DECREF(given);
  }
  if (converted != NULL) {
    status = fx_encode_owned(converted, result);
    Py_DECREF(converted);
  }
  if (status != 0) fx_error_to_raised();
  PyGILState_Release(gil);
  return status;
}

static PyObject* field_convert_callback(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return PyLong_FromVoidPtr((void*)fx_field_convert);
}

PyMethodDef fx_field_methods[] = {
    {"field_get", (PyCFunction)(void (*)(void))field_get, METH_FASTCALL,
     "field_get(getter, offset, obj): the value of the field (its TVMFFIFieldGetter's result)."},
    {"field_set", (PyCFunction)(void (*)(void))field_set, METH_FASTCALL,
     "field_set(setter, flags, offset, obj, value): writes the field through its setter."},
    {"field_convert_callback", field_convert_callback, METH_NOARGS,
     "The address of the f_convert that calls a Python converter (see ffi.MakeFieldSetter)."},
    {NULL, NULL, 0, NULL}};
