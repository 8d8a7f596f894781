/*
 * tvm_ffi_common._pycapi: the few Python C API calls our Python code needs, as an extension.
 *
 * Capsules, PyObject* references handed to C, the interpreter's signal check and a guard for
 * the Python callbacks C calls. An extension module is the one way to reach them that works
 * on CPython and on PyPy alike: ctypes.pythonapi does not exist on PyPy, and a ctypes
 * py_object is no PyObject* there (PyPy's C API emulation makes one only for objects that
 * cross an extension like this).
 * Addresses travel as Python ints; tvm_ffi_common/pycapi.py documents each function.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlpack/dlpack.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int address_of(PyObject* value, void** out) {
  if (value == Py_None) {
    *out = NULL;
    return 0;
  }
  *out = PyLong_AsVoidPtr(value);
  return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

static PyObject* address_result(void* address) {
  if (address == NULL) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(address);
}

/* name: bytes, or None for a capsule without a name. */
static int name_of(PyObject* value, const char** out) {
  if (value == Py_None) {
    *out = NULL;
    return 0;
  }
  *out = PyBytes_AsString(value);
  return *out == NULL ? -1 : 0;
}

static PyObject* capsule_new(PyObject* self, PyObject* args) {
  PyObject *pointer, *name, *destructor;
  void *p, *n, *d;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOO:capsule_new", &pointer, &name, &destructor) ||
      address_of(pointer, &p) < 0 || address_of(name, &n) < 0 || address_of(destructor, &d) < 0) {
    return NULL;
  }
  return PyCapsule_New(p, (const char*)n, (PyCapsule_Destructor)d);
}

static PyObject* capsule_is_valid(PyObject* self, PyObject* args) {
  PyObject *capsule, *name;
  const char* n;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO:capsule_is_valid", &capsule, &name) || name_of(name, &n) < 0) {
    return NULL;
  }
  return PyBool_FromLong(PyCapsule_IsValid(capsule, n));
}

static PyObject* capsule_get_pointer(PyObject* self, PyObject* args) {
  PyObject *capsule, *name;
  const char* n;
  void* pointer;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO:capsule_get_pointer", &capsule, &name) ||
      name_of(name, &n) < 0) {
    return NULL;
  }
  pointer = PyCapsule_GetPointer(capsule, n);
  if (pointer == NULL) return NULL; /* PyCapsule_GetPointer set ValueError */
  return PyLong_FromVoidPtr(pointer);
}

static PyObject* capsule_set_name(PyObject* self, PyObject* args) {
  PyObject *capsule, *name;
  void* n;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO:capsule_set_name", &capsule, &name) || address_of(name, &n) < 0 ||
      PyCapsule_SetName(capsule, (const char*)n) != 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject* capsule_set_destructor(PyObject* self, PyObject* args) {
  PyObject *capsule, *destructor;
  void* d;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO:capsule_set_destructor", &capsule, &destructor) ||
      address_of(destructor, &d) < 0 ||
      PyCapsule_SetDestructor(capsule, (PyCapsule_Destructor)d) != 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}


/* capsule_pointer(capsule, name): the pointer of a live capsule named `name` (bytes), or None
 * (PyCapsule_IsValid and PyCapsule_GetPointer in one crossing: each costs one on PyPy). */
static PyObject* capsule_pointer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  const char* name;
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "capsule_pointer expects 2 arguments");
    return NULL;
  }
  if (name_of(args[1], &name) < 0) return NULL;
  if (!PyCapsule_IsValid(args[0], name)) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(PyCapsule_GetPointer(args[0], name));
}

/* capsule_mark_used(capsule, used_name): what a DLPack consumer does to the capsule it took,
 * in one crossing: no destructor, renamed `used_name` (an address from static_name). */
static PyObject* capsule_mark_used(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  void* used;
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "capsule_mark_used expects 2 arguments");
    return NULL;
  }
  if (address_of(args[1], &used) < 0 || PyCapsule_SetDestructor(args[0], NULL) != 0 ||
      PyCapsule_SetName(args[0], (const char*)used) != 0) {
    return NULL;
  }
  Py_RETURN_NONE;
}

/*
 * ndarray_managed_tensor(array, null_contiguous_strides): the DLManagedTensor a NumPy array's
 * __dlpack__() would hand over, read from the array's own header in one call, with no NumPy
 * function called (on PyPy each crossing into the C API emulation costs more than the whole
 * call it serves: __dlpack__ takes five, and even the buffer protocol costs a microsecond).
 * The address is returned, the caller owning the managed tensor, which holds a reference to
 * the array; None for anything but an exact numpy.ndarray, and where __dlpack__ would describe
 * the array differently or refuse it (read-only, another byte order, a dtype DLPack lacks,
 * strides that are no multiple of the item size, 0-d): the caller then asks __dlpack__
 * itself. NumPy 2.0 leaves the strides of a C-contiguous array NULL, 2.4 does not:
 * null_contiguous_strides says which this NumPy does, as pycapi.ndarray_tensor_convention
 * finds out (and if the header were not where it is read, no convention would agree).
 */
typedef struct {
  DLManagedTensor managed;
  PyObject* array; /* held until the deleter drops it */
  int64_t dims[];  /* shape, then strides in elements */
} ArrayTensor;

static void array_tensor_deleter(DLManagedTensor* managed) {
  ArrayTensor* self = (ArrayTensor*)managed;
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(self->array);
  PyGILState_Release(state);
  free(self);
}

/* The leading fields of NumPy's array and dtype objects, the same from NumPy 1.7 to 2.x (the
 * dtype's later fields moved in 2.0, so only its characters are read). */
typedef struct {
  PyObject_HEAD
  void* typeobj;
  char kind;
  char type; /* the type character: the buffer protocol's format for the numeric types */
  char byteorder;
} NumpyDescrHead;

typedef struct {
  PyObject_HEAD
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  NumpyDescrHead* descr;
  int flags;
} NumpyArrayHead;

#define NUMPY_ARRAY_WRITEABLE 0x0400

/* The DLPack code and bits of a NumPy type character NumPy's __dlpack__ also exports; code -1
 * for others (long double, objects, strings, dates, records). */
static int dlpack_type_of_char(char type, int* bits) {
  switch (type) {
    case '?': *bits = 8; return kDLBool;
    case 'b': *bits = 8; return kDLInt;
    case 'h': *bits = 16; return kDLInt;
    case 'i': *bits = 32; return kDLInt;
    case 'l': *bits = 8 * (int)sizeof(long); return kDLInt;
    case 'q': *bits = 64; return kDLInt;
    case 'B': *bits = 8; return kDLUInt;
    case 'H': *bits = 16; return kDLUInt;
    case 'I': *bits = 32; return kDLUInt;
    case 'L': *bits = 8 * (int)sizeof(long); return kDLUInt;
    case 'Q': *bits = 64; return kDLUInt;
    case 'e': *bits = 16; return kDLFloat;
    case 'f': *bits = 32; return kDLFloat;
    case 'd': *bits = 64; return kDLFloat;
    case 'F': *bits = 64; return kDLComplex;
    case 'D': *bits = 128; return kDLComplex;
    default: return -1;
  }
}

/* NumPy's C-contiguity (its flag): row-major strides where a dimension is longer than 1, or
 * no element at all. */
static int is_c_contiguous(const NumpyArrayHead* head, Py_ssize_t itemsize) {
  Py_ssize_t expected = itemsize;
  int i;
  for (i = 0; i < head->nd; ++i) {
    if (head->dimensions[i] == 0) return 1;
  }
  for (i = head->nd - 1; i >= 0; --i) {
    if (head->dimensions[i] == 1) continue;
    if (head->strides[i] != expected) return 0;
    expected *= head->dimensions[i];
  }
  return 1;
}

static PyObject* ndarray_managed_tensor(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  const NumpyArrayHead* head;
  ArrayTensor* out;
  int code, bits, i, ndim, null_contiguous_strides;
  Py_ssize_t itemsize;
  char order;
  (void)self;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "ndarray_managed_tensor expects 2 arguments");
    return NULL;
  }
  if ((null_contiguous_strides = PyObject_IsTrue(args[1])) < 0) return NULL;
  if (strcmp(Py_TYPE(args[0])->tp_name, "numpy.ndarray") != 0) Py_RETURN_NONE; /* exact type */
  head = (const NumpyArrayHead*)args[0];
  ndim = head->nd;
  order = head->descr->byteorder;
  code = dlpack_type_of_char(head->descr->type, &bits);
  /* 0-d: NumPy versions differ in which of shape and strides they leave NULL */
  if (code < 0 || ndim <= 0 || ndim > 64 || !(head->flags & NUMPY_ARRAY_WRITEABLE) ||
      (order != '=' && order != '|')) { /* '=' native (NumPy writes '<' as that here), '|' none */
    Py_RETURN_NONE;
  }
  itemsize = bits / 8;
  for (i = 0; i < ndim; ++i) {
    if (head->strides[i] % itemsize != 0) Py_RETURN_NONE;
  }
  out = malloc(sizeof(ArrayTensor) + 2 * (size_t)ndim * sizeof(int64_t));
  if (out == NULL) Py_RETURN_NONE;
  Py_INCREF(args[0]);
  out->array = args[0];
  for (i = 0; i < ndim; ++i) {
    out->dims[i] = head->dimensions[i];
    out->dims[ndim + i] = head->strides[i] / itemsize;
  }
  out->managed.dl_tensor.data = head->data;
  out->managed.dl_tensor.device.device_type = kDLCPU;
  out->managed.dl_tensor.device.device_id = 0;
  out->managed.dl_tensor.ndim = ndim;
  out->managed.dl_tensor.dtype.code = (uint8_t)code;
  out->managed.dl_tensor.dtype.bits = (uint8_t)bits;
  out->managed.dl_tensor.dtype.lanes = 1;
  out->managed.dl_tensor.shape = out->dims;
  out->managed.dl_tensor.strides =
      null_contiguous_strides && is_c_contiguous(head, itemsize) ? NULL : out->dims + ndim;
  out->managed.dl_tensor.byte_offset = 0;
  out->managed.manager_ctx = NULL;
  out->managed.deleter = array_tensor_deleter;
  return PyLong_FromVoidPtr(out);
}

static PyObject* new_reference(PyObject* self, PyObject* value) {
  (void)self;
  Py_INCREF(value);
  return PyLong_FromVoidPtr(value);
}

static PyObject* object_at(PyObject* self, PyObject* address) {
  void* p;
  (void)self;
  if (address_of(address, &p) < 0) return NULL;
  if (p == NULL) {
    PyErr_SetString(PyExc_ValueError, "object_at: the address is NULL");
    return NULL;
  }
  Py_INCREF((PyObject*)p);
  return (PyObject*)p;
}

static PyObject* take_reference(PyObject* self, PyObject* address) {
  PyObject* value = object_at(self, address);
  if (value != NULL) Py_DECREF(value); /* the caller's reference becomes the one returned */
  return value;
}

static PyObject* incref(PyObject* self, PyObject* address) {
  void* p;
  (void)self;
  if (address_of(address, &p) < 0) return NULL;
  Py_XINCREF((PyObject*)p);
  Py_RETURN_NONE;
}

static PyObject* decref(PyObject* self, PyObject* address) {
  void* p;
  (void)self;
  if (address_of(address, &p) < 0) return NULL;
  Py_XDECREF((PyObject*)p);
  Py_RETURN_NONE;
}

static PyObject* err_occurred(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (PyErr_Occurred()) return NULL; /* the pending exception is raised */
  Py_RETURN_NONE;
}

static PyObject* check_signals(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (PyErr_CheckSignals() != 0) return NULL;
  Py_RETURN_NONE;
}

/* entry_guard(function, on_escape): a callable that calls function(*args) and, when an
 * exception escapes it, returns on_escape(exception) instead. What a ctypes callback calls:
 * Python runs pending signal handlers at the first bytecode of a function called from C,
 * before that function's own try, so only a caller in C can catch what a handler raises
 * there (ctypes would print it as "Exception ignored" and return garbage to C). */
typedef struct {
  PyObject_HEAD
  PyObject* function;
  PyObject* on_escape;
} EntryGuard;

static PyObject* entry_guard_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  EntryGuard* guard = (EntryGuard*)self;
  PyObject* result = PyObject_Call(guard->function, args, kwargs);
  PyObject *type, *value, *traceback;
  if (result != NULL || !PyErr_Occurred()) return result;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != NULL && value != NULL) PyException_SetTraceback(value, traceback);
  if (value != NULL) {
    result = PyObject_CallFunctionObjArgs(guard->on_escape, value, NULL);
  } else {
    PyErr_SetString(PyExc_SystemError, "entry_guard: an exception without a value");
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  return result;
}

static void entry_guard_dealloc(PyObject* self) {
  EntryGuard* guard = (EntryGuard*)self;
  Py_XDECREF(guard->function);
  Py_XDECREF(guard->on_escape);
  PyObject_Free(self);
}

static PyTypeObject entry_guard_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tvm_ffi_common._pycapi.EntryGuard",
    .tp_basicsize = sizeof(EntryGuard),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_call = entry_guard_call,
    .tp_dealloc = entry_guard_dealloc,
};

static PyObject* entry_guard(PyObject* self, PyObject* args) {
  PyObject *function, *on_escape;
  EntryGuard* guard;
  (void)self;
  if (!PyArg_ParseTuple(args, "OO:entry_guard", &function, &on_escape)) return NULL;
  if (!PyCallable_Check(function) || !PyCallable_Check(on_escape)) {
    PyErr_SetString(PyExc_TypeError, "entry_guard(function, on_escape) expects two callables");
    return NULL;
  }
  guard = PyObject_New(EntryGuard, &entry_guard_type);
  if (guard == NULL) return NULL;
  Py_INCREF(function);
  Py_INCREF(on_escape);
  guard->function = function;
  guard->on_escape = on_escape;
  return (PyObject*)guard;
}

/* A C deleter of a reference new_reference handed to C: safe from any thread. */
static void release_reference(void* address) {
  PyGILState_STATE state;
  if (address == NULL) return;
  state = PyGILState_Ensure();
  Py_DECREF((PyObject*)address);
  PyGILState_Release(state);
}

/*
 * The destructor of the DLPack capsules our tensors export: a capsule no consumer took
 * (still named "dltensor_versioned" or "dltensor") owns its managed tensor and releases it.
 */
static void dlpack_capsule_destructor(PyObject* capsule) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback); /* a destructor may run while an error propagates */
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned* managed = PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (managed->deleter != NULL) managed->deleter(managed);
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor* managed = PyCapsule_GetPointer(capsule, "dltensor");
    if (managed->deleter != NULL) managed->deleter(managed);
  }
  PyErr_Restore(type, value, traceback);
}

/*
 * Deferred deleters. On PyPy a C function that frees an object from inside its C API
 * emulation (a NumPy array's or a capsule's dealloc, run during garbage collection) cannot
 * call back into Python: the callback never gets the interpreter. A runtime written in Python
 * hands out DEFERRED_DELETER instead of a deleter of its own: it only queues the pointer (under
 * a plain mutex, never calling anything), and take_deferred() hands the queue to Python code
 * that runs the real deleter at a safe point.
 */
static pthread_mutex_t deferred_mutex = PTHREAD_MUTEX_INITIALIZER;
static void** deferred = NULL;
static size_t deferred_size = 0, deferred_capacity = 0;

static void deferred_deleter(void* pointer) {
  pthread_mutex_lock(&deferred_mutex);
  if (deferred_size == deferred_capacity) {
    size_t capacity = deferred_capacity ? 2 * deferred_capacity : 64;
    void** grown = realloc(deferred, capacity * sizeof(void*));
    if (grown == NULL) { /* out of memory: the pointer leaks rather than crash */
      pthread_mutex_unlock(&deferred_mutex);
      return;
    }
    deferred = grown;
    deferred_capacity = capacity;
  }
  deferred[deferred_size++] = pointer;
  pthread_mutex_unlock(&deferred_mutex);
}

static PyObject* take_deferred(PyObject* self, PyObject* unused) {
  PyObject* out = PyList_New(0);
  size_t i, size;
  void** taken;
  (void)self;
  (void)unused;
  if (out == NULL) return NULL;
  pthread_mutex_lock(&deferred_mutex);
  taken = deferred;
  size = deferred_size;
  deferred = NULL;
  deferred_size = deferred_capacity = 0;
  pthread_mutex_unlock(&deferred_mutex);
  for (i = 0; i < size; ++i) {
    PyObject* address = PyLong_FromVoidPtr(taken[i]);
    if (address == NULL || PyList_Append(out, address) != 0) {
      Py_XDECREF(address);
      Py_DECREF(out);
      free(taken);
      return NULL;
    }
    Py_DECREF(address);
  }
  free(taken);
  return out;
}

static PyMethodDef methods[] = {
    {"capsule_new", capsule_new, METH_VARARGS, NULL},
    {"capsule_is_valid", capsule_is_valid, METH_VARARGS, NULL},
    {"capsule_get_pointer", capsule_get_pointer, METH_VARARGS, NULL},
    {"capsule_set_name", capsule_set_name, METH_VARARGS, NULL},
    {"capsule_set_destructor", capsule_set_destructor, METH_VARARGS, NULL},
    {"capsule_pointer", (PyCFunction)(void (*)(void))capsule_pointer, METH_FASTCALL, NULL},
    {"capsule_mark_used", (PyCFunction)(void (*)(void))capsule_mark_used, METH_FASTCALL, NULL},
    {"ndarray_managed_tensor", (PyCFunction)(void (*)(void))ndarray_managed_tensor, METH_FASTCALL, NULL},
    {"new_reference", new_reference, METH_O, NULL},
    {"object_at", object_at, METH_O, NULL},
    {"take_reference", take_reference, METH_O, NULL},
    {"incref", incref, METH_O, NULL},
    {"decref", decref, METH_O, NULL},
    {"err_occurred", err_occurred, METH_NOARGS, NULL},
    {"check_signals", check_signals, METH_NOARGS, NULL},
    {"entry_guard", entry_guard, METH_VARARGS, NULL},
    {"take_deferred", take_deferred, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "tvm_ffi_common._pycapi",
                                    "Python C API calls for tvm_ffi_common.pycapi.", -1, methods,
                                    NULL, NULL, NULL, NULL};

static int add_address(PyObject* m, const char* name, void* address) {
  PyObject* value = PyLong_FromVoidPtr(address);
  if (value == NULL) return -1;
  if (PyModule_AddObject(m, name, value) != 0) {
    Py_DECREF(value);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__pycapi(void) {
  PyObject* m = PyModule_Create(&module);
  if (m == NULL) return NULL;
  if (PyType_Ready(&entry_guard_type) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  if (add_address(m, "RELEASE_REFERENCE", (void*)release_reference) < 0 ||
      add_address(m, "DLPACK_CAPSULE_DESTRUCTOR", (void*)dlpack_capsule_destructor) < 0 ||
      add_address(m, "DEFERRED_DELETER", (void*)deferred_deleter) < 0 ||
      add_address(m, "PyErr_CheckSignals", (void*)PyErr_CheckSignals) < 0 ||
      add_address(m, "PyGILState_Ensure", (void*)PyGILState_Ensure) < 0 ||
      add_address(m, "PyGILState_Release", (void*)PyGILState_Release) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
