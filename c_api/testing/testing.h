/*
 * testing.h -- the parts of libtvm_ffi_testing.so, registered in order at load
 * (library.cc): the type indices first, in upstream's allocation order, so
 * that a process loading this library numbers its types as a process loading
 * upstream's does; then the types' records and the global functions.
 */
#ifndef TVM_FFI_TESTING_TESTING_H_
#define TVM_FFI_TESTING_TESTING_H_

#include "define.h"

namespace tvm_ffi_testing {

/* Flags of fields, by upstream's trait names. */
constexpr int64_t kInitOff = kTVMFFIFieldFlagBitMaskInitOff;
constexpr int64_t kKwOnly = kTVMFFIFieldFlagBitMaskKwOnly;
constexpr int64_t kReprOff = kTVMFFIFieldFlagBitMaskReprOff;
constexpr int64_t kCompareOff = kTVMFFIFieldFlagBitMaskCompareOff;
constexpr int64_t kHashOff = kTVMFFIFieldFlagBitMaskHashOff;

/* An int64 field of an object. */
inline int64_t I64At(const Value& object, int64_t offset) {
  return *FieldAt<int64_t>(object, offset);
}

/* def_convert<T>(): the __ffi_convert__ attribute, giving the value itself when it is a T. */
void DefineConvert(const char* key);  // testing_enums.cc

void DeclareTypes();        // testing_types.cc
void DefineObjectTypes();   // testing_types.cc
void DefineHashHooks();     // testing_types.cc
void DefineEnumTypes();     // testing_enums.cc
void DefineEnumGlobals();   // testing_enums.cc
void DefineGlobals();       // testing_globals.cc
void DefineSchemaTypes();   // testing_schema.cc
void DefineSchemaGlobals(); // testing_schema.cc

}  // namespace tvm_ffi_testing

#endif  // TVM_FFI_TESTING_TESTING_H_
