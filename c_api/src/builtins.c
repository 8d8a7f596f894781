/*
 * builtins.c -- what libtvm_ffi.so can do with no runtime installed.
 *
 * Everything here follows from the ABI alone: the reference-count protocol of
 * the object header, the raised-error slot and an Error object layout, the
 * custom-allocator slot, one-time handle initialisation. Functions that need
 * a type registry, a global function table or containers fail cleanly instead.
 */
#include "builtins.h"
#include "native_frames.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRONG_ONE ((uint64_t)1)
#define WEAK_ONE ((uint64_t)1 << 32)
#define STRONG_MASK (WEAK_ONE - 1)

/* ------------------------------------------------------ reference counts */

static int builtin_inc_ref(TVMFFIObjectHandle handle) {
  TVMFFIObject* obj = (TVMFFIObject*)handle;
  __atomic_fetch_add(&obj->combined_ref_count, STRONG_ONE, __ATOMIC_RELAXED);
  return 0;
}

/*
 * The release protocol every implementation shares, since C++ kernels inline
 * it: the last strong reference destroys the value; if no weak reference is
 * outstanding it frees the memory in the same deleter call, otherwise the
 * collective weak reference the strong ones held is dropped separately
 * (release.c, which also keeps nested releases off the C stack).
 */
static int builtin_dec_ref(TVMFFIObjectHandle handle) {
  TVMFFIObject* obj = (TVMFFIObject*)handle;
  uint64_t before;
  if (obj == NULL) return 0; /* upstream's DecRefObjectHandle ignores NULL */
  before = __atomic_fetch_sub(&obj->combined_ref_count, STRONG_ONE, __ATOMIC_RELEASE);
  if ((before & STRONG_MASK) == STRONG_ONE) tvm_ffi_runtime_strong_count_ended(obj, before);
  return 0;
}

/* ----------------------------------------------------------- error objects */

/* The built-in Error: header, the ABI cell, then storage the cell points into. */
typedef struct {
  TVMFFIObject header;
  TVMFFIErrorCell cell;
  char* backtrace_storage; /* separately allocated so it can be replaced */
  size_t backtrace_capacity; /* bytes it has room for, NUL excluded (appends amortized) */
  char text[];             /* kind NUL message NUL */
} BuiltinError;

static char* copy_bytes(const char* data, size_t size) {
  char* out = (char*)malloc(size + 1);
  if (out == NULL) return NULL;
  if (size != 0) memcpy(out, data, size);
  out[size] = '\0';
  return out;
}

/*
 * Appending grows the storage geometrically: an error crossing N nested callbacks gets a
 * few frames appended at each, and copying the whole text every time would be O(N^2).
 */
static void builtin_error_update_backtrace(TVMFFIObjectHandle self,
                                           const TVMFFIByteArray* backtrace,
                                           int32_t update_mode) {
  BuiltinError* err = (BuiltinError*)self;
  size_t keep = update_mode == kTVMFFIBacktraceUpdateModeAppend ? err->cell.backtrace.size : 0;
  size_t size = keep + backtrace->size;
  char* storage = err->backtrace_storage;
  if (keep == 0 || size > err->backtrace_capacity) {
    size_t capacity = keep == 0 ? size : size * 2;
    storage = (char*)malloc(capacity + 1);
    if (storage == NULL) return; /* keep the old backtrace rather than lose the error */
    if (keep != 0) memcpy(storage, err->cell.backtrace.data, keep);
    free(err->backtrace_storage);
    err->backtrace_storage = storage;
    err->backtrace_capacity = capacity;
  }
  if (backtrace->size != 0) memcpy(storage + keep, backtrace->data, backtrace->size);
  storage[size] = '\0';
  err->cell.backtrace.data = storage;
  err->cell.backtrace.size = size;
}

static void builtin_error_deleter(void* self, int flags) {
  BuiltinError* err = (BuiltinError*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (err->cell.cause_chain != NULL) builtin_dec_ref(err->cell.cause_chain);
    if (err->cell.extra_context != NULL) builtin_dec_ref(err->cell.extra_context);
    free(err->backtrace_storage);
    err->backtrace_storage = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(err);
}

static const TVMFFIByteArray kEmptyBytes = {"", 0};

static int builtin_error_create_with_cause(const TVMFFIByteArray* kind,
                                           const TVMFFIByteArray* message,
                                           const TVMFFIByteArray* backtrace,
                                           TVMFFIObjectHandle cause_chain,
                                           TVMFFIObjectHandle extra_context,
                                           TVMFFIObjectHandle* out) {
  BuiltinError* err;
  if (out == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIErrorCreateWithCauseAndExtraContext: out "
                                               "must not be NULL");
    return -1;
  }
  if (kind == NULL) kind = &kEmptyBytes;
  if (message == NULL) message = &kEmptyBytes;
  if (backtrace == NULL) backtrace = &kEmptyBytes;
  err = (BuiltinError*)malloc(sizeof(BuiltinError) + kind->size + message->size + 2);
  if (err == NULL) return -1;
  err->backtrace_storage = copy_bytes(backtrace->data, backtrace->size);
  if (err->backtrace_storage == NULL) {
    free(err);
    return -1;
  }
  err->backtrace_capacity = backtrace->size;
  err->header.combined_ref_count = STRONG_ONE | WEAK_ONE;
  err->header.type_index = kTVMFFIError;
  err->header.__padding = 0;
  err->header.deleter = builtin_error_deleter;
  memcpy(err->text, kind->data, kind->size);
  err->text[kind->size] = '\0';
  memcpy(err->text + kind->size + 1, message->data, message->size);
  err->text[kind->size + 1 + message->size] = '\0';
  err->cell.kind.data = err->text;
  err->cell.kind.size = kind->size;
  err->cell.message.data = err->text + kind->size + 1;
  err->cell.message.size = message->size;
  err->cell.backtrace.data = err->backtrace_storage;
  err->cell.backtrace.size = backtrace->size;
  err->cell.update_backtrace = builtin_error_update_backtrace;
  err->cell.cause_chain = cause_chain;
  err->cell.extra_context = extra_context;
  if (cause_chain != NULL) builtin_inc_ref(cause_chain);
  if (extra_context != NULL) builtin_inc_ref(extra_context);
  *out = err;
  return 0;
}

static int builtin_error_create(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                                const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out) {
  if (out == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIErrorCreate: out must not be NULL");
    return -1;
  }
  return builtin_error_create_with_cause(kind, message, backtrace, NULL, NULL, out);
}

/* --------------------------------------------------------- raised error slot */

/* One owned reference per thread; leaked if a thread exits with an unread error. */
static __thread TVMFFIObjectHandle raised_error = NULL;

static void builtin_error_set_raised(TVMFFIObjectHandle error) {
  TVMFFIObjectHandle previous = raised_error;
  if (error != NULL) builtin_inc_ref(error);
  raised_error = error;
  if (previous != NULL) builtin_dec_ref(previous);
}

static void builtin_error_move_from_raised(TVMFFIObjectHandle* result) {
  *result = raised_error;
  raised_error = NULL;
}

static void raise_owned(TVMFFIObjectHandle error) {
  TVMFFIObjectHandle previous = raised_error;
  raised_error = error;
  if (previous != NULL) builtin_dec_ref(previous);
}

static void builtin_error_set_raised_from_cstr_parts(const char* kind, const char** parts,
                                                     int32_t num_parts) {
  size_t total = 0;
  int32_t i;
  char* message;
  TVMFFIByteArray kind_bytes, message_bytes;
  TVMFFIObjectHandle error = NULL;
  for (i = 0; i < num_parts; ++i) {
    if (parts[i] != NULL) total += strlen(parts[i]);
  }
  message = (char*)malloc(total + 1);
  if (message == NULL) return;
  total = 0;
  for (i = 0; i < num_parts; ++i) {
    if (parts[i] != NULL) {
      size_t n = strlen(parts[i]);
      memcpy(message + total, parts[i], n);
      total += n;
    }
  }
  message[total] = '\0';
  kind_bytes.data = kind != NULL ? kind : "RuntimeError";
  kind_bytes.size = strlen(kind_bytes.data);
  message_bytes.data = message;
  message_bytes.size = total;
  if (builtin_error_create(&kind_bytes, &message_bytes, NULL, &error) == 0) raise_owned(error);
  free(message);
}

static void builtin_error_set_raised_from_cstr(const char* kind, const char* message) {
  builtin_error_set_raised_from_cstr_parts(kind, &message, 1);
}

/* ----------------------------------------------------------- functions */

/*
 * A Function made from a C callback: the cell, then what the callback needs.
 * Callers pass the function object itself as handle, so with a self or a
 * deleter the cell holds a trampoline that calls the callback with self.
 * Without either, the callback goes into the cell directly (and receives the
 * object as handle), exactly as upstream does.
 */
typedef struct {
  TVMFFIObject header;
  TVMFFIFunctionCell cell;
  void* self;
  TVMFFISafeCallType target;
  void (*release)(void* self);
} BuiltinFunction;

/* Upstream accepts a NULL safe_call at creation and crashes when it is called. */
static int raise_no_safe_call(void) {
  TVMFFIErrorSetRaisedFromCStr("ValueError",
                               "TVMFFIFunctionCall: the function was created with a NULL safe_call");
  return -1;
}

static int builtin_function_trampoline(void* handle, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  BuiltinFunction* func = (BuiltinFunction*)handle;
  if (func->target == NULL) return raise_no_safe_call();
  return func->target(func->self, args, num_args, result);
}

static void builtin_function_deleter(void* self, int flags) {
  BuiltinFunction* func = (BuiltinFunction*)self;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && func->release != NULL) {
    func->release(func->self);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(func);
}

static int builtin_function_create(void* self, TVMFFISafeCallType safe_call,
                                   void (*release)(void* self), TVMFFIObjectHandle* out) {
  BuiltinFunction* func;
  if (out == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIFunctionCreate: out must not be NULL");
    return -1;
  }
  func = (BuiltinFunction*)malloc(sizeof(BuiltinFunction));
  if (func == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "TVMFFIFunctionCreate: out of memory");
    return -1;
  }
  func->header.combined_ref_count = STRONG_ONE | WEAK_ONE;
  func->header.type_index = kTVMFFIFunction;
  func->header.__padding = 0;
  func->header.deleter = builtin_function_deleter;
  func->cell.safe_call =
      (self == NULL && release == NULL) ? safe_call : builtin_function_trampoline;
  func->cell.cpp_call = NULL;
  func->self = self;
  func->target = safe_call;
  func->release = release;
  *out = func;
  return 0;
}

/*
 * Upstream dereferences whatever it is given; a NULL handle or an object that
 * is not a Function is reported here instead (as the fast runtime does),
 * naming the object's type when a runtime can say what it is.
 */
static int raise_not_a_function(TVMFFIObjectHandle func) {
  int32_t type_index = ((TVMFFIObject*)func)->type_index;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  char message[160];
  if (info != NULL) {
    snprintf(message, sizeof(message), "TVMFFIFunctionCall: expected a ffi.Function, got %.*s",
             (int)info->type_key.size, info->type_key.data);
  } else {
    TVMFFIObjectHandle lookup_error = NULL;
    TVMFFIErrorMoveFromRaised(&lookup_error);
    if (lookup_error != NULL) builtin_dec_ref(lookup_error);
    snprintf(message, sizeof(message),
             "TVMFFIFunctionCall: expected a ffi.Function, got type index %d", (int)type_index);
  }
  TVMFFIErrorSetRaisedFromCStr("TypeError", message);
  return -1;
}

static int builtin_function_call(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  TVMFFIFunctionCell* cell;
  if (func == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "TVMFFIFunctionCall: func must not be NULL");
    return -1;
  }
  if (((TVMFFIObject*)func)->type_index != kTVMFFIFunction) return raise_not_a_function(func);
  cell = (TVMFFIFunctionCell*)((char*)func + sizeof(TVMFFIObject));
  if (cell->safe_call == NULL) return raise_no_safe_call();
  return cell->safe_call(func, args, num_args, result);
}

/*
 * A Function calling safe_call with a NULL handle -- as upstream's library
 * modules call an exported __tvm_ffi_<name> symbol -- that holds one reference
 * to owner (its module) for as long as it lives.
 */
static int null_handle_trampoline(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  BuiltinFunction* func = (BuiltinFunction*)handle;
  if (func->target == NULL) return raise_no_safe_call();
  return func->target(NULL, args, num_args, result);
}

static void owner_function_deleter(void* self, int flags) {
  BuiltinFunction* func = (BuiltinFunction*)self;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && func->self != NULL) {
    TVMFFIObjectDecRef(func->self);
    func->self = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(func);
}

int tvm_ffi_runtime_function_with_owner(TVMFFISafeCallType safe_call, TVMFFIObjectHandle owner,
                                        TVMFFIObjectHandle* out) {
  BuiltinFunction* func;
  if (builtin_function_create(NULL, safe_call, NULL, out) != 0) return -1;
  func = (BuiltinFunction*)*out;
  func->header.deleter = owner_function_deleter;
  func->cell.safe_call = null_handle_trampoline;
  func->self = owner;
  if (owner != NULL) TVMFFIObjectIncRef(owner);
  return 0;
}

/*
 * A Function over an MLIR "packed" entry point, void fn(void** args), whose
 * args are the addresses of the five safe-call values (handle, args,
 * num_args, result) and of the status it writes back: how MLIR's execution
 * engine exposes a C function. The context is released, if given a release
 * function, when the Function dies.
 */
typedef struct {
  void (*packed)(void**);
  void* context;
  void (*release)(void*);
} MlirPackedCall;

static int mlir_packed_safe_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  MlirPackedCall* call = (MlirPackedCall*)self;
  void* handle = NULL;
  int status = 0;
  void* packed_args[5];
  packed_args[0] = &handle;
  packed_args[1] = (void*)&args;
  packed_args[2] = &num_args;
  packed_args[3] = &result;
  packed_args[4] = &status;
  call->packed(packed_args);
  return status;
}

static void mlir_packed_release(void* self) {
  MlirPackedCall* call = (MlirPackedCall*)self;
  if (call->release != NULL) call->release(call->context);
  free(call);
}

int tvm_ffi_runtime_mlir_packed_function(void (*packed)(void**), void* context,
                                         void (*release)(void*), TVMFFIObjectHandle* out) {
  MlirPackedCall* call;
  if (out == NULL || packed == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", out == NULL
                                                   ? "tvm_ffi_runtime_mlir_packed_function: out "
                                                     "must not be NULL"
                                                   : "tvm_ffi_runtime_mlir_packed_function: "
                                                     "packed must not be NULL");
    return -1;
  }
  call = (MlirPackedCall*)malloc(sizeof(MlirPackedCall));
  if (call == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "tvm_ffi_runtime_mlir_packed_function: out of "
                                                "memory");
    return -1;
  }
  call->packed = packed;
  call->context = context;
  call->release = release;
  if (TVMFFIFunctionCreate(call, mlir_packed_safe_call, mlir_packed_release, out) != 0) {
    free(call); /* the caller keeps its context */
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------- custom allocator */

/*
 * The default allocator: [base pointer][TVMFFIObjectAllocHeader][body], with
 * the body aligned as asked and the base pointer recorded for delete_space.
 */
static void builtin_delete_space(void* body) { free(((void**)body)[-2]); }

static void* builtin_allocate(size_t size, size_t alignment, int32_t type_index, void* context) {
  size_t prefix;
  char* base;
  char* body;
  (void)type_index;
  (void)context;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  prefix = (2 * sizeof(void*) + alignment - 1) / alignment * alignment;
  base = (char*)malloc(prefix + size + alignment);
  if (base == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "TVMFFICustomAllocator: out of memory");
    return NULL;
  }
  body = base + prefix;
  body += (alignment - (uintptr_t)body % alignment) % alignment;
  ((void**)body)[-2] = base;
  ((TVMFFIObjectAllocHeader*)body)[-1].delete_space = builtin_delete_space;
  return body;
}

static TVMFFICustomAllocator default_allocator = {builtin_allocate, NULL};
static TVMFFICustomAllocator* current_allocator = &default_allocator;

static TVMFFICustomAllocator* builtin_get_custom_allocator(void) { return current_allocator; }

static int builtin_set_custom_allocator(TVMFFICustomAllocator* allocator) {
  current_allocator = allocator != NULL ? allocator : &default_allocator;
  return 0;
}

/* ------------------------------------------------------------- init once */

/* Recursive, because an init function may itself initialise other handles. */
static pthread_mutex_t init_once_mutex;
static pthread_once_t init_once_mutex_ready = PTHREAD_ONCE_INIT;

static void make_init_once_mutex(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&init_once_mutex, &attr);
  pthread_mutexattr_destroy(&attr);
}

static int builtin_handle_init_once(void** handle_addr, int (*init_func)(void**)) {
  int status = 0;
  if (__atomic_load_n(handle_addr, __ATOMIC_ACQUIRE) != NULL) return 0;
  pthread_once(&init_once_mutex_ready, make_init_once_mutex);
  pthread_mutex_lock(&init_once_mutex);
  if (*handle_addr == NULL) {
    void* result = NULL;
    status = init_func(&result);
    if (status == 0 && result == NULL) {
      /* upstream refuses a NULL handle: it would make the next call initialise again */
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", "init_func must return a non-NULL handle");
      status = -1;
    }
    if (status == 0) __atomic_store_n(handle_addr, result, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&init_once_mutex);
  return status;
}

/* As upstream: the handle is swapped for NULL first (atomically, without the lock), so it
 * is NULL afterwards even when deinit_func fails. */
static int builtin_handle_deinit_once(void** handle_addr, int (*deinit_func)(void*)) {
  void* old = __atomic_exchange_n(handle_addr, NULL, __ATOMIC_ACQ_REL);
  return old != NULL ? deinit_func(old) : 0;
}

/* ------------------------------------------------------------- backtrace */

/*
 * The raising location the caller gives, then the named frames of its callers up to the front
 * end that called into the kernel (native_frames.c): the kernel frame that called here is the
 * raising function itself, already described by the location (when one is given).
 */
#define BACKTRACE_CAPACITY 8192
static __thread char backtrace_text[BACKTRACE_CAPACITY];
static __thread TVMFFIByteArray backtrace_view;

static const TVMFFIByteArray* builtin_backtrace(const char* filename, int lineno,
                                                const char* func, int cross_ffi_boundary) {
  int n = 0;
  (void)cross_ffi_boundary;
  if (filename != NULL) {
    n = snprintf(backtrace_text, 512, "  File \"%s\", line %d, in %s\n", filename, lineno,
                 func != NULL ? func : "<unknown>");
    if (n < 0) n = 0;
    if (n >= 512) n = 511;
  }
  backtrace_text[n] = '\0';
  n += (int)tvm_ffi_native_kernel_frames(backtrace_text + n, BACKTRACE_CAPACITY - (size_t)n, 0,
                                         filename != NULL ? 1 : 0);
  backtrace_view.data = backtrace_text;
  backtrace_view.size = (size_t)n;
  return &backtrace_view;
}

/* ---------------------------------------------------------- failing slots */

static const char* serving_runtime = NULL;

void tvm_ffi_builtins_set_serving_runtime(const char* name) { serving_runtime = name; }

static void raise_unavailable(const char* function) {
  char message[512];
  if (serving_runtime == NULL) {
    snprintf(message, sizeof(message),
             "%s: no TVM FFI runtime is installed in this process; import tvm_ffi_ref or "
             "tvm_ffi_fast (or install a TVMFFIRuntimeTable) before calling into TVM FFI",
             function);
  } else {
    snprintf(message, sizeof(message),
             "%s: the installed TVM FFI runtime '%s' does not implement this function", function,
             serving_runtime);
  }
  /* Through the exported function: the installed runtime may own the raised slot. */
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", message);
}

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-parameter"
#endif

#define UNAVAILABLE_VALUE_(ret, name, params, args, fail) \
  static ret unavailable_##name params {                 \
    raise_unavailable(#name);                            \
    return fail;                                         \
  }
#define UNAVAILABLE_VOID_(name, params, args) \
  static void unavailable_##name params { raise_unavailable(#name); }
#define UNAVAILABLE_OUTPARAM_(ret, name, params, args) \
  static void unavailable_##name params {              \
    out->data = NULL;                                  \
    out->size = 0;                                     \
    raise_unavailable(#name);                          \
  }
TVM_FFI_RUNTIME_SLOTS(UNAVAILABLE_VALUE_, UNAVAILABLE_VOID_, UNAVAILABLE_OUTPARAM_)

/* --------------------------------------------------------------- the table */

static TVMFFIRuntimeTable builtins;
static pthread_once_t builtins_ready = PTHREAD_ONCE_INIT;

static void fill_builtins(void) {
#define FILL_UNAVAILABLE_VALUE_(ret, name, params, args, fail) builtins.name = unavailable_##name;
#define FILL_UNAVAILABLE_VOID_(name, params, args) builtins.name = unavailable_##name;
#define FILL_UNAVAILABLE_OUTPARAM_(ret, name, params, args) builtins.name = unavailable_##name;
  builtins.struct_size = sizeof(TVMFFIRuntimeTable);
  builtins.name = "builtin";
  TVM_FFI_RUNTIME_SLOTS(FILL_UNAVAILABLE_VALUE_, FILL_UNAVAILABLE_VOID_,
                        FILL_UNAVAILABLE_OUTPARAM_)
  builtins.TVMFFIObjectIncRef = builtin_inc_ref;
  builtins.TVMFFIObjectDecRef = builtin_dec_ref;
  builtins.TVMFFIGetCustomAllocator = builtin_get_custom_allocator;
  builtins.TVMFFISetCustomAllocator = builtin_set_custom_allocator;
  builtins.TVMFFIErrorMoveFromRaised = builtin_error_move_from_raised;
  builtins.TVMFFIErrorSetRaised = builtin_error_set_raised;
  builtins.TVMFFIErrorSetRaisedFromCStr = builtin_error_set_raised_from_cstr;
  builtins.TVMFFIErrorSetRaisedFromCStrParts = builtin_error_set_raised_from_cstr_parts;
  builtins.TVMFFIErrorCreate = builtin_error_create;
  builtins.TVMFFIErrorCreateWithCauseAndExtraContext = builtin_error_create_with_cause;
  builtins.TVMFFIBacktrace = builtin_backtrace;
  builtins.TVMFFIFunctionCreate = builtin_function_create;
  builtins.TVMFFIFunctionCall = builtin_function_call;
  builtins.TVMFFIHandleInitOnce = builtin_handle_init_once;
  builtins.TVMFFIHandleDeinitOnce = builtin_handle_deinit_once;
}

const TVMFFIRuntimeTable* tvm_ffi_builtins_table(void) {
  pthread_once(&builtins_ready, fill_builtins);
  return &builtins;
}
