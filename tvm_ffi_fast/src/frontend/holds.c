/*
 * holds.c -- the container locks (tvm_ffi_runtime.h) from the front end's side.
 *
 * Every operation on a List or Dict holds its lock, so that Python threads and
 * kernels sharing one see each operation whole, as on Python's own list and
 * dict. The runtime's container functions hold what they are given; here:
 *
 * - a call holds the List and Dict among its arguments for the whole call
 *   (fx_safe_call_holding), so header code in a kernel that mutates or
 *   iterates its argument in place is one operation too;
 * - an element read in place from a List is copied under the lock;
 * - hold(container) / release(container) let the shared Python API make one
 *   operation of several steps (Dict.pop is a lookup and an erase).
 *
 * A thread holding the GIL never waits for a lock with it: the holder may be a
 * kernel calling back into Python, which needs the GIL.
 */
#include "frontend.h"

#define FX_INLINE_HOLDS 8

int fx_hold(void* obj) {
  int status = tvm_ffi_runtime_object_try_lock(obj);
  if (status == 1) {
    Py_BEGIN_ALLOW_THREADS;
    status = tvm_ffi_runtime_object_lock(obj);
    Py_END_ALLOW_THREADS;
  }
  if (status != 0) {
    PyErr_NoMemory();
    return -1;
  }
  return 0;
}

void fx_release(void* obj) { tvm_ffi_runtime_object_unlock(obj); }

static int is_held_kind(const TVMFFIAny* value) {
  return tvm_ffi_runtime_locks_type(value->type_index) && value->v_ptr != NULL;
}

/* The distinct containers of args to hold, in address order (the order every holder uses). */
static int32_t containers_of(const TVMFFIAny* args, int32_t n, void** out) {
  int32_t count = 0, i, j;
  for (i = 0; i < n; ++i) {
    void* obj;
    if (!is_held_kind(&args[i])) continue;
    obj = args[i].v_ptr;
    for (j = count; j > 0 && out[j - 1] > obj; --j) out[j] = out[j - 1];
    if (j > 0 && out[j - 1] == obj) { /* seen already: undo the shift */
      for (; j < count; ++j) out[j] = out[j + 1];
      continue;
    }
    out[j] = obj;
    ++count;
  }
  return count;
}

int fx_args_hold_containers(const TVMFFIAny* args, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    if (is_held_kind(&args[i])) return 1;
  }
  return 0;
}

int fx_safe_call_holding(void* func, TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  void *inline_order[FX_INLINE_HOLDS], **order = inline_order;
  int32_t i, count, first = 0;
  int status;
  while (first < n && !is_held_kind(&args[first])) ++first;
  if (FX_LIKELY(first == n)) return fx_safe_call(func, args, n, result);
  if (n - first > FX_INLINE_HOLDS) {
    order = (void**)PyMem_RawMalloc(sizeof(void*) * (size_t)(n - first));
    if (order == NULL) goto out_of_memory;
  }
  count = containers_of(args + first, n - first, order);
  for (i = 0; i < count; ++i) {
    if (tvm_ffi_runtime_object_lock(order[i]) != 0) {
      while (--i >= 0) tvm_ffi_runtime_object_unlock(order[i]);
      if (order != inline_order) PyMem_RawFree(order);
      goto out_of_memory;
    }
  }
  status = fx_safe_call(func, args, n, result);
  for (i = count - 1; i >= 0; --i) tvm_ffi_runtime_object_unlock(order[i]);
  if (order != inline_order) PyMem_RawFree(order);
  return status;
out_of_memory:
  TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory holding the call's containers");
  return -1;
}

int fx_copy_list_element(void* list, Py_ssize_t index, TVMFFIAny* out) {
  const TVMFFISeqCell* cell = FX_CELL(list, TVMFFISeqCell);
  int locks = tvm_ffi_runtime_locks_type(fx_header_index(list));
  if (locks && fx_hold(list) < 0) return -1;
  /* callers pass an index in range; a sequence changed meanwhile must not be overread */
  if (index < 0 || index >= cell->size) {
    PyErr_Format(PyExc_IndexError, "Index out of range. size: %lld, got index %zd",
                 (long long)cell->size, index);
    if (locks) fx_release(list);
    return -1;
  }
  *out = ((const TVMFFIAny*)cell->data)[index];
  if (out->type_index >= kTVMFFIStaticObjectBegin && out->v_ptr != NULL) fx_incref(out->v_ptr);
  if (locks) fx_release(list);
  return 0;
}

/* hold(container) / release(container): one operation of several steps. */
static void* held_handle(PyObject* container) {
  void* handle;
  if (!PyObject_TypeCheck(container, fx_cobject_type)) {
    PyErr_Format(PyExc_TypeError, "expected a container, got %s", fx_type_name(Py_TYPE(container)));
    return NULL;
  }
  handle = ((FxObject*)container)->handle;
  if (handle == NULL) PyErr_SetString(PyExc_ValueError, "the container is empty");
  return handle;
}

static PyObject* py_hold(PyObject* self, PyObject* container) {
  void* handle = held_handle(container);
  (void)self;
  if (handle == NULL) return NULL;
  if (tvm_ffi_runtime_locks_type(fx_header_index(handle)) && fx_hold(handle) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject* py_release(PyObject* self, PyObject* container) {
  void* handle = held_handle(container);
  (void)self;
  if (handle == NULL) return NULL;
  if (tvm_ffi_runtime_locks_type(fx_header_index(handle))) fx_release(handle);
  Py_RETURN_NONE;
}

PyMethodDef fx_hold_methods[] = {
    {"hold", py_hold, METH_O,
     "hold(container): waits until no other thread holds the List or Dict, then holds it "
     "(nothing for other objects)."},
    {"release", py_release, METH_O, "release(container): undoes one hold(container)."},
    {NULL, NULL, 0, NULL}};
