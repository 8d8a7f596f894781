// Types a checker can only get from the library's own functions: no constructor, no
// creatable fields. `pooled.Grammar` objects come from `pooled.builtin_json_grammar`
// (which returns a subclass, `pooled.JsonGrammar`); `pooled.Grammar.to_string` takes one
// as `self`, `pooled.describe` takes one through an ffi.Object parameter (checked inside,
// as a careful library does), and `pooled.Compiled` comes only from `pooled.compile`.
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace pooled {

class GrammarObj : public tvm::ffi::Object {
 public:
  std::string text;
  explicit GrammarObj(std::string text) : text(std::move(text)) {}
  TVM_FFI_DECLARE_OBJECT_INFO("pooled.Grammar", GrammarObj, tvm::ffi::Object);
};

class JsonGrammarObj : public GrammarObj {
 public:
  JsonGrammarObj() : GrammarObj("root ::= object") {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("pooled.JsonGrammar", JsonGrammarObj, GrammarObj);
};

class Grammar : public tvm::ffi::ObjectRef {
 public:
  static Grammar Json() {
    Grammar grammar{tvm::ffi::UnsafeInit{}};
    grammar.data_ = tvm::ffi::make_object<JsonGrammarObj>();
    return grammar;
  }
  tvm::ffi::String ToString() const { return tvm::ffi::String(get()->text); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Grammar, tvm::ffi::ObjectRef, GrammarObj);
};

class CompiledObj : public tvm::ffi::Object {
 public:
  int64_t states;
  explicit CompiledObj(int64_t states) : states(states) {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("pooled.Compiled", CompiledObj, tvm::ffi::Object);
};

class Compiled : public tvm::ffi::ObjectRef {
 public:
  explicit Compiled(int64_t states) { data_ = tvm::ffi::make_object<CompiledObj>(states); }
  int64_t States() const { return get()->states; }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Compiled, tvm::ffi::ObjectRef, CompiledObj);
};

}  // namespace pooled

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  using pooled::Compiled;
  using pooled::Grammar;
  refl::ObjectDef<pooled::GrammarObj>().def("to_string", &Grammar::ToString);
  refl::ObjectDef<pooled::JsonGrammarObj>();
  refl::ObjectDef<pooled::CompiledObj>().def("states", &Compiled::States);
  refl::GlobalDef()
      .def("pooled.builtin_json_grammar",
           []() -> tvm::ffi::ObjectRef {
             return Grammar::Json();
           })
      .def("pooled.compile",
           [](Grammar grammar) -> tvm::ffi::ObjectRef {
             return Compiled(static_cast<int64_t>(grammar->text.size()));
           })
      .def("pooled.describe", [](tvm::ffi::ObjectRef any) -> tvm::ffi::String {
        const auto* grammar = any.as<pooled::GrammarObj>();
        if (grammar == nullptr) TVM_FFI_THROW(TypeError) << "describe() wants a pooled.Grammar";
        return tvm::ffi::String("grammar: " + grammar->text);
      });
}
