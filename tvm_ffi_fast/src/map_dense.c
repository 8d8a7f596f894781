/*
 * map_dense.c -- the dense layout of Map and Dict (DenseMapBaseObj): blocks of
 * 16 slots with one metadata byte each (empty, protected, or a chain head/tail
 * bit and a probe jump), chains walked by upstream's probe distances, the
 * insertion-order list through the items, growth by rehashing into a table
 * twice as large at 99% load. Separate from maps.c: the small layout and the
 * map interface do not depend on how a dense table probes.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/map_dense.py.
 */
#include "map_dense.h"

#include "runtime.h"

#define NUM_JUMPS 126

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

static uint64_t num_blocks(uint64_t slots) {
  return (slots + FR_DENSE_BLOCK_CAP - 1) / FR_DENSE_BLOCK_CAP;
}

static void free_block_data(void* data) { free(data); }

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
  uint8_t* meta = fr_dense_meta_at(m, i);
  *meta = (uint8_t)((*meta & 0x80u) | jump);
}

static int is_full(const FrDenseMap* m) {
  return (double)(m->base.size + 1) > (double)m->base.slots * 0.99;
}

static void list_unlink(FrDenseMap* m, uint64_t i) {
  FrDenseItem* item = fr_dense_item_at(m, i);
  if (item->prev == FR_MAP_END) {
    m->head = item->next;
  } else {
    fr_dense_item_at(m, item->prev)->next = item->next;
  }
  if (item->next == FR_MAP_END) {
    m->tail = item->prev;
  } else {
    fr_dense_item_at(m, item->next)->prev = item->prev;
  }
}

static void list_push_back(FrDenseMap* m, uint64_t i) {
  FrDenseItem* item = fr_dense_item_at(m, i);
  item->prev = m->tail;
  item->next = FR_MAP_END;
  if (m->tail != FR_MAP_END) fr_dense_item_at(m, m->tail)->next = i;
  if (m->head == FR_MAP_END) m->head = i;
  m->tail = i;
}

/* dst takes src's place in the insertion-order list. */
static void list_replace(FrDenseMap* m, uint64_t src, uint64_t dst) {
  FrDenseItem* s = fr_dense_item_at(m, src);
  FrDenseItem* d = fr_dense_item_at(m, dst);
  d->prev = s->prev;
  d->next = s->next;
  if (d->prev == FR_MAP_END) {
    m->head = dst;
  } else {
    fr_dense_item_at(m, d->prev)->next = dst;
  }
  if (d->next == FR_MAP_END) {
    m->tail = dst;
  } else {
    fr_dense_item_at(m, d->next)->prev = dst;
  }
}

/* Places an entry at slot i (head or tail of a chain) with fresh links. */
static void place_item(FrDenseMap* m, uint64_t i, uint8_t meta, FrKV kv) {
  FrDenseItem* item = fr_dense_item_at(m, i);
  *fr_dense_meta_at(m, i) = meta;
  item->kv = kv;
  item->prev = FR_MAP_END;
  item->next = FR_MAP_END;
}

FrDenseMap* fr_dense_empty(int32_t type_index, uint32_t fib_shift, uint64_t n_slots) {
  FrDenseMap* m = (FrDenseMap*)fr_object_alloc(sizeof(FrDenseMap), type_index, fr_map_deleter);
  uint64_t blocks = num_blocks(n_slots), b;
  if (m == NULL) return NULL;
  m->base.data = malloc(blocks == 0 ? 1 : blocks * FR_DENSE_BLOCK_BYTES);
  if (m->base.data == NULL) {
    free(m);
    fr_raise_oom();
    return NULL;
  }
  for (b = 0; b < blocks; ++b) {
    memset((char*)m->base.data + b * FR_DENSE_BLOCK_BYTES, 0xFF, FR_DENSE_BLOCK_CAP);
  }
  m->base.data_deleter = free_block_data;
  m->base.slots = n_slots;
  m->base.size = 0;
  m->fib_shift = fib_shift;
  m->head = FR_MAP_END;
  m->tail = FR_MAP_END;
  return m;
}

void fr_dense_table_size_for(uint64_t cap, uint32_t* fib_shift, uint64_t* n_slots) {
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
uint64_t fr_dense_search(const FrDenseMap* m, const TVMFFIAny* key, int* status) {
  uint64_t hash, i;
  *status = 0;
  if (m->base.size == 0) return FR_MAP_END;
  if (fr_any_hash(key, &hash) != 0) {
    *status = -1;
    return FR_MAP_END;
  }
  i = fib_index(m, hash);
  if (!is_head(*fr_dense_meta_at(m, i))) return FR_MAP_END;
  while (i != FR_MAP_END) {
    int eq;
    if (fr_any_equal(key, &fr_dense_item_at(m, i)->kv.key, &eq) != 0) {
      *status = -1;
      return FR_MAP_END;
    }
    if (eq) return i;
    i = chain_next(m, i, *fr_dense_meta_at(m, i));
  }
  return FR_MAP_END;
}

/* The slot whose chain link leads to slot i (which must not be a chain head). */
static int dense_find_prev(const FrDenseMap* m, uint64_t i, uint64_t* out) {
  uint64_t hash, prev, next;
  if (fr_any_hash(&fr_dense_item_at(m, i)->kv.key, &hash) != 0) return -1;
  next = fib_index(m, hash);
  prev = next;
  next = chain_next(m, next, *fr_dense_meta_at(m, next));
  while (next != i && next != FR_MAP_END) {
    prev = next;
    next = chain_next(m, next, *fr_dense_meta_at(m, next));
  }
  *out = prev;
  return 0;
}

/* The first empty slot probing from i: 1 found (jump and slot filled), 0 none. */
static int next_empty(const FrDenseMap* m, uint64_t i, uint8_t* jump, uint64_t* slot) {
  uint8_t idx;
  for (idx = 1; idx < NUM_JUMPS; ++idx) {
    uint64_t candidate = (i + kProbe[idx]) % m->base.slots;
    if (*fr_dense_meta_at(m, candidate) == FR_DENSE_META_EMPTY) {
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
    FrDenseItem* from;
    if (!next_empty(m, w, &jump, &empty)) return 0;
    from = fr_dense_item_at(m, r);
    place_item(m, empty, 0x80u, from->kv);
    list_replace(m, r, empty);
    from->kv.key = fr_any_none();
    from->kv.value = fr_any_none();
    r_meta = *fr_dense_meta_at(m, r);
    *fr_dense_meta_at(m, r) = is_first ? FR_DENSE_META_PROTECTED : FR_DENSE_META_EMPTY;
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
  if (*fr_dense_meta_at(m, i) == FR_DENSE_META_EMPTY) {
    place_item(m, i, 0x00u, (FrKV){fr_any_copy(key), fr_any_none()});
    m->base.size += 1;
    *out = i;
    return 1;
  }
  if (!is_head(*fr_dense_meta_at(m, i))) {
    return is_full(m) ? 0 : dense_spare_head(m, i, key, out);
  }
  next = i;
  last = i;
  while (next != FR_MAP_END) {
    int eq;
    if (fr_any_equal(key, &fr_dense_item_at(m, next)->kv.key, &eq) != 0) return -1;
    if (eq) {
      list_unlink(m, next);
      *out = next;
      return 1;
    }
    last = next;
    next = chain_next(m, next, *fr_dense_meta_at(m, next));
  }
  if (is_full(m)) return 0;
  if (!next_empty(m, last, &jump, out)) return 0;
  place_item(m, *out, 0x80u, (FrKV){fr_any_copy(key), fr_any_none()});
  set_jump(m, last, jump);
  m->base.size += 1;
  return 1;
}

/* Frees the blocks (entries already gone) and leaves an empty, slot-less map. */
void fr_dense_release_memory(FrDenseMap* m) {
  if (m->base.data != NULL && m->base.data_deleter != NULL) m->base.data_deleter(m->base.data);
  m->base.data = NULL;
  m->base.data_deleter = NULL;
  m->base.slots = 0;
  m->base.size = 0;
  m->fib_shift = 63;
}

/* Rebuilds the entries of m, then kv, into a table twice as large. */
static int dense_rehash(FrDenseMap* m, FrKV kv, void** grown) {
  FrDenseMap* p = fr_dense_empty(m->base.header.type_index, m->fib_shift - 1, m->base.slots * 2);
  uint64_t index;
  if (p == NULL) {
    fr_map_release_kv(&kv);
    return -1;
  }
  for (index = m->head; index != FR_MAP_END;) {
    FrDenseItem* item = fr_dense_item_at(m, index);
    FrKV moved = item->kv;
    void* rehashed = NULL;
    item->kv.key = fr_any_none();
    item->kv.value = fr_any_none();
    if (fr_dense_insert(p, moved, &rehashed) != 0) {
      fr_decref(p);
      fr_map_release_kv(&kv);
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
    if (fr_dense_insert(p, kv, &rehashed) != 0) {
      fr_decref(p);
      return -1;
    }
    if (rehashed != NULL) {
      fr_decref(p);
      p = (FrDenseMap*)rehashed;
    }
  }
  fr_dense_release_memory(m);
  *grown = p;
  return 0;
}

/* DenseMapBaseObj::InsertMaybeReHash: *grown is a new map or stays NULL (in place). */
int fr_dense_insert(FrDenseMap* m, FrKV kv, void** grown) {
  uint64_t slot;
  int status = dense_try_insert(m, &kv.key, &slot);
  if (status < 0) {
    fr_map_release_kv(&kv);
    return -1;
  }
  if (status == 1) {
    FrDenseItem* item = fr_dense_item_at(m, slot);
    fr_any_release(&item->kv.value);
    item->kv.value = kv.value;
    list_push_back(m, slot);
    fr_any_release(&kv.key);
    return 0;
  }
  return dense_rehash(m, kv, grown);
}

void fr_dense_clear(FrDenseMap* m) {
  uint64_t i;
  for (i = 0; i < num_blocks(m->base.slots) * FR_DENSE_BLOCK_CAP; ++i) {
    uint8_t* meta = fr_dense_meta_at(m, i);
    if (*meta != FR_DENSE_META_PROTECTED && *meta != FR_DENSE_META_EMPTY) {
      *meta = FR_DENSE_META_EMPTY;
      fr_map_release_kv(&fr_dense_item_at(m, i)->kv);
    }
  }
  m->base.size = 0;
  m->head = FR_MAP_END;
  m->tail = FR_MAP_END;
}

int fr_dense_erase_at(FrDenseMap* m, uint64_t i) {
  uint8_t meta = *fr_dense_meta_at(m, i);
  m->base.size -= 1;
  if (kProbe[meta & 0x7Fu] == 0) {
    if (!is_head(meta)) {
      uint64_t prev;
      if (dense_find_prev(m, i, &prev) != 0) return -1;
      set_jump(m, prev, 0);
    }
    list_unlink(m, i);
    fr_map_release_kv(&fr_dense_item_at(m, i)->kv);
    *fr_dense_meta_at(m, i) = FR_DENSE_META_EMPTY;
  } else {
    uint64_t last = chain_next(m, i, meta), prev = i;
    FrDenseItem* item;
    while (kProbe[*fr_dense_meta_at(m, last) & 0x7Fu] != 0) {
      prev = last;
      last = chain_next(m, last, *fr_dense_meta_at(m, last));
    }
    list_unlink(m, i);
    item = fr_dense_item_at(m, i);
    fr_map_release_kv(&item->kv);
    item->kv = fr_dense_item_at(m, last)->kv;
    list_replace(m, last, i);
    fr_dense_item_at(m, last)->kv.key = fr_any_none();
    fr_dense_item_at(m, last)->kv.value = fr_any_none();
    *fr_dense_meta_at(m, last) = FR_DENSE_META_EMPTY;
    set_jump(m, prev, 0);
  }
  return 0;
}

FrDenseMap* fr_dense_copy(const FrDenseMap* from, int32_t type_index) {
  FrDenseMap* p = fr_dense_empty(type_index, from->fib_shift, from->base.slots);
  uint64_t i;
  if (p == NULL) return NULL;
  p->base.size = from->base.size;
  p->head = from->head;
  p->tail = from->tail;
  for (i = 0; i < num_blocks(from->base.slots) * FR_DENSE_BLOCK_CAP; ++i) {
    uint8_t meta = *fr_dense_meta_at(from, i);
    *fr_dense_meta_at(p, i) = meta;
    if (meta != FR_DENSE_META_EMPTY) {
      FrDenseItem* src = fr_dense_item_at(from, i);
      FrDenseItem* dst = fr_dense_item_at(p, i);
      dst->kv.key = fr_any_copy(&src->kv.key);
      dst->kv.value = fr_any_copy(&src->kv.value);
      dst->prev = src->prev;
      dst->next = src->next;
    }
  }
  return p;
}
