/*
 * env.c -- the environment API: a stream per (device type, device id) per
 * thread, the DLPack tensor allocator (per thread, falling back to a global
 * one), and signal checks through a host-registered PyErr_CheckSignals.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/env.py.
 */
#include "core.h"

#include "runtime.h"

/* ------------------------------------------------------------- streams */

typedef struct {
  TVMFFIStreamHandle* ids; /* streams by device id */
  size_t count;
} FrDeviceStreams;

static __thread FrDeviceStreams* t_streams = NULL; /* by device type */
static __thread size_t t_stream_types = 0;

/* Frees a thread's stream table when the thread exits. */
static pthread_key_t g_stream_key;
static pthread_once_t g_stream_key_once = PTHREAD_ONCE_INIT;

static void free_streams(void* table) {
  FrDeviceStreams* rows = (FrDeviceStreams*)table;
  size_t i;
  for (i = 0; i < t_stream_types; ++i) free(rows[i].ids);
  free(rows);
  t_streams = NULL;
  t_stream_types = 0;
}

static void make_stream_key(void) { pthread_key_create(&g_stream_key, free_streams); }

int fr_env_set_stream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                      TVMFFIStreamHandle* opt_out_original_stream) {
  FrDeviceStreams* row;
  if (device_type < 0 || device_id < 0) {
    /* upstream indexes its table with them (undefined behaviour); both runtimes refuse */
    return fr_raise("ValueError",
                    "TVMFFIEnvSetStream: device_type and device_id must be non-negative, "
                    "got (%d, %d)",
                    (int)device_type, (int)device_id);
  }
  if ((size_t)device_type >= t_stream_types) {
    size_t n = (size_t)device_type + 1;
    FrDeviceStreams* grown = (FrDeviceStreams*)realloc(t_streams, n * sizeof(FrDeviceStreams));
    if (grown == NULL) return fr_raise_oom();
    memset(grown + t_stream_types, 0, (n - t_stream_types) * sizeof(FrDeviceStreams));
    t_streams = grown;
    t_stream_types = n;
    pthread_once(&g_stream_key_once, make_stream_key);
    pthread_setspecific(g_stream_key, grown);
  }
  row = &t_streams[device_type];
  if ((size_t)device_id >= row->count) {
    size_t n = (size_t)device_id + 1;
    TVMFFIStreamHandle* grown =
        (TVMFFIStreamHandle*)realloc(row->ids, n * sizeof(TVMFFIStreamHandle));
    if (grown == NULL) return fr_raise_oom();
    memset(grown + row->count, 0, (n - row->count) * sizeof(TVMFFIStreamHandle));
    row->ids = grown;
    row->count = n;
  }
  if (opt_out_original_stream != NULL) *opt_out_original_stream = row->ids[device_id];
  row->ids[device_id] = stream;
  return 0;
}

TVMFFIStreamHandle fr_env_get_stream(int32_t device_type, int32_t device_id) {
  if (device_type < 0 || device_id < 0 || (size_t)device_type >= t_stream_types) return NULL;
  if ((size_t)device_id >= t_streams[device_type].count) return NULL;
  return t_streams[device_type].ids[device_id];
}

/* ------------------------------------------------------ DLPack allocator */

static __thread DLPackManagedTensorAllocator t_allocator = NULL;
static DLPackManagedTensorAllocator g_allocator = NULL;

int fr_env_set_dlpack_allocator(DLPackManagedTensorAllocator allocator,
                                int write_to_global_context,
                                DLPackManagedTensorAllocator* opt_out_original) {
  if (opt_out_original != NULL) *opt_out_original = t_allocator;
  if (write_to_global_context != 0) __atomic_store_n(&g_allocator, allocator, __ATOMIC_RELEASE);
  t_allocator = allocator;
  return 0;
}

DLPackManagedTensorAllocator fr_env_get_dlpack_allocator(void) {
  if (t_allocator != NULL) return t_allocator;
  return __atomic_load_n(&g_allocator, __ATOMIC_ACQUIRE);
}

/* --------------------------------------------------------- host C API */

static int (*g_check_signals)(void) = NULL;
static void* (*g_gil_ensure)(void) = NULL;
static void (*g_gil_release)(void*) = NULL;

int fr_env_register_capi(const char* name, void* symbol) {
  if (name == NULL) return fr_raise("ValueError", "TVMFFIEnvRegisterCAPI: name must not be NULL");
  if (strcmp(name, "PyErr_CheckSignals") == 0) {
    g_check_signals = (int (*)(void))symbol;
  } else if (strcmp(name, "PyGILState_Ensure") == 0) {
    g_gil_ensure = (void* (*)(void))symbol;
  } else if (strcmp(name, "PyGILState_Release") == 0) {
    g_gil_release = (void (*)(void*))symbol;
  } else {
    return fr_raise("ValueError", "Unknown env API %s", name);
  }
  return 0;
}

int fr_env_check_signals(void) {
  void* gil;
  int status;
  if (g_check_signals == NULL) return 0;
  if (g_gil_ensure == NULL || g_gil_release == NULL) {
    /* upstream aborts here; report the missing registration instead */
    return fr_raise("InternalError",
                    "TVMFFIEnvCheckSignals: PyErr_CheckSignals is registered but "
                    "PyGILState_Ensure/PyGILState_Release are not");
  }
  gil = g_gil_ensure();
  status = g_check_signals();
  if (gil != NULL) g_gil_release(gil);
  return status != 0 ? -1 : 0;
}
