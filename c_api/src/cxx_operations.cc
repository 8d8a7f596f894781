/*
 * cxx_operations.cc -- upstream's out-of-line C++ operations on values
 * (structural equality and hashing, JSON text and graphs, deep copy, repr,
 * the recursive comparisons, VisitErrorContext's access paths). Each is the
 * global function of the same name in the installed runtime (both runtimes
 * register them all), called through the C API; failures throw Error.
 */
#include <cstring>

#include "cxx_abi.h"

namespace tvm {
namespace ffi {

/* --------------------------------------------------------------- structural */

bool StructuralEqual::Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                            bool skip_tensor_content) {
  TVMFFIAny args[] = {View(lhs), View(rhs), ViewBool(map_free_vars),
                      ViewBool(skip_tensor_content)};
  return AsBool(CallGlobal("ffi.StructuralEqual", args, 4), "ffi.StructuralEqual");
}

ObjectRef StructuralEqual::GetFirstMismatch(const Any& lhs, const Any& rhs, bool map_free_vars,
                                            bool skip_tensor_content) {
  TVMFFIAny args[] = {View(lhs), View(rhs), ViewBool(map_free_vars),
                      ViewBool(skip_tensor_content)};
  return AsObject(CallGlobal("ffi.GetFirstStructuralMismatch", args, 4),
                  "ffi.GetFirstStructuralMismatch");
}

uint64_t StructuralHash::Hash(const Any& value, bool map_free_vars, bool skip_tensor_content) {
  TVMFFIAny args[] = {View(value), ViewBool(map_free_vars), ViewBool(skip_tensor_content)};
  /* the global returns the hash's bits as an int64 */
  return static_cast<uint64_t>(AsInt(CallGlobal("ffi.StructuralHash", args, 3),
                                     "ffi.StructuralHash"));
}

ObjectRef VisitErrorContext::FindAccessPaths(const ObjectRef& root,
                                             const VisitErrorContext& visit_context,
                                             bool allow_prefix_match) {
  TVMFFIAny args[] = {root.view(), visit_context.view(), ViewBool(allow_prefix_match)};
  return AsObject(CallGlobal("ffi.VisitErrorContext.FindAccessPaths", args, 3),
                  "ffi.VisitErrorContext.FindAccessPaths");
}

/* --------------------------------------------------------------------- JSON */

namespace json {

Any Parse(const String& json_str, String* error_msg) {
  TVMFFIAny args[] = {View(json_str)};
  if (error_msg == nullptr) return CallGlobal("ffi.json.Parse", args, 1);
  /* with error_msg, a malformed text is reported there instead of thrown */
  try {
    Any result = CallGlobal("ffi.json.Parse", args, 1);
    *error_msg = String();
    return result;
  } catch (Error& error) {
    const TVMFFIErrorCell* cell = reinterpret_cast<const TVMFFIErrorCell*>(error.get() + 1);
    if (cell->kind.size != 10 || std::memcmp(cell->kind.data, "ValueError", 10) != 0) throw;
    *error_msg = String(cell->message.data, cell->message.size);
    return Any();
  }
}

String Stringify(const Any& value, const Optional<int>& indent) {
  TVMFFIAny args[] = {View(value), View(indent)};
  return AsString(CallGlobal("ffi.json.Stringify", args, 2), "ffi.json.Stringify");
}

}  // namespace json

Any ToJSONGraph(const Any& value, const Any& metadata) {
  TVMFFIAny args[] = {View(value), View(metadata)};
  return CallGlobal("ffi.ToJSONGraph", args, 2);
}

Any FromJSONGraph(const Any& value) {
  TVMFFIAny args[] = {View(value)};
  return CallGlobal("ffi.FromJSONGraph", args, 1);
}

/* ---------------------------------------------------------------- dataclass */

Any DeepCopy(const Any& value) {
  TVMFFIAny args[] = {View(value)};
  return CallGlobal("ffi.DeepCopy", args, 1);
}

String ReprPrint(const Any& value) {
  TVMFFIAny args[] = {View(value)};
  return AsString(CallGlobal("ffi.ReprPrint", args, 1), "ffi.ReprPrint");
}

int64_t RecursiveHash(const Any& value) {
  TVMFFIAny args[] = {View(value)};
  return AsInt(CallGlobal("ffi.RecursiveHash", args, 1), "ffi.RecursiveHash");
}

/* The recursive comparisons: one global each, (lhs, rhs) -> bool. */
static bool Compare(const char* name, const Any& lhs, const Any& rhs) {
  TVMFFIAny args[] = {View(lhs), View(rhs)};
  return AsBool(CallGlobal(name, args, 2), name);
}

bool RecursiveEq(const Any& lhs, const Any& rhs) { return Compare("ffi.RecursiveEq", lhs, rhs); }
bool RecursiveLt(const Any& lhs, const Any& rhs) { return Compare("ffi.RecursiveLt", lhs, rhs); }
bool RecursiveLe(const Any& lhs, const Any& rhs) { return Compare("ffi.RecursiveLe", lhs, rhs); }
bool RecursiveGt(const Any& lhs, const Any& rhs) { return Compare("ffi.RecursiveGt", lhs, rhs); }
bool RecursiveGe(const Any& lhs, const Any& rhs) { return Compare("ffi.RecursiveGe", lhs, rhs); }

}  // namespace ffi
}  // namespace tvm
