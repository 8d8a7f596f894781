/*
 * slots.c -- the table tvm_ffi_fast installs behind libtvm_ffi.so.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/slots.py (the table and its
 * install), with tvm_ffi_ref/runtime/__init__.py (the order the runtime is set up in).
 *
 * The runtime's state (type registry, global functions, ...) is set up once,
 * in the order upstream's library sets up its own at load, so that the same
 * later registrations give the same type indices and the global functions
 * list in the same order. Slots left NULL are served by libtvm_ffi.so's
 * built-ins: reference counting (the header's atomic protocol), the raised
 * error slot and Error objects, the custom allocator slot, one-time handle
 * initialisation and backtraces.
 */
#include "slots.h"

#include "core.h"
#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static int g_init_status = -1;

static void init_runtime(void) {
  if (fr_registry_init() != 0) return;
  if (fr_reflection_init() != 0) return;
  if (fr_convert_attrs_init() != 0) return;
  if (fr_dataclass_init() != 0) return;
  if (fr_structural_init() != 0) return;
  if (fr_functions_register_globals() != 0) return;
  if (fr_containers_register_globals() != 0) return;
  if (fr_pyclass_register_globals() != 0) return;
  if (fr_dataclass_register_globals() != 0) return;
  if (fr_reflection_register_globals() != 0) return;
  if (fr_structural_register_globals() != 0) return;
  if (fr_module_register_globals() != 0) return;
  g_init_status = 0;
}

int tvm_ffi_fast_install(void) {
  TVMFFIRuntimeTable table;
  if (tvm_ffi_runtime_name() != NULL) return kTVMFFIRuntimeAlreadyInstalled;
  pthread_once(&g_init_once, init_runtime);
  if (g_init_status != 0) return kTVMFFIRuntimeBadTable;
  memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  table.name = "tvm_ffi_fast";
  table.TVMFFIObjectCreateOpaque = fr_object_create_opaque;
  table.TVMFFITypeKeyToIndex = fr_type_key_to_index;
  table.TVMFFIFunctionCreate = fr_function_create;
  table.TVMFFIFunctionGetGlobal = fr_function_get_global;
  table.TVMFFIAnyViewToOwnedAny = fr_any_view_to_owned_any;
  table.TVMFFIFunctionCall = fr_function_call;
  table.TVMFFITensorFromDLPack = fr_tensor_from_dlpack;
  table.TVMFFITensorToDLPack = fr_tensor_to_dlpack;
  table.TVMFFITensorFromDLPackVersioned = fr_tensor_from_dlpack_versioned;
  table.TVMFFITensorToDLPackVersioned = fr_tensor_to_dlpack_versioned;
  table.TVMFFITensorCreateUnsafeView = fr_tensor_create_unsafe_view;
  table.TVMFFIStringFromByteArray = fr_string_from_byte_array;
  table.TVMFFIBytesFromByteArray = fr_bytes_from_byte_array;
  table.TVMFFIBigIntFromByteArray = fr_bigint_from_byte_array;
  table.TVMFFIBigIntGetContentByteArray = fr_bigint_get_content;
  table.TVMFFIDataTypeFromString = fr_dtype_from_string;
  table.TVMFFIDataTypeToString = fr_dtype_to_string;
  table.TVMFFIFunctionSetGlobal = fr_function_set_global;
  table.TVMFFIFunctionSetGlobalFromMethodInfo = fr_function_set_global_from_method_info;
  table.TVMFFITypeRegisterField = fr_type_register_field;
  table.TVMFFITypeRegisterMethod = fr_type_register_method;
  table.TVMFFITypeRegisterMetadata = fr_type_register_metadata;
  table.TVMFFITypeRegisterAttr = fr_type_register_attr;
  table.TVMFFIGetTypeAttrColumn = fr_get_type_attr_column;
  table.TVMFFITypeGetOrAllocIndex = fr_type_get_or_alloc_index;
  table.TVMFFIGetTypeInfo = fr_get_type_info;
  table.TVMFFIEnvSetStream = fr_env_set_stream;
  table.TVMFFIEnvGetStream = fr_env_get_stream;
  table.TVMFFIEnvSetDLPackManagedTensorAllocator = fr_env_set_dlpack_allocator;
  table.TVMFFIEnvGetDLPackManagedTensorAllocator = fr_env_get_dlpack_allocator;
  table.TVMFFIEnvTensorAlloc = fr_env_tensor_alloc;
  table.TVMFFIEnvCheckSignals = fr_env_check_signals;
  table.TVMFFIEnvRegisterCAPI = fr_env_register_capi;
  table.TVMFFIEnvModLookupFromImports = fr_env_mod_lookup_from_imports;
  table.TVMFFIEnvModRegisterContextSymbol = fr_env_mod_register_context_symbol;
  table.TVMFFIEnvModRegisterSystemLibSymbol = fr_env_mod_register_system_lib_symbol;
  return tvm_ffi_runtime_install(&table);
}
