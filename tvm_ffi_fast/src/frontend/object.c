/*
 * object.c -- the CObject, Object and Function extension types.
 *
 * CObject is the wrapper the reference's object_wrapper.CObject is, with its storage in C: one slot
 * holding the handle (one owned strong reference), released in tp_dealloc
 * without any Python call. The shared API modules read and write the slot as
 * `_handle` (an int, or None when empty), exactly as they do in the
 * reference front end. Object derives from it and adds nothing in C but the type index: as
 * upstream's do, Function and Tensor derive from CObject and are not Objects. Python code
 * subclasses Object (containers, Module, reflected classes). The methods that need no speed
 * (repr, type_key, _move, __ctypes_handle__) are added to the types by
 * tvm_ffi_fast/compiled_core/object.py.
 *
 * Function adds the packed call as vectorcall (function.c).
 *
 * All are heap types (PyType_FromSpec) so that, like Python classes, they
 * take attributes: register_class stores _tvm_ffi_type_index on them and
 * object.py/function.py add their Python-level methods.
 */
#include "frontend.h"

#include <structmember.h>

PyTypeObject* fx_cobject_type;
PyTypeObject* fx_object_type;
PyTypeObject* fx_function_type;

/* ------------------------------------------------------------ lifetime */

void fx_run_deleter(TVMFFIObject* obj, uint64_t before) {
  PyObject *type, *value, *traceback;
  if (FX_LIKELY(!PyErr_Occurred())) {
    tvm_ffi_runtime_strong_count_ended(obj, before);
    return;
  }
  PyErr_Fetch(&type, &value, &traceback);
  tvm_ffi_runtime_strong_count_ended(obj, before);
  PyErr_Restore(type, value, traceback);
}

/*
 * Whether a new Function releases the GIL around its calls: yes unless the environment's
 * TVM_FFI_RELEASE_GIL_BY_DEFAULT is an integer that is 0 (upstream reads the same variable,
 * once per process). Holding it saves the two GIL hand-overs a scalar call spends most of its
 * time on, but a kernel that waits for a thread calling back into Python then deadlocks.
 */
static int release_gil_by_default(void) {
  static int cached = -1;
  if (cached < 0) {
    const char* text = getenv("TVM_FFI_RELEASE_GIL_BY_DEFAULT");
    cached = text == NULL || *text == '\0' || strtol(text, NULL, 10) != 0;
  }
  return cached;
}

static PyObject* object_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* self = type->tp_alloc(type, 0);
  (void)args;
  (void)kwargs;
  if (self == NULL) return NULL;
  ((FxObject*)self)->handle = NULL;
  /* only Function and its subclasses have a vectorcall slot (cheaper than a subtype walk) */
  if (type->tp_vectorcall_offset == offsetof(FxFunction, vectorcall)) {
    ((FxFunction*)self)->vectorcall = fx_function_vectorcall;
    ((FxFunction*)self)->release_gil = release_gil_by_default();
  }
  return self;
}

static int object_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  /*
   * A bare Object() holds nothing (tp_new left the handle NULL); subclasses construct
   * through their own __init__. An object already made is kept: a subclass __init__
   * calling super().__init__() after its object was allocated must not lose it.
   */
  (void)self;
  if (PyTuple_GET_SIZE(args) != 0) {
    PyErr_Format(PyExc_TypeError,
                 "Object.__init__() takes 1 positional argument but %zd were given",
                 PyTuple_GET_SIZE(args) + 1);
    return -1;
  }
  if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError, "Object.__init__() takes no keyword arguments");
    return -1;
  }
  return 0;
}

static void object_dealloc(PyObject* self) {
  FxObject* o = (FxObject*)self;
  PyTypeObject* type = Py_TYPE(self);
  void* handle = o->handle;
  if (o->weakreflist != NULL) PyObject_ClearWeakRefs(self);
  o->handle = NULL;
  /* As tvm_ffi_ref's __del__: at interpreter exit the runtime may be gone already. */
  if (handle != NULL && !FX_FINALIZING()) fx_decref(handle);
  type->tp_free(self);
  Py_DECREF(type); /* instances of heap types own a reference to their type */
}

PyObject* fx_object_adopt(PyTypeObject* cls, void* handle) {
  PyObject* obj = cls->tp_new(cls, fx_names.empty_tuple, NULL);
  if (obj == NULL) goto fail;
  if (!PyObject_TypeCheck(obj, fx_cobject_type)) {
    PyErr_Format(PyExc_TypeError, "%s is not an Object class", cls->tp_name);
    Py_DECREF(obj);
    goto fail;
  }
  ((FxObject*)obj)->handle = handle;
  return obj;
fail:
  if (handle != NULL) fx_decref(handle);
  return NULL;
}

void* fx_object_handle_checked(PyObject* value) {
  void* handle = ((FxObject*)value)->handle;
  if (FX_UNLIKELY(handle == NULL)) {
    PyErr_Format(PyExc_ValueError, "cannot pass an empty %s (its handle was moved)",
                 fx_type_name(Py_TYPE(value)));
  }
  return handle;
}

/* ------------------------------------------------------------ attributes */

static PyObject* handle_as_int(void* handle, PyObject* if_null) {
  if (handle == NULL) {
    Py_INCREF(if_null);
    return if_null;
  }
  return PyLong_FromVoidPtr(handle);
}

static PyObject* object_get_handle(PyObject* self, void* closure) {
  (void)closure;
  return handle_as_int(((FxObject*)self)->handle, Py_None);
}

/* A plain store, as in the reference front end: no reference is taken or dropped. */
static int object_set_handle(PyObject* self, PyObject* value, void* closure) {
  void* handle = NULL;
  (void)closure;
  if (value == NULL) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete _handle");
    return -1;
  }
  if (fx_address_arg(value, &handle) < 0) return -1;
  ((FxObject*)self)->handle = handle;
  return 0;
}

static PyObject* object_get_id(PyObject* self, void* closure) {
  (void)closure;
  return PyLong_FromVoidPtr(((FxObject*)self)->handle); /* 0 when empty */
}

static PyObject* object_get_type_index(PyObject* self, void* closure) {
  void* handle = ((FxObject*)self)->handle;
  (void)closure;
  if (handle == NULL) {
    PyErr_SetString(PyExc_ValueError, "an empty object has no type index");
    return NULL;
  }
  return PyLong_FromLong(fx_header_index(handle));
}

static PyObject* object_get_exchange_api(PyObject* self, void* closure) {
  (void)closure;
  return PyLong_FromVoidPtr((void*)((FxObject*)self)->exchange_api); /* 0 for none */
}

static int object_set_exchange_api(PyObject* self, PyObject* value, void* closure) {
  void* api;
  (void)closure;
  if (fx_address_arg(value, &api) < 0) return -1;
  ((FxObject*)self)->exchange_api = (const DLPackExchangeAPI*)api;
  return 0;
}

static PyGetSetDef object_getset[] = {
    {"_handle", object_get_handle, object_set_handle,
     "The object's address (an int), or None when this wrapper holds nothing.", NULL},
    {"id_", object_get_id, NULL, "Alias of __chandle__().", NULL},
    {"_dlpack_exchange_api", object_get_exchange_api, object_set_exchange_api,
     "The DLPack exchange table a container result remembers (an address, 0: none).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------ methods */

static PyObject* object_adopt_method(PyObject* cls, PyObject* arg) {
  void* handle = NULL;
  if (arg != Py_None) {
    handle = PyLong_AsVoidPtr(arg);
    if (handle == NULL && PyErr_Occurred()) return NULL;
  }
  return fx_object_adopt((PyTypeObject*)cls, handle);
}

static PyObject* object_chandle(PyObject* self, PyObject* unused) {
  (void)unused;
  return PyLong_FromVoidPtr(((FxObject*)self)->handle);
}

static PyObject* object_same_as(PyObject* self, PyObject* other) {
  return PyBool_FromLong(PyObject_TypeCheck(other, fx_cobject_type) &&
                         ((FxObject*)self)->handle == ((FxObject*)other)->handle);
}

static PyObject* object_move_handle_from(PyObject* self, PyObject* other) {
  if (!PyObject_TypeCheck(other, fx_cobject_type)) {
    PyErr_Format(PyExc_TypeError, "expected an Object, got %s", fx_type_name(Py_TYPE(other)));
    return NULL;
  }
  ((FxObject*)self)->handle = ((FxObject*)other)->handle;
  ((FxObject*)other)->handle = NULL;
  Py_RETURN_NONE;
}

static PyObject* object_init_by_constructor(PyObject* self, PyObject* const* args,
                                            Py_ssize_t nargs) {
  FxObject* o = (FxObject*)self;
  PyObject* result;
  void* old = o->handle;
  if (nargs < 1) {
    PyErr_SetString(PyExc_TypeError,
                    "__init_handle_by_constructor__() missing 1 required positional argument: "
                    "'fconstructor'");
    return NULL;
  }
  /* Empty while the constructor runs; a previous object is released only afterwards, so the
     new one never reuses its address (re-initialising gives a different object). */
  o->handle = NULL;
  result = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), NULL);
  if (result != NULL && !PyObject_TypeCheck(result, fx_cobject_type)) {
    PyErr_Format(PyExc_TypeError, "constructor returned %s, not an object",
                 fx_type_name(Py_TYPE(result)));
    Py_CLEAR(result);
  }
  if (result != NULL) {
    o->handle = ((FxObject*)result)->handle;
    ((FxObject*)result)->handle = NULL;
    Py_DECREF(result);
  }
  if (old != NULL) fx_decref(old);
  if (result == NULL) return NULL;
  Py_RETURN_NONE;
}

static PyMethodDef object_methods[] = {
    {"_adopt", (PyCFunction)object_adopt_method, METH_O | METH_CLASS,
     "A wrapper of this class taking over one owned reference to the handle (an int)."},
    {"__init_handle_by_constructor__", (PyCFunction)(void (*)(void))object_init_by_constructor,
     METH_FASTCALL, "Initialises this wrapper with the object fconstructor(*args) returns."},
    {"__move_handle_from__", (PyCFunction)object_move_handle_from, METH_O,
     "Takes other's reference, leaving other empty."},
    {"__chandle__", (PyCFunction)object_chandle, METH_NOARGS,
     "The object's address (0 when empty)."},
    {"same_as", (PyCFunction)object_same_as, METH_O,
     "Whether other wraps the very same object."},
    {"is_", (PyCFunction)object_same_as, METH_O, "Alias of same_as."},
    {NULL, NULL, 0, NULL}};

/* Identity semantics (subclasses with value semantics override both). */
static PyObject* object_richcompare(PyObject* self, PyObject* other, int op) {
  int same;
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  same = PyObject_TypeCheck(other, fx_cobject_type) &&
         ((FxObject*)self)->handle == ((FxObject*)other)->handle;
  return PyBool_FromLong(op == Py_EQ ? same : !same);
}

static Py_hash_t object_hash(PyObject* self) {
  /* hash(self._handle), as the reference front end */
  void* handle = ((FxObject*)self)->handle;
  PyObject* key;
  Py_hash_t hash;
  if (handle == NULL) return PyObject_Hash(Py_None);
  key = PyLong_FromVoidPtr(handle);
  if (key == NULL) return -1;
  hash = PyObject_Hash(key);
  Py_DECREF(key);
  return hash;
}

static PyMemberDef object_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(FxObject, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot object_slots[] = {
    {Py_tp_doc,
     "Base class of every TVM FFI object wrapper seen from Python.\n\n"
     "Owns one strong reference to the object at its handle and drops it when\n"
     "collected. Equality and hashing are by identity of the underlying object,\n"
     "unless a subclass defines value semantics (containers do)."},
    {Py_tp_new, object_new},
    {Py_tp_init, object_init},
    {Py_tp_dealloc, object_dealloc},
    {Py_tp_getset, object_getset},
    {Py_tp_methods, object_methods},
    {Py_tp_members, object_members},
    {Py_tp_richcompare, object_richcompare},
    {Py_tp_hash, object_hash},
    {0, NULL}};

static PyType_Spec cobject_spec = {"tvm_ffi_fast.object.CObject", sizeof(FxObject), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, object_slots};

/* Object: a CObject that is a registered FFI object type (Function and Tensor are not). */
static PyGetSetDef object_only_getset[] = {
    {"type_index", object_get_type_index, NULL, "The runtime type index of the object.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot object_only_slots[] = {
    {Py_tp_doc,
     "Base class of the TVM FFI objects seen from Python, except functions, tensors,\n"
     "errors and opaque Python objects (those derive from CObject only, as upstream's do)."},
    {Py_tp_getset, object_only_getset},
    {0, NULL}};

static PyType_Spec object_spec = {"tvm_ffi_fast.object.Object", sizeof(FxObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, object_only_slots};

/* ------------------------------------------------------------ Function */

static PyMemberDef function_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FxFunction, vectorcall), READONLY, NULL},
    {"__dictoffset__", T_PYSSIZET, offsetof(FxFunction, dict), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

/* Attributes set on a Function (init_ffi_api names each one it installs, say). */
static PyObject* function_get_release_gil(PyObject* self, void* closure) {
  (void)closure;
  return PyBool_FromLong(((FxFunction*)self)->release_gil);
}

static int function_set_release_gil(PyObject* self, PyObject* value, void* closure) {
  int flag;
  (void)closure;
  if (value == NULL) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete release_gil");
    return -1;
  }
  flag = PyObject_IsTrue(value);
  if (flag < 0) return -1;
  ((FxFunction*)self)->release_gil = flag;
  return 0;
}

static PyGetSetDef function_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"release_gil", function_get_release_gil, function_set_release_gil,
     "Whether calls release the Python GIL while the function runs (default: yes, unless\n"
     "TVM_FFI_RELEASE_GIL_BY_DEFAULT=0). Holding it makes a scalar call cheaper; a kernel\n"
     "that waits for another thread calling back into Python then deadlocks.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static void function_dealloc(PyObject* self) {
  Py_CLEAR(((FxFunction*)self)->dict);
  object_dealloc(self);
}

static PyType_Slot function_slots[] = {
    {Py_tp_doc,
     "A TVM FFI function; calling it calls through the ABI.\n\n"
     "The whole packed call is C: arguments encoded as tvm_ffi_ref.convert\n"
     "encodes them, the function's safe_call run with the GIL released, the\n"
     "calling-convention rules checked and the result decoded."},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, function_members},
    {Py_tp_getset, function_getset},
    {Py_tp_dealloc, function_dealloc},
    {0, NULL}};

static PyType_Spec function_spec = {
    "tvm_ffi_fast.function.Function", sizeof(FxFunction), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL, function_slots};

/*
 * The metaclass of the Object types (object_meta.ObjectMeta, which gives a Python subclass
 * that declares no __slots__ an empty one). A type made by PyType_FromSpec has `type` as its
 * metaclass, and PyType_FromMetaclass (which would take another) is Python 3.12's; so the
 * four types made here are given it after the fact, before any Python subclass exists (a
 * subclass takes its metaclass from its bases). A metaclass that adds no fields to `type`
 * lays its instances out as `type` does, which is what makes the swap sound: checked here.
 */
PyObject* fx_py_set_object_metaclass(PyObject* self, PyObject* meta) {
  PyTypeObject* types[4];
  size_t i;
  (void)self;
  types[0] = fx_cobject_type;
  types[1] = fx_object_type;
  types[2] = fx_function_type;
  types[3] = fx_tensor_type;
  if (!PyType_Check(meta) || !PyType_IsSubtype((PyTypeObject*)meta, &PyType_Type)) {
    PyErr_Format(PyExc_TypeError, "set_object_metaclass: meta must be a subclass of type, got %R",
                 meta);
    return NULL;
  }
  if (((PyTypeObject*)meta)->tp_basicsize != PyType_Type.tp_basicsize) {
    PyErr_Format(PyExc_TypeError,
                 "set_object_metaclass: %R adds fields to type (declare __slots__ = () in it)",
                 meta);
    return NULL;
  }
  for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
    PyTypeObject* old = Py_TYPE(types[i]);
    if ((PyObject*)old == meta) continue;
    if (old != &PyType_Type) {
      PyErr_Format(PyExc_TypeError, "set_object_metaclass: %s already has the metaclass %s",
                   types[i]->tp_name, old->tp_name);
      return NULL;
    }
    Py_INCREF(meta); /* a heap metaclass is owned by its instances (subtype_dealloc drops it) */
    Py_SET_TYPE(types[i], (PyTypeObject*)meta);
    PyType_Modified(types[i]);
  }
  Py_RETURN_NONE;
}

int fx_object_types_init(PyObject* module) {
  PyObject* bases;
  fx_cobject_type = (PyTypeObject*)PyType_FromSpec(&cobject_spec);
  if (fx_cobject_type == NULL) return -1;
  bases = PyTuple_Pack(1, (PyObject*)fx_cobject_type);
  if (bases == NULL) return -1;
  fx_object_type = (PyTypeObject*)PyType_FromSpecWithBases(&object_spec, bases);
  fx_function_type = fx_object_type == NULL
                         ? NULL
                         : (PyTypeObject*)PyType_FromSpecWithBases(&function_spec, bases);
  Py_DECREF(bases);
  if (fx_function_type == NULL) return -1;
  /* The module keeps one reference each; these globals keep theirs for the process. */
  Py_INCREF(fx_cobject_type);
  if (PyModule_AddObject(module, "CObject", (PyObject*)fx_cobject_type) < 0) return -1;
  Py_INCREF(fx_object_type);
  if (PyModule_AddObject(module, "Object", (PyObject*)fx_object_type) < 0) return -1;
  Py_INCREF(fx_function_type);
  if (PyModule_AddObject(module, "Function", (PyObject*)fx_function_type) < 0) return -1;
  return 0;
}
