/*
 * cxx_module.cc -- tvm::ffi::ModuleObj and tvm::ffi::Module as C++ libraries
 * link them (the vtable, the typeinfo, the out-of-line members), and the two
 * directions of module interop with the runtimes:
 *
 *  - a module a runtime makes carries, 8 bytes before its header, the vtable
 *    pointer of RuntimeModuleObj below (tvm_ffi_runtime_module_vtable), whose
 *    virtual functions call the runtime's ffi.Module* globals on it, so C++
 *    can call mod->GetFunction(...) on it;
 *  - a module C++ makes (a ModuleObj subclass in TVM, say) carries its own
 *    vtable; the runtimes recognise it (tvm_ffi_runtime_module_is_foreign)
 *    and serve their ffi.Module* globals on it through
 *    tvm_ffi_runtime_module_call, which calls its virtual functions.
 */
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <tvm_ffi_runtime.h>

#include "context_symbols.h"
#include "cxx_abi.h"

namespace tvm {
namespace ffi {

/* ---------------------------------------------------------------- ModuleObj */

const TVMFFIAny* ModuleObj::import_items(int64_t* count) const {
  *count = 0;
  if (!imports_.defined()) return nullptr;
  const TVMFFISeqCell* cell = reinterpret_cast<const TVMFFISeqCell*>(imports_.get() + 1);
  *count = cell->size;
  return static_cast<const TVMFFIAny*>(cell->data);
}

/* The imports of a module (borrowed), or an Error if one is not a module. A
 * list of handles: a container of ModuleObj* would be an exported instantiation. */
class ImportsOf {
 public:
  explicit ImportsOf(const ModuleObj* module) {
    int64_t count = 0;
    const TVMFFIAny* items = module->import_items(&count);
    for (int64_t i = 0; i < count; ++i) {
      if (items[i].type_index != kTVMFFIModule) {
        throw Error("TypeError", "a module's imports must all be ffi.Module");
      }
      handles_.push_back(items[i].v_obj);
    }
  }
  struct Iterator {
    std::vector<TVMFFIObject*>::const_iterator at;
    ModuleObj* operator*() const { return ModuleObj::FromHandle(*at); }
    Iterator& operator++() {
      ++at;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return at != other.at; }
  };
  Iterator begin() const { return Iterator{handles_.begin()}; }
  Iterator end() const { return Iterator{handles_.end()}; }

 private:
  std::vector<TVMFFIObject*> handles_;
};

ObjectRef ModuleObj::GetFunction(const String& name, bool query_imports) {
  ObjectRef found = this->GetFunction(name);
  if (found.defined() || !query_imports) return found;
  for (ModuleObj* import : ImportsOf(this)) {
    found = import->GetFunction(name, true);
    if (found.defined()) return found;
  }
  return ObjectRef();
}

bool ModuleObj::ImplementsFunction(const String& name, bool query_imports) {
  if (this->ImplementsFunction(name)) return true;
  if (!query_imports) return false;
  for (ModuleObj* import : ImportsOf(this)) {
    if (import->ImplementsFunction(name, true)) return true;
  }
  return false;
}

/* A string companion of name (doc or metadata: the virtual `own`) in module, then
 * (query_imports) in its imports, depth first; None when absent. */
static Any FindCompanion(ModuleObj* module, Any (ModuleObj::*own)(const String&),
                         const String& name, bool query_imports) {
  Any found = (module->*own)(name);
  if (!found.is_none() || !query_imports) return found;
  for (ModuleObj* import : ImportsOf(module)) {
    found = FindCompanion(import, own, name, true);
    if (!found.is_none()) return found;
  }
  return Any();
}

Any ModuleObj::GetFunctionDoc(const String& name, bool query_imports) {
  return FindCompanion(this, &ModuleObj::GetFunctionDoc, name, query_imports);
}

Any ModuleObj::GetFunctionMetadata(const String& name, bool query_imports) {
  return FindCompanion(this, &ModuleObj::GetFunctionMetadata, name, query_imports);
}

/* A new Array of items (borrowed) then, if extra is not NULL, extra. */
static ObjectRef NewArray(const TVMFFIAny* items, int64_t count, const TVMFFIAny* extra) {
  std::vector<TVMFFIAny> args(items, items + count);
  if (extra != nullptr) args.push_back(*extra);
  return AsObject(CallGlobal("ffi.Array", args.data(), static_cast<int32_t>(args.size())),
                  "ffi.Array");
}

void ModuleObj::ImportModule(const Module& other) {
  _GetOrAllocRuntimeTypeIndex();
  if (!other.defined()) throw Error("ValueError", "cannot import an empty Module");
  /* refuse when this module is other or among what other imports, directly or not */
  std::unordered_set<const TVMFFIObject*> seen{other.get()};
  std::vector<TVMFFIObject*> pending{other.get()};
  while (!pending.empty()) {
    const ModuleObj* next = ModuleObj::FromHandle(pending.back());
    pending.pop_back();
    for (ModuleObj* import : ImportsOf(next)) {
      if (seen.insert(import->header()).second) pending.push_back(import->header());
    }
  }
  if (seen.count(header())) throw Error("RuntimeError", "Cyclic dependency detected during import");
  /* imports_.push_back(other), copying the Array (it may be shared) */
  int64_t count = 0;
  const TVMFFIAny* items = import_items(&count);
  TVMFFIAny added = other.view();
  imports_ = NewArray(items, count, &added);
}

void ModuleObj::ClearImports() { imports_ = NewArray(nullptr, 0, nullptr); }

TVMFFIObject* ModuleObj::InternalUnsafe::LookupLocked(ModuleObj* module, const char* name) {
  /* Functions handed out stay alive as long as the process: the caller borrows them */
  static std::unordered_set<TVMFFIObject*>* kept = new std::unordered_set<TVMFFIObject*>();
  String key(name, std::strlen(name));
  ObjectRef found;
  for (ModuleObj* import : ImportsOf(module)) {
    found = import->GetFunction(key, true);
    if (found.defined()) break;
  }
  if (!found.defined()) {
    TVMFFIObjectHandle global = nullptr;
    TVMFFIByteArray bytes = {name, std::strlen(name)};
    if (TVMFFIFunctionGetGlobal(&bytes, &global) == 0) {
      found = ObjectRef::Own(static_cast<TVMFFIObject*>(global));
    }
  }
  if (!found.defined()) {
    throw Error("RuntimeError", std::string("Cannot find function ") + name +
                                    " in the imported modules or global registry.");
  }
  TVMFFIObject* handle = found.get();
  if (kept->insert(handle).second) found.release();
  return handle;
}

/* ------------------------------------------------------------------- Module */

Module Module::LoadFromFile(const String& file_name) {
  TVMFFIAny args[] = {View(file_name)};
  ObjectRef module = AsObject(CallGlobal("ffi.ModuleLoadFromFile", args, 1), "ffi.ModuleLoadFromFile");
  if (!module.defined() || module.get()->type_index != kTVMFFIModule) {
    throw Error("TypeError", "ffi.ModuleLoadFromFile did not return a Module");
  }
  return Module::Own(module.release());
}

namespace {
struct VisitState {
  const Function* callback;
  Error* failure;
};
}  // namespace

static int VisitOneContextSymbol(void* ctx, const char* name, void* symbol) {
  VisitState* state = static_cast<VisitState*>(ctx);
  try {
    String key(name, std::strlen(name));
    TVMFFIAny args[] = {View(key), cxx_face::ViewPtr(symbol)};
    CallFunction(state->callback->get(), args, 2);
    return 0;
  } catch (Error& error) {
    *state->failure = error;
    return 1;
  }
}

void Module::VisitContextSymbols(const TypedFunction<void(String, void*)>& callback) {
  Error failure(static_cast<TVMFFIObject*>(nullptr));
  VisitState state = {&callback.packed(), &failure};
  if (tvm_ffi_context_symbols_visit(VisitOneContextSymbol, &state) != 0) {
    if (failure.defined()) throw failure;
    throw Error("RuntimeError", "out of memory listing the context symbols");
  }
}

/* -------------------------------------------------- a runtime's own modules */

namespace {

/* What C++ sees of a module a runtime made: every virtual function is the
 * runtime's ffi.Module<name> global called on this module. */
class RuntimeModuleObj final : public ModuleObj {
 public:
  TVMFFIAny view() const {
    TVMFFIAny out = AnyCell::None();
    out.type_index = kTVMFFIModule;
    out.v_obj = const_cast<TVMFFIObject*>(header());
    return out;
  }
  Any Call(const char* global, TVMFFIAny a = AnyCell::None(), TVMFFIAny b = AnyCell::None(),
           int32_t num_extra = 0) const {
    TVMFFIAny args[] = {view(), a, b};
    return CallGlobal(global, args, 1 + num_extra);
  }

  const char* kind() const override {
    /* kinds are few: each distinct one lives as long as the process */
    static std::mutex* lock = new std::mutex();
    static std::set<std::string>* kinds = new std::set<std::string>();
    std::string text = AsString(Call("ffi.ModuleGetKind"), "ffi.ModuleGetKind").str();
    std::lock_guard<std::mutex> guard(*lock);
    return kinds->insert(text).first->c_str();
  }
  int GetPropertyMask() const override {
    return static_cast<int>(AsInt(Call("ffi.ModuleGetPropertyMask"), "ffi.ModuleGetPropertyMask"));
  }
  ObjectRef GetFunction(const String& name) override {
    return AsObject(Call("ffi.ModuleGetFunction", View(name), ViewBool(false), 2),
                    "ffi.ModuleGetFunction");
  }
  bool ImplementsFunction(const String& name) override {
    return AsBool(Call("ffi.ModuleImplementsFunction", View(name), ViewBool(false), 2),
                  "ffi.ModuleImplementsFunction");
  }
  Any GetFunctionDoc(const String& name) override {
    return Call("ffi.ModuleGetFunctionDoc", View(name), ViewBool(false), 2);
  }
  Any GetFunctionMetadata(const String& name) override {
    return Call("ffi.ModuleGetFunctionMetadata", View(name), ViewBool(false), 2);
  }
  void WriteToFile(const String& file_name, const String& format) const override {
    Call("ffi.ModuleWriteToFile", View(file_name), View(format), 2);
  }
  ObjectRef GetWriteFormats() const override {
    return AsObject(Call("ffi.ModuleGetWriteFormats"), "ffi.ModuleGetWriteFormats");
  }
  String InspectSource(const String& format) const override {
    return AsString(Call("ffi.ModuleInspectSource", View(format), AnyCell::None(), 1),
                    "ffi.ModuleInspectSource");
  }
  void ImportModule(const Module& other) override {
    Call("ffi.ModuleImportModule", other.view(), AnyCell::None(), 1);
  }
  void ClearImports() override { Call("ffi.ModuleClearImports"); }
};

/* The address a RuntimeModuleObj's vtable pointer holds. */
void* RuntimeModuleVtable() {
  static void* vtable = [] {
    RuntimeModuleObj probe;
    void* address;
    std::memcpy(&address, static_cast<void*>(&probe), sizeof(address));
    return address;
  }();
  return vtable;
}

/* Calls the virtual function behind upstream's ffi.Module<method> global on
 * args[0], a module C++ made, with the global's arguments. */
void CallModuleMethod(const char* method, const TVMFFIAny* args, int32_t num_args,
                      TVMFFIAny* result) {
  auto arg = [&](int32_t i, int32_t type) -> const TVMFFIAny& {
    bool ok = i < num_args && (args[i].type_index == type ||
                               (type == kTVMFFIStr && args[i].type_index == kTVMFFISmallStr));
    if (!ok) throw Error("TypeError", std::string("ffi.Module") + method + ": bad argument");
    return args[i];
  };
  auto string = [&](int32_t i) {
    String out;
    static_cast<AnyCell&>(out) = AnyCell::Borrow(arg(i, kTVMFFIStr));
    return out;
  };
  auto flag = [&](int32_t i) { return arg(i, kTVMFFIBool).v_int64 != 0; };
  auto object = [&](ObjectRef ref) { return Any(AnyCell::Borrow(ref.view())); };
  ModuleObj* module = ModuleObj::FromHandle(arg(0, kTVMFFIModule).v_obj);
  std::string name(method);
  Any out;
  if (name == "GetFunction") {
    out = object(module->GetFunction(string(1), flag(2)));
  } else if (name == "ImplementsFunction") {
    out = Any(AnyCell::Own(ViewBool(module->ImplementsFunction(string(1), flag(2)))));
  } else if (name == "GetFunctionDoc") {
    out = module->GetFunctionDoc(string(1), flag(2));
  } else if (name == "GetFunctionMetadata") {
    out = module->GetFunctionMetadata(string(1), flag(2));
  } else if (name == "GetPropertyMask") {
    out = Any(AnyCell::Own(cxx_face::ViewInt(module->GetPropertyMask())));
  } else if (name == "InspectSource") {
    out = Any(module->InspectSource(string(1)));
  } else if (name == "GetKind") {
    const char* kind = module->kind();
    out = Any(String(kind, std::strlen(kind)));
  } else if (name == "GetWriteFormats") {
    out = object(module->GetWriteFormats());
  } else if (name == "WriteToFile") {
    module->WriteToFile(string(1), string(2));
  } else if (name == "ImportModule") {
    Module other = Module::Own(arg(1, kTVMFFIModule).v_obj);
    TVMFFIObjectIncRef(other.get());
    module->ImportModule(other);
  } else if (name == "ClearImports") {
    module->ClearImports();
  } else {
    throw Error("ValueError", std::string("no module method ") + method);
  }
  *result = out.Release();
}

}  // namespace
}  // namespace ffi
}  // namespace tvm

/* ------------------------------------------------------ the runtimes' hooks */

using tvm::ffi::cxx_face::SafeCall;

extern "C" {

TVM_FFI_DLL void* tvm_ffi_runtime_module_vtable(void) { return tvm::ffi::RuntimeModuleVtable(); }

TVM_FFI_DLL int tvm_ffi_runtime_module_is_foreign(TVMFFIObjectHandle module) {
  TVMFFIObject* obj = static_cast<TVMFFIObject*>(module);
  if (obj == nullptr || obj->type_index != kTVMFFIModule) return 0;
  void* vtable;
  std::memcpy(&vtable, reinterpret_cast<char*>(obj) - sizeof(void*), sizeof(vtable));
  return vtable != tvm::ffi::RuntimeModuleVtable();
}

TVM_FFI_DLL int tvm_ffi_runtime_module_call(const char* method, const TVMFFIAny* args,
                                            int32_t num_args, TVMFFIAny* result) {
  return SafeCall([&] { tvm::ffi::CallModuleMethod(method, args, num_args, result); });
}

TVM_FFI_DLL int tvm_ffi_runtime_module_lookup_from_imports(TVMFFIObjectHandle module,
                                                           const char* name,
                                                           TVMFFIObjectHandle* out) {
  using tvm::ffi::ModuleObj;
  return SafeCall([&] {
    *out = ModuleObj::InternalUnsafe::GetFunctionFromImports(
        ModuleObj::FromHandle(static_cast<TVMFFIObject*>(module)), name);
  });
}

}  // extern "C"
