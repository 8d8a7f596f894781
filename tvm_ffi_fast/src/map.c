/*
 * map.c -- Map and Dict: key hashing and equality, the small layout (a flat
 * array of up to four entries) and the dense layout (blocks of 16 slots with
 * one metadata byte each, probing chains and an insertion-order list).
 *
 * C++ code compiled from the upstream headers walks, searches and mutates
 * these maps inline, so every step that leaves a trace in memory -- which slot
 * an entry lands in, the metadata byte, the list links, when the table grows
 * and to what size -- follows upstream's container/map_base.h algorithm.
 */
#include "core.h"

#include "containers.h"
#include "registry.h"

/* ------------------------------------------------------------- hashing */

#define HASH_MOD 2147483647ULL

static uint64_t hash_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ULL + (key << 6) + (key >> 2));
}

/* base_detail.h StableHashBytes: 8-byte little-endian words folded modulo 2^31-1. */
uint64_t fr_stable_hash_bytes(const void* data, size_t size) {
  const unsigned char* p = (const unsigned char*)data;
  const uint64_t mul = 1099511628211ULL;
  uint64_t result = 0;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, 8);
    result = (result * mul + word) % HASH_MOD;
  }
  if (i < size) {
    uint64_t word = 0;
    memcpy(&word, p + i, size - i);
    result = (result * mul + word) % HASH_MOD;
  }
  return result;
}

static const TVMFFIByteArray* bytes_cell(const TVMFFIAny* value) {
  return FR_CELL(value->v_obj, TVMFFIByteArray);
}

/* The custom entry of a type attribute column for type_index, or NULL. */
static const TVMFFIAny* column_entry(const TVMFFITypeAttrColumn* column, int32_t type_index) {
  int32_t offset;
  if (column == NULL || column->data == NULL) return NULL;
  offset = type_index - column->begin_index;
  if (offset < 0 || offset >= column->size) return NULL;
  if (column->data[offset].type_index == kTVMFFINone) return NULL;
  return &column->data[offset];
}

/* Raises the Error a native hash/equal function returned instead of its value. */
static int raise_native_result(TVMFFIAny* result, const char* what) {
  if (result->type_index == kTVMFFIError) {
    TVMFFIErrorSetRaised(result->v_obj);
    fr_any_release(result);
    return -1;
  }
  fr_any_release(result);
  return fr_raise("InternalError", "%s returned a value of the wrong type", what);
}

typedef TVMFFIAny (*FrNativeHash)(const TVMFFIAny* value);
typedef TVMFFIAny (*FrNativeEqual)(const TVMFFIAny* lhs, const TVMFFIAny* rhs);

static int call_custom_hash(const TVMFFIAny* fn, const TVMFFIAny* value, uint64_t* out) {
  TVMFFIAny result = fr_any_none();
  if (fn->type_index == kTVMFFIOpaquePtr) {
    if (fn->v_ptr == NULL) return fr_raise("InternalError", "__any_hash__ is a NULL pointer");
    result = ((FrNativeHash)fn->v_ptr)(value);
  } else if (fn->type_index == kTVMFFIFunction) {
    TVMFFIFunctionCell* cell = FR_CELL(fn->v_obj, TVMFFIFunctionCell);
    if (cell->safe_call(fn->v_obj, value, 1, &result) != 0) return -1;
  } else {
    return fr_raise("InternalError", "__any_hash__ must be a function");
  }
  if (result.type_index != kTVMFFIInt) return raise_native_result(&result, "__any_hash__");
  *out = (uint64_t)result.v_int64;
  return 0;
}

static int call_custom_equal(const TVMFFIAny* fn, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                             int* out) {
  TVMFFIAny result = fr_any_none();
  if (fn->type_index == kTVMFFIOpaquePtr) {
    if (fn->v_ptr == NULL) return fr_raise("InternalError", "__any_equal__ is a NULL pointer");
    result = ((FrNativeEqual)fn->v_ptr)(lhs, rhs);
  } else if (fn->type_index == kTVMFFIFunction) {
    TVMFFIAny args[2];
    TVMFFIFunctionCell* cell = FR_CELL(fn->v_obj, TVMFFIFunctionCell);
    args[0] = *lhs;
    args[1] = *rhs;
    if (cell->safe_call(fn->v_obj, args, 2, &result) != 0) return -1;
  } else {
    return fr_raise("InternalError", "__any_equal__ must be a function");
  }
  if (result.type_index != kTVMFFIBool) return raise_native_result(&result, "__any_equal__");
  *out = result.v_int64 != 0;
  return 0;
}

int fr_any_hash(const TVMFFIAny* value, uint64_t* out) {
  int32_t ti = value->type_index;
  if (ti == kTVMFFISmallStr) {
    *out = hash_combine(kTVMFFIStr, value->v_uint64 % HASH_MOD);
  } else if (ti == kTVMFFISmallBytes) {
    *out = hash_combine(kTVMFFIBytes, value->v_uint64 % HASH_MOD);
  } else if (ti == kTVMFFIStr || ti == kTVMFFIBytes) {
    const TVMFFIByteArray* cell = bytes_cell(value);
    *out = hash_combine((uint64_t)ti, fr_stable_hash_bytes(cell->data, cell->size));
  } else {
    if (ti >= kTVMFFIStaticObjectBegin) {
      const TVMFFIAny* custom = column_entry(fr_any_hash_column(), ti);
      if (custom != NULL) {
        uint64_t h = 0;
        if (call_custom_hash(custom, value, &h) != 0) return -1;
        *out = hash_combine((uint64_t)ti, h);
        return 0;
      }
    }
    *out = hash_combine((uint64_t)(uint32_t)ti, value->v_uint64);
  }
  return 0;
}

static int is_str_like(int32_t ti) {
  return ti == kTVMFFIStr || ti == kTVMFFISmallStr || ti == kTVMFFIBytes || ti == kTVMFFISmallBytes;
}

static int mem_equal(const char* a, size_t na, const char* b, size_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, na) == 0);
}

int fr_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out) {
  int32_t lt = lhs->type_index, rt = rhs->type_index;
  if (memcmp(lhs, rhs, sizeof(TVMFFIAny)) == 0) {
    *out = 1;
    return 0;
  }
  *out = 0;
  if (lt == rt) {
    if (lt == kTVMFFIStr || lt == kTVMFFIBytes) {
      const TVMFFIByteArray* a = bytes_cell(lhs);
      const TVMFFIByteArray* b = bytes_cell(rhs);
      *out = mem_equal(a->data, a->size, b->data, b->size);
    } else if (lt >= kTVMFFIStaticObjectBegin) {
      const TVMFFIAny* custom = column_entry(fr_any_equal_column(), lt);
      if (custom != NULL) return call_custom_equal(custom, lhs, rhs, out);
    }
    return 0;
  }
  if (!is_str_like(lt)) return 0;
  if (lt == kTVMFFIStr && rt == kTVMFFISmallStr) {
    const TVMFFIByteArray* a = bytes_cell(lhs);
    *out = mem_equal(a->data, a->size, rhs->v_bytes, rhs->small_str_len);
  } else if (lt == kTVMFFISmallStr && rt == kTVMFFIStr) {
    const TVMFFIByteArray* b = bytes_cell(rhs);
    *out = mem_equal(lhs->v_bytes, lhs->small_str_len, b->data, b->size);
  } else if (lt == kTVMFFIBytes && rt == kTVMFFISmallBytes) {
    const TVMFFIByteArray* a = bytes_cell(lhs);
    *out = mem_equal(a->data, a->size, rhs->v_bytes, rhs->small_str_len);
  } else if (lt == kTVMFFISmallBytes && rt == kTVMFFIBytes) {
    const TVMFFIByteArray* b = bytes_cell(rhs);
    *out = mem_equal(lhs->v_bytes, lhs->small_str_len, b->data, b->size);
  }
  return 0;
}

/* --------------------------------------------------------- common parts */

#define SMALL_INIT_SLOTS 2
#define SMALL_MAX_SLOTS 4

static void free_block_data(void* data) { free(data); }

static uint64_t small_num_slots(const FrMapBase* map) { return map->slots & ~FR_MAP_SMALL_TAG; }

static FrKV* small_entries(const FrMapBase* map) { return (FrKV*)map->data; }

static void release_kv(FrKV* kv) {
  fr_any_release(&kv->key);
  fr_any_release(&kv->value);
}

static void map_deleter(void* self, int flags);

/* ---------------------------------------------------------- dense layout */

#define BLOCK_CAP 16
#define META_EMPTY 0xFFu
#define META_PROTECTED 0xFEu
#define NUM_JUMPS 126

/* An entry of the dense layout: the pair and its insertion-order links. 48 bytes. */
typedef struct {
  FrKV kv;
  uint64_t prev;
  uint64_t next;
} FrItem;

#define BLOCK_BYTES (BLOCK_CAP + BLOCK_CAP * sizeof(FrItem))

/* Probe distances of the dense layout, indexed by the low 7 bits of a metadata byte. */
static const uint64_t kProbe[NUM_JUMPS] = {
    0ULL, 1ULL, 2ULL, 3ULL, 4ULL, 5ULL, 6ULL, 7ULL, 8ULL, 9ULL, 10ULL, 11ULL, 12ULL, 13ULL,
    14ULL, 15ULL, 21ULL, 28ULL, 36ULL, 45ULL, 55ULL, 66ULL, 78ULL, 91ULL, 105ULL, 120ULL,
    136ULL, 153ULL, 171ULL, 190ULL, 210ULL, 231ULL, 253ULL, 276ULL, 300ULL, 325ULL, 351ULL,
    378ULL, 406ULL, 435ULL, 465ULL, 496ULL, 528ULL, 561ULL, 595ULL, 630ULL, 666ULL, 703ULL,
    741ULL, 780ULL, 820ULL, 861ULL, 903ULL, 946ULL, 990ULL, 1035ULL, 1081ULL, 1128ULL,
    1176ULL, 1225ULL, 1275ULL, 1326ULL, 1378ULL, 1431ULL, 1485ULL, 1540ULL, 1596ULL, 1653ULL,
    1711ULL, 1770ULL, 1830ULL, 1891ULL, 1953ULL, 2016ULL, 2080ULL, 2145ULL, 2211ULL, 2278ULL,
    2346ULL, 2415ULL, 2485ULL, 2556ULL, 2628ULL, 8515ULL, 19110ULL, 42778ULL, 96141ULL,
    216153ULL, 486591ULL, 1092981ULL, 2458653ULL, 5532801ULL, 12442566ULL, 27993903ULL,
    62983476ULL, 141717030ULL, 318844378ULL, 717352503ULL, 1614057336ULL, 3631522476ULL,
    8170957530ULL, 18384510628ULL, 41364789378ULL, 93070452520ULL, 209408356380ULL,
    471168559170ULL, 1060128894105ULL, 2385289465695ULL, 5366898840628ULL, 12075518705635ULL,
    27169915244790ULL, 61132312065111ULL, 137547689707000ULL, 309482283181501ULL,
    696335127828753ULL, 1566753995631385ULL, 3525196511162271ULL, 7931691992677701ULL,
    17846306936293605ULL, 40154190677507445ULL, 90346928918121501ULL, 203280589587557251ULL,
    457381325854679626ULL, 1029107982097042876ULL, 2315492959180353330ULL,
    5209859154120846435ULL,
};

static uint8_t* meta_at(const FrDenseMap* m, uint64_t i) {
  return (uint8_t*)m->base.data + (i / BLOCK_CAP) * BLOCK_BYTES + (i % BLOCK_CAP);
}

static FrItem* item_at(const FrDenseMap* m, uint64_t i) {
  return (FrItem*)((char*)m->base.data + (i / BLOCK_CAP) * BLOCK_BYTES + BLOCK_CAP +
                   (i % BLOCK_CAP) * sizeof(FrItem));
}

static uint64_t num_blocks(uint64_t slots) { return (slots + BLOCK_CAP - 1) / BLOCK_CAP; }

static int is_head(uint8_t meta) { return (meta & 0x80u) == 0; }

static uint64_t fib_index(const FrDenseMap* m, uint64_t hash) {
  return (11400714819323198485ULL * hash) >> m->fib_shift;
}

/* Next slot of the chain through i, or FR_MAP_END. */
static uint64_t chain_next(const FrDenseMap* m, uint64_t i, uint8_t meta) {
  uint64_t offset = kProbe[meta & 0x7Fu];
  if (offset == 0) return FR_MAP_END;
  return (i + offset) % m->base.slots;
}

static void set_jump(const FrDenseMap* m, uint64_t i, uint8_t jump) {
  uint8_t* meta = meta_at(m, i);
  *meta = (uint8_t)((*meta & 0x80u) | jump);
}

static int is_full(const FrDenseMap* m) {
  return (double)(m->base.size + 1) > (double)m->base.slots * 0.99;
}

static void list_unlink(FrDenseMap* m, uint64_t i) {
  FrItem* item = item_at(m, i);
  if (item->prev == FR_MAP_END) {
    m->head = item->next;
  } else {
    item_at(m, item->prev)->next = item->next;
  }
  if (item->next == FR_MAP_END) {
    m->tail = item->prev;
  } else {
    item_at(m, item->next)->prev = item->prev;
  }
}

static void list_push_back(FrDenseMap* m, uint64_t i) {
  FrItem* item = item_at(m, i);
  item->prev = m->tail;
  item->next = FR_MAP_END;
  if (m->tail != FR_MAP_END) item_at(m, m->tail)->next = i;
  if (m->head == FR_MAP_END) m->head = i;
  m->tail = i;
}

/* dst takes src's place in the insertion-order list. */
static void list_replace(FrDenseMap* m, uint64_t src, uint64_t dst) {
  FrItem* s = item_at(m, src);
  FrItem* d = item_at(m, dst);
  d->prev = s->prev;
  d->next = s->next;
  if (d->prev == FR_MAP_END) {
    m->head = dst;
  } else {
    item_at(m, d->prev)->next = dst;
  }
  if (d->next == FR_MAP_END) {
    m->tail = dst;
  } else {
    item_at(m, d->next)->prev = dst;
  }
}

/* Places an entry at slot i (head or tail of a chain) with fresh links. */
static void place_item(FrDenseMap* m, uint64_t i, uint8_t meta, FrKV kv) {
  FrItem* item = item_at(m, i);
  *meta_at(m, i) = meta;
  item->kv = kv;
  item->prev = FR_MAP_END;
  item->next = FR_MAP_END;
}

static FrDenseMap* dense_empty(int32_t type_index, uint32_t fib_shift, uint64_t n_slots) {
  FrDenseMap* m = (FrDenseMap*)fr_object_alloc(sizeof(FrDenseMap), type_index, map_deleter);
  uint64_t blocks = num_blocks(n_slots), b;
  if (m == NULL) return NULL;
  m->base.data = malloc(blocks == 0 ? 1 : blocks * BLOCK_BYTES);
  if (m->base.data == NULL) {
    free(m);
    fr_raise_oom();
    return NULL;
  }
  for (b = 0; b < blocks; ++b) memset((char*)m->base.data + b * BLOCK_BYTES, 0xFF, BLOCK_CAP);
  m->base.data_deleter = free_block_data;
  m->base.slots = n_slots;
  m->base.size = 0;
  m->fib_shift = fib_shift;
  m->head = FR_MAP_END;
  m->tail = FR_MAP_END;
  return m;
}

static void table_size_for(uint64_t cap, uint32_t* fib_shift, uint64_t* n_slots) {
  uint32_t shift = 64;
  uint64_t slots = 1, c;
  for (c = cap; c != 0; c >>= 1) {
    shift -= 1;
    slots <<= 1;
  }
  if (slots < cap * 2) {
    *fib_shift = shift - 1;
    *n_slots = slots << 1;
  } else {
    *fib_shift = shift;
    *n_slots = slots;
  }
}

/* Search: the slot holding key, FR_MAP_END when absent; -1 + raised on error via *status. */
static uint64_t dense_search(const FrDenseMap* m, const TVMFFIAny* key, int* status) {
  uint64_t hash, i;
  *status = 0;
  if (m->base.size == 0) return FR_MAP_END;
  if (fr_any_hash(key, &hash) != 0) {
    *status = -1;
    return FR_MAP_END;
  }
  i = fib_index(m, hash);
  if (!is_head(*meta_at(m, i))) return FR_MAP_END;
  while (i != FR_MAP_END) {
    int eq;
    if (fr_any_equal(key, &item_at(m, i)->kv.key, &eq) != 0) {
      *status = -1;
      return FR_MAP_END;
    }
    if (eq) return i;
    i = chain_next(m, i, *meta_at(m, i));
  }
  return FR_MAP_END;
}

/* The slot whose chain link leads to slot i (which must not be a chain head). */
static int dense_find_prev(const FrDenseMap* m, uint64_t i, uint64_t* out) {
  uint64_t hash, prev, next;
  if (fr_any_hash(&item_at(m, i)->kv.key, &hash) != 0) return -1;
  next = fib_index(m, hash);
  prev = next;
  next = chain_next(m, next, *meta_at(m, next));
  while (next != i && next != FR_MAP_END) {
    prev = next;
    next = chain_next(m, next, *meta_at(m, next));
  }
  *out = prev;
  return 0;
}

/* The first empty slot probing from i: 1 found (jump and slot filled), 0 none. */
static int next_empty(const FrDenseMap* m, uint64_t i, uint8_t* jump, uint64_t* slot) {
  uint8_t idx;
  for (idx = 1; idx < NUM_JUMPS; ++idx) {
    uint64_t candidate = (i + kProbe[idx]) % m->base.slots;
    if (*meta_at(m, candidate) == META_EMPTY) {
      *jump = idx;
      *slot = candidate;
      return 1;
    }
  }
  return 0;
}

/* Moves the chain starting at target (not a head) elsewhere and makes target the head of key. */
static int dense_spare_head(FrDenseMap* m, uint64_t target, const TVMFFIAny* key, uint64_t* out) {
  uint64_t r = target, w, empty = 0;
  int is_first = 1;
  uint8_t r_meta, jump = 0;
  if (dense_find_prev(m, target, &w) != 0) return -1;
  do {
    FrItem* from;
    if (!next_empty(m, w, &jump, &empty)) return 0;
    from = item_at(m, r);
    place_item(m, empty, 0x80u, from->kv);
    list_replace(m, r, empty);
    from->kv.key = fr_any_none();
    from->kv.value = fr_any_none();
    r_meta = *meta_at(m, r);
    *meta_at(m, r) = is_first ? META_PROTECTED : META_EMPTY;
    is_first = 0;
    set_jump(m, w, jump);
    w = empty;
    r = chain_next(m, r, r_meta);
  } while (r != FR_MAP_END);
  place_item(m, target, 0x00u, (FrKV){fr_any_copy(key), fr_any_none()});
  m->base.size += 1;
  *out = target;
  return 1;
}

/*
 * Finds or makes the slot of key: 1 (slot in *out; a found entry is unlinked
 * from the insertion list, a new one holds a copy of key and None), 0 when the
 * table must grow, -1 on error.
 */
static int dense_try_insert(FrDenseMap* m, const TVMFFIAny* key, uint64_t* out) {
  uint64_t hash, i, next, last;
  uint8_t jump = 0;
  if (m->base.slots == 0) return 0;
  if (fr_any_hash(key, &hash) != 0) return -1;
  i = fib_index(m, hash);
  if (*meta_at(m, i) == META_EMPTY) {
    place_item(m, i, 0x00u, (FrKV){fr_any_copy(key), fr_any_none()});
    m->base.size += 1;
    *out = i;
    return 1;
  }
  if (!is_head(*meta_at(m, i))) {
    return is_full(m) ? 0 : dense_spare_head(m, i, key, out);
  }
  next = i;
  last = i;
  while (next != FR_MAP_END) {
    int eq;
    if (fr_any_equal(key, &item_at(m, next)->kv.key, &eq) != 0) return -1;
    if (eq) {
      list_unlink(m, next);
      *out = next;
      return 1;
    }
    last = next;
    next = chain_next(m, next, *meta_at(m, next));
  }
  if (is_full(m)) return 0;
  if (!next_empty(m, last, &jump, out)) return 0;
  place_item(m, *out, 0x80u, (FrKV){fr_any_copy(key), fr_any_none()});
  set_jump(m, last, jump);
  m->base.size += 1;
  return 1;
}

/* Frees the blocks (entries already gone) and leaves an empty, slot-less map. */
static void dense_release_memory(FrDenseMap* m) {
  if (m->base.data != NULL && m->base.data_deleter != NULL) m->base.data_deleter(m->base.data);
  m->base.data = NULL;
  m->base.data_deleter = NULL;
  m->base.slots = 0;
  m->base.size = 0;
  m->fib_shift = 63;
}

static int dense_insert(FrDenseMap* m, FrKV kv, void** grown);

/* Rebuilds the entries of m, then kv, into a table twice as large. */
static int dense_rehash(FrDenseMap* m, FrKV kv, void** grown) {
  FrDenseMap* p = dense_empty(m->base.header.type_index, m->fib_shift - 1, m->base.slots * 2);
  uint64_t index;
  if (p == NULL) {
    release_kv(&kv);
    return -1;
  }
  for (index = m->head; index != FR_MAP_END;) {
    FrItem* item = item_at(m, index);
    FrKV moved = item->kv;
    void* rehashed = NULL;
    item->kv.key = fr_any_none();
    item->kv.value = fr_any_none();
    if (dense_insert(p, moved, &rehashed) != 0) {
      fr_decref(p);
      release_kv(&kv);
      return -1;
    }
    if (rehashed != NULL) {
      fr_decref(p);
      p = (FrDenseMap*)rehashed;
    }
    index = item->next;
  }
  {
    void* rehashed = NULL;
    if (dense_insert(p, kv, &rehashed) != 0) {
      fr_decref(p);
      return -1;
    }
    if (rehashed != NULL) {
      fr_decref(p);
      p = (FrDenseMap*)rehashed;
    }
  }
  dense_release_memory(m);
  *grown = p;
  return 0;
}

/* DenseMapBaseObj::InsertMaybeReHash: *grown is a new map or stays NULL (in place). */
static int dense_insert(FrDenseMap* m, FrKV kv, void** grown) {
  uint64_t slot;
  int status = dense_try_insert(m, &kv.key, &slot);
  if (status < 0) {
    release_kv(&kv);
    return -1;
  }
  if (status == 1) {
    FrItem* item = item_at(m, slot);
    fr_any_release(&item->kv.value);
    item->kv.value = kv.value;
    list_push_back(m, slot);
    fr_any_release(&kv.key);
    return 0;
  }
  return dense_rehash(m, kv, grown);
}

static void dense_clear(FrDenseMap* m) {
  uint64_t i;
  for (i = 0; i < num_blocks(m->base.slots) * BLOCK_CAP; ++i) {
    uint8_t* meta = meta_at(m, i);
    if (*meta != META_PROTECTED && *meta != META_EMPTY) {
      *meta = META_EMPTY;
      release_kv(&item_at(m, i)->kv);
    }
  }
  m->base.size = 0;
  m->head = FR_MAP_END;
  m->tail = FR_MAP_END;
}

static int dense_erase_at(FrDenseMap* m, uint64_t i) {
  uint8_t meta = *meta_at(m, i);
  m->base.size -= 1;
  if (kProbe[meta & 0x7Fu] == 0) {
    if (!is_head(meta)) {
      uint64_t prev;
      if (dense_find_prev(m, i, &prev) != 0) return -1;
      set_jump(m, prev, 0);
    }
    list_unlink(m, i);
    release_kv(&item_at(m, i)->kv);
    *meta_at(m, i) = META_EMPTY;
  } else {
    uint64_t last = chain_next(m, i, meta), prev = i;
    FrItem* item;
    while (kProbe[*meta_at(m, last) & 0x7Fu] != 0) {
      prev = last;
      last = chain_next(m, last, *meta_at(m, last));
    }
    list_unlink(m, i);
    item = item_at(m, i);
    release_kv(&item->kv);
    item->kv = item_at(m, last)->kv;
    list_replace(m, last, i);
    item_at(m, last)->kv.key = fr_any_none();
    item_at(m, last)->kv.value = fr_any_none();
    *meta_at(m, last) = META_EMPTY;
    set_jump(m, prev, 0);
  }
  return 0;
}

static FrDenseMap* dense_copy(const FrDenseMap* from, int32_t type_index) {
  FrDenseMap* p = dense_empty(type_index, from->fib_shift, from->base.slots);
  uint64_t i;
  if (p == NULL) return NULL;
  p->base.size = from->base.size;
  p->head = from->head;
  p->tail = from->tail;
  for (i = 0; i < num_blocks(from->base.slots) * BLOCK_CAP; ++i) {
    uint8_t meta = *meta_at(from, i);
    *meta_at(p, i) = meta;
    if (meta != META_EMPTY) {
      FrItem* src = item_at(from, i);
      FrItem* dst = item_at(p, i);
      dst->kv.key = fr_any_copy(&src->kv.key);
      dst->kv.value = fr_any_copy(&src->kv.value);
      dst->prev = src->prev;
      dst->next = src->next;
    }
  }
  return p;
}

/* ---------------------------------------------------------- small layout */

static FrMapBase* small_empty(int32_t type_index, uint64_t n) {
  FrMapBase* m;
  if (n < SMALL_INIT_SLOTS) n = SMALL_INIT_SLOTS;
  m = (FrMapBase*)fr_object_alloc(sizeof(FrMapBase) + n * sizeof(FrKV), type_index, map_deleter);
  if (m == NULL) return NULL;
  m->data = (char*)m + sizeof(FrMapBase);
  m->size = 0;
  m->slots = n | FR_MAP_SMALL_TAG;
  m->data_deleter = NULL;
  return m;
}

static int small_find(const FrMapBase* m, const TVMFFIAny* key, uint64_t* out) {
  FrKV* kv = small_entries(m);
  uint64_t i;
  for (i = 0; i < m->size; ++i) {
    int eq;
    if (fr_any_equal(&kv[i].key, key, &eq) != 0) return -1;
    if (eq) {
      *out = i;
      return 1;
    }
  }
  *out = m->size;
  return 0;
}

/* A small map of n slots holding copies of entries[0:count] (no de-duplication). */
static FrMapBase* small_from_entries(int32_t type_index, uint64_t n, const FrKV* entries,
                                     uint64_t count) {
  FrMapBase* m = small_empty(type_index, n);
  uint64_t i;
  if (m == NULL) return NULL;
  for (i = 0; i < count; ++i) {
    small_entries(m)[i].key = fr_any_copy(&entries[i].key);
    small_entries(m)[i].value = fr_any_copy(&entries[i].value);
  }
  m->size = count;
  return m;
}

static int small_insert(FrMapBase* m, FrKV kv, void** grown) {
  uint64_t index, next_size;
  FrMapBase* bigger;
  void* again = NULL;
  int found = small_find(m, &kv.key, &index);
  if (found < 0) {
    release_kv(&kv);
    return -1;
  }
  if (found) {
    FrKV* slot = &small_entries(m)[index];
    fr_any_release(&slot->value);
    slot->value = kv.value;
    fr_any_release(&kv.key);
    return 0;
  }
  if (m->size < small_num_slots(m)) {
    small_entries(m)[m->size] = kv;
    m->size += 1;
    return 0;
  }
  next_size = small_num_slots(m) * 2;
  if (next_size < SMALL_INIT_SLOTS) next_size = SMALL_INIT_SLOTS;
  if (next_size > SMALL_MAX_SLOTS) next_size = SMALL_MAX_SLOTS;
  bigger = small_from_entries(m->header.type_index, next_size, small_entries(m), m->size);
  if (bigger == NULL) {
    release_kv(&kv);
    return -1;
  }
  if (small_insert(bigger, kv, &again) != 0) {
    fr_decref(bigger);
    return -1;
  }
  *grown = bigger;
  return 0;
}

/* MapBaseObj::CreateFromRange over copies of entries[0:count]. */
void* fr_map_from_range(int32_t type_index, const FrKV* entries, uint64_t count) {
  uint64_t i;
  if (count < SMALL_MAX_SLOTS) {
    FrMapBase* m;
    if (count < 2) return small_from_entries(type_index, count, entries, count);
    m = small_empty(type_index, count);
    if (m == NULL) return NULL;
    for (i = 0; i < count; ++i) {
      void* grown = NULL;
      FrKV kv = {fr_any_copy(&entries[i].key), fr_any_copy(&entries[i].value)};
      if (small_insert(m, kv, &grown) != 0) {
        fr_decref(m);
        return NULL;
      }
      if (grown != NULL) {
        fr_decref(m);
        m = (FrMapBase*)grown;
      }
    }
    return m;
  } else {
    uint32_t fib_shift;
    uint64_t n_slots;
    FrDenseMap* m;
    table_size_for(count, &fib_shift, &n_slots);
    m = dense_empty(type_index, fib_shift, n_slots);
    if (m == NULL) return NULL;
    for (i = 0; i < count; ++i) {
      void* grown = NULL;
      FrKV kv = {fr_any_copy(&entries[i].key), fr_any_copy(&entries[i].value)};
      if (dense_insert(m, kv, &grown) != 0) {
        fr_decref(m);
        return NULL;
      }
      if (grown != NULL) {
        fr_decref(m);
        m = (FrDenseMap*)grown;
      }
    }
    return m;
  }
}

/* MapBaseObj::InsertMaybeReHash. */
static int map_insert(void* map, FrKV kv, void** grown) {
  FrMapBase* base = (FrMapBase*)map;
  *grown = NULL;
  if (fr_map_is_small(base)) {
    uint64_t slots = small_num_slots(base);
    if (slots < SMALL_MAX_SLOTS || base->size < slots) return small_insert(base, kv, grown);
    if (slots == SMALL_MAX_SLOTS) {
      void* again = NULL;
      FrDenseMap* dense =
          (FrDenseMap*)fr_map_from_range(base->header.type_index, small_entries(base), base->size);
      if (dense == NULL) {
        release_kv(&kv);
        return -1;
      }
      if (dense_insert(dense, kv, &again) != 0) {
        fr_decref(dense);
        return -1;
      }
      if (again != NULL) {
        fr_decref(dense);
        dense = (FrDenseMap*)again;
      }
      *grown = dense;
      return 0;
    }
    release_kv(&kv);
    return 0;
  }
  return dense_insert((FrDenseMap*)base, kv, grown);
}

/* ------------------------------------------------------ whole-map operations */

static void small_clear(FrMapBase* m) {
  uint64_t i;
  for (i = 0; i < m->size; ++i) release_kv(&small_entries(m)[i]);
  m->size = 0;
}

/* Frees what a map owns (the destructor of Small/DenseMapBaseObj). */
static void map_destroy(FrMapBase* m) {
  if (fr_map_is_small(m)) {
    small_clear(m);
    if (m->data_deleter != NULL) {
      m->data_deleter(m->data);
      m->slots = 0;
      m->data = NULL;
      m->data_deleter = NULL;
    }
  } else {
    FrDenseMap* d = (FrDenseMap*)m;
    if (d->base.data != NULL) dense_clear(d);
    dense_release_memory(d);
  }
}

static void map_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) map_destroy((FrMapBase*)self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* Releases the map whose inline storage another small map now uses. */
static void inplace_small_data_deleter(void* data) {
  fr_decref((char*)data - sizeof(FrMapBase));
}

/* MapBaseObj::InplaceSwitchTo: self takes over other's storage; other is consumed. */
static void map_switch_to(FrMapBase* self, void* other_ptr) {
  FrMapBase* other = (FrMapBase*)other_ptr;
  map_destroy(self);
  if (fr_map_is_small(other)) {
    self->size = other->size;
    self->slots = other->slots;
    self->data = other->data;
    if (other->data_deleter != NULL) {
      self->data_deleter = other->data_deleter;
      other->data_deleter = NULL;
      other->data = NULL;
      other->size = 0;
      other->slots = 0;
      fr_decref(other);
    } else {
      /* other's entries live inline in other: keep other alive as the storage */
      self->data_deleter = inplace_small_data_deleter;
      other->data = NULL;
      other->size = 0;
      other->slots = 0;
    }
  } else {
    FrDenseMap* d = (FrDenseMap*)self;
    FrDenseMap* o = (FrDenseMap*)other;
    d->base.size = o->base.size;
    d->base.slots = o->base.slots;
    d->base.data = o->base.data;
    d->base.data_deleter = o->base.data_deleter;
    d->fib_shift = o->fib_shift;
    d->head = o->head;
    d->tail = o->tail;
    o->base.data = NULL;
    o->base.data_deleter = NULL;
    o->base.size = 0;
    o->base.slots = 0;
    fr_decref(o);
  }
}

/* ------------------------------------------------------------- interface */

void* fr_map_new(int32_t type_index) { return small_empty(type_index, SMALL_INIT_SLOTS); }

int fr_map_find(void* map, const TVMFFIAny* key, TVMFFIAny** value_slot) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) {
    uint64_t index;
    int found = small_find(m, key, &index);
    if (found == 1) *value_slot = &small_entries(m)[index].value;
    return found;
  } else {
    int status;
    uint64_t slot = dense_search((FrDenseMap*)m, key, &status);
    if (status != 0) return -1;
    if (slot == FR_MAP_END) return 0;
    *value_slot = &item_at((FrDenseMap*)m, slot)->kv.value;
    return 1;
  }
}

int fr_map_set(void** map_ref, TVMFFIAny key, TVMFFIAny value) {
  FrMapBase* m = (FrMapBase*)*map_ref;
  void* grown = NULL;
  FrKV kv;
  kv.key = key;
  kv.value = value;
  if (map_insert(m, kv, &grown) != 0) return -1;
  if (grown == NULL) return 0;
  if (m->header.type_index == kTVMFFIDict) {
    map_switch_to(m, grown);
  } else {
    *map_ref = grown;
    fr_decref(m);
  }
  return 0;
}

int fr_map_erase(void* map, const TVMFFIAny* key) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) {
    uint64_t index;
    int found = small_find(m, key, &index);
    FrKV* kv = small_entries(m);
    if (found <= 0) return found;
    release_kv(&kv[index]);
    if (index + 1 < m->size) {
      memmove(&kv[index], &kv[index + 1], (m->size - index - 1) * sizeof(FrKV));
    }
    m->size -= 1;
    return 0;
  } else {
    int status;
    uint64_t slot = dense_search((FrDenseMap*)m, key, &status);
    if (status != 0) return -1;
    if (slot == FR_MAP_END) return 0;
    return dense_erase_at((FrDenseMap*)m, slot);
  }
}

void fr_map_clear(void* map) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) {
    small_clear(m);
  } else if (m->data != NULL) {
    dense_clear((FrDenseMap*)m);
  }
}

void* fr_map_copy(void* map, int32_t type_index) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) return small_from_entries(type_index, m->size, small_entries(m), m->size);
  return dense_copy((FrDenseMap*)m, type_index);
}

uint64_t fr_map_begin(const void* map) {
  const FrMapBase* m = (const FrMapBase*)map;
  if (fr_map_is_small(m)) return 0;
  return ((const FrDenseMap*)m)->head;
}

uint64_t fr_map_end(const void* map) {
  const FrMapBase* m = (const FrMapBase*)map;
  return fr_map_is_small(m) ? m->size : FR_MAP_END;
}

uint64_t fr_map_next(const void* map, uint64_t position) {
  const FrMapBase* m = (const FrMapBase*)map;
  if (fr_map_is_small(m)) return position + 1 < m->size ? position + 1 : m->size;
  if (position == FR_MAP_END) return position;
  return item_at((const FrDenseMap*)m, position)->next;
}

int fr_map_position_valid(const void* map, uint64_t position) {
  const FrMapBase* m = (const FrMapBase*)map;
  uint8_t meta;
  if (fr_map_is_small(m)) return position <= m->size;
  if (position == FR_MAP_END) return 1;
  if (position >= m->slots || m->data == NULL) return 0;
  meta = *meta_at((const FrDenseMap*)m, position);
  return meta != META_EMPTY && meta != META_PROTECTED;
}

FrKV* fr_map_entry(const void* map, uint64_t position) {
  const FrMapBase* m = (const FrMapBase*)map;
  if (fr_map_is_small(m)) return &small_entries(m)[position];
  return &item_at((const FrDenseMap*)m, position)->kv;
}
