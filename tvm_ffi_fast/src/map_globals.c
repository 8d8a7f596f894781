/*
 * map_globals.c -- the ffi.Map* and ffi.Dict* global functions: construction
 * from key/value arguments, lookups (KeyError or the MISSING marker), counts,
 * the Dict's in-place edits, and the forward-iteration functor that stays safe
 * when the map changes under it. Separate from maps.c, which lays the maps out.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/maps.py.
 */
#include "core.h"

#include "containers.h"
#include "functions.h"

/* --------------------------------------------------- Map / Dict globals */

static int map_ctor_common(int32_t type_index, const TVMFFIAny* args, int32_t n,
                           TVMFFIAny* rv) {
  void* map;
  int32_t i;
  if (n % 2 != 0) {
    return fr_raise("InternalError", "Check failed: args.size() %% 2 == 0 (%d vs. 0) : ", n % 2);
  }
  map = fr_map_new(type_index);
  if (map == NULL) return -1;
  for (i = 0; i < n; i += 2) {
    TVMFFIAny key, value;
    if (fr_any_view_to_owned(&args[i], &key) != 0) goto fail;
    if (fr_any_view_to_owned(&args[i + 1], &value) != 0) {
      fr_any_release(&key);
      goto fail;
    }
    if (fr_map_set(&map, key, value) != 0) goto fail;
  }
  *rv = fr_any_object(map);
  return 0;
fail:
  fr_decref(map);
  return -1;
}

static int map_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)ctx;
  return map_ctor_common(kTVMFFIMap, args, n, rv);
}

static int dict_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)ctx;
  return map_ctor_common(kTVMFFIDict, args, n, rv);
}

static int map_size(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_int((int64_t)fr_map_size(a[0].value.v_obj));
  return 0;
}

static int map_get_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIAny* slot;
  int found = fr_map_find(a[0].value.v_obj, &a[1].value, &slot);
  (void)ctx;
  if (found < 0) return -1;
  if (found == 0) return fr_raise("KeyError", "key is not in Map");
  *rv = fr_any_copy(slot);
  return 0;
}

static int map_count(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIAny* slot;
  int found = fr_map_find(a[0].value.v_obj, &a[1].value, &slot);
  (void)ctx;
  if (found < 0) return -1;
  *rv = fr_any_int(found);
  return 0;
}

static int map_get_item_or_missing(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIAny* slot;
  int found = fr_map_find(a[0].value.v_obj, &a[1].value, &slot);
  (void)ctx;
  if (found < 0) return -1;
  if (found == 0) return fr_missing_object(rv);
  *rv = fr_any_copy(slot);
  return 0;
}

/*
 * The iterator functor: 0 -> current key, 1 -> current value, else advance
 * (false at end). Like upstream's it borrows the map: the caller keeps the map
 * alive while iterating (so the map's reference count, which a kernel may
 * read, is upstream's). Unlike upstream's it survives the map changing under
 * it, which another thread may do to a Dict: each call holds the Dict, and
 * once the map's size or storage differs from when the functor was made (or
 * its position no longer names an entry) every call raises Python's
 * RuntimeError instead of reading freed or moved entries.
 */
typedef struct {
  void* map;
  uint64_t position;
  uint64_t size; /* what the map was when the functor was made */
  const void* data;
  uint64_t slots;
} FrMapIter;

static void map_iter_free(void* p) { free(p); }

static int map_iter_step(FrMapIter* it, int64_t command, TVMFFIAny* rv) {
  const FrMapBase* m = (const FrMapBase*)it->map;
  FrKV* kv;
  if (m->size != it->size || m->data != it->data || m->slots != it->slots) {
    return fr_raise("RuntimeError", "dictionary changed size during iteration");
  }
  if (!fr_map_position_valid(it->map, it->position)) {
    return fr_raise("RuntimeError", "dictionary keys changed during iteration");
  }
  if (command != 0 && command != 1) {
    it->position = fr_map_next(it->map, it->position);
    *rv = fr_any_bool(it->position != fr_map_end(it->map));
    return 0;
  }
  if (it->position == fr_map_end(it->map)) {
    return fr_raise("IndexError", "map iterator is past the end of the map");
  }
  kv = fr_map_entry(it->map, it->position);
  *rv = fr_any_copy(command == 0 ? &kv->key : &kv->value);
  return 0;
}

static int map_iter_call(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  FrMapIter* it = (FrMapIter*)ctx;
  int locks = tvm_ffi_runtime_locks_type(((TVMFFIObject*)it->map)->type_index);
  int status;
  if (locks && tvm_ffi_runtime_object_lock(it->map) != 0) return fr_raise_oom();
  status = map_iter_step(it, a[0].value.v_int64, rv);
  if (locks) tvm_ffi_runtime_object_unlock(it->map);
  return status;
}

static const FrBuiltin kMapIterSpec = {"", map_iter_call, NULL, 1, {FR_T_INT}, FR_T_ANY};

static int map_iter_functor(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  FrMapIter* it = (FrMapIter*)malloc(sizeof(FrMapIter));
  const FrMapBase* m = (const FrMapBase*)a[0].value.v_obj;
  void* f;
  (void)ctx;
  if (it == NULL) return fr_raise_oom();
  it->map = a[0].value.v_obj;
  it->position = fr_map_begin(it->map);
  it->size = m->size;
  it->data = m->data;
  it->slots = m->slots;
  f = fr_typed_function_new(&kMapIterSpec, it, map_iter_free);
  if (f == NULL) {
    map_iter_free(it);
    return -1;
  }
  *rv = fr_any_object(f);
  return 0;
}

static int dict_set_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* dict = a[0].value.v_obj;
  (void)ctx;
  *rv = fr_any_none();
  return fr_map_set(&dict, fr_any_copy(&a[1].value), fr_any_copy(&a[2].value));
}

static int dict_erase(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return fr_map_erase(a[0].value.v_obj, &a[1].value);
}

static int dict_clear(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  fr_map_clear(a[0].value.v_obj);
  *rv = fr_any_none();
  return 0;
}

#define T(x) FR_T_##x
static const FrBuiltin kBuiltins[] = {
    {"ffi.Map", NULL, map_ctor, 0, {0}, T(VOID)},
    {"ffi.MapSize", map_size, NULL, 1, {T(MAP)}, T(INT)},
    {"ffi.MapGetItem", map_get_item, NULL, 2, {T(MAP), T(ANY)}, T(ANY)},
    {"ffi.MapCount", map_count, NULL, 2, {T(MAP), T(ANY)}, T(INT)},
    {"ffi.MapForwardIterFunctor", map_iter_functor, NULL, 1, {T(MAP)}, T(FUNCTION)},
    {"ffi.MapGetItemOrMissing", map_get_item_or_missing, NULL, 2, {T(MAP), T(ANY)}, T(ANY)},
    {"ffi.Dict", NULL, dict_ctor, 0, {0}, T(VOID)},
    {"ffi.DictSize", map_size, NULL, 1, {T(DICT)}, T(INT)},
    {"ffi.DictGetItem", map_get_item, NULL, 2, {T(DICT), T(ANY)}, T(ANY)},
    {"ffi.DictSetItem", dict_set_item, NULL, 3, {T(DICT_REF), T(ANY), T(ANY)}, T(VOID)},
    {"ffi.DictCount", map_count, NULL, 2, {T(DICT), T(ANY)}, T(INT)},
    {"ffi.DictErase", dict_erase, NULL, 2, {T(DICT_REF), T(ANY)}, T(VOID)},
    {"ffi.DictClear", dict_clear, NULL, 1, {T(DICT_REF)}, T(VOID)},
    {"ffi.DictForwardIterFunctor", map_iter_functor, NULL, 1, {T(DICT)}, T(FUNCTION)},
    {"ffi.DictGetItemOrMissing", map_get_item_or_missing, NULL, 2, {T(DICT), T(ANY)}, T(ANY)},
};
#undef T

int fr_map_register_globals(void) {
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
