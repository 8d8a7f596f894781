// library.cc -- libtvm_ffi_testing.so registers everything when it is loaded.
//
// The counterpart of upstream's testing library (src/ffi/testing/testing.cc),
// written here against c_api/include alone so that it runs on any runtime
// serving the C API. A failure at load cannot be raised to anyone, so it is
// kept: TVMFFITestingLoadError() returns it (NULL when all went well), and the
// Python package that loads the library turns it into an ImportError.
#include <string>

#include "testing.h"

namespace {

std::string* g_load_error = nullptr;

void RegisterAll() {
  using namespace tvm_ffi_testing;
  DeclareTypes();
  DefineObjectTypes();
  DefineEnumTypes();
  // Upstream keeps the structural-visit hook column present (its hook for
  // testing.TestVisitHook needs the C++ StructuralVisitorObj and is not provided).
  DefAttr(kTVMFFINone, "__s_visit__", Value());
  DefineGlobals();
  DefineSchemaTypes();
  DefineSchemaGlobals();
  DefineHashHooks();
}

__attribute__((constructor)) void RegisterAtLoad() {
  if (tvm_ffi_testing::Guard(RegisterAll) == 0) return;
  TVMFFIObjectHandle error = nullptr;
  TVMFFIErrorMoveFromRaised(&error);
  std::string text = "registering the testing library failed";
  if (error != nullptr) {
    const TVMFFIErrorCell* cell = reinterpret_cast<const TVMFFIErrorCell*>(
        static_cast<const char*>(error) + sizeof(TVMFFIObject));
    text = std::string(cell->kind.data, cell->kind.size) + ": " +
           std::string(cell->message.data, cell->message.size);
    TVMFFIObjectDecRef(error);
  }
  g_load_error = new std::string(text);
}

}  // namespace

extern "C" TVM_FFI_DLL_EXPORT const char* TVMFFITestingLoadError() {
  return g_load_error == nullptr ? nullptr : g_load_error->c_str();
}
