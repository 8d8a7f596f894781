/*
 * structural_traversal.h -- what structural visits and mutations share: the
 * traversal objects' layout, callback entries, outcomes and error contexts.
 *
 * A traversal object is laid out as upstream's StructuralVisitorObj /
 * StructuralMutatorObj, since C++ hooks read it inline: the header, the vtable
 * pointer (offset 24) and the region (int32, offset 32); the engine's own
 * state follows. Every traversal step returns a raw TVMFFIAny as upstream's
 * ABI does: None (go on) or a VisitInterrupt for visits, a replacement or the
 * kTVMFFIUnchanged marker for mutations, or an Error object (kTVMFFIError) on
 * failure. tvm_ffi_ref/runtime/structural_traversal.py states the rules.
 */
#ifndef TVM_FFI_FAST_STRUCTURAL_TRAVERSAL_H_
#define TVM_FFI_FAST_STRUCTURAL_TRAVERSAL_H_

#include "core.h"

/* The traversal object prefix shared with upstream's C++. */
typedef struct {
  TVMFFIObject header;
  const void* vtable;
  int32_t region;
} FrTraversal;

/* One callback entry: a type index, a Function (borrowed from the entry list), a flag. */
typedef struct {
  int32_t type_index;
  void* fn;
  int flag;
} FrCallbackEntry;

/* The entries of an Array of [type_index, Function(, bool)] Arrays; -1 + TypeError if malformed. */
FR_HIDDEN int fr_s_entries(void* array, int width, FrCallbackEntry** out, size_t* n);
/* The first entry matching a value of type index ti (RuntimeTypeIndexMatch), or NULL. */
FR_HIDDEN const FrCallbackEntry* fr_s_find_entry(const FrCallbackEntry* entries, size_t n,
                                                 int32_t ti);

/* An error result: the raised error moved out of the thread's slot. */
FR_HIDDEN TVMFFIAny fr_s_raised(void);
/* Calls fn(args...): its owned result, or an error result. */
FR_HIDDEN TVMFFIAny fr_s_call(void* fn, const TVMFFIAny* args, int32_t n);
/* Adds node (if an object) to the error result's VisitErrorContext. */
FR_HIDDEN void fr_s_record_visit(TVMFFIAny* error, const TVMFFIAny* node);
/* Ends a global: an error result is raised (-1), anything else is the result (0). */
FR_HIDDEN int fr_s_finish(TVMFFIAny outcome, TVMFFIAny* rv);

/* fn() with region kind in force on traversal t (a Pattern region stays Pattern). */
FR_HIDDEN int fr_s_with_region(FrTraversal* t, int32_t kind, void* fn, TVMFFIAny* rv);

#endif /* TVM_FFI_FAST_STRUCTURAL_TRAVERSAL_H_ */
