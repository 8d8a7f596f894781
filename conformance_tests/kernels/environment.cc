// Kernels for the environment API rows no other kernel reaches, compiled at test time
// against upstream's headers (C ABI only):
//
//   signal_check(signo, mode) -> raises `signo` to this process (0: none), then calls
//       TVMFFIEnvCheckSignals. A failed check: mode 0 reports it as the result
//       ["status", kind of the error left in the raised slot or ""]; mode 1 fails the call
//       with the EnvErrorAlreadySet error the header's idiom throws.
//   last_signal_status() -> what TVMFFIEnvCheckSignals returned in the last signal_check.
//   lookup_from_imports(name, *args) -> TVMFFIEnvModLookupFromImports with this library's
//       context (the loader stores the module's handle in __tvm_ffi__library_ctx), then the
//       function found called with `args`; a failed lookup fails the call with its error.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

extern "C" {

// The loader writes the module's handle here when the library is loaded.
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = nullptr;

namespace {

// The text of a str argument (small or object), or false.
bool TextOf(const TVMFFIAny* any, std::string* out) {
  if (any->type_index == kTVMFFISmallStr) {
    out->assign(any->v_bytes, any->small_str_len);
    return true;
  }
  if (any->type_index == kTVMFFIStr) {
    const TVMFFIByteArray* bytes = reinterpret_cast<const TVMFFIByteArray*>(
        reinterpret_cast<const char*>(any->v_obj) + sizeof(TVMFFIObject));
    out->assign(bytes->data, bytes->size);
    return true;
  }
  return false;
}

// The status the last check returned (a front end may raise the handler's exception on its
// own when it finds one pending after a call, whatever the check said).
int g_last_status = 0;

int Refuse(const char* message) {
  TVMFFIErrorSetRaisedFromCStr("TypeError", message);
  return -1;
}

}  // namespace

TVM_FFI_DLL_EXPORT int __tvm_ffi_signal_check(void*, const TVMFFIAny* args, int32_t num_args,
                                              TVMFFIAny* result) {
  if (num_args != 2 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    return Refuse("signal_check(signo: int, mode: int)");
  }
  if (args[0].v_int64 > 0) std::raise(static_cast<int>(args[0].v_int64));
  int status = TVMFFIEnvCheckSignals();
  g_last_status = status;
  if (status != 0 && args[1].v_int64 == 1) {
    TVMFFIErrorSetRaisedFromCStr("EnvErrorAlreadySet", "");
    return -1;
  }
  if (status != 0) {
    // What the check left in the raised slot: its kind is the result, the error dropped.
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    std::string kind;
    if (error != nullptr) {
      const TVMFFIErrorCell* cell = reinterpret_cast<const TVMFFIErrorCell*>(
          reinterpret_cast<const char*>(error) + sizeof(TVMFFIObject));
      kind.assign(cell->kind.data, cell->kind.size);
      TVMFFIObjectDecRef(error);
    }
    TVMFFIByteArray text{kind.data(), kind.size()};
    result->type_index = kTVMFFINone;
    result->v_int64 = 0;
    return TVMFFIStringFromByteArray(&text, result);
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = status;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_last_signal_status(void*, const TVMFFIAny*, int32_t,
                                                    TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = g_last_status;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_lookup_from_imports(void*, const TVMFFIAny* args,
                                                     int32_t num_args, TVMFFIAny* result) {
  std::string name;
  if (num_args < 1 || !TextOf(&args[0], &name)) return Refuse("lookup_from_imports(name: str, ...)");
  if (__tvm_ffi__library_ctx == nullptr) return Refuse("no library context was set");
  TVMFFIObjectHandle found = nullptr;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name.c_str(), &found) != 0) {
    return -1;
  }
  // borrowed: the module's cache owns it
  return TVMFFIFunctionCall(found, const_cast<TVMFFIAny*>(args + 1), num_args - 1, result);
}

}  // extern "C"
