/*
 * type_attrs.c -- type attribute columns (TVMFFITypeRegisterAttr,
 * TVMFFIGetTypeAttrColumn): one column per attribute name, indexed by type
 * index from 0, an entry set once; the __any_hash__ / __any_equal__ columns
 * the map hashing consults on every object key. Separate from registry.c:
 * columns are keyed by name, not by type, and share only the registry lock.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/registry.py.
 */
#include "type_table.h"

#include "registry.h"

/* A type attribute column; the TVMFFITypeAttrColumn part is what callers see. */
typedef struct {
  TVMFFITypeAttrColumn column;
  TVMFFIAny* storage;
  size_t capacity;
} FrColumn;

static FrStrMap g_columns;      /* values: FrColumn* */
static const TVMFFITypeAttrColumn* g_any_hash_column = NULL;
static const TVMFFITypeAttrColumn* g_any_equal_column = NULL;

static FrColumn* column_get_or_create(const char* name, size_t size) {
  FrColumn* column = (FrColumn*)fr_strmap_get(&g_columns, name, size);
  if (column != NULL) return column;
  column = (FrColumn*)calloc(1, sizeof(FrColumn));
  if (column == NULL || fr_strmap_put(&g_columns, name, size, column) != 0) {
    free(column);
    fr_raise_oom();
    return NULL;
  }
  return column;
}

int fr_type_register_attr(int32_t type_index, const TVMFFIByteArray* attr_name,
                          const TVMFFIAny* attr_value) {
  FrColumn* column;
  TVMFFIAny* slot;
  FR_REQUIRE(attr_name, "TVMFFITypeRegisterAttr", "attr_name");
  /* a NULL value is tolerated for the sentinel index 0, which only makes the column */
  if (type_index != kTVMFFINone) FR_REQUIRE(attr_value, "TVMFFITypeRegisterAttr", "attr_value");
  fr_mutex_lock(&fr_registry_mutex);
  column = column_get_or_create(attr_name->data, attr_name->size);
  if (column == NULL) goto fail;
  if (type_index == kTVMFFINone) {
    fr_mutex_unlock(&fr_registry_mutex);
    return 0;
  }
  if (type_index < 0) {
    /* upstream resizes the column to index + 1 entries: std::vector refuses a negative
       size with length_error (at -1 it writes out of bounds instead) */
    fr_raise("InternalError", "vector::_M_fill_insert");
    goto fail;
  }
  if ((size_t)type_index >= (size_t)column->column.size) {
    size_t need = (size_t)type_index + 1, i;
    if (need > column->capacity) {
      size_t cap = column->capacity == 0 ? need : column->capacity;
      TVMFFIAny* grown;
      while (cap < need) cap *= 2;
      grown = (TVMFFIAny*)realloc(column->storage, cap * sizeof(TVMFFIAny));
      if (grown == NULL) {
        fr_raise_oom();
        goto fail;
      }
      column->storage = grown;
      column->capacity = cap;
    }
    for (i = (size_t)column->column.size; i < need; ++i) column->storage[i] = fr_any_none();
    column->column.data = column->storage;
    column->column.size = (int32_t)need;
    column->column.begin_index = 0;
  }
  slot = &column->storage[type_index];
  if (slot->type_index != kTVMFFINone) {
    fr_raise("RuntimeError",
             "TypeAttr `%.*s` is already registered for type index %d. To update the stored "
             "value, register a mutable container (e.g., Dict/List) once and mutate it in place "
             "on subsequent calls.",
             (int)attr_name->size, attr_name->data, (int)type_index);
    goto fail;
  }
  if (fr_any_view_to_owned(attr_value, slot) != 0) goto fail;
  fr_mutex_unlock(&fr_registry_mutex);
  return 0;
fail:
  fr_mutex_unlock(&fr_registry_mutex);
  return -1;
}

int fr_register_attr_cstr(int32_t type_index, const char* name, const TVMFFIAny* value) {
  TVMFFIByteArray bytes;
  bytes.data = name;
  bytes.size = strlen(name);
  return fr_type_register_attr(type_index, &bytes, value);
}

const TVMFFITypeAttrColumn* fr_get_type_attr_column(const TVMFFIByteArray* attr_name) {
  FrColumn* column;
  if (attr_name == NULL) {
    fr_raise("ValueError", "TVMFFIGetTypeAttrColumn: attr_name must not be NULL");
    return NULL;
  }
  fr_mutex_lock(&fr_registry_mutex);
  column = (FrColumn*)fr_strmap_get(&g_columns, attr_name->data, attr_name->size);
  fr_mutex_unlock(&fr_registry_mutex);
  return column != NULL ? &column->column : NULL;
}

TVMFFIAny fr_type_attr_entry(const TVMFFITypeAttrColumn* column, int32_t type_index) {
  TVMFFIAny entry = fr_any_none();
  int32_t offset;
  if (column == NULL) return entry;
  fr_mutex_lock(&fr_registry_mutex); /* a registration may be moving the column's storage */
  offset = type_index - column->begin_index;
  if (column->data != NULL && offset >= 0 && offset < column->size) entry = column->data[offset];
  fr_mutex_unlock(&fr_registry_mutex);
  return entry;
}

const TVMFFITypeAttrColumn* fr_any_hash_column(void) { return g_any_hash_column; }
const TVMFFITypeAttrColumn* fr_any_equal_column(void) { return g_any_equal_column; }

int fr_type_attrs_init(void) {
  TVMFFIByteArray name;
  /* columns every object key consults, present from the start */
  name.data = "__any_hash__";
  name.size = strlen(name.data);
  if (fr_type_register_attr(kTVMFFINone, &name, NULL) != 0) return -1;
  g_any_hash_column = fr_get_type_attr_column(&name);
  name.data = "__any_equal__";
  name.size = strlen(name.data);
  if (fr_type_register_attr(kTVMFFINone, &name, NULL) != 0) return -1;
  g_any_equal_column = fr_get_type_attr_column(&name);
  return 0;
}
