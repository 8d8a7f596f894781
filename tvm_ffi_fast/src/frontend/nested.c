/*
 * nested.c -- Python lists, tuples and dicts as Arrays and Maps, nested as deep as they go.
 *
 * A container is built from its converted items by the runtime's constructor
 * (ffi.Array, ffi.Map, ffi.Dict, ffi.Shape), its items first. A list nested
 * 20,000 deep is a value upstream converts, so the nesting is walked here
 * with an explicit stack of levels, not by recursion: each level holds a
 * snapshot of its items, their encodings so far and a scope of its own (what
 * the items made, released once the level's container exists). Items are
 * converted in order, a nested list, tuple or dict at its turn, so errors and
 * side effects come in the order a recursive conversion has.
 */
#include "frontend.h"

#define FX_LEVEL_ARGS 4

typedef struct {
  PyObject* source; /* the list, tuple or dict converted (borrowed; NULL for the root) */
  PyObject* items;  /* owned snapshot (tuple or list); NULL for the caller's items */
  PyObject* const* item;
  Py_ssize_t n, next;
  FxGlobal which;
  TVMFFIAny* args;
  TVMFFIAny inline_args[FX_LEVEL_ARGS];
  FxScope scope; /* points into itself: a level is never moved */
} FxLevel;

static FxLevel* level_new(FxGlobal which, PyObject* items, PyObject* const* item, Py_ssize_t n) {
  FxLevel* level;
  if (n > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "too many elements for one TVM FFI call");
    Py_XDECREF(items);
    return NULL;
  }
  level = (FxLevel*)PyMem_Malloc(sizeof(FxLevel));
  if (level == NULL) {
    Py_XDECREF(items);
    return (FxLevel*)PyErr_NoMemory();
  }
  level->source = NULL;
  level->items = items;
  level->item = item;
  level->n = n;
  level->next = 0;
  level->which = which;
  level->args = level->inline_args;
  if (n > FX_LEVEL_ARGS) {
    level->args = (TVMFFIAny*)PyMem_Malloc(sizeof(TVMFFIAny) * (size_t)n);
    if (level->args == NULL) {
      Py_XDECREF(items);
      PyMem_Free(level);
      return (FxLevel*)PyErr_NoMemory();
    }
  }
  fx_scope_init(&level->scope, NULL);
  return level;
}

/* Releases what the level made (its context passing to `parent`, if any) and frees it. */
static int level_free(FxLevel* level, FxScope* parent) {
  int status;
  if (parent != NULL) fx_scope_inherit(parent, &level->scope);
  status = fx_scope_close(&level->scope);
  if (level->args != level->inline_args) PyMem_Free(level->args);
  Py_XDECREF(level->items);
  PyMem_Free(level);
  return status;
}

/* [k0, v0, k1, v1, ...] of an exact dict, as a tuple. */
static PyObject* flat_items_of_dict(PyObject* dict) {
  Py_ssize_t pos = 0, i = 0;
  PyObject *key, *item, *flat = PyTuple_New(PyDict_GET_SIZE(dict) * 2);
  if (flat == NULL) return NULL;
  while (PyDict_Next(dict, &pos, &key, &item)) {
    Py_INCREF(key);
    Py_INCREF(item);
    PyTuple_SET_ITEM(flat, i++, key);
    PyTuple_SET_ITEM(flat, i++, item);
  }
  return flat;
}

/*
 * The level for an exact list, tuple or dict item (a snapshot of its items: converting
 * may run Python code); NULL without an error for any other value.
 */
static FxLevel* nested_level(PyObject* item) {
  PyTypeObject* type = Py_TYPE(item);
  PyObject* items;
  FxLevel* level;
  FxGlobal which = FX_G_ARRAY;
  if (type == &PyTuple_Type) {
    items = item;
    Py_INCREF(items);
  } else if (type == &PyList_Type) {
    items = PyList_AsTuple(item);
  } else if (type == &PyDict_Type) {
    items = flat_items_of_dict(item);
    which = FX_G_MAP;
  } else {
    return NULL;
  }
  if (items == NULL) return NULL;
  level = level_new(which, items, PySequence_Fast_ITEMS(items), PyTuple_GET_SIZE(items));
  if (level != NULL) level->source = item;
  return level;
}

/*
 * The containers being converted (the sources of the levels), to refuse one that contains
 * itself, which upstream recurses into until its stack overflows. Up to FX_SCANNED_LEVELS
 * deep the levels are scanned; deeper, a set of their addresses answers.
 */
#define FX_SCANNED_LEVELS 32

typedef struct {
  FxLevel** levels;
  Py_ssize_t depth, capacity;
  PyObject* sources; /* set of source addresses, once deeper than FX_SCANNED_LEVELS */
} FxPath;

static int set_address(PyObject* set, PyObject* source, int add) {
  PyObject* address;
  int status;
  if (source == NULL) return 0;
  address = PyLong_FromVoidPtr(source);
  if (address == NULL) return -1;
  status = add > 0 ? PySet_Add(set, address) : add == 0 ? PySet_Discard(set, address)
                                                         : PySet_Contains(set, address);
  Py_DECREF(address);
  return status;
}

static int path_contains(const FxPath* path, PyObject* source) {
  Py_ssize_t i;
  if (path->sources != NULL) return set_address(path->sources, source, -1);
  for (i = 0; i < path->depth; ++i) {
    if (path->levels[i]->source == source) return 1;
  }
  return 0;
}

static int path_push(FxPath* path, FxLevel* level) {
  Py_ssize_t i;
  if (path->depth == path->capacity) {
    Py_ssize_t capacity = path->capacity * 2;
    FxLevel** grown = (FxLevel**)PyMem_Realloc(path->levels, sizeof(FxLevel*) * (size_t)capacity);
    if (grown == NULL) return PyErr_NoMemory(), -1;
    path->levels = grown;
    path->capacity = capacity;
  }
  path->levels[path->depth++] = level;
  if (path->sources != NULL) return set_address(path->sources, level->source, 1);
  if (path->depth <= FX_SCANNED_LEVELS) return 0;
  path->sources = PySet_New(NULL);
  if (path->sources == NULL) return -1;
  for (i = 0; i < path->depth; ++i) {
    if (set_address(path->sources, path->levels[i]->source, 1) < 0) return -1;
  }
  return 0;
}

static FxLevel* path_pop(FxPath* path) {
  FxLevel* level = path->levels[--path->depth];
  if (path->sources != NULL && set_address(path->sources, level->source, 0) < 0) PyErr_Clear();
  return level;
}

/* The level's container from its encoded items (the owned handle), or NULL. */
static void* construct(FxLevel* level) {
  void* func = fx_global(level->which);
  TVMFFIAny result;
  if (func == NULL) return NULL;
  fx_any_clear(&result);
  if (fx_call_runtime(func, level->args, (int32_t)level->n, &result) < 0) return NULL;
  if (result.type_index < kTVMFFIStaticObjectBegin) {
    PyErr_SetString(PyExc_RuntimeError, "a container constructor returned no object");
    return NULL;
  }
  return result.v_ptr;
}

void* fx_construct(FxGlobal which, PyObject* const* items, Py_ssize_t n, FxScope* parent) {
  FxPath path = {NULL, 0, 16, NULL};
  FxLevel* top;
  void* made = NULL;
  /* a subclass of list or dict inside comes back here (encode_chosen): guard the C stack */
  if (Py_EnterRecursiveCall(" while converting a container to TVM FFI")) return NULL;
  path.levels = (FxLevel**)PyMem_Malloc(sizeof(FxLevel*) * (size_t)path.capacity);
  top = path.levels == NULL ? (FxLevel*)PyErr_NoMemory() : level_new(which, NULL, items, n);
  if (top == NULL || path_push(&path, top) < 0) {
    if (top != NULL && path.depth == 0) level_free(top, NULL);
    goto fail;
  }
  while (path.depth > 0) {
    top = path.levels[path.depth - 1];
    if (top->next < top->n) {
      PyObject* item = top->item[top->next];
      FxLevel* nested = nested_level(item);
      if (nested != NULL) {
        int cycle = path_contains(&path, item);
        if (cycle != 0 || path_push(&path, nested) < 0) {
          if (cycle > 0) {
            PyErr_SetString(PyExc_RecursionError,
                            "maximum recursion depth exceeded while converting a container "
                            "to TVM FFI: the container contains itself");
          }
          if (path.depth == 0 || path.levels[path.depth - 1] != nested) level_free(nested, NULL);
          goto fail;
        }
        continue;
      }
      if (PyErr_Occurred() || fx_encode(item, &top->args[top->next], &top->scope) < 0) goto fail;
      top->next += 1;
      continue;
    }
    made = construct(top);
    path_pop(&path);
    if (level_free(top, path.depth > 0 ? &path.levels[path.depth - 1]->scope : parent) < 0 &&
        made != NULL) {
      fx_decref(made);
      made = NULL;
    }
    if (made == NULL) goto fail;
    if (path.depth == 0) break;
    top = path.levels[path.depth - 1];
    fx_any_clear(&top->args[top->next]);
    if (fx_encode_made(made, &top->args[top->next], &top->scope) < 0) {
      made = NULL;
      goto fail;
    }
    top->next += 1;
    made = NULL;
  }
  goto done;
fail:
  while (path.depth > 0) level_free(path_pop(&path), NULL);
done:
  PyMem_Free(path.levels);
  Py_XDECREF(path.sources);
  Py_LeaveRecursiveCall();
  return made;
}

void* fx_new_array(PyObject* const* items, Py_ssize_t n, FxScope* parent) {
  return fx_construct(FX_G_ARRAY, items, n, parent);
}

void* fx_new_map(PyObject* const* flat, Py_ssize_t n_flat, int mutable_, FxScope* parent) {
  return fx_construct(mutable_ ? FX_G_DICT : FX_G_MAP, flat, n_flat, parent);
}

/*
 * The short flat sequences most calls pass (a shape, a list of ints or floats) skip the
 * level walk above, whose snapshot, level and path allocations cost more than their items.
 * Only plain scalars qualify: an exact int within int64, float, bool or None, whose
 * encodings own nothing and run no Python code, so the list cannot change while it is read
 * and no snapshot is needed. Any other item (nested, a big int, a subclass, a tensor) sends
 * the whole sequence back to the walk, which then converts it from its first item.
 */
#define FX_FLAT_MAX 16

static int encode_plain_scalar(PyObject* item, TVMFFIAny* out) {
  PyTypeObject* type = Py_TYPE(item);
  fx_any_clear(out);
  if (type == &PyLong_Type) {
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow != 0 || (x == -1 && PyErr_Occurred())) {
      PyErr_Clear(); /* not plain: the walk converts it (a BigInt) */
      return 0;
    }
    out->type_index = kTVMFFIInt;
    out->v_int64 = x;
    return 1;
  }
  if (type == &PyFloat_Type) {
    out->type_index = kTVMFFIFloat;
    out->v_float64 = PyFloat_AS_DOUBLE(item);
    return 1;
  }
  if (type == &PyBool_Type) {
    out->type_index = kTVMFFIBool;
    out->v_int64 = item == Py_True;
    return 1;
  }
  return item == Py_None; /* None: the cleared value */
}

/* 1 with *handle made (or NULL and an exception), 0 when the sequence is not flat and plain. */
static int new_flat_array(PyObject* const* items, Py_ssize_t n, void** handle) {
  TVMFFIAny args[FX_FLAT_MAX], result;
  void* func;
  Py_ssize_t i;
  *handle = NULL;
  if (n > FX_FLAT_MAX) return 0;
  for (i = 0; i < n; ++i) {
    if (!encode_plain_scalar(items[i], &args[i])) return 0;
  }
  func = fx_global(FX_G_ARRAY);
  if (func == NULL) return 1;
  fx_any_clear(&result);
  if (fx_call_runtime(func, args, (int32_t)n, &result) < 0) return 1;
  if (result.type_index < kTVMFFIStaticObjectBegin) {
    PyErr_SetString(PyExc_RuntimeError, "a container constructor returned no object");
    return 1;
  }
  *handle = result.v_ptr;
  return 1;
}

/* tuple/list: an Array of list(value) (a snapshot: converting may run Python code). */
int fx_encode_sequence(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  PyObject* items;
  void* handle;
  if (PyTuple_CheckExact(value) || PyList_CheckExact(value)) {
    if (new_flat_array(PySequence_Fast_ITEMS(value), PySequence_Fast_GET_SIZE(value), &handle)) {
      return fx_encode_made(handle, out, scope);
    }
  }
  if (PyTuple_CheckExact(value)) {
    items = value;
    Py_INCREF(items);
  } else if (PyList_CheckExact(value)) {
    items = PyList_AsTuple(value);
  } else {
    items = PySequence_List(value);
  }
  if (items == NULL) return -1;
  handle = fx_new_array(PySequence_Fast_ITEMS(items), PySequence_Fast_GET_SIZE(items), scope);
  Py_DECREF(items);
  return fx_encode_made(handle, out, scope);
}

PyObject* fx_flatten_pairs(PyObject* pairs) {
  PyObject *items = PySequence_Fast(pairs, "expected a sequence of pairs"), *flat, *x;
  Py_ssize_t i, n;
  if (items == NULL) return NULL;
  n = PySequence_Fast_GET_SIZE(items);
  flat = PyList_New(0);
  for (i = 0; flat != NULL && i < n; ++i) {
    PyObject* pair = PySequence_Fast_GET_ITEM(items, i);
    PyObject* iterator;
    if (PyTuple_CheckExact(pair) && PyTuple_GET_SIZE(pair) == 2) {
      if (PyList_Append(flat, PyTuple_GET_ITEM(pair, 0)) < 0 ||
          PyList_Append(flat, PyTuple_GET_ITEM(pair, 1)) < 0) {
        Py_CLEAR(flat);
      }
      continue;
    }
    iterator = PyObject_GetIter(pair);
    if (iterator == NULL) {
      Py_CLEAR(flat);
      break;
    }
    while ((x = PyIter_Next(iterator)) != NULL) {
      int appended = PyList_Append(flat, x);
      Py_DECREF(x);
      if (appended < 0) break;
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) Py_CLEAR(flat);
  }
  Py_DECREF(items);
  return flat;
}

/* dict: a Map of the pairs of list(value.items()), flattened as ffi.Map takes them. */
int fx_encode_dict(PyObject* value, TVMFFIAny* out, FxScope* scope) {
  PyObject* flat;
  void* handle;
  if (PyDict_CheckExact(value)) {
    flat = flat_items_of_dict(value);
    if (flat == NULL) return -1;
  } else {
    PyObject *items = PyObject_CallMethodNoArgs(value, fx_names.items), *pairs;
    if (items == NULL) return -1;
    pairs = PySequence_List(items);
    Py_DECREF(items);
    if (pairs == NULL) return -1;
    flat = fx_flatten_pairs(pairs);
    Py_DECREF(pairs);
    if (flat == NULL) return -1;
  }
  handle = fx_new_map(PySequence_Fast_ITEMS(flat), PySequence_Fast_GET_SIZE(flat), 0, scope);
  Py_DECREF(flat);
  return fx_encode_made(handle, out, scope);
}
