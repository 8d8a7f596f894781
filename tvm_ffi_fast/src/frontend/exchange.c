/*
 * exchange.c -- framework tensors through DLPack 1.3's C exchange API.
 *
 * The rules are tvm_ffi_api/dlpack_exchange.py's (its docstring states them;
 * the reference runs that Python): a type publishing a DLPackExchangeAPI as
 * __dlpack_c_exchange_api__ has its tensors converted by the table's C
 * functions, with no Python-level __dlpack__ call; the call remembers the
 * table and the first non-CPU device with the framework's stream; during the
 * call that stream is current and the table's allocator is the DLPack
 * allocator; Tensor results come back as framework tensors and container
 * results remember the table. The table's functions take PyObject*: they run
 * with the GIL held.
 *
 * The table a type publishes is found once per type: the kind cache
 * (encode.c) keeps it as a capsule, made by convert._choose_setter.
 */
#include "frontend.h"

static const char kCapsuleName[] = "dlpack_exchange_api";

const DLPackExchangeAPI* fx_exchange_choice(PyObject* choice) {
  if (!PyCapsule_CheckExact(choice)) return NULL;
  return (const DLPackExchangeAPI*)PyCapsule_GetPointer(choice, kCapsuleName);
}

/* The capsule read last and its pointer (kept alive here, so the pair stays true). */
static PyObject* last_capsule;
static const DLPackExchangeAPI* last_capsule_api;

int fx_published_table(PyTypeObject* type, const DLPackExchangeAPI** out) {
  PyObject* attribute = _PyType_Lookup(type, fx_names.exchange_attr); /* borrowed, no error */
  *out = NULL;
  if (attribute == NULL) return 0;
  if (attribute == last_capsule) {
    *out = last_capsule_api;
    return 0;
  }
  if (PyLong_Check(attribute)) {
    *out = (const DLPackExchangeAPI*)PyLong_AsVoidPtr(attribute);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
  }
  if (PyCapsule_IsValid(attribute, kCapsuleName)) {
    *out = (const DLPackExchangeAPI*)PyCapsule_GetPointer(attribute, kCapsuleName);
    Py_INCREF(attribute);
    Py_XSETREF(last_capsule, attribute);
    last_capsule_api = *out;
    return 0;
  }
  PyErr_SetString(PyExc_ValueError, "Expect a dlpack_exchange_api field");
  return -1;
}

/* Drops the error a failed runtime call raised: the failure is reported another way. */
static void drop_raised(void) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error != NULL) fx_decref(error);
}

/* The call's device and stream: the first non-CPU tensor's, as the framework reports it. */
static void note_device(FxScope* scope, const DLPackExchangeAPI* api, DLDevice device) {
  void* stream = NULL;
  if (device.device_type == kDLCPU || scope->device_type != -1 || api->current_work_stream == NULL) {
    return;
  }
  if (api->current_work_stream(device.device_type, device.device_id, &stream) == 0) {
    scope->device_type = (int32_t)device.device_type;
    scope->device_id = device.device_id;
    scope->stream = stream;
  } else if (PyErr_Occurred()) {
    PyErr_Clear(); /* no stream to report: the call goes on without one */
  }
}

/* A managed tensor exported by the framework (its own exception, else BufferError). */
static DLManagedTensorVersioned* export_from(const DLPackExchangeAPI* api, PyObject* value) {
  DLManagedTensorVersioned* managed = NULL;
  if (api->managed_tensor_from_py_object_no_sync != NULL &&
      api->managed_tensor_from_py_object_no_sync(value, &managed) == 0 && managed != NULL) {
    return managed;
  }
  if (!PyErr_Occurred()) {
    PyErr_SetString(PyExc_BufferError,
                    "the framework could not export the tensor through its DLPack exchange API");
  }
  return NULL;
}

/* The runtime takes the managed tensor over, or it is released and BufferError raised. */
static void* import_managed(DLManagedTensorVersioned* managed, int32_t require_alignment,
                            int32_t require_contiguous) {
  TVMFFIObjectHandle handle = NULL;
  if (TVMFFITensorFromDLPackVersioned(managed, require_alignment, require_contiguous, &handle) ==
      0) {
    return handle;
  }
  drop_raised();
  if (managed->deleter != NULL) managed->deleter(managed);
  PyErr_SetString(PyExc_BufferError, "Failed to convert DLManagedTensorVersioned to ffi.Tensor");
  return NULL;
}

int fx_encode_framework_tensor(const DLPackExchangeAPI* api, PyObject* value, TVMFFIAny* out,
                               FxScope* scope) {
  DLManagedTensorVersioned* managed;
  void* handle;
  scope->exchange_api = api; /* the last framework tensor's table wins, as upstream's */
  managed = export_from(api, value);
  if (managed == NULL) return -1;
  note_device(scope, api, managed->dl_tensor.device);
  handle = import_managed(managed, 0, 0);
  if (handle == NULL) return -1;
  out->type_index = kTVMFFITensor;
  out->v_ptr = handle;
  return fx_scope_own(scope, handle);
}

void* fx_import_framework_tensor(const DLPackExchangeAPI* api, PyObject* value,
                                 int32_t require_alignment, int32_t require_contiguous) {
  DLManagedTensorVersioned* managed = export_from(api, value);
  return managed == NULL ? NULL : import_managed(managed, require_alignment, require_contiguous);
}

int fx_note_container(FxScope* scope, const DLPackExchangeAPI* api, void* handle) {
  TVMFFIAny arg, found;
  void* func;
  void* stream = NULL;
  if (scope->exchange_api == NULL) scope->exchange_api = api;
  if (scope->device_type != -1 || api->current_work_stream == NULL) return 0;
  func = fx_global(FX_G_CONTAINER_FIND_FIRST_NON_CPU_DEVICE);
  if (func == NULL) return -1;
  fx_any_clear(&arg);
  arg.type_index = fx_header_index(handle);
  arg.v_ptr = handle;
  fx_any_clear(&found);
  if (fx_call_runtime(func, &arg, 1, &found) < 0) return -1;
  if (found.type_index == kTVMFFIDevice && found.v_device.device_type != kDLCPU) {
    /* upstream records the device even when the framework reports no stream */
    scope->device_type = (int32_t)found.v_device.device_type;
    scope->device_id = found.v_device.device_id;
    if (api->current_work_stream(found.v_device.device_type, found.v_device.device_id,
                                 &stream) != 0 && PyErr_Occurred()) {
      PyErr_Clear();
    }
    scope->stream = stream;
  } else if (found.type_index >= kTVMFFIStaticObjectBegin) {
    fx_decref(found.v_ptr);
  }
  return 0;
}

/* ------------------------------------------------------------ results */

/*
 * The framework tensor for an owned Tensor reference (which it then holds), or NULL: with
 * *keep_ours set when ours should be kept instead, else with the exception (strict).
 */
static PyObject* framework_tensor(const DLPackExchangeAPI* api, void* handle, int strict,
                                  int* keep_ours) {
  DLManagedTensorVersioned* managed = NULL;
  void* made = NULL;
  *keep_ours = 1;
  if (api->managed_tensor_to_py_object_no_sync == NULL) return NULL;
  if (TVMFFITensorToDLPackVersioned(handle, &managed) != 0) {
    drop_raised();
    return NULL;
  }
  if (api->managed_tensor_to_py_object_no_sync(managed, &made) != 0 || made == NULL) {
    if (managed->deleter != NULL) managed->deleter(managed);
    if (!strict) {
      PyErr_Clear(); /* upstream keeps its own Tensor */
      return NULL;
    }
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_BufferError,
                      "the framework could not import the tensor through its DLPack exchange API");
    }
    *keep_ours = 0;
    fx_decref(handle);
    return NULL;
  }
  *keep_ours = 0;
  fx_decref(handle); /* the framework tensor holds a reference of its own */
  return (PyObject*)made;
}

static int is_container_index(int32_t index) {
  return index == kTVMFFIArray || index == kTVMFFIList || index == kTVMFFIMap ||
         index == kTVMFFIDict;
}

PyObject* fx_decode_owned_api(TVMFFIAny* value, const DLPackExchangeAPI* api, int strict) {
  int32_t index = value->type_index;
  if (api != NULL && index == kTVMFFITensor) {
    int keep_ours;
    PyObject* tensor = framework_tensor(api, value->v_ptr, strict, &keep_ours);
    if (!keep_ours) return tensor;
  } else if (api != NULL && is_container_index(index)) {
    PyObject* container = fx_wrap_owned(value->v_ptr, index);
    if (container != NULL && PyObject_TypeCheck(container, fx_cobject_type)) {
      ((FxObject*)container)->exchange_api = api;
    }
    return container;
  }
  return fx_decode_owned(value);
}

PyObject* fx_decode_borrowed_api(const TVMFFIAny* value, const DLPackExchangeAPI* api,
                                 int strict) {
  if (api != NULL && value->type_index >= kTVMFFIStaticObjectBegin) {
    TVMFFIAny owned = *value;
    fx_incref(owned.v_ptr);
    return fx_decode_owned_api(&owned, api, strict);
  }
  return fx_decode_borrowed(value);
}

/* ------------------------------------------------------------ around the call */

int fx_environment_enter(FxEnvironment* env, const FxScope* scope) {
  env->stream_set = env->allocator_set = 0;
  env->previous_stream = NULL;
  env->previous_allocator = NULL;
  env->allocator = scope->exchange_api ? scope->exchange_api->managed_tensor_allocator : NULL;
  if (scope->device_type != -1) {
    if (TVMFFIEnvSetStream(scope->device_type, scope->device_id, scope->stream,
                           &env->previous_stream) != 0) {
      return -1;
    }
    env->stream_set = 1;
  }
  if (env->allocator != NULL) {
    if (TVMFFIEnvSetDLPackManagedTensorAllocator(env->allocator, 0, &env->previous_allocator) !=
        0) {
      return -1;
    }
    env->allocator_set = 1;
  }
  return 0;
}

int fx_environment_leave(FxEnvironment* env, const FxScope* scope) {
  if (env->stream_set && env->previous_stream != scope->stream &&
      TVMFFIEnvSetStream(scope->device_type, scope->device_id, env->previous_stream, NULL) != 0) {
    drop_raised();
    PyErr_SetString(PyExc_RuntimeError, "Failed to recover stream");
    return -1;
  }
  if (env->allocator_set && env->previous_allocator != env->allocator &&
      TVMFFIEnvSetDLPackManagedTensorAllocator(env->previous_allocator, 0, NULL) != 0) {
    drop_raised();
    PyErr_SetString(PyExc_RuntimeError, "Failed to recover DLPack managed tensor allocator");
    return -1;
  }
  return 0;
}
