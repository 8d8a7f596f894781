/*
 * tensortype.c -- TensorBase: the base of tensor.Tensor, with its accessors in C.
 *
 * tensor.Tensor derives from TensorBase and from tensor.TensorMethods, whose
 * Python accessors state what each member means (the reference runs them);
 * TensorBase comes first in the method resolution order, so the fast
 * front end reads the DLTensor here, in place, as upstream's Cython does.
 * A TensorBase either owns a Tensor object (its DLTensor follows the 24-byte
 * header) or views a borrowed DLTensor* (`_view`: a kernel's
 * kTVMFFIDLTensorPtr), which is never exported.
 */
#include "frontend.h"

PyTypeObject* fx_tensor_type;

const DLTensor* fx_tensor_dltensor(PyObject* tensor) {
  FxTensor* t = (FxTensor*)tensor;
  if (FX_LIKELY(t->base.handle != NULL)) return FX_CELL(t->base.handle, DLTensor);
  if (t->view != NULL) return t->view;
  PyErr_SetString(PyExc_ValueError, "an empty Tensor holds no DLTensor");
  return NULL;
}

static PyObject* new_view(PyTypeObject* cls, const DLTensor* tensor) {
  PyObject* view = cls->tp_new(cls, fx_names.empty_tuple, NULL);
  if (view != NULL) ((FxTensor*)view)->view = tensor;
  return view;
}

PyObject* fx_tensor_view(const DLTensor* tensor) {
  PyObject *cls = fx_class_of_index(kTVMFFITensor), *address, *view;
  if (cls == NULL) return NULL;
  if (PyType_Check(cls) && PyType_IsSubtype((PyTypeObject*)cls, fx_tensor_type)) {
    return new_view((PyTypeObject*)cls, tensor);
  }
  address = PyLong_FromVoidPtr((void*)tensor); /* a class of another kind: its own classmethod */
  if (address == NULL) return NULL;
  view = PyObject_CallMethodOneArg(cls, fx_names.view_of, address);
  Py_DECREF(address);
  return view;
}

static int ndim_of(const DLTensor* t) { return t->ndim < 0 ? 0 : t->ndim; }

/* ------------------------------------------------------------ Shape */

/* Whether every item is an integer (numbers.Integral), as Shape requires. */
static int all_integral(PyObject* items) {
  Py_ssize_t i;
  PyObject* integral = NULL;
  for (i = 0; i < PyTuple_GET_SIZE(items); ++i) {
    PyObject* item = PyTuple_GET_ITEM(items, i);
    int is_integral;
    if (PyLong_Check(item)) continue;
    if (integral == NULL && (integral = fx_hook(FX_HOOK_INTEGRAL)) == NULL) return -1;
    is_integral = PyObject_IsInstance(item, integral);
    if (is_integral <= 0) return is_integral;
  }
  return 1;
}

PyObject* fx_py_new_shape(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  PyObject* items;
  void* handle;
  int integral;
  (void)self;
  if (nargs != 2) {
    return PyErr_Format(PyExc_TypeError, "new_shape() takes 2 arguments (%zd given)", nargs);
  }
  items = PySequence_Tuple(args[1]);
  if (items == NULL) return NULL;
  integral = all_integral(items);
  if (integral <= 0) {
    if (integral == 0) PyErr_SetString(PyExc_ValueError, "Shape must be a tuple of integers");
    Py_DECREF(items);
    return NULL;
  }
  handle = fx_construct(FX_G_SHAPE, &PyTuple_GET_ITEM(items, 0), PyTuple_GET_SIZE(items), NULL);
  if (handle == NULL) {
    Py_DECREF(items);
    return NULL;
  }
  return fx_native_with_object(&PyTuple_Type, args[0], items, handle);
}

/* ------------------------------------------------------------ properties */

static PyObject* get_shape(PyObject* self, void* closure) {
  const DLTensor* t = fx_tensor_dltensor(self);
  (void)closure;
  return t == NULL ? NULL : fx_int64_tuple(t->shape, ndim_of(t));
}

static PyObject* get_ndim(PyObject* self, void* closure) {
  const DLTensor* t = fx_tensor_dltensor(self);
  (void)closure;
  return t == NULL ? NULL : PyLong_FromLong(t->ndim);
}

static PyObject* get_strides(PyObject* self, void* closure) {
  const DLTensor* t = fx_tensor_dltensor(self);
  int64_t compact[64];
  int i, n;
  (void)closure;
  if (t == NULL) return NULL;
  n = ndim_of(t);
  if (t->strides != NULL || n > 64) {
    return t->strides == NULL ? PyErr_Format(PyExc_ValueError, "ndim %d is too large", n)
                              : fx_int64_tuple(t->strides, n);
  }
  /* none stored: compact row-major */
  for (i = n - 1; i >= 0; --i) compact[i] = i == n - 1 ? 1 : compact[i + 1] * t->shape[i + 1];
  return fx_int64_tuple(compact, n);
}

static PyObject* get_dtype(PyObject* self, void* closure) {
  const DLTensor* t = fx_tensor_dltensor(self);
  (void)closure;
  return t == NULL ? NULL : fx_make_dtype(t->dtype);
}

static PyObject* get_device(PyObject* self, void* closure) {
  const DLTensor* t = fx_tensor_dltensor(self);
  (void)closure;
  return t == NULL ? NULL : fx_make_device(t->device);
}

static PyObject* get_view(PyObject* self, void* closure) {
  const DLTensor* view = ((FxTensor*)self)->view;
  (void)closure;
  if (view == NULL) Py_RETURN_NONE;
  return PyLong_FromVoidPtr((void*)view);
}

static int set_view(PyObject* self, PyObject* value, void* closure) {
  void* address;
  (void)closure;
  if (fx_address_arg(value, &address) < 0) return -1;
  ((FxTensor*)self)->view = (const DLTensor*)address;
  return 0;
}

static PyGetSetDef tensor_getset[] = {
    {"shape", get_shape, NULL, "The extent of each dimension.", NULL},
    {"ndim", get_ndim, NULL, "The number of dimensions.", NULL},
    {"strides", get_strides, NULL,
     "Element strides of each dimension (compact row-major when none are stored).", NULL},
    {"dtype", get_dtype, NULL, "The element type.", NULL},
    {"device", get_device, NULL, "Where the data lives.", NULL},
    {"_view", get_view, set_view,
     "The borrowed DLTensor* (an int) this Tensor views, or None when it owns an object.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* ------------------------------------------------------------ methods */

static PyObject* tensor_numel(PyObject* self, PyObject* unused) {
  const DLTensor* t = fx_tensor_dltensor(self);
  int64_t count = 1;
  int i;
  (void)unused;
  if (t == NULL) return NULL;
  for (i = 0; i < ndim_of(t); ++i) count *= t->shape[i];
  return PyLong_FromLongLong(count);
}

static PyObject* tensor_size(PyObject* self, PyObject* arg) {
  const DLTensor* t = fx_tensor_dltensor(self);
  long long idx;
  int ndim;
  if (t == NULL) return NULL;
  idx = PyLong_AsLongLong(arg);
  if (idx == -1 && PyErr_Occurred()) return NULL;
  ndim = ndim_of(t);
  if (idx < -ndim || idx >= ndim) {
    return PyErr_Format(PyExc_IndexError, "Dimension %lld out of range for tensor with %d dimensions",
                        idx, ndim);
  }
  return PyLong_FromLongLong(t->shape[idx < 0 ? idx + ndim : idx]);
}

static PyObject* tensor_is_contiguous(PyObject* self, PyObject* unused) {
  const DLTensor* t = fx_tensor_dltensor(self);
  int64_t expected = 1;
  int k, n;
  (void)unused;
  if (t == NULL) return NULL;
  n = ndim_of(t);
  if (t->strides == NULL) Py_RETURN_TRUE;
  for (k = 0; k < n; ++k) {
    if (t->shape[k] == 0) Py_RETURN_TRUE; /* empty: contiguous whatever the strides */
  }
  for (k = n - 1; k >= 0; --k) {
    if (t->shape[k] == 1) continue;
    if (t->strides[k] != expected) Py_RETURN_FALSE;
    expected *= t->shape[k];
  }
  Py_RETURN_TRUE;
}

static PyObject* tensor_data_ptr(PyObject* self, PyObject* unused) {
  const DLTensor* t = fx_tensor_dltensor(self);
  (void)unused;
  if (t == NULL) return NULL;
  return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)t->data + t->byte_offset);
}

static PyObject* device_pair(const DLTensor* t) {
  PyObject* type = PyLong_FromLong((long)(int32_t)t->device.device_type);
  PyObject* id = type ? PyLong_FromLong((long)t->device.device_id) : NULL;
  PyObject* pair = id ? PyTuple_New(2) : NULL;
  if (pair == NULL) {
    Py_XDECREF(type);
    Py_XDECREF(id);
    return NULL;
  }
  PyTuple_SET_ITEM(pair, 0, type);
  PyTuple_SET_ITEM(pair, 1, id);
  return pair;
}

/*
 * The pair __dlpack_device__ returned last, kept: every consumer asks for it before each import
 * (torch.from_dlpack does), and nearly every tensor of a process is on the same device. A tuple
 * of two ints is immutable, so handing out the same one is safe; the GIL guards the cache.
 */
static struct {
  PyObject* pair;
  int32_t device_type, device_id;
} last_device;

static PyObject* tensor_dlpack_device(PyObject* self, PyObject* unused) {
  const DLTensor* t = fx_tensor_dltensor(self);
  PyObject* pair;
  (void)unused;
  if (t == NULL) return NULL;
  if (last_device.pair != NULL && last_device.device_type == (int32_t)t->device.device_type &&
      last_device.device_id == t->device.device_id) {
    Py_INCREF(last_device.pair);
    return last_device.pair;
  }
  pair = device_pair(t);
  if (pair != NULL) {
    Py_INCREF(pair);
    Py_XSETREF(last_device.pair, pair);
    last_device.device_type = (int32_t)t->device.device_type;
    last_device.device_id = t->device.device_id;
  }
  return pair;
}

/* The handle to export: a view of a borrowed DLTensor cannot be. */
static void* exported_handle(PyObject* self) {
  void* handle = ((FxObject*)self)->handle;
  if (handle == NULL) {
    PyErr_SetString(PyExc_BufferError, "a borrowed DLTensor view cannot be exported");
  }
  return handle;
}

static PyObject* tensor_to_dlpack(PyObject* self, PyObject* unused) {
  void* handle = exported_handle(self);
  (void)unused;
  return handle == NULL ? NULL : fx_export_capsule(handle, 0);
}

static PyObject* tensor_to_dlpack_versioned(PyObject* self, PyObject* unused) {
  void* handle = exported_handle(self);
  (void)unused;
  return handle == NULL ? NULL : fx_export_capsule(handle, 1);
}

/* max_version >= (1, ...) with a dl_device / copy request: the checks TensorMethods makes. */
static int check_versioned_request(PyObject* self, PyObject* dl_device, PyObject* copy) {
  if (dl_device != NULL && dl_device != Py_None) {
    PyObject *given = PySequence_Tuple(dl_device), *ours = NULL;
    int differs = -1;
    if (given != NULL) ours = device_pair(FX_CELL(((FxObject*)self)->handle, DLTensor));
    if (ours != NULL) differs = PyObject_RichCompareBool(given, ours, Py_NE);
    Py_XDECREF(given);
    Py_XDECREF(ours);
    if (differs < 0) return -1;
    if (differs) {
      PyErr_SetString(PyExc_BufferError, "dl_device of different type not supported");
      return -1;
    }
  }
  if (copy != NULL) {
    int wanted = PyObject_IsTrue(copy);
    if (wanted < 0) return -1;
    if (wanted) {
      PyErr_SetString(PyExc_BufferError, "copy not yet supported");
      return -1;
    }
  }
  return 0;
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) */
static PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) {
  static const char* names[4] = {"stream", "max_version", "dl_device", "copy"};
  PyObject* given[4] = {NULL, NULL, NULL, NULL};
  Py_ssize_t i, n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  void* handle;
  PyObject *major, *one;
  int at_least_one;
  if (nargs != 0) {
    return PyErr_Format(PyExc_TypeError,
                        "__dlpack__() takes 1 positional argument but %zd were given", nargs + 1);
  }
  for (i = 0; i < n_kw; ++i) {
    PyObject* keyword = PyTuple_GET_ITEM(kwnames, i);
    int k;
    /* keywords written in source are interned: the same object as ours */
    for (k = 0; k < 4 && keyword != fx_names.dlpack_keywords[k]; ++k) {
    }
    if (k == 4) {
      for (k = 0; k < 4 && PyUnicode_CompareWithASCIIString(keyword, names[k]) != 0; ++k) {
      }
    }
    if (k == 4) {
      return PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument '%U'",
                          keyword);
    }
    given[k] = args[i];
  }
  handle = exported_handle(self);
  if (handle == NULL) return NULL;
  if (given[1] == NULL || given[1] == Py_None) return fx_export_capsule(handle, 0);
  if (PyTuple_CheckExact(given[1]) && PyTuple_GET_SIZE(given[1]) > 0 &&
      PyLong_CheckExact(PyTuple_GET_ITEM(given[1], 0))) { /* the usual (major, minor) */
    int overflow;
    long value = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(given[1], 0), &overflow);
    at_least_one = overflow > 0 || (overflow == 0 && value >= DLPACK_MAJOR_VERSION);
  } else { /* any sequence, compared as Python compares max_version[0] >= 1 */
    major = PySequence_GetItem(given[1], 0);
    one = PyLong_FromLong(DLPACK_MAJOR_VERSION);
    at_least_one = major && one ? PyObject_RichCompareBool(major, one, Py_GE) : -1;
    Py_XDECREF(major);
    Py_XDECREF(one);
  }
  if (PyErr_Occurred()) return NULL;
  if (!at_least_one) return fx_export_capsule(handle, 0); /* a pre-1.0 consumer */
  if (check_versioned_request(self, given[2], given[3]) < 0) return NULL;
  return fx_export_capsule(handle, 1);
}

/* _view_of_dltensor(address): a non-owning Tensor of this class over a borrowed DLTensor*. */
static PyObject* tensor_view_of(PyObject* cls, PyObject* arg) {
  void* address;
  if (fx_address_arg(arg, &address) < 0) return NULL;
  return new_view((PyTypeObject*)cls, (const DLTensor*)address);
}

static PyMethodDef tensor_methods[] = {
    {"numel", tensor_numel, METH_NOARGS, "The number of elements."},
    {"size", tensor_size, METH_O, "The extent of dimension idx (negative counts from the end)."},
    {"is_contiguous", tensor_is_contiguous, METH_NOARGS,
     "Whether the layout is compact row-major (size-1 and empty dims aside)."},
    {"data_ptr", tensor_data_ptr, METH_NOARGS,
     "The address of the first element (data + byte_offset)."},
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "(device_type, device_id) of the data, as DLPack numbers them."},
    {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "The DLPack producer protocol: a capsule sharing this tensor's memory."},
    {"_to_dlpack", tensor_to_dlpack, METH_NOARGS, "A legacy DLPack capsule of this tensor."},
    {"_to_dlpack_versioned", tensor_to_dlpack_versioned, METH_NOARGS,
     "A versioned DLPack capsule of this tensor."},
    {"_view_of_dltensor", tensor_view_of, METH_O | METH_CLASS,
     "A non-owning Tensor over a borrowed DLTensor* (valid while its owner lives)."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot tensor_slots[] = {
    {Py_tp_doc,
     "The base of Tensor: an Object whose DLTensor is read in place (or a view of a\n"
     "borrowed DLTensor*). tensor.TensorMethods states what each accessor means."},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {0, NULL}};

static PyType_Spec tensor_spec = {"tvm_ffi_fast.object.TensorBase", sizeof(FxTensor), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, tensor_slots};

int fx_tensor_type_init(PyObject* module) {
  PyObject* bases = PyTuple_Pack(1, (PyObject*)fx_cobject_type);
  if (bases == NULL) return -1;
  fx_tensor_type = (PyTypeObject*)PyType_FromSpecWithBases(&tensor_spec, bases);
  Py_DECREF(bases);
  if (fx_tensor_type == NULL) return -1;
  Py_INCREF(fx_tensor_type); /* the global keeps one for the process */
  if (PyModule_AddObject(module, "TensorBase", (PyObject*)fx_tensor_type) < 0) return -1;
  return 0;
}
