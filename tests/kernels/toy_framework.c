/*
 * toy_framework.c -- a tensor framework of our own that publishes a DLPack exchange API
 * (dlpack/dlpack.h's DLPackExchangeAPI), for tests/test_dlpack_exchange.py.
 *
 * Loaded with ctypes.PyDLL (the GIL stays held in its calls). Its tensor class is Python
 * (the test's ToyTensor): toy_table() is what ToyTensor.__dlpack_c_exchange_api__ holds.
 *
 * - managed_tensor_from_py_object_no_sync: ToyTensor._export() gives a NumPy DLPack
 *   capsule; its managed tensor is wrapped in one of ours (its deleter counted), and a
 *   ToyTensor whose `device` is a (type, id) pair claims that device instead of the CPU,
 *   so that a CPU-only machine can test what the call does for an accelerator;
 * - managed_tensor_to_py_object_no_sync: the factory toy_init registered makes a
 *   ToyTensor of a "toy_managed" capsule, whose destructor releases the tensor;
 * - current_work_stream: the stream of device (type, id) is 0x1000 + 16 * type + id;
 * - managed_tensor_allocator: malloc'd memory, counted.
 *
 * toy_count(name) reads the counters: "exported", "released", "imported", "streams",
 * "allocated", "freed".
 */
#include <Python.h>
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

static long n_exported, n_released, n_imported, n_streams, n_allocated, n_freed;
static PyObject* factory; /* makes a ToyTensor of a "toy_managed" capsule */

typedef struct {
  DLManagedTensorVersioned outer;
  DLManagedTensorVersioned* inner; /* NumPy's, released with ours */
} ToyExport;

static void release_export(DLManagedTensorVersioned* self) {
  ToyExport* t = (ToyExport*)self;
  if (t->inner->deleter != NULL) t->inner->deleter(t->inner);
  free(t);
  ++n_released;
}

static int from_py(void* py_object, DLManagedTensorVersioned** out) {
  PyObject *capsule = PyObject_CallMethod((PyObject*)py_object, "_export", NULL), *device;
  DLManagedTensorVersioned* inner;
  ToyExport* t;
  if (capsule == NULL) return -1;
  inner = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
  if (inner == NULL) {
    Py_DECREF(capsule);
    return -1;
  }
  PyCapsule_SetDestructor(capsule, NULL);
  PyCapsule_SetName(capsule, "used_dltensor_versioned");
  Py_DECREF(capsule);
  t = (ToyExport*)calloc(1, sizeof(ToyExport));
  t->inner = inner;
  t->outer = *inner;
  t->outer.manager_ctx = t;
  t->outer.deleter = release_export;
  device = PyObject_GetAttrString((PyObject*)py_object, "device");
  if (device != NULL && device != Py_None) {
    t->outer.dl_tensor.device.device_type =
        (DLDeviceType)PyLong_AsLong(PyTuple_GetItem(device, 0));
    t->outer.dl_tensor.device.device_id = (int32_t)PyLong_AsLong(PyTuple_GetItem(device, 1));
  }
  Py_XDECREF(device);
  if (PyErr_Occurred()) {
    release_export(&t->outer);
    return -1;
  }
  ++n_exported;
  *out = &t->outer;
  return 0;
}

static void release_capsule(PyObject* capsule) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "toy_managed");
  if (m != NULL && m->deleter != NULL) m->deleter(m);
}

static int to_py(DLManagedTensorVersioned* tensor, void** out) {
  PyObject *capsule, *made;
  if (factory == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "toy_init was not called");
    return -1;
  }
  capsule = PyCapsule_New(tensor, "toy_managed", release_capsule);
  if (capsule == NULL) return -1;
  made = PyObject_CallOneArg(factory, capsule);
  Py_DECREF(capsule);
  if (made == NULL) return -1;
  ++n_imported;
  *out = made;
  return 0;
}

static int work_stream(DLDeviceType type, int32_t id, void** out) {
  ++n_streams;
  *out = (void*)(intptr_t)(0x1000 + 16 * (int)type + id);
  return 0;
}

static void release_allocated(DLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self);
  ++n_freed;
}

static int allocate(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                    void (*set_error)(void* error_ctx, const char* kind, const char* message)) {
  size_t bytes = (size_t)(prototype->dtype.bits * prototype->dtype.lanes + 7) / 8;
  int i;
  DLManagedTensorVersioned* m;
  if (prototype->ndim > 8) {
    set_error(error_ctx, "ValueError", "the toy framework allocates at most 8 dimensions");
    return -1;
  }
  /* the shape and (NULL) strides live after the struct */
  m = (DLManagedTensorVersioned*)calloc(1, sizeof(DLManagedTensorVersioned) + 8 * sizeof(int64_t));
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->deleter = release_allocated;
  m->dl_tensor = *prototype;
  m->dl_tensor.shape = (int64_t*)(m + 1);
  m->dl_tensor.strides = NULL;
  m->dl_tensor.byte_offset = 0;
  for (i = 0; i < prototype->ndim; ++i) {
    m->dl_tensor.shape[i] = prototype->shape[i];
    bytes *= (size_t)prototype->shape[i];
  }
  m->dl_tensor.data = calloc(1, bytes ? bytes : 1);
  ++n_allocated;
  *out = m;
  return 0;
}

static DLPackExchangeAPI table = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, NULL}, allocate, from_py, to_py, NULL,
    work_stream};

/* The table's address (what ToyTensor.__dlpack_c_exchange_api__ holds). */
void* toy_table(void) { return &table; }

/* Registers the callable that makes a ToyTensor of a "toy_managed" capsule. */
void toy_init(PyObject* make) {
  Py_XINCREF(make);
  Py_XSETREF(factory, make);
}

long toy_count(const char* name) {
  if (strcmp(name, "exported") == 0) return n_exported;
  if (strcmp(name, "released") == 0) return n_released;
  if (strcmp(name, "imported") == 0) return n_imported;
  if (strcmp(name, "streams") == 0) return n_streams;
  if (strcmp(name, "allocated") == 0) return n_allocated;
  if (strcmp(name, "freed") == 0) return n_freed;
  return -1;
}

/* (shape, (code, bits, lanes), (device type, id), data address) of a toy_managed capsule. */
PyObject* toy_describe(PyObject* capsule) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "toy_managed");
  PyObject* shape;
  int i;
  if (m == NULL) return NULL;
  shape = PyTuple_New(m->dl_tensor.ndim);
  for (i = 0; i < m->dl_tensor.ndim; ++i) {
    PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(m->dl_tensor.shape[i]));
  }
  return Py_BuildValue("(N(iii)(ii)K)", shape, (int)m->dl_tensor.dtype.code,
                       (int)m->dl_tensor.dtype.bits, (int)m->dl_tensor.dtype.lanes,
                       (int)m->dl_tensor.device.device_type, (int)m->dl_tensor.device.device_id,
                       (unsigned long long)(uintptr_t)((char*)m->dl_tensor.data +
                                                       m->dl_tensor.byte_offset));
}
