/*
 * checked_callback.c -- a Function over a callback that may fail before it starts.
 *
 * A ctypes callback (how tvm_ffi_ref's Python callables become Functions) is
 * a C function pointer into Python. When Python cannot even enter it, at
 * the recursion limit, ctypes prints "Exception ignored on calling ctypes
 * callback function" and returns zero: a success, with the result never
 * written, which the kernel takes for None. The Function made here calls such
 * a callback with the result marked as unwritten; a callback that returns 0
 * and leaves the mark never ran (or, in tvm_ffi_fast's cffi core, could not
 * report its error for want of room), and the call fails with a RecursionError.
 *
 * It also refuses to enter the callback, with a RecursionError, when the
 * thread's C stack is nearly exhausted (stack_room.c): callbacks nested
 * through C++ thousands deep, with Python's recursion limit raised, would
 * otherwise run off the end of the stack.
 */
#include <stdlib.h>
#include <tvm_ffi_runtime.h>

/* A type index nothing writes: the result of a callback that never ran. */
#define UNWRITTEN ((int32_t)-0x7ffffff0)

typedef struct {
  void* self;
  TVMFFISafeCallType callback;
  void (*release)(void* self);
} CheckedCallback;

int tvm_ffi_runtime_refuse_deeper_callback(void) {
  TVMFFIErrorSetRaisedFromCStr("RecursionError",
                               "maximum recursion depth exceeded: the C stack is nearly "
                               "exhausted by nested callbacks");
  return -1;
}

static int checked_safe_call(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  CheckedCallback* checked = (CheckedCallback*)self;
  TVMFFIAny before = *result;
  int status;
  if (tvm_ffi_runtime_stack_low()) return tvm_ffi_runtime_refuse_deeper_callback();
  if (tvm_ffi_runtime_host_exited()) { /* a C++ static destructor, after Python finalized */
    TVMFFIErrorSetRaisedFromCStr("RuntimeError",
                                 "a Python callback was called after the interpreter exited");
    return -1;
  }
  result->type_index = UNWRITTEN;
  status = checked->callback(checked->self, args, num_args, result);
  if (status == 0 && result->type_index == UNWRITTEN) {
    *result = before;
    TVMFFIErrorSetRaisedFromCStr("RecursionError",
                                 "maximum recursion depth exceeded: the Python callback could not "
                                 "start or report its error");
    return -1;
  }
  if (status != 0 && result->type_index == UNWRITTEN) *result = before;
  return status;
}

static void checked_release(void* self) {
  CheckedCallback* checked = (CheckedCallback*)self;
  /* after the interpreter exited the callback's release is dropped (host_callbacks.c) */
  if (checked->release != NULL && !tvm_ffi_runtime_host_exited()) checked->release(checked->self);
  free(checked);
}

int tvm_ffi_runtime_checked_callback_function(void* self, TVMFFISafeCallType callback,
                                              void (*release)(void* self),
                                              TVMFFIObjectHandle* out) {
  CheckedCallback* checked;
  if (out == NULL || callback == NULL) {
    TVMFFIErrorSetRaisedFromCStr("ValueError",
                                 out == NULL ? "tvm_ffi_runtime_checked_callback_function: out "
                                               "must not be NULL"
                                             : "tvm_ffi_runtime_checked_callback_function: "
                                               "callback must not be NULL");
    return -1;
  }
  checked = (CheckedCallback*)malloc(sizeof(CheckedCallback));
  if (checked == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError",
                                 "tvm_ffi_runtime_checked_callback_function: out of memory");
    return -1;
  }
  checked->self = self;
  checked->callback = callback;
  checked->release = release;
  if (TVMFFIFunctionCreate(checked, checked_safe_call, checked_release, out) != 0) {
    free(checked); /* the caller keeps self */
    return -1;
  }
  return 0;
}
