/*
 * dlpack.c -- Tensors and DLPack: capsules in and out, and the fields of a DLTensor.
 *
 * In (from_dlpack, a NumPy array passed as an argument): tvm_ffi_api/dlpack.py's
 * rules, a framework's DLPack exchange table first (exchange.c), else the
 * capsule value.__dlpack__() gives; its managed tensor is handed to the
 * runtime (TVMFFITensorFromDLPack[Versioned]), which owns it from then on, so
 * the capsule is renamed "used_..." and loses its destructor. Out (__dlpack__):
 * TVMFFITensorToDLPack[Versioned] into a capsule whose destructor releases
 * the managed tensor unless a consumer took it. Zero copy both ways.
 *
 * tensor.TensorMethods._fields reads one snapshot of a DLTensor's fields
 * (shortcuts.dltensor), made here; the fast Tensor's own accessors are C
 * (tensortype.c).
 */
#include "frontend.h"

/* Capsule names are compared as C strings for the capsule's whole life: static. */
static const char kVersioned[] = "dltensor_versioned";
static const char kUsedVersioned[] = "used_dltensor_versioned";
static const char kLegacy[] = "dltensor";
static const char kUsedLegacy[] = "used_dltensor";

void* fx_import_managed(void* managed, int versioned, int32_t require_alignment,
                        int32_t require_contiguous) {
  TVMFFIObjectHandle out = NULL;
  int status =
      versioned ? TVMFFITensorFromDLPackVersioned((DLManagedTensorVersioned*)managed,
                                                  require_alignment, require_contiguous, &out)
                : TVMFFITensorFromDLPack((DLManagedTensor*)managed, require_alignment,
                                         require_contiguous, &out);
  if (status != 0) return fx_raise_last_error(), NULL;
  return out;
}

void* fx_import_capsule(PyObject* capsule, int32_t require_alignment,
                        int32_t require_contiguous) {
  static const struct {
    int versioned;
    const char* name;
    const char* used;
  } forms[2] = {{1, kVersioned, kUsedVersioned}, {0, kLegacy, kUsedLegacy}};
  int i;
  for (i = 0; i < 2; ++i) {
    if (PyCapsule_IsValid(capsule, forms[i].name)) {
      void* managed = PyCapsule_GetPointer(capsule, forms[i].name);
      void* handle = fx_import_managed(managed, forms[i].versioned, require_alignment,
                                         require_contiguous);
      if (handle == NULL) return NULL;
      /* the runtime owns the managed tensor now: the capsule must not release it
       * (neither call can fail on the valid capsule just read) */
      (void)PyCapsule_SetDestructor(capsule, NULL);
      (void)PyCapsule_SetName(capsule, forms[i].used);
      return handle;
    }
  }
  PyErr_SetString(PyExc_ValueError, "Expect a dltensor field, PyCapsule can only be consumed once");
  return NULL;
}

/* 1: the capsule was of that form and is imported into *out; 0: it was not; -1: error. */
static int import_named(PyObject* capsule, int versioned, int32_t require_alignment,
                        int32_t require_contiguous, void** out) {
  const char* name = versioned ? kVersioned : kLegacy;
  void* managed;
  if (!PyCapsule_IsValid(capsule, name)) return 0;
  managed = PyCapsule_GetPointer(capsule, name);
  *out = fx_import_managed(managed, versioned, require_alignment, require_contiguous);
  if (*out == NULL) return -1;
  (void)PyCapsule_SetDestructor(capsule, NULL);
  (void)PyCapsule_SetName(capsule, versioned ? kUsedVersioned : kUsedLegacy);
  return 1;
}

/*
 * from_dlpack's rules (tvm_ffi_api/dlpack.py states them): a published exchange table
 * first (a BufferError on that path falls through), then value.__dlpack__() imported as
 * the legacy capsule it gives, then a capsule of either form.
 */
void* fx_tensor_from_dlpack(PyObject* value, int32_t require_alignment,
                            int32_t require_contiguous) {
  const DLPackExchangeAPI* api;
  void* handle = NULL;
  PyObject* capsule;
  int found, is_producer;
  if (fx_published_table(Py_TYPE(value), &api) < 0) return NULL;
  if (api != NULL) {
    handle = fx_import_framework_tensor(api, value, require_alignment, require_contiguous);
    if (handle != NULL) return handle;
    if (!PyErr_ExceptionMatches(PyExc_BufferError)) return NULL;
    PyErr_Clear(); /* the Python protocol may still work */
  }
  /* hasattr(value, "__dlpack__"): asked of the class first, so that the usual producer is
   * called with no bound method made; a capsule has none */
  if (PyCapsule_CheckExact(value)) {
    is_producer = 0;
  } else if (_PyType_Lookup(Py_TYPE(value), fx_names.dlpack) != NULL) {
    is_producer = 1;
  } else if ((is_producer = fx_has_attr(value, fx_names.dlpack)) < 0) {
    return NULL;
  }
  if (is_producer) {
    capsule = PyObject_CallMethodNoArgs(value, fx_names.dlpack);
    if (capsule == NULL) return NULL;
    found = import_named(capsule, 0, require_alignment, require_contiguous, &handle);
    Py_DECREF(capsule);
    if (found == 0) {
      PyErr_SetString(PyExc_ValueError,
                      "Expect a dltensor field, PyCapsule can only be consumed once");
    }
    return found == 1 ? handle : NULL;
  }
  found = import_named(value, 1, require_alignment, require_contiguous, &handle);
  if (found == 0) found = import_named(value, 0, require_alignment, require_contiguous, &handle);
  if (found == 0) {
    PyErr_SetString(PyExc_TypeError,
                    "Expect from_dlpack to take either a compatible tensor or PyCapsule");
  }
  return found == 1 ? handle : NULL;
}

PyObject* fx_py_from_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                            PyObject* kwnames) {
  Py_ssize_t i, n_kw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  long alignment = 0;
  int contiguous = 0;
  void* handle;
  (void)self;
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "from_dlpack() takes 1 positional argument but %zd were given",
                 nargs);
    return NULL;
  }
  for (i = 0; i < n_kw; ++i) {
    PyObject *keyword = PyTuple_GET_ITEM(kwnames, i), *given = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(keyword, "require_alignment") == 0) {
      alignment = PyLong_AsLong(given);
      if (alignment == -1 && PyErr_Occurred()) return NULL;
    } else if (PyUnicode_CompareWithASCIIString(keyword, "require_contiguous") == 0) {
      contiguous = PyObject_IsTrue(given);
      if (contiguous < 0) return NULL;
    } else {
      PyErr_Format(PyExc_TypeError, "from_dlpack() got an unexpected keyword argument '%U'",
                   keyword);
      return NULL;
    }
  }
  handle = fx_tensor_from_dlpack(args[0], (int32_t)alignment, contiguous);
  return handle == NULL ? NULL : fx_wrap_owned(handle, kTVMFFITensor);
}

/* ------------------------------------------------------------ out */

/* An unconsumed capsule still owns its managed tensor: release it. */
static void release_legacy(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kLegacy)) {
    DLManagedTensor* managed = (DLManagedTensor*)PyCapsule_GetPointer(capsule, kLegacy);
    if (managed->deleter != NULL) managed->deleter(managed);
  }
}

static void release_versioned(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kVersioned)) {
    DLManagedTensorVersioned* managed =
        (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, kVersioned);
    if (managed->deleter != NULL) managed->deleter(managed);
  }
}

PyObject* fx_export_capsule(void* handle, int versioned) {
  PyObject* capsule;
  if (versioned) {
    DLManagedTensorVersioned* managed = NULL;
    if (TVMFFITensorToDLPackVersioned(handle, &managed) != 0) return fx_raise_last_error();
    capsule = PyCapsule_New(managed, kVersioned, release_versioned);
    if (capsule == NULL && managed->deleter != NULL) managed->deleter(managed);
  } else {
    DLManagedTensor* managed = NULL;
    if (TVMFFITensorToDLPack(handle, &managed) != 0) return fx_raise_last_error();
    capsule = PyCapsule_New(managed, kLegacy, release_legacy);
    if (capsule == NULL && managed->deleter != NULL) managed->deleter(managed);
  }
  return capsule;
}

/* ------------------------------------------------------------ DLTensor fields */

static PyTypeObject* fields_type;

static PyStructSequence_Field field_names[] = {
    {"data", "the data pointer (0 for NULL)"},
    {"device_type", "DLDevice.device_type"},
    {"device_id", "DLDevice.device_id"},
    {"ndim", "the number of dimensions"},
    {"dtype", "(code, bits, lanes)"},
    {"shape", "the extents"},
    {"strides", "the strides, or None when the DLTensor stores none (compact)"},
    {"byte_offset", "the offset of the first element from data, in bytes"},
    {NULL, NULL}};

static PyStructSequence_Desc fields_desc = {
    "tvm_ffi_fast.shortcuts.DLTensorFields", "A snapshot of the DLTensor fields a Tensor reports.",
    field_names, 8};

PyObject* fx_int64_tuple(const int64_t* values, int n) {
  PyObject* tuple = PyTuple_New(n);
  int i;
  if (tuple == NULL) return NULL;
  for (i = 0; i < n; ++i) {
    PyObject* item = PyLong_FromLongLong(values[i]);
    if (item == NULL) {
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, item);
  }
  return tuple;
}

PyObject* fx_dltensor_fields(const DLTensor* t) {
  PyObject* fields = PyStructSequence_New(fields_type);
  PyObject* items[8];
  int i, ndim = t->ndim < 0 ? 0 : t->ndim;
  if (fields == NULL) return NULL;
  items[0] = PyLong_FromVoidPtr(t->data);
  items[1] = PyLong_FromLong((long)(int32_t)t->device.device_type); /* int32, as decode.c */
  items[2] = PyLong_FromLong((long)t->device.device_id);
  items[3] = PyLong_FromLong((long)t->ndim);
  items[4] = Py_BuildValue("(iii)", (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes);
  items[5] = fx_int64_tuple(t->shape, ndim);
  items[6] = t->strides == NULL ? (Py_INCREF(Py_None), Py_None) : fx_int64_tuple(t->strides, ndim);
  items[7] = PyLong_FromUnsignedLongLong(t->byte_offset);
  for (i = 0; i < 8; ++i) {
    if (items[i] == NULL) {
      for (i = 0; i < 8; ++i) Py_XDECREF(items[i]);
      Py_DECREF(fields);
      return NULL;
    }
  }
  for (i = 0; i < 8; ++i) PyStructSequence_SET_ITEM(fields, i, items[i]);
  return fields;
}

int fx_dlpack_init(PyObject* module) {
  fields_type = PyStructSequence_NewType(&fields_desc);
  if (fields_type == NULL) return -1;
  Py_INCREF(fields_type);
  if (PyModule_AddObject(module, "DLTensorFields", (PyObject*)fields_type) < 0) {
    Py_DECREF(fields_type);
    return -1;
  }
  return 0;
}
