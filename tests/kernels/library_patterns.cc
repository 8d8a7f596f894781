// What real libraries built for upstream do that broke on ours, reproduced without them:
// native __s_visit__ and __s_mutate__ hooks (TVM's Relax nodes, which LegalizeOps visits and
// then mutates), a visitor and a mutator of a C++ subclass
// handed to the runtime's containers (TIRx's StructuralMutatorWithConstraintContext), and a
// C++ static holding objects until the process exits (TIRx, jax-tvm-ffi).
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/extra/structural_mutate.h>
#include <tvm/ffi/extra/structural_visit.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>
#include <sstream>
#include <tuple>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

namespace {

// A pair whose __s_visit__ hook is a native function: it visits `second` before `first`,
// which the reflected-field descent (first, then second) would not.
class PairObj : public ffi::Object {
 public:
  ffi::Any first;
  ffi::Any second;
  PairObj(ffi::Any a, ffi::Any b) : first(std::move(a)), second(std::move(b)) {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("library_patterns.Pair", PairObj, ffi::Object);
};

ffi::Expected<ffi::Optional<ffi::VisitInterrupt>> PairVisit(ffi::StructuralVisitorObj* visitor,
                                                            ffi::AnyView value) noexcept {
  const PairObj* self = value.as<PairObj>();
  TVM_FFI_S_VISIT_MAYBE_EARLY_RETURN(visitor->VisitExpected(self->second));
  TVM_FFI_S_VISIT_MAYBE_EARLY_RETURN(visitor->VisitExpected(self->first));
  return ffi::Optional<ffi::VisitInterrupt>(std::nullopt);
}

// Its native __s_mutate__ hook mutates `second` before `first` too (the reflected-field
// default would go first, then second), keeps the pair when neither changed, and otherwise
// returns a copy carrying the replacements, as TVM's Relax nodes' hooks do.
ffi::Expected<ffi::UnchangedOr<ffi::Any>> PairMutate(ffi::StructuralMutatorObj* mutator,
                                                     ffi::AnyView value) noexcept {
  const PairObj* self = value.as<PairObj>();
  TVM_FFI_S_MUTATE_ASSIGN_OR_RETURN(ffi::UnchangedOr<ffi::Any>, second,
                                    mutator->MutateExpected(self->second));
  TVM_FFI_S_MUTATE_ASSIGN_OR_RETURN(ffi::UnchangedOr<ffi::Any>, first,
                                    mutator->MutateExpected(self->first));
  if (first.UnchangedOrSameAs(self->first) && second.UnchangedOrSameAs(self->second)) {
    return ffi::UnchangedOr<ffi::Any>(ffi::Unchanged());
  }
  ffi::ObjectPtr<PairObj> copy = ffi::make_object<PairObj>(*self);
  copy->first = std::move(first).ValueOrUnchanged(std::move(copy->first));
  copy->second = std::move(second).ValueOrUnchanged(std::move(copy->second));
  return ffi::UnchangedOr<ffi::Any>(ffi::Any(ffi::ObjectRef(std::move(copy))));
}

ffi::ObjectRef MakePair(ffi::Any a, ffi::Any b) {
  return ffi::ObjectRef(ffi::make_object<PairObj>(std::move(a), std::move(b)));
}

// A visitor type of our own, derived from ffi.StructuralVisitor (registered as such).
class CountingVisitorObj : public ffi::StructuralVisitorObj {
 public:
  using StateTupleType = std::tuple<>;
  explicit CountingVisitorObj(const ffi::StructuralVisitorVTable* vtable)
      : ffi::StructuralVisitorObj(vtable) {}
  TVM_FFI_DECLARE_OBJECT_INFO("library_patterns.CountingVisitor", CountingVisitorObj,
                              ffi::StructuralVisitorObj);

 protected:
  StateTupleType StateTuple() const noexcept { return {}; }
};

// A mutator type of our own, derived from ffi.StructuralMutator, as TIRx's is.
class ScalingMutatorObj : public ffi::StructuralMapEngineBase {
 public:
  explicit ScalingMutatorObj(const ffi::StructuralMutatorVTable* vtable)
      : ffi::StructuralMapEngineBase(vtable) {}
  TVM_FFI_DECLARE_OBJECT_INFO("library_patterns.ScalingMutator", ScalingMutatorObj,
                              ffi::StructuralMutatorObj);
};

// Sums the ints under root with a visitor of the derived type.
int64_t SumWithDerivedVisitor(ffi::Any root) {
  int64_t sum = 0;
  auto add = [&sum](int64_t value) -> ffi::Expected<ffi::WalkResult> {
    sum += value;
    return ffi::WalkResult::Advance();
  };
  using Engine =
      ffi::StructuralWalkEngine<CountingVisitorObj, ffi::WalkOrder::kPreOrder, decltype(add)>;
  ffi::StructuralVisitor visitor(ffi::make_object<Engine>(add));
  visitor->Visit(root);
  return sum;
}

// Multiplies the ints under root by ten with a mutator of the derived type.
ffi::Any ScaleWithDerivedMutator(ffi::Any root) {
  auto scale = [](int64_t value) -> ffi::Expected<ffi::Any> { return ffi::Any(value * 10); };
  using Engine =
      ffi::StructuralMapEngine<ScalingMutatorObj, ffi::WalkOrder::kPostOrder, decltype(scale)>;
  ffi::StructuralMutator mutator(ffi::make_object<Engine>(scale));
  auto result = mutator->MutateExpected(root, ffi::InplaceMode::kAllow);
  if (result.is_err()) throw std::move(result).error();
  ffi::UnchangedOr<ffi::Any> mapped =
      ffi::details::AnyUnsafe::MoveFromAnyAfterCheck<ffi::UnchangedOr<ffi::Any>>(
          std::move(ffi::details::ExpectedUnsafe::GetData(result)));
  return std::move(mapped).ValueOrUnchanged(std::move(root));
}

// Destroyed by the C++ runtime when the process exits, after Python has finalized.
ffi::Array<ffi::Any> held_until_exit;

int64_t HoldUntilExit(ffi::Any value) {
  held_until_exit.push_back(value);
  return static_cast<int64_t>(held_until_exit.size());
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<PairObj>().def_ro("first", &PairObj::first).def_ro("second", &PairObj::second);
  refl::TypeAttrDef<PairObj>()
      .native_fn_attr<&PairVisit>(ffi::type_attr::kStructuralVisit)
      .native_fn_attr<&PairMutate>(ffi::type_attr::kStructuralMutate);
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_pair, MakePair);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_with_derived_visitor, SumWithDerivedVisitor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_with_derived_mutator, ScaleWithDerivedMutator);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(hold_until_exit, HoldUntilExit);
