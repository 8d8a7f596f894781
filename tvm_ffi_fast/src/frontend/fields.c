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
 *   field_getter(getter, offset)               -> a callable of obj giving field_get's value
 *   field_set(setter, flags, offset, obj, v)   -> None
 *   field_convert_callback()                   -> the address of fx_field_convert
 *
 * fx_field_convert is the f_convert a @py_class field's setter (made by
 * ffi.MakeFieldSetter) calls: its `converter` is a Python callable (kept alive
 * by the API) taking the value and returning it converted, or raising.
 */
#include "frontend.h"

#include <structmember.h>

static void* field_address_at(PyObject* obj, long long offset) {
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
  return (char*)handle + offset;
}

static void* field_address(PyObject* obj, PyObject* offset_obj) {
  long long offset = PyLong_AsLongLong(offset_obj);
  if (offset == -1 && PyErr_Occurred()) return NULL;
  return field_address_at(obj, offset);
}

/* The field at address read through getter, as a Python value. */
static PyObject* read_field(TVMFFIFieldGetter getter, void* address) {
  TVMFFIAny result;
  fx_any_clear(&result);
  if (getter(address, &result) != 0) return fx_raise_last_error();
  return fx_decode_owned(&result);
}

static PyObject* field_get(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  TVMFFIFieldGetter getter;
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
  return read_field(getter, address);
}

/*
 * field_getter(getter, offset): field_get(getter, offset, obj) as a callable of obj alone, the
 * two addresses converted once (a property's fget: every read of the field calls it). It has a
 * __dict__, as functools.partial has, for the name and doc the API gives it.
 */
typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  TVMFFIFieldGetter getter; /* NULL: the field has none (raised when called) */
  long long offset;
  PyObject* dict;
} FxFieldGetter;

static PyObject* field_getter_call(PyObject* self, PyObject* const* args, size_t nargsf,
                                   PyObject* kwnames) {
  FxFieldGetter* g = (FxFieldGetter*)self;
  void* address;
  if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
    PyErr_SetString(PyExc_TypeError, "a field getter takes one argument: the object");
    return NULL;
  }
  if (g->getter == NULL) {
    PyErr_SetString(PyExc_TypeError, "the field has no getter");
    return NULL;
  }
  address = field_address_at(args[0], g->offset);
  return address == NULL ? NULL : read_field(g->getter, address);
}

static int field_getter_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(((FxFieldGetter*)self)->dict);
  Py_VISIT(Py_TYPE(self)); /* a heap type's instances own it */
  return 0;
}

static int field_getter_clear(PyObject* self) {
  Py_CLEAR(((FxFieldGetter*)self)->dict);
  return 0;
}

static void field_getter_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  field_getter_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

static PyMemberDef field_getter_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FxFieldGetter, vectorcall), READONLY, NULL},
    {"__dictoffset__", T_PYSSIZET, offsetof(FxFieldGetter, dict), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef field_getter_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot field_getter_slots[] = {
    {Py_tp_doc, "A reflected field's reader: called with an object, returns the field's value."},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, field_getter_members},
    {Py_tp_getset, field_getter_getset},
    {Py_tp_traverse, field_getter_traverse},
    {Py_tp_clear, field_getter_clear},
    {Py_tp_dealloc, field_getter_dealloc},
    {0, NULL}};

static PyType_Spec field_getter_spec = {
    "tvm_ffi_fast.shortcuts.FieldGetter", sizeof(FxFieldGetter), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, field_getter_slots};

static PyTypeObject* field_getter_type;

static PyObject* field_getter(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  FxFieldGetter* g;
  void* getter;
  long long offset;
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "field_getter(getter, offset) takes 2 arguments");
    return NULL;
  }
  getter = PyLong_AsVoidPtr(args[0]);
  if (getter == NULL && PyErr_Occurred()) return NULL;
  offset = PyLong_AsLongLong(args[1]);
  if (offset == -1 && PyErr_Occurred()) return NULL;
  g = PyObject_GC_New(FxFieldGetter, field_getter_type);
  if (g == NULL) return NULL;
  g->vectorcall = field_getter_call;
  g->getter = (TVMFFIFieldGetter)getter;
  g->offset = offset;
  g->dict = NULL;
  PyObject_GC_Track((PyObject*)g);
  return (PyObject*)g;
}

int fx_field_types_init(PyObject* module) {
  (void)module;
  field_getter_type = (PyTypeObject*)PyType_FromSpec(&field_getter_spec);
  return field_getter_type == NULL ? -1 : 0;
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
    {"field_getter", (PyCFunction)(void (*)(void))field_getter, METH_FASTCALL,
     "field_getter(getter, offset): a callable of one object returning field_get(getter, "
     "offset, obj)."},
    {"field_set", (PyCFunction)(void (*)(void))field_set, METH_FASTCALL,
     "field_set(setter, flags, offset, obj, value): writes the field through its setter."},
    {"field_convert_callback", field_convert_callback, METH_NOARGS,
     "The address of the f_convert that calls a Python converter (see ffi.MakeFieldSetter)."},
    {NULL, NULL, 0, NULL}};
