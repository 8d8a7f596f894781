/*
 * dispatch.c -- the exported TVMFFI* functions of libtvm_ffi.so.
 *
 * Each export is one indirect call through the active table: the built-ins
 * until a runtime installs itself, then that runtime's table with its NULL
 * slots filled from the built-ins. The active pointer is swapped atomically,
 * and the table it points at is never written while active.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_ffi_runtime.h>

#include "builtins.h"
#include "context_symbols.h"

static TVMFFIRuntimeTable installed;
static const TVMFFIRuntimeTable* active = NULL;
static char installed_name[128];

static const TVMFFIRuntimeTable* active_table(void) {
  const TVMFFIRuntimeTable* table = __atomic_load_n(&active, __ATOMIC_ACQUIRE);
  return table != NULL ? table : tvm_ffi_builtins_table();
}

/* ------------------------------------------------------------ the exports */

void TVMFFIGetVersion(TVMFFIVersion* out_version) {
  out_version->major = TVM_FFI_VERSION_MAJOR;
  out_version->minor = TVM_FFI_VERSION_MINOR;
  out_version->patch = TVM_FFI_VERSION_PATCH;
}

#define FORWARD_VALUE_(ret, name, params, args, fail) \
  ret name params { return active_table()->name args; }
#define FORWARD_VOID_(name, params, args) \
  void name params { active_table()->name args; }
/* Struct-returning exports are written out below. */
#define FORWARD_OUTPARAM_(ret, name, params, args)
TVM_FFI_RUNTIME_SLOTS(FORWARD_VALUE_, FORWARD_VOID_, FORWARD_OUTPARAM_)

TVMFFIByteArray TVMFFIBigIntGetContentByteArray(const TVMFFIAny* value) {
  TVMFFIByteArray out;
  active_table()->TVMFFIBigIntGetContentByteArray(value, &out);
  return out;
}

/* ------------------------------------------------------ runtime management */

int tvm_ffi_runtime_install(const TVMFFIRuntimeTable* table) {
  const TVMFFIRuntimeTable* builtins = tvm_ffi_builtins_table();
  int error_slots;
  if (__atomic_load_n(&active, __ATOMIC_ACQUIRE) != NULL) return kTVMFFIRuntimeAlreadyInstalled;
  if (table == NULL || table->struct_size != sizeof(TVMFFIRuntimeTable) || table->name == NULL ||
      table->name[0] == '\0' || strlen(table->name) >= sizeof(installed_name)) {
    return kTVMFFIRuntimeBadTable;
  }
  error_slots = (table->TVMFFIErrorSetRaised != NULL) +
                (table->TVMFFIErrorSetRaisedFromCStr != NULL) +
                (table->TVMFFIErrorSetRaisedFromCStrParts != NULL) +
                (table->TVMFFIErrorMoveFromRaised != NULL);
  if (error_slots != 0 && error_slots != 4) return kTVMFFIRuntimeBadTable;

  installed = *table;
  strcpy(installed_name, table->name);
  installed.name = installed_name;
#define FILL_VALUE_(ret, name, params, args, fail) \
  if (installed.name == NULL) installed.name = builtins->name;
#define FILL_VOID_(name, params, args) \
  if (installed.name == NULL) installed.name = builtins->name;
#define FILL_OUTPARAM_(ret, name, params, args) \
  if (installed.name == NULL) installed.name = builtins->name;
  TVM_FFI_RUNTIME_SLOTS(FILL_VALUE_, FILL_VOID_, FILL_OUTPARAM_)
  tvm_ffi_context_symbols_wrap(&installed);
  tvm_ffi_builtins_set_serving_runtime(installed_name);
  __atomic_store_n(&active, &installed, __ATOMIC_RELEASE);
  return kTVMFFIRuntimeInstalled;
}

int tvm_ffi_runtime_uninstall(const char* name) {
  const TVMFFIRuntimeTable* current = __atomic_load_n(&active, __ATOMIC_ACQUIRE);
  if (current == NULL || name == NULL || strcmp(name, installed_name) != 0) return -1;
  __atomic_store_n(&active, NULL, __ATOMIC_RELEASE);
  tvm_ffi_builtins_set_serving_runtime(NULL);
  return 0;
}

const char* tvm_ffi_runtime_name(void) {
  return __atomic_load_n(&active, __ATOMIC_ACQUIRE) != NULL ? installed_name : NULL;
}

const TVMFFIRuntimeTable* tvm_ffi_runtime_builtins(void) { return tvm_ffi_builtins_table(); }

/* ------------------------------------------------------ generic deleters */

void tvm_ffi_runtime_free_object(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* ------------------------------------------- BigInt's __any_hash__/__any_equal__ */

/* BigIntObj: header, the word count, then the words; an int is its one word. */
static const int64_t* bigint_words(const TVMFFIAny* value, uint64_t* count) {
  if (value->type_index == kTVMFFIBigInt) {
    const char* obj = (const char*)value->v_obj;
    *count = *(const uint64_t*)(obj + sizeof(TVMFFIObject));
    return (const int64_t*)(obj + sizeof(TVMFFIObject) + sizeof(uint64_t));
  }
  *count = 1;
  return &value->v_int64;
}

TVMFFIAny tvm_ffi_runtime_bigint_any_hash(const TVMFFIAny* value) {
  /* upstream's StableHashBytes of the words: 8-byte words folded modulo 2^31 - 1 */
  uint64_t count, i, hash = 0;
  const int64_t* words = bigint_words(value, &count);
  TVMFFIAny result;
  for (i = 0; i < count; ++i) {
    hash = (hash * 1099511628211ULL + (uint64_t)words[i]) % 2147483647ULL;
  }
  result.type_index = kTVMFFIInt;
  result.zero_padding = 0;
  result.v_int64 = (int64_t)hash;
  return result;
}

TVMFFIAny tvm_ffi_runtime_bigint_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs) {
  uint64_t lhs_count, rhs_count;
  const int64_t* lhs_words = bigint_words(lhs, &lhs_count);
  const int64_t* rhs_words = bigint_words(rhs, &rhs_count);
  TVMFFIAny result;
  result.type_index = kTVMFFIBool;
  result.zero_padding = 0;
  result.v_int64 = lhs_count == rhs_count &&
                   memcmp(lhs_words, rhs_words, lhs_count * sizeof(int64_t)) == 0;
  return result;
}

/* ------------------------------------ StructuralKey's __any_hash__/__any_equal__ */

/* StructuralKeyObj: header, the key (Any at 24), its structural hash (int64 at 40). */
#define STRUCTURAL_KEY_OF(value) ((const char*)(value)->v_obj)

TVMFFIAny tvm_ffi_runtime_structural_key_any_hash(const TVMFFIAny* value) {
  TVMFFIAny result;
  result.type_index = kTVMFFIInt;
  result.zero_padding = 0;
  result.v_int64 = *(const int64_t*)(STRUCTURAL_KEY_OF(value) + 40);
  return result;
}

TVMFFIAny tvm_ffi_runtime_structural_key_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs) {
  static const TVMFFIByteArray kName = {"ffi.StructuralEqual", 19};
  TVMFFIAny result, args[4];
  TVMFFIObjectHandle equal = NULL, error = NULL;
  result.type_index = kTVMFFIBool;
  result.zero_padding = 0;
  result.v_int64 = lhs->v_obj == rhs->v_obj;
  if (result.v_int64 ||
      *(const int64_t*)(STRUCTURAL_KEY_OF(lhs) + 40) != *(const int64_t*)(STRUCTURAL_KEY_OF(rhs) + 40)) {
    return result;
  }
  args[0] = *(const TVMFFIAny*)(STRUCTURAL_KEY_OF(lhs) + 24);
  args[1] = *(const TVMFFIAny*)(STRUCTURAL_KEY_OF(rhs) + 24);
  args[2] = result; /* false: map_free_vars, skip_tensor_content */
  args[3] = result;
  if (TVMFFIFunctionGetGlobal(&kName, &equal) == 0 && equal != NULL &&
      TVMFFIFunctionCall(equal, args, 4, &result) == 0) {
    TVMFFIObjectDecRef(equal);
    return result;
  }
  if (equal != NULL) TVMFFIObjectDecRef(equal);
  TVMFFIErrorMoveFromRaised(&error);
  result.type_index = kTVMFFIError;
  result.v_obj = (TVMFFIObject*)error;
  return result;
}

void tvm_ffi_runtime_free_sequence(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFISeqCell* cell = (TVMFFISeqCell*)((char*)self + sizeof(TVMFFIObject));
    TVMFFIAny* items = (TVMFFIAny*)cell->data;
    int64_t i;
    for (i = 0; i < cell->size; ++i) {
      if (items[i].type_index >= kTVMFFIStaticObjectBegin && items[i].v_obj != NULL) {
        TVMFFIObjectDecRef(items[i].v_obj);
      }
    }
    cell->size = 0;
    if (cell->data_deleter != NULL) cell->data_deleter(cell->data);
    cell->data = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

