#define TVM_FFI_DLL_EXPORT_INCLUDE_METADATA 1
// A C++ library as TVM writes one, built against upstream's headers and linked to
// upstream's libtvm_ffi.so: it uses the library's out-of-line C++ symbols (the
// operations, Module::LoadFromFile, ModuleObj's members, vtable and typeinfo) and
// defines a ModuleObj subclass. Under our runtimes those symbols are ours.
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/extra/structural_mutate.h>
#include <tvm/ffi/extra/structural_visit.h>
#include <tvm/ffi/function.h>

#include <sstream>
#include <string>

namespace ffi = tvm::ffi;

namespace {

std::string Text(const ffi::Any& value) { return std::string(ffi::json::Stringify(value)); }

// Every value operation once; one line each, the same text under every runtime.
ffi::String Operations() {
  std::ostringstream os;
  ffi::Any doc = ffi::json::Parse("{\"a\": [1, 2.5, \"x\", null, true]}");
  os << "parse " << Text(doc) << "\n";
  os << "indent " << std::string(ffi::json::Stringify(ffi::Array<ffi::Any>{1, 2}, 2)) << "\n";
  ffi::String error;
  ffi::Any bad = ffi::json::Parse("[1,", &error);
  os << "parse-error " << (bad == nullptr) << " " << !error.empty() << "\n";
  ffi::String none_error = "unset";
  ffi::json::Parse("7", &none_error);
  os << "parse-ok-error [" << std::string(none_error) << "]\n";
  try {
    ffi::json::Parse("{");
    os << "no throw\n";
  } catch (const ffi::Error& e) {
    os << "thrown " << e.kind() << " " << !std::string(e.what()).empty() << "\n";
  }
  ffi::Array<ffi::Any> a{1, ffi::String("s"), ffi::Map<ffi::String, ffi::Any>{{"k", 2}}};
  ffi::Array<ffi::Any> b{1, ffi::String("s"), ffi::Map<ffi::String, ffi::Any>{{"k", 2}}};
  ffi::Array<ffi::Any> c{1, ffi::String("t")};
  os << "sequal " << ffi::StructuralEqual::Equal(a, b) << ffi::StructuralEqual::Equal(a, c)
     << ffi::StructuralEqual()(a, b) << "\n";
  os << "shash " << (ffi::StructuralHash::Hash(a) == ffi::StructuralHash::Hash(b))
     << (ffi::StructuralHash::Hash(a) == ffi::StructuralHash::Hash(c)) << " "
     << ffi::StructuralHash::Hash(ffi::Any(int64_t{5})) << "\n";
  auto mismatch = ffi::StructuralEqual::GetFirstMismatch(a, c);
  os << "mismatch " << mismatch.has_value() << " "
     << ffi::StructuralEqual::GetFirstMismatch(a, b).has_value() << "\n";
  ffi::Any copy = ffi::DeepCopy(a);
  os << "deepcopy " << Text(copy) << " " << (copy.as<ffi::Object>() != a.get()) << "\n";
  os << "repr " << std::string(ffi::ReprPrint(a)) << "\n";
  os << "recursive " << ffi::RecursiveEq(a, b) << ffi::RecursiveLt(ffi::Array<ffi::Any>{1},
                                                                   ffi::Array<ffi::Any>{2})
     << ffi::RecursiveLe(a, b) << ffi::RecursiveGt(a, b) << ffi::RecursiveGe(a, b) << " "
     << (ffi::RecursiveHash(a) == ffi::RecursiveHash(b)) << "\n";
  ffi::Any graph = ffi::ToJSONGraph(a);
  os << "graph " << Text(graph) << "\n";
  os << "roundtrip " << ffi::StructuralEqual::Equal(ffi::FromJSONGraph(graph), a) << "\n";
  return os.str();
}

int64_t AddOne(int64_t x) { return x + 1; }

// A module defined in C++: one function, a doc, and upstream's defaults elsewhere.
class DemoModuleObj : public ffi::ModuleObj {
 public:
  const char* kind() const final { return "demo"; }
  int GetPropertyMask() const final { return ffi::Module::kRunnable; }
  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    if (name == "twice") return ffi::Function::FromTyped([](int64_t x) { return 2 * x; });
    return std::nullopt;
  }
  ffi::Optional<ffi::String> GetFunctionDoc(const ffi::String& name) final {
    if (name == "twice") return ffi::String("doubles x");
    return std::nullopt;
  }
  ffi::String InspectSource(const ffi::String& format) const final {
    return "source:" + std::string(format);
  }
};

ffi::Module MakeDemoModule() { return ffi::Module(ffi::make_object<DemoModuleObj>()); }

// C++ calling the virtual functions of a module it did not make.
ffi::String ProbeModule(ffi::Module mod, ffi::String name) {
  std::ostringstream os;
  os << "kind " << mod->kind() << "\n";
  os << "implements " << mod->ImplementsFunction(name, false) << mod->ImplementsFunction(name, true)
     << "\n";
  ffi::Optional<ffi::Function> f = mod->GetFunction(name, true);
  os << "found " << f.has_value() << "\n";
  if (f.has_value()) os << "call " << (*f)(20).cast<int64_t>() << "\n";
  os << "own " << mod->GetFunction(name).has_value() << "\n";
  ffi::Optional<ffi::String> doc = mod->GetFunctionDoc(name, true);
  os << "doc " << (doc.has_value() ? std::string(*doc) : "none") << "\n";
  os << "imports " << mod->imports().size() << "\n";
  return os.str();
}

ffi::String LoadAndCall(ffi::String path, ffi::String name) {
  ffi::Module mod = ffi::Module::LoadFromFile(path);
  return ProbeModule(mod, name);
}

ffi::String ImportInCxx(ffi::Module parent, ffi::Module child) {
  parent->ImportModule(child);
  std::ostringstream os;
  os << "after-import " << parent->imports().size() << "\n";
  try {
    child->ImportModule(parent);
    os << "cycle accepted\n";
  } catch (const ffi::Error& e) {
    os << "cycle " << e.kind() << ": " << e.message() << "\n";
  }
  return os.str();
}

int64_t ClearInCxx(ffi::Module mod) {
  mod->ClearImports();
  return static_cast<int64_t>(mod->imports().size());
}

ffi::String ContextSymbols() {
  std::ostringstream os;
  ffi::Module::VisitContextSymbols(
      ffi::TypedFunction<void(ffi::String, void*)>([&os](ffi::String name, void* symbol) {
        if (std::string(name).rfind("cxx_face_test_", 0) == 0) {
          os << std::string(name) << "=" << (symbol != nullptr) << ";";
        }
      }));
  return os.str();
}

// Traversals made in C++ (as TVM's passes make them) walking the runtime's containers:
// the containers' __s_visit__ / __s_mutate__ hooks are handed a C++ visitor or mutator.
ffi::String Traversals(ffi::Any root) {
  int64_t sum = 0;
  ffi::StructuralVisit(root, [&sum](int64_t value, ffi::StructuralVisitorObj*)
                                 -> ffi::Optional<ffi::VisitInterrupt> {
    sum += value;
    return std::nullopt;
  });
  ffi::Any mapped = ffi::StructuralMap<ffi::WalkOrder::kPostOrder>(
      root, [](int64_t value) -> ffi::Expected<ffi::Any> { return ffi::Any(value * 10); });
  std::ostringstream os;
  os << "sum " << sum << " mapped " << Text(mapped);
  return os.str();
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(traversals, Traversals);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(operations, Operations);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, AddOne);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(add_one, "adds one");
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_demo_module, MakeDemoModule);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(probe_module, ProbeModule);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(load_and_call, LoadAndCall);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(import_in_cxx, ImportInCxx);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(clear_in_cxx, ClearInCxx);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(context_symbols, ContextSymbols);
