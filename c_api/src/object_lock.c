/*
 * object_lock.c -- one lock per mutable container (List, Dict), held by whoever operates on it.
 *
 * Upstream leaves List and Dict unsynchronized ("external synchronization is
 * required"). Both runtimes here make every operation on one of them atomic
 * instead, with these locks: each runtime container function holds the
 * containers it was given while it runs, a front end holds a container
 * across the steps of one Python-level operation, and it holds the List and
 * Dict arguments of every call for the whole call, so that header code in a
 * kernel mutating its argument in place is one operation too. Whatever mix
 * of front end and runtime serves a process, all of them lock here.
 *
 * Nothing is stored in the object: its layout is the ABI, and a kernel must
 * see the bytes upstream's objects have. The locks held right now are kept
 * here instead, in stripes chosen by the object's address; an object has a
 * record only while somebody holds it or waits for it. Each thread also keeps
 * the list of objects it holds, with counts, so taking again a lock this
 * thread already holds costs no atomic operation and never waits.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <tvm_ffi_runtime.h>

#define STRIPES 64
#define INLINE_HELD 8

/* A lock currently held (or waited for): by which thread, and how many wait. */
typedef struct Holder {
  const void* obj;
  const void* owner; /* the owning thread's HeldSet; NULL while being handed over */
  uint32_t waiters;
  struct Holder* next;
} Holder;

typedef struct {
  pthread_mutex_t mutex;
  pthread_cond_t released;
  Holder* held;
  Holder* spare; /* records no longer used, for reuse */
} Stripe;

static Stripe stripes[STRIPES];
static pthread_once_t stripes_once = PTHREAD_ONCE_INIT;

static void init_stripes(void) {
  int i;
  for (i = 0; i < STRIPES; ++i) {
    pthread_mutex_init(&stripes[i].mutex, NULL);
    pthread_cond_init(&stripes[i].released, NULL);
  }
}

static Stripe* stripe_of(const void* obj) {
  uintptr_t bits = (uintptr_t)obj;
  pthread_once(&stripes_once, init_stripes);
  /* objects are at least 8-byte aligned: fold higher bits in */
  return &stripes[((bits >> 4) ^ (bits >> 11)) % STRIPES];
}

/* ------------------------------------------------- what this thread holds */

typedef struct {
  const void* obj;
  uint32_t count;
} HeldEntry;

typedef struct {
  HeldEntry first[INLINE_HELD]; /* holds nest rarely deeper than this */
  HeldEntry* more;              /* beyond them, on the heap */
  uint32_t size;
  uint32_t more_capacity;
} HeldSet;

static __thread HeldSet held_by_me;

static HeldEntry* entry_at(uint32_t i) {
  return i < INLINE_HELD ? &held_by_me.first[i] : &held_by_me.more[i - INLINE_HELD];
}

static HeldEntry* find_mine(const void* obj) {
  uint32_t i = held_by_me.size;
  while (i > 0) { /* the most recent first: holds nest */
    HeldEntry* entry = entry_at(--i);
    if (entry->obj == obj) return entry;
  }
  return NULL;
}

static int remember_mine(const void* obj) {
  HeldEntry* entry;
  uint32_t beyond = held_by_me.size >= INLINE_HELD ? held_by_me.size - INLINE_HELD : 0;
  if (held_by_me.size >= INLINE_HELD && beyond == held_by_me.more_capacity) {
    uint32_t capacity = held_by_me.more_capacity == 0 ? 8 : held_by_me.more_capacity * 2;
    HeldEntry* grown = (HeldEntry*)realloc(held_by_me.more, capacity * sizeof(HeldEntry));
    if (grown == NULL) return -1;
    held_by_me.more = grown;
    held_by_me.more_capacity = capacity;
  }
  entry = entry_at(held_by_me.size++);
  entry->obj = obj;
  entry->count = 1;
  return 0;
}

static void forget_mine(HeldEntry* entry) {
  *entry = *entry_at(held_by_me.size - 1);
  held_by_me.size -= 1;
  if (held_by_me.size <= INLINE_HELD && held_by_me.more != NULL) {
    free(held_by_me.more); /* a thread back to few holds keeps no heap memory */
    held_by_me.more = NULL;
    held_by_me.more_capacity = 0;
  }
}

/* ------------------------------------------------------------ the table */

static Holder* find_holder(Stripe* s, const void* obj) {
  Holder* h;
  for (h = s->held; h != NULL; h = h->next) {
    if (h->obj == obj) return h;
  }
  return NULL;
}

/* Records obj as held by this thread (stripe locked); -1 when out of memory. */
static int add_holder(Stripe* s, const void* obj) {
  Holder* h = s->spare;
  if (h != NULL) {
    s->spare = h->next;
  } else {
    h = (Holder*)malloc(sizeof(Holder));
    if (h == NULL) return -1;
  }
  h->obj = obj;
  h->owner = &held_by_me;
  h->waiters = 0;
  h->next = s->held;
  s->held = h;
  return 0;
}

static void remove_holder(Stripe* s, Holder* target) {
  Holder** link = &s->held;
  while (*link != target) link = &(*link)->next;
  *link = target->next;
  target->next = s->spare;
  s->spare = target;
}

/* 0 acquired, 1 held by another thread (only when !wait), -1 out of memory. */
static int acquire(const void* obj, int wait) {
  HeldEntry* mine = find_mine(obj);
  Stripe* s;
  Holder* h;
  int status = 0;
  if (mine != NULL) {
    mine->count += 1;
    return 0;
  }
  if (remember_mine(obj) != 0) return -1;
  s = stripe_of(obj);
  pthread_mutex_lock(&s->mutex);
  h = find_holder(s, obj);
  if (h == NULL) {
    if (add_holder(s, obj) != 0) status = -1;
  } else if (!wait) {
    status = 1;
  } else {
    h->waiters += 1;
    while (h->owner != NULL) pthread_cond_wait(&s->released, &s->mutex);
    h->waiters -= 1;
    h->owner = &held_by_me;
  }
  pthread_mutex_unlock(&s->mutex);
  if (status != 0) forget_mine(entry_at(held_by_me.size - 1));
  return status;
}

int tvm_ffi_runtime_object_lock(TVMFFIObjectHandle obj) {
  if (obj == NULL) return 0;
  return acquire(obj, 1) == 0 ? 0 : -1;
}

int tvm_ffi_runtime_object_try_lock(TVMFFIObjectHandle obj) {
  if (obj == NULL) return 0;
  return acquire(obj, 0);
}

void tvm_ffi_runtime_object_unlock(TVMFFIObjectHandle obj) {
  HeldEntry* mine = obj == NULL ? NULL : find_mine(obj);
  Stripe* s;
  Holder* h;
  if (mine == NULL) return; /* not held by this thread: nothing to release */
  if (--mine->count != 0) return;
  forget_mine(mine);
  s = stripe_of(obj);
  pthread_mutex_lock(&s->mutex);
  h = find_holder(s, obj);
  if (h != NULL) {
    if (h->waiters == 0) {
      remove_holder(s, h);
    } else {
      h->owner = NULL; /* one of the waiters takes the record over */
      pthread_cond_broadcast(&s->released);
    }
  }
  pthread_mutex_unlock(&s->mutex);
}

int tvm_ffi_runtime_object_held(TVMFFIObjectHandle obj) {
  return obj != NULL && find_mine(obj) != NULL;
}
