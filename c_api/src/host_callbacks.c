/*
 * host_callbacks.c -- C entry points that stand in front of a runtime written
 * in Python (the reference runtime), whose own callbacks C cannot always call.
 *
 * The object deleter. Every object the reference runtime allocates with
 * something of its own to release names tvm_ffi_runtime_host_deleter as its
 * deleter, which forwards to the Python deleter the runtime registered. At
 * interpreter exit the runtime unregisters it (NULL): from then on a release
 * is DROPPED -- the object's memory and what it owns are left to the process's
 * end. A release can arrive that late from a C++ static destructor, which runs
 * after Python has finalized; calling a ctypes callback then crashes in
 * PyGILState_Ensure, and there is nothing left to run the Python part of the
 * release, nor a later moment to defer it to.
 *
 * Callback Functions (checked_callback.c) follow the same rule: after exit their
 * release is dropped and a call fails with an error instead of entering Python.
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

static HostDeleter host_deleter = NULL;
static TVMFFIRuntimeHostStep host_visit = NULL;
/* 0: no host yet; 1: a host deleter is set; 2: it was set, then cleared (the host exited). */
static int host_state = 0;

void tvm_ffi_runtime_set_host_deleter(HostDeleter deleter) {
  __atomic_store_n(&host_deleter, deleter, __ATOMIC_RELEASE);
  __atomic_store_n(&host_state, deleter != NULL ? 1 : 2, __ATOMIC_RELEASE);
}

int tvm_ffi_runtime_host_exited(void) { return __atomic_load_n(&host_state, __ATOMIC_ACQUIRE) == 2; }

void tvm_ffi_runtime_host_deleter(void* self, int flags) {
  HostDeleter deleter = __atomic_load_n(&host_deleter, __ATOMIC_ACQUIRE);
  if (deleter != NULL) deleter(self, flags);
  /* else: the host has exited; the release is dropped (see the top of this file) */
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
  if (step != NULL) step(visitor, &value, &out);
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
  if (step != NULL) step(mutator, op, value, other, &out);
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
