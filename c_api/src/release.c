/*
 * release.c -- the end of an object's strong references, at constant C stack depth.
 *
 * A deleter releases what the object holds, and each of those releases may end
 * another object, whose deleter releases what it holds: a chain of a million
 * objects (a linked py_class list, an access path) would nest a million deleter
 * frames and overflow the stack (or, in the reference runtime, Python's
 * recursion limit). So an object whose strong count ends while a deleter runs
 * on this thread is queued instead, and the outermost release runs the queue
 * until it is empty. Each object is still destroyed exactly once, by the thread
 * that dropped its last reference; only the order among dying objects changes.
 *
 * C++ code compiled from upstream's headers inlines its own release and calls
 * deleters directly; what such a deleter releases through TVMFFIObjectDecRef
 * (or through a runtime of ours) is queued all the same.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tvm/ffi/c_api.h"
#include "tvm_ffi_runtime.h"

#define STRONG_ONE ((uint64_t)1)
#define WEAK_ONE ((uint64_t)1 << 32)

/* A queued object; the low bit (headers are 8-aligned) says no weak reference was out. */
typedef uintptr_t QueuedRelease;

/* The first entries live here, so that the usual nesting (a container's elements) allocates
 * nothing; a deep chain grows the heap part, which the outermost release frees. */
#define INLINE_QUEUE 64

typedef struct {
  int draining;
  size_t size, capacity;
  QueuedRelease* heap;
  QueuedRelease inline_items[INLINE_QUEUE];
} ReleaseQueue;

static __thread ReleaseQueue queue;

static QueuedRelease* queue_slot(size_t i) {
  return i < INLINE_QUEUE ? &queue.inline_items[i] : &queue.heap[i - INLINE_QUEUE];
}

static int queue_push(QueuedRelease item) {
  if (queue.size >= INLINE_QUEUE && queue.size - INLINE_QUEUE >= queue.capacity) {
    size_t capacity = queue.capacity ? queue.capacity * 2 : 1024;
    QueuedRelease* grown = (QueuedRelease*)realloc(queue.heap, capacity * sizeof(QueuedRelease));
    if (grown == NULL) return -1;
    queue.heap = grown;
    queue.capacity = capacity;
  }
  *queue_slot(queue.size++) = item;
  return 0;
}

/* Runs the deleter of an object whose strong count has ended. */
static void destroy(TVMFFIObject* obj, int no_weak_out) {
  if (obj->deleter == NULL) return;
  if (no_weak_out) {
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
    return;
  }
  obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
  /* the weak reference all strong ones shared */
  if (__atomic_fetch_sub(&obj->combined_ref_count, WEAK_ONE, __ATOMIC_RELEASE) == WEAK_ONE) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
}

void tvm_ffi_runtime_strong_count_ended(TVMFFIObject* obj, uint64_t before) {
  int no_weak_out = before == (STRONG_ONE | WEAK_ONE);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (queue.draining) {
    if (queue_push((QueuedRelease)obj | (QueuedRelease)no_weak_out) == 0) return;
    destroy(obj, no_weak_out); /* out of memory for the queue: nest this one */
    return;
  }
  queue.draining = 1;
  destroy(obj, no_weak_out);
  while (queue.size > 0) {
    QueuedRelease item = *queue_slot(--queue.size);
    destroy((TVMFFIObject*)(item & ~(QueuedRelease)1), (int)(item & 1));
  }
  queue.draining = 0;
  free(queue.heap);
  queue.heap = NULL;
  queue.capacity = 0;
}
