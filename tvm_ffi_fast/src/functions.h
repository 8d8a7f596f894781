/*
 * functions.h -- Function objects, the global function table and the
 * machinery the runtime's own ffi.* functions are declared with.
 */
#ifndef TVM_FFI_FAST_FUNCTIONS_H_
#define TVM_FFI_FAST_FUNCTIONS_H_

#include "core.h"

/* Slot implementations. */
FR_HIDDEN int fr_function_create(void* self, TVMFFISafeCallType safe_call,
                                 void (*deleter)(void* self), TVMFFIObjectHandle* out);
FR_HIDDEN int fr_function_call(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result);
FR_HIDDEN int fr_function_get_global(const TVMFFIByteArray* name, TVMFFIObjectHandle* out);
FR_HIDDEN int fr_function_set_global(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                                     int allow_override);
FR_HIDDEN int fr_function_set_global_from_method_info(const TVMFFIMethodInfo* method_info,
                                                      int allow_override);

/* A packed C callback: borrowed args, an owned value written to *rv; 0 or -1 + raised. */
typedef int (*FrPackedFn)(void* ctx, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* rv);

/* A Function object calling fn(ctx, ...); ctx_deleter (may be NULL) frees ctx with it. */
FR_HIDDEN void* fr_function_new(FrPackedFn fn, void* ctx, void (*ctx_deleter)(void* ctx));
/* The ctx a Function object made by fr_function_new(fn, ...) calls fn with; NULL when func is
   not a Function made from fn (or was made with a NULL ctx). */
FR_HIDDEN void* fr_function_context(void* func, FrPackedFn fn);

/* Calls any Function object (result starts as None). */
FR_HIDDEN int fr_call(void* func, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result);

/* The global function named name (a new reference) or NULL; nothing raised when absent. */
FR_HIDDEN void* fr_global_lookup(const char* name, size_t size);

/* ---------------------------------------------- typed built-in functions */

/*
 * The C++ types upstream's typed functions declare, as far as the runtime's
 * own globals need them: each knows its name in messages ("int", "List<Any>",
 * ...), its JSON type schema and how an argument is converted to it.
 */
typedef enum {
  FR_T_ANY,       /* Any: every value, views converted to owned */
  FR_T_ANYVIEW,   /* AnyView: every value as passed */
  FR_T_INT,       /* int64_t: int or bool */
  FR_T_BOOL,      /* bool: int or bool */
  FR_T_STR,       /* String: str or const char* */
  FR_T_BYTES,     /* Bytes: bytes or TVMFFIByteArray* */
  FR_T_VOIDP,     /* void*: opaque pointer or None */
  FR_T_OBJECT,    /* ObjectRef / const Object* */
  FR_T_FUNCTION,  /* Function */
  FR_T_ARRAY,     /* const ArrayObj* */
  FR_T_LIST,      /* const ListObj* */
  FR_T_MAP,       /* const MapObj* */
  FR_T_DICT,      /* const DictObj* */
  FR_T_LIST_REF,  /* List<Any>: a List, or an Array copied into a new List */
  FR_T_DICT_REF,  /* Dict<Any, Any>: a Dict, or a Map copied into a new Dict */
  FR_T_MODULE,    /* Module */
  FR_T_VOID,      /* return only */
  FR_T_ARRAY_STR, /* return only: Array<str> */
  FR_T_OPT_STR,   /* return only: Optional<str> */
  FR_T_OPT_FUNC,  /* return only: Optional<Function> */
  FR_T_DEVICE,    /* return only: DLDevice */
  /* the structural operations' types */
  FR_T_OPT_INT,           /* Optional<int>: None or an int (as int64, None as kTVMFFINone) */
  FR_T_VISITOR,           /* ffi.StructuralVisitor, exactly */
  FR_T_MUTATOR,           /* ffi.StructuralMutator, exactly */
  FR_T_VISIT_ERROR_CONTEXT, /* ffi.VisitErrorContext, exactly */
  FR_T_CALLBACKS,         /* Array<Tuple<int, ffi.Function>>: an Array (the callee checks it) */
  FR_T_MUTATE_CALLBACKS,  /* Array<Tuple<int, ffi.Function, bool>>: likewise */
  FR_T_OPT_PATH_PAIR,     /* return only: Optional<Tuple<AccessPath, AccessPath>> */
  FR_T_OPT_INTERRUPT,     /* return only: Optional<ffi.VisitInterrupt> */
  FR_T_INTERRUPT,         /* return only: ffi.VisitInterrupt */
  FR_T_STRUCTURAL_KEY,    /* return only: ffi.StructuralKey */
  FR_T_ARRAY_PATH         /* return only: Array<ffi.reflection.AccessPath> */
} FrTypeCode;

#define FR_MAX_PARAMS 6

/*
 * A converted argument: `value` is the argument as its declared type sees it
 * (a view of the caller's value, or a value owned here when a conversion made
 * a new object, released after the call).
 */
typedef struct {
  TVMFFIAny value;
  int owned;
} FrArg;

/* The body of a typed built-in: its context, converted args; an owned result to *rv. */
typedef int (*FrTypedFn)(void* ctx, const FrArg* args, TVMFFIAny* rv);

typedef struct {
  const char* name;         /* "" for anonymous closures */
  FrTypedFn fn;             /* typed: arguments checked and converted first */
  FrPackedFn packed;        /* or packed: raw arguments, schema {"type":"ffi.Function"} */
  int num_params;
  FrTypeCode params[FR_MAX_PARAMS];
  FrTypeCode ret;
} FrBuiltin;

/*
 * A Function object calling a typed spec with ctx (spec must outlive it;
 * ctx_deleter, may be NULL, frees ctx with the function).
 */
FR_HIDDEN void* fr_typed_function_new(const FrBuiltin* spec, void* ctx,
                                      void (*ctx_deleter)(void* ctx));

/* Registers built-ins as global functions (with upstream's metadata). */
FR_HIDDEN int fr_register_builtins(const FrBuiltin* builtins, size_t count);

/* The object ffi.GetInvalidObject returns (a new reference into *rv). */
FR_HIDDEN int fr_missing_object(TVMFFIAny* rv);

/*
 * The ffi.GetInvalidObject / ffi.GetKwargsObject singletons if they exist yet
 * (borrowed), else NULL: ffi.ReprPrint recognizes them by address.
 */
FR_HIDDEN void* fr_missing_object_peek(void);
FR_HIDDEN void* fr_kwargs_object_peek(void);

/* Registers the function and global-table built-ins (ffi.FunctionRemoveGlobal, ...). */
FR_HIDDEN int fr_functions_register_globals(void);

#endif /* TVM_FFI_FAST_FUNCTIONS_H_ */
