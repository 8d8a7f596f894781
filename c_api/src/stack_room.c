/*
 * stack_room.c -- whether the calling thread is about to run out of C stack.
 *
 * Callbacks nest: Python calls a kernel, the kernel calls Python back, and so
 * on, every level on the same C stack. Python's recursion limit counts Python
 * frames, not C stack, so with the limit raised a deep enough nesting runs off
 * the end of the stack and the process dies. The front ends ask here at every
 * callback entry and refuse to go deeper, with RecursionError, once less than
 * a margin is left: a quarter of the thread's stack, at most 256 KiB.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <tvm_ffi_runtime.h>

#define MAX_MARGIN ((uintptr_t)256 * 1024)

/* This thread's stack: the lowest address usable (0 until looked up, 1 when unknowable). */
static __thread uintptr_t stack_floor;
static __thread uintptr_t stack_margin;

static void look_up_stack(void) {
  pthread_attr_t attr;
  void* base = NULL;
  size_t size = 0, guard = 0;
  stack_floor = 1;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  if (pthread_attr_getstack(&attr, &base, &size) == 0 && base != NULL && size > 0) {
    pthread_attr_getguardsize(&attr, &guard);
    stack_floor = (uintptr_t)base + guard;
    stack_margin = size / 4 < MAX_MARGIN ? size / 4 : MAX_MARGIN;
  }
  pthread_attr_destroy(&attr);
}

int tvm_ffi_runtime_stack_low(void) {
  volatile char here = 0;
  uintptr_t sp = (uintptr_t)&here;
  if (stack_floor == 0) look_up_stack();
  if (stack_floor == 1) return 0; /* unknown extent: never refuse */
  return sp < stack_floor + stack_margin;
}
