/*
 * host_callbacks.c -- C entry points that stand in front of a runtime written
 * in Python (the reference runtime), whose own callbacks C cannot always call.
 *
 * THE EXIT GATE. Every way C code reaches the host's Python goes through this
 * file (or asks it: checked_callback.c) and passes one gate, host_open():
 *
 *   - the object deleter: objects with something of the host's to release name
 *     tvm_ffi_runtime_host_deleter as their deleter;
 *   - DLPack exports: the managed tensors the host hands out name
 *     tvm_ffi_runtime_host_dlpack_deleter (or _versioned_deleter);
 *   - the structural visitor's and mutator's vtable entries (below);
 *   - callback Functions (checked_callback.c, through tvm_ffi_runtime_host_exited).
 *
 * The host calls tvm_ffi_runtime_host_exit() once, when its interpreter starts
 * to finalize (the reference: its atexit hook, before the interpreter's last
 * garbage collection). From then on the gate is shut for good: a release is
 * DROPPED (nothing is called, nothing freed: the object or managed tensor and
 * what it owns are left to the process's end), a traversal step returns None,
 * a callback call fails with an error. Never deferred: no Python code runs
 * again to take a deferred release. Such releases come from C++ static
 * destructors, which run after Python has finalized (calling a ctypes callback
 * then crashes in PyGILState_Ensure), and from the last garbage collection,
 * which frees a framework's tensors in a half torn-down interpreter. A release
 * racing the exit on another thread may still enter Python while it
 * finalizes, as any C thread calling into a finalizing interpreter does.
 *
 * The structural visitor's vtable. A C++ __s_visit__ hook registered as a
 * native function pointer descends through the visitor's vtable (offset 24 of
 * the visitor object), whose entry returns a 16-byte TVMFFIAny; ctypes
 * callbacks cannot return structures. tvm_ffi_runtime_host_visitor_vtable
 * hands out a vtable whose entry calls the registered host step with an out
 * pointer instead; tvm_ffi_runtime_host_mutator_vtable does the same for the
 * structural mutator's four entries.
 */
#include <stddef.h>
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_runtime.h>

typedef void (*HostDeleter)(void* self, int flags);
typedef void (*HostDLPackDeleter)(void* managed, int versioned);

static HostDeleter host_deleter = NULL;
static HostDLPackDeleter host_dlpack_deleter = NULL;
static TVMFFIRuntimeHostStep host_visit = NULL;
/* 0: the host runs; 1: it is finalizing (tvm_ffi_runtime_host_exit), for good. */
static int host_exiting = 0;

static int host_open(void) { return !__atomic_load_n(&host_exiting, __ATOMIC_ACQUIRE); }

void tvm_ffi_runtime_host_exit(void) { __atomic_store_n(&host_exiting, 1, __ATOMIC_RELEASE); }

int tvm_ffi_runtime_host_exited(void) { return !host_open(); }

void tvm_ffi_runtime_set_host_deleter(HostDeleter deleter) {
  __atomic_store_n(&host_deleter, deleter, __ATOMIC_RELEASE);
}

void tvm_ffi_runtime_host_deleter(void* self, int flags) {
  HostDeleter deleter = __atomic_load_n(&host_deleter, __ATOMIC_ACQUIRE);
  if (deleter != NULL && host_open()) deleter(self, flags);
  /* else: the host is finalizing; the release is dropped (the gate, top of this file) */
}

void tvm_ffi_runtime_set_host_dlpack_deleter(HostDLPackDeleter deleter) {
  __atomic_store_n(&host_dlpack_deleter, deleter, __ATOMIC_RELEASE);
}

static void host_dlpack_release(void* managed, int versioned) {
  HostDLPackDeleter deleter = __atomic_load_n(&host_dlpack_deleter, __ATOMIC_ACQUIRE);
  if (deleter != NULL && host_open()) deleter(managed, versioned);
}

void tvm_ffi_runtime_host_dlpack_deleter(void* managed) { host_dlpack_release(managed, 0); }

void tvm_ffi_runtime_host_dlpack_versioned_deleter(void* managed) {
  host_dlpack_release(managed, 1);
}

typedef struct {
  TVMFFIAny (*visit)(void* visitor, TVMFFIAny value);
} HostVisitorVTable;

static TVMFFIAny host_visitor_visit(void* visitor, TVMFFIAny value) {
  TVMFFIRuntimeHostStep step = __atomic_load_n(&host_visit, __ATOMIC_ACQUIRE);
  TVMFFIAny out;
  out.type_index = kTVMFFINone;
  out.zero_padding = 0;
  out.v_int64 = 0;
  if (step != NULL && host_open()) step(visitor, &value, &out);
  return out;
}

static const HostVisitorVTable host_visitor_vtable = {host_visitor_visit};

const void* tvm_ffi_runtime_host_visitor_vtable(TVMFFIRuntimeHostStep visit) {
  __atomic_store_n(&host_visit, visit, __ATOMIC_RELEASE);
  return &host_visitor_vtable;
}

/* The mutator's vtable: mutate, maybe_inplace_mutate, var_remap_get, var_remap_set. */
static TVMFFIRuntimeHostMutatorStep host_mutate = NULL;

typedef struct {
  TVMFFIAny (*mutate)(void* mutator, TVMFFIAny value);
  TVMFFIAny (*maybe_inplace_mutate)(void* mutator, TVMFFIAny value);
  TVMFFIAny (*var_remap_get)(void* mutator, TVMFFIAny var);
  TVMFFIAny (*var_remap_set)(void* mutator, TVMFFIAny var, TVMFFIAny mapped_value);
} HostMutatorVTable;

static TVMFFIAny host_mutator_step(int32_t op, void* mutator, const TVMFFIAny* value,
                                   const TVMFFIAny* other) {
  TVMFFIRuntimeHostMutatorStep step = __atomic_load_n(&host_mutate, __ATOMIC_ACQUIRE);
  TVMFFIAny out;
  out.type_index = kTVMFFINone;
  out.zero_padding = 0;
  out.v_int64 = 0;
  if (step != NULL && host_open()) step(mutator, op, value, other, &out);
  return out;
}

static TVMFFIAny host_mutator_mutate(void* mutator, TVMFFIAny value) {
  return host_mutator_step(0, mutator, &value, NULL);
}

static TVMFFIAny host_mutator_maybe_inplace(void* mutator, TVMFFIAny value) {
  return host_mutator_step(1, mutator, &value, NULL);
}

static TVMFFIAny host_mutator_remap_get(void* mutator, TVMFFIAny var) {
  return host_mutator_step(2, mutator, &var, NULL);
}

static TVMFFIAny host_mutator_remap_set(void* mutator, TVMFFIAny var, TVMFFIAny mapped_value) {
  return host_mutator_step(3, mutator, &var, &mapped_value);
}

static const HostMutatorVTable host_mutator_vtable = {
    host_mutator_mutate, host_mutator_maybe_inplace, host_mutator_remap_get,
    host_mutator_remap_set};

const void* tvm_ffi_runtime_host_mutator_vtable(TVMFFIRuntimeHostMutatorStep step) {
  __atomic_store_n(&host_mutate, step, __ATOMIC_RELEASE);
  return &host_mutator_vtable;
}
