/*
 * dlpack.c -- DLPack producers (NumPy arrays, ...) passed as Tensor arguments.
 *
 * As tvm_ffi_ref's tensor.from_dlpack: value.__dlpack__() gives a capsule;
 * its managed tensor (versioned first, then legacy) is handed to the runtime
 * (TVMFFITensorFromDLPack[Versioned]), which owns it from then on, so the
 * capsule is renamed "used_..." and loses its destructor. Zero copy.
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

static void* import_capsule(PyObject* capsule) {
  static const struct {
    int versioned;
    const char* name;
    const char* used;
  } forms[2] = {{1, kVersioned, kUsedVersioned}, {0, kLegacy, kUsedLegacy}};
  int i;
  for (i = 0; i < 2; ++i) {
    if (PyCapsule_IsValid(capsule, forms[i].name)) {
      void* managed = PyCapsule_GetPointer(capsule, forms[i].name);
      void* handle = fx_import_managed(managed, forms[i].versioned, 0, 0);
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

void* fx_tensor_from_producer(PyObject* value) {
  PyObject* capsule = PyObject_CallMethodNoArgs(value, fx_names.dlpack);
  void* handle;
  if (capsule == NULL) return NULL;
  handle = import_capsule(capsule);
  Py_DECREF(capsule);
  return handle;
}
