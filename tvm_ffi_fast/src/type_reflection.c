/*
 * type_reflection.c -- a type's reflection records: fields (a duplicate name
 * is an error, one shadowing an ancestor's a warning, as upstream), methods
 * and metadata (registered once), each copied into storage that stays for the
 * process. Separate from registry.c: the records hang off a type's entry but
 * do not take part in index allocation.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/registry.py.
 */
#include "type_table.h"

#include <stdio.h>

#include "registry.h"

int fr_type_register_field(int32_t type_index, const TVMFFIFieldInfo* info) {
  FrTypeEntry* entry;
  TVMFFIFieldInfo field;
  int32_t i, d;
  FR_REQUIRE(info, "TVMFFITypeRegisterField", "info");
  fr_mutex_lock(&fr_registry_mutex);
  entry = fr_type_entry_or_raise(type_index);
  if (entry == NULL) goto fail;
  for (i = 0; i < entry->info.num_fields; ++i) {
    const TVMFFIByteArray* name = &entry->info.fields[i].name;
    if (name->size == info->name.size &&
        (name->size == 0 || memcmp(name->data, info->name.data, name->size) == 0)) {
      fr_raise("InternalError",
               "Check failed: (std::string_view(existing.name.data, existing.name.size) != "
               "new_name) is false: Duplicate field name \"%.*s\" in type \"%.*s\"",
               (int)info->name.size, info->name.data, (int)entry->info.type_key.size,
               entry->info.type_key.data);
      goto fail;
    }
  }
  for (d = 0; d < entry->info.type_depth; ++d) {
    const TVMFFITypeInfo* ancestor = entry->info.type_ancestors[d];
    for (i = 0; i < ancestor->num_fields; ++i) {
      const TVMFFIByteArray* name = &ancestor->fields[i].name;
      if (name->size == info->name.size &&
          (name->size == 0 || memcmp(name->data, info->name.data, name->size) == 0)) {
        fprintf(stderr,
                "[WARNING] Field \"%.*s\" in type \"%.*s\" duplicates an ancestor field in "
                "\"%.*s\". Child types should not re-register inherited fields.\n",
                (int)info->name.size, info->name.data, (int)entry->info.type_key.size,
                entry->info.type_key.data, (int)ancestor->type_key.size,
                ancestor->type_key.data);
      }
    }
  }
  field = *info;
  if (fr_registry_copy_bytes(info->name, &field.name) != 0 ||
      fr_registry_copy_bytes(info->doc, &field.doc) != 0 ||
      fr_registry_copy_bytes(info->metadata, &field.metadata) != 0) {
    goto fail;
  }
  if ((field.flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) && field.setter != NULL) {
    fr_incref(field.setter); /* kept for the process, as upstream's pool does */
  }
  if (info->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
    if (fr_any_view_to_owned(&info->default_value_or_factory, &field.default_value_or_factory) !=
        0) {
      goto fail;
    }
  } else {
    field.default_value_or_factory = fr_any_none();
  }
  if ((size_t)entry->info.num_fields == entry->field_capacity) {
    size_t cap = entry->field_capacity == 0 ? 4 : entry->field_capacity * 2;
    TVMFFIFieldInfo* grown =
        (TVMFFIFieldInfo*)realloc(entry->field_storage, cap * sizeof(TVMFFIFieldInfo));
    if (grown == NULL) {
      fr_raise_oom();
      goto fail;
    }
    entry->field_storage = grown;
    entry->field_capacity = cap;
  }
  entry->field_storage[entry->info.num_fields] = field;
  entry->info.fields = entry->field_storage;
  entry->info.num_fields += 1;
  fr_mutex_unlock(&fr_registry_mutex);
  return 0;
fail:
  fr_mutex_unlock(&fr_registry_mutex);
  return -1;
}

int fr_type_register_method(int32_t type_index, const TVMFFIMethodInfo* info) {
  FrTypeEntry* entry;
  TVMFFIMethodInfo method;
  FR_REQUIRE(info, "TVMFFITypeRegisterMethod", "info");
  fr_mutex_lock(&fr_registry_mutex);
  entry = fr_type_entry_or_raise(type_index);
  if (entry == NULL) goto fail;
  method = *info;
  if (fr_registry_copy_bytes(info->name, &method.name) != 0 ||
      fr_registry_copy_bytes(info->doc, &method.doc) != 0 ||
      fr_registry_copy_bytes(info->metadata, &method.metadata) != 0 ||
      fr_any_view_to_owned(&info->method, &method.method) != 0) {
    goto fail;
  }
  if ((size_t)entry->info.num_methods == entry->method_capacity) {
    size_t cap = entry->method_capacity == 0 ? 4 : entry->method_capacity * 2;
    TVMFFIMethodInfo* grown =
        (TVMFFIMethodInfo*)realloc(entry->method_storage, cap * sizeof(TVMFFIMethodInfo));
    if (grown == NULL) {
      fr_raise_oom();
      goto fail;
    }
    entry->method_storage = grown;
    entry->method_capacity = cap;
  }
  entry->method_storage[entry->info.num_methods] = method;
  entry->info.methods = entry->method_storage;
  entry->info.num_methods += 1;
  fr_mutex_unlock(&fr_registry_mutex);
  return 0;
fail:
  fr_mutex_unlock(&fr_registry_mutex);
  return -1;
}

int fr_type_register_metadata(int32_t type_index, const TVMFFITypeMetadata* metadata) {
  FrTypeEntry* entry;
  TVMFFITypeMetadata copy;
  FR_REQUIRE(metadata, "TVMFFITypeRegisterMetadata", "metadata");
  fr_mutex_lock(&fr_registry_mutex);
  entry = fr_type_entry_or_raise(type_index);
  if (entry == NULL) goto fail;
  if (entry->info.metadata != NULL) {
    fr_raise("RuntimeError",
             "Overriding %.*s, possible causes:\n"
             "- two ObjectDef<T>() calls for the same T \n"
             "- when we forget to assign _type_key to ObjectRef<Y> that inherits from T\n"
             "- another type with the same key is already registered\n"
             "Cross check the reflection registration.",
             (int)entry->info.type_key.size, entry->info.type_key.data);
    goto fail;
  }
  copy = *metadata;
  if (fr_registry_copy_bytes(metadata->doc, &copy.doc) != 0) goto fail;
  entry->metadata_storage = copy;
  entry->info.metadata = &entry->metadata_storage;
  fr_mutex_unlock(&fr_registry_mutex);
  return 0;
fail:
  fr_mutex_unlock(&fr_registry_mutex);
  return -1;
}
