/*
 * tvm/ffi/c_api.h -- the TVM FFI stable C ABI.
 *
 * Written independently for this project. Names, enum values, struct layouts
 * and function signatures are those of apache-tvm-ffi 0.1.x (header version
 * 0.1.16), so a kernel library built against either header set links and runs
 * against either libtvm_ffi.so.
 *
 * The ABI in one paragraph: every value crosses as a 16-byte TVMFFIAny (a type
 * index plus an 8-byte payload). Heap values are objects that start with the
 * 24-byte TVMFFIObject header (a combined strong/weak reference count, the type
 * index and a deleter). Every function has one signature, TVMFFISafeCallType:
 * it borrows its arguments, writes an owned result and returns 0, or returns
 * -1 after leaving an Error object in the thread-local raised-error slot.
 *
 * Compiles as C99 (-std=c99 -pedantic) and as C++17.
 */
#ifndef TVM_FFI_C_API_H_
#define TVM_FFI_C_API_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

/* A symbol defined weakly, so several libraries may each carry a copy. */
#ifdef _MSC_VER
#define TVM_FFI_WEAK __declspec(selectany)
#else
#define TVM_FFI_WEAK __attribute__((weak))
#endif

/*
 * TVM_FFI_DLL marks a function of libtvm_ffi itself (exported when building
 * it, imported otherwise); TVM_FFI_DLL_EXPORT marks a symbol a kernel library
 * always exports, such as __tvm_ffi_<name>.
 */
#if !defined(TVM_FFI_DLL) && defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#define TVM_FFI_DLL EMSCRIPTEN_KEEPALIVE
#define TVM_FFI_DLL_EXPORT EMSCRIPTEN_KEEPALIVE
#endif
#if !defined(TVM_FFI_DLL) && defined(_MSC_VER)
#ifdef TVM_FFI_EXPORTS
#define TVM_FFI_DLL __declspec(dllexport)
#else
#define TVM_FFI_DLL __declspec(dllimport)
#endif
#define TVM_FFI_DLL_EXPORT __declspec(dllexport)
#endif
#ifndef TVM_FFI_DLL
#define TVM_FFI_DLL __attribute__((visibility("default")))
#define TVM_FFI_DLL_EXPORT __attribute__((visibility("default")))
#endif

/* A function whose result depends only on its arguments and readable memory. */
#if defined(__GNUC__) || defined(__clang__)
#define TVM_FFI_ATTRIBUTE_PURE __attribute__((__pure__))
#else
#define TVM_FFI_ATTRIBUTE_PURE
#endif

/* The ABI version this header describes. */
#define TVM_FFI_VERSION_MAJOR 0
#define TVM_FFI_VERSION_MINOR 1
#define TVM_FFI_VERSION_PATCH 16

/*
 * Anonymous unions are C11 and C++; C99 compilers in pedantic mode accept
 * them only behind __extension__. The layout is the same either way.
 */
#if !defined(__cplusplus) && (defined(__GNUC__) || defined(__clang__))
#define TVM_FFI_ANON_UNION __extension__ union
#else
#define TVM_FFI_ANON_UNION union
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version triple reported by TVMFFIGetVersion. */
typedef struct {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} TVMFFIVersion;

/*
 * Type indices. Below 64: values stored inline in a TVMFFIAny (no object).
 * 64 to 127: the object types the ABI itself defines. From 128: types
 * allocated at run time by TVMFFITypeGetOrAllocIndex.
 */
#ifdef __cplusplus
enum TVMFFITypeIndex : int32_t {
#else
typedef enum {
#endif
  /* "Any type": appears in reflection metadata, never in a live value. */
  kTVMFFIAny = -1,
  kTVMFFINone = 0,
  kTVMFFIInt = 1,          /* v_int64 */
  kTVMFFIBool = 2,         /* v_int64, 0 or 1 */
  kTVMFFIFloat = 3,        /* v_float64 */
  kTVMFFIOpaquePtr = 4,    /* v_ptr, not owned */
  kTVMFFIDataType = 5,     /* v_dtype */
  kTVMFFIDevice = 6,       /* v_device */
  kTVMFFIDLTensorPtr = 7,  /* v_ptr to a DLTensor, borrowed */
  /*
   * v_c_str: a borrowed NUL-terminated string. Legal only in a borrowed view
   * (an argument); an owned value (a result) never carries it.
   */
  kTVMFFIRawStr = 8,
  kTVMFFIByteArrayPtr = 9, /* v_ptr to a TVMFFIByteArray, borrowed, views only */
  kTVMFFIObjectRValueRef = 10, /* v_ptr to an object slot whose reference may be moved out */
  kTVMFFISmallStr = 11,    /* v_bytes holds small_str_len (<= 7) UTF-8 bytes, NUL-padded */
  kTVMFFISmallBytes = 12,  /* v_bytes holds small_str_len (<= 7) bytes, NUL-padded */
  kTVMFFIUnchanged = 13,   /* structural-mutation marker: "no new value" */
  kTVMFFIStaticObjectBegin = 64,
  kTVMFFIObject = 64,      /* the root of all object types */
  kTVMFFIStr = 65,         /* TVMFFIObject, TVMFFIByteArray, then the characters */
  kTVMFFIBytes = 66,       /* TVMFFIObject, TVMFFIByteArray, then the bytes */
  kTVMFFIError = 67,       /* TVMFFIObject, TVMFFIErrorCell */
  kTVMFFIFunction = 68,    /* TVMFFIObject, TVMFFIFunctionCell */
  kTVMFFIShape = 69,       /* TVMFFIObject, TVMFFIShapeCell */
  kTVMFFITensor = 70,      /* TVMFFIObject, DLTensor */
  kTVMFFIArray = 71,       /* TVMFFIObject, TVMFFISeqCell, inline TVMFFIAny elements */
  kTVMFFIMap = 72,
  kTVMFFIModule = 73,
  kTVMFFIOpaquePyObject = 74, /* TVMFFIObject, TVMFFIOpaqueObjectCell holding a PyObject* */
  kTVMFFIList = 75,        /* TVMFFIObject, TVMFFISeqCell with a separately owned buffer */
  kTVMFFIDict = 76,
  kTVMFFIVisitInterrupt = 77,
  /*
   * An integer outside int64: TVMFFIObject, a size_t word count, then that
   * many int64 words (least significant first, native byte order, two's
   * complement, minimal length). Values that fit int64 always use kTVMFFIInt.
   */
  kTVMFFIBigInt = 78,
  kTVMFFIStaticObjectEnd,
  kTVMFFIDynObjectBegin = 128
#ifdef __cplusplus
};
#else
} TVMFFITypeIndex;
#endif

/* An object as the C API sees it: a pointer to its TVMFFIObject header. */
typedef void* TVMFFIObjectHandle;

/* The flags argument of TVMFFIObject::deleter. */
#ifdef __cplusplus
enum TVMFFIObjectDeleterFlagBitMask : int32_t {
#else
typedef enum {
#endif
  /* The strong count reached zero: destroy the value, keep the memory. */
  kTVMFFIObjectDeleterFlagBitMaskStrong = 1 << 0,
  /* The weak count reached zero: release the memory. */
  kTVMFFIObjectDeleterFlagBitMaskWeak = 1 << 1,
  /* Both at once, the usual case for an object nobody holds weakly. */
  kTVMFFIObjectDeleterFlagBitMaskBoth =
      (kTVMFFIObjectDeleterFlagBitMaskStrong | kTVMFFIObjectDeleterFlagBitMaskWeak)
#ifdef __cplusplus
};
#else
} TVMFFIObjectDeleterFlagBitMask;
#endif

/*
 * The 24-byte header every heap object starts with.
 *
 * combined_ref_count packs the strong count in its low 32 bits and the weak
 * count in its high 32 bits, so one 64-bit atomic serves both; a new object
 * starts at 1 strong and 1 weak (the strong references collectively hold one
 * weak). When the strong count drops to zero the last releaser calls
 * deleter(self, kTVMFFIObjectDeleterFlagBitMaskStrong), or ...Both when no
 * weak reference remains.
 */
typedef struct TVMFFIObject {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t __padding; /* always zero */
  TVM_FFI_ANON_UNION {
    void (*deleter)(void* self, int flags);
    int64_t __ensure_align; /* keeps the slot 8 bytes on 32-bit targets */
  };
} TVMFFIObject;

/*
 * The 16-byte tagged value that every argument and result travels in.
 *
 * type_index selects the member of the payload union. zero_padding must be 0
 * except for kTVMFFISmallStr/kTVMFFISmallBytes, where the same 4 bytes hold
 * small_str_len. An "Any" owns the object it points at (one strong
 * reference); an "AnyView" only borrows it.
 */
typedef struct TVMFFIAny {
  int32_t type_index;
  TVM_FFI_ANON_UNION {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  TVM_FFI_ANON_UNION {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    TVMFFIObject* v_obj;
    DLDataType v_dtype;
    DLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64; /* the raw payload bits, e.g. for hashing */
  };
} TVMFFIAny;

/* Used by TVMFFIAny alone; undefined so the header defines no macro upstream's does not. */
#undef TVM_FFI_ANON_UNION

/*
 * A borrowed (data, size) run of bytes. Also the cell that follows the header
 * of String and Bytes objects, whose data points at their own NUL-terminated
 * payload. size is size_t, so the struct is 8 bytes on 32-bit targets.
 */
typedef struct {
  const char* data;
  size_t size;
} TVMFFIByteArray;

/* The cell after the header of a Shape object: size int64 dimensions. */
typedef struct {
  const int64_t* data;
  size_t size;
} TVMFFIShapeCell;

/*
 * The cell after the header of Array and List objects: data points at
 * capacity TVMFFIAny slots of which the first size are live. data_deleter is
 * NULL when the slots sit inside the object's own allocation (Array) and frees
 * a separately allocated buffer otherwise (List).
 */
typedef struct TVMFFISeqCell {
  void* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
} TVMFFISeqCell;

/* How TVMFFIErrorCell::update_backtrace treats the existing backtrace. */
#ifdef __cplusplus
enum TVMFFIBacktraceUpdateMode : int32_t {
#else
typedef enum {
#endif
  kTVMFFIBacktraceUpdateModeReplace = 0,
  kTVMFFIBacktraceUpdateModeAppend = 1
#ifdef __cplusplus
};
#else
} TVMFFIBacktraceUpdateMode;
#endif

/*
 * The cell after the header of an Error object. kind is the error class name
 * ("ValueError"), message the text, backtrace the frames with the most recent
 * first. cause_chain and extra_context are optional objects (NULL when absent)
 * holding one reference owned by the error.
 */
typedef struct {
  TVMFFIByteArray kind;
  TVMFFIByteArray message;
  TVMFFIByteArray backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                           int32_t update_mode);
  TVMFFIObjectHandle cause_chain;
  TVMFFIObjectHandle extra_context;
} TVMFFIErrorCell;

/*
 * The packed calling convention every TVM FFI function implements.
 *
 * handle is the function's own state; args points at num_args borrowed
 * values (AnyView); result arrives holding kTVMFFINone and receives an owned
 * value (Any). Returns 0 on success, or -1 with an error left in the raised
 * slot (TVMFFIErrorSetRaised). The legacy status -2 means the error is already
 * pending in the calling frontend itself (a Python exception, say).
 */
typedef int (*TVMFFISafeCallType)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);

/*
 * The cell after the header of a Function object. safe_call is the entry
 * every caller may use. cpp_call is an optional C++ entry that throws instead
 * of returning a status; it is NULL unless the function was made in C++ and
 * must only be used by code sharing that C++ runtime.
 */
typedef struct {
  TVMFFISafeCallType safe_call;
  void* cpp_call;
} TVMFFIFunctionCell;

/* The cell after the header of an opaque object: the foreign handle it keeps. */
typedef struct {
  void* handle;
} TVMFFIOpaqueObjectCell;

/* ---------------------------------------------------------------- version */

/* Writes the ABI version of the loaded library. Never fails. */
TVM_FFI_DLL void TVMFFIGetVersion(TVMFFIVersion* out_version);

/* ---------------------------------------------------------------- objects */

/* Adds one strong reference. Returns 0. */
TVM_FFI_DLL int TVMFFIObjectIncRef(TVMFFIObjectHandle obj);

/* Drops one strong reference, destroying the object when it was the last. */
TVM_FFI_DLL int TVMFFIObjectDecRef(TVMFFIObjectHandle obj);

/*
 * Wraps a foreign handle in a new object of the given opaque type index
 * (kTVMFFIOpaquePyObject for Python objects); deleter(handle) runs when the
 * object dies. *out receives one owned reference.
 */
TVM_FFI_DLL int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index,
                                         void (*deleter)(void* handle), TVMFFIObjectHandle* out);

/*
 * The word immediately before every object allocated through the custom
 * allocator. When the object's memory is released, its deleter calls
 * delete_space(body) (if not NULL), which frees the whole allocation.
 */
typedef struct {
  void (*delete_space)(void* ptr);
} TVMFFIObjectAllocHeader;

/*
 * A process-wide object allocator a frontend may install. allocate returns an
 * aligned, uninitialised body of size bytes preceded by an initialised
 * TVMFFIObjectAllocHeader, or NULL after raising an error; context is passed
 * through unchanged. It may be called from several threads at once.
 */
typedef struct {
  void* (*allocate)(size_t size, size_t alignment, int32_t type_index, void* context);
  void* context;
} TVMFFICustomAllocator;

/* The installed allocator; never NULL (a built-in one until replaced). */
TVM_FFI_DLL TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void);

/*
 * Installs allocator for objects created from now on, or restores the
 * built-in one when NULL. The struct must outlive the process. Install before
 * objects are created concurrently: this is not synchronised.
 */
TVM_FFI_DLL int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator);

/* Looks up the index of a registered type key; fails for unknown keys. */
TVM_FFI_DLL int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex);

/* -------------------------------------------------------------- functions */

/*
 * Makes a Function object that calls safe_call(self, ...). deleter(self), if
 * not NULL, runs when the function dies. *out receives one owned reference.
 */
TVM_FFI_DLL int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call,
                                     void (*deleter)(void* self), TVMFFIObjectHandle* out);

/* Finds a global function; *out is an owned reference, or NULL if absent. */
TVM_FFI_DLL int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out);

/*
 * Turns a borrowed value into an owned one in *out: objects gain a reference,
 * raw C strings and byte-array pointers are copied into String/Bytes (inline
 * small forms when at most 7 bytes), everything else is copied as is.
 */
TVM_FFI_DLL int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out);

/* Calls a Function object. result must hold kTVMFFINone on entry. */
TVM_FFI_DLL int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result);

/* ----------------------------------------------------------------- errors */

/*
 * Moves this thread's raised error into *result (an owned reference) and
 * clears the slot; *result is NULL when nothing was raised.
 */
TVM_FFI_DLL void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result);

/* Stores an Error object in this thread's raised slot (adding a reference). */
TVM_FFI_DLL void TVMFFIErrorSetRaised(TVMFFIObjectHandle error);

/* Raises a new error made from a kind ("ValueError") and a message. */
TVM_FFI_DLL void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);

/*
 * Raises a new error whose message is the concatenation of num_parts strings;
 * NULL parts are skipped. Lets generated code share common message pieces.
 */
TVM_FFI_DLL void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts,
                                                   int32_t num_parts);

/*
 * Creates an Error object. Used while handling errors, so a failure (out of
 * memory) is reported only by the nonzero status, not by raising.
 */
TVM_FFI_DLL int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                                  const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out);

/*
 * Creates an Error object that also records the error that caused it and an
 * object of extra context; either may be NULL. The new error takes its own
 * references to both.
 */
TVM_FFI_DLL int TVMFFIErrorCreateWithCauseAndExtraContext(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace,
    TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out);

/* ----------------------------------------------------------------- DLPack */

/*
 * Takes ownership of a DLPack tensor and makes a Tensor object of it. Fails
 * (leaving `from` with the caller) if data + byte_offset is not a multiple of
 * require_alignment, or if require_contiguous is set and the strides are not
 * row-major compact.
 */
TVM_FFI_DLL int TVMFFITensorFromDLPack(DLManagedTensor* from, int32_t require_alignment,
                                       int32_t require_contiguous, TVMFFIObjectHandle* out);

/* Exports a Tensor as a DLManagedTensor that keeps the tensor alive. */
TVM_FFI_DLL int TVMFFITensorToDLPack(TVMFFIObjectHandle from, DLManagedTensor** out);

/* The versioned (DLPack 1.x) form of TVMFFITensorFromDLPack. */
TVM_FFI_DLL int TVMFFITensorFromDLPackVersioned(DLManagedTensorVersioned* from,
                                                int32_t require_alignment,
                                                int32_t require_contiguous,
                                                TVMFFIObjectHandle* out);

/* The versioned (DLPack 1.x) form of TVMFFITensorToDLPack. */
TVM_FFI_DLL int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from,
                                              DLManagedTensorVersioned** out);

/*
 * Makes a Tensor that shares source's memory (and keeps source alive) but
 * takes data pointer, dtype, shape and strides from prototype; shape and
 * strides are copied. Unchecked: prototype must stay within source's memory.
 */
TVM_FFI_DLL int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source, const DLTensor* prototype,
                                             TVMFFIObjectHandle* out);

/* -------------------------------------------------------- strings, bytes */

/* Copies bytes into an owned string value: SmallStr up to 7 bytes, else a String object. */
TVM_FFI_DLL int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);

/* Copies bytes into an owned bytes value: SmallBytes up to 7 bytes, else a Bytes object. */
TVM_FFI_DLL int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);

/*
 * Builds an owned integer from int64 words (least significant first, native
 * byte order, two's complement; input->size a multiple of 8, empty meaning
 * zero). The result is an Int when it fits int64, otherwise a minimal BigInt.
 */
TVM_FFI_DLL int TVMFFIBigIntFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);

/*
 * Borrows the int64 words of an Int or BigInt value, in the layout above. The
 * view lives as long as the value does.
 */
TVM_FFI_DLL TVMFFIByteArray TVMFFIBigIntGetContentByteArray(const TVMFFIAny* value);

/* ---------------------------------------------------------------- dtypes */

/* Parses a dtype string such as "float32", "int8x4" or "bfloat16". */
TVM_FFI_DLL int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, DLDataType* out);

/* Prints a dtype into *out as an owned string value (the caller releases it). */
TVM_FFI_DLL int TVMFFIDataTypeToString(const DLDataType* dtype, TVMFFIAny* out);

/* ------------------------------------------------------------- reflection */

/* Reads the field at address `field` into *result (an owned value). */
typedef int (*TVMFFIFieldGetter)(void* field, TVMFFIAny* result);

/* Writes *value into the field at address `field`. */
typedef int (*TVMFFIFieldSetter)(void* field, const TVMFFIAny* value);

/* Creates a blank instance of a type; the caller then sets every field. */
typedef int (*TVMFFIObjectCreator)(TVMFFIObjectHandle* result);

/* Bits of TVMFFIFieldInfo::flags (and, for a few, TVMFFIMethodInfo::flags). */
#ifdef __cplusplus
enum TVMFFIFieldFlagBitMask : int32_t {
#else
typedef enum {
#endif
  kTVMFFIFieldFlagBitMaskWritable = 1 << 0,
  kTVMFFIFieldFlagBitMaskHasDefault = 1 << 1,
  kTVMFFIFieldFlagBitMaskIsStaticMethod = 1 << 2,
  kTVMFFIFieldFlagBitMaskSEqHashIgnore = 1 << 3, /* skipped by structural eq/hash */
  kTVMFFIFieldFlagBitMaskSEqHashDefPattern = 1 << 4, /* opens a pattern def region */
  /* With HasDefault: default_value_or_factory is a () -> Any factory. */
  kTVMFFIFieldFlagBitMaskDefaultFromFactory = 1 << 5,
  kTVMFFIFieldFlagBitMaskReprOff = 1 << 6,    /* hidden from reflected repr */
  kTVMFFIFieldFlagBitMaskCompareOff = 1 << 7, /* skipped by recursive comparison */
  kTVMFFIFieldFlagBitMaskHashOff = 1 << 8,    /* skipped by recursive hashing */
  kTVMFFIFieldFlagBitMaskInitOff = 1 << 9,    /* not a parameter of __ffi_init__ */
  kTVMFFIFieldFlagBitMaskKwOnly = 1 << 10,    /* keyword-only in __ffi_init__ */
  /*
   * TVMFFIFieldInfo::setter is a Function object handle, called as
   * (field address as OpaquePtr, value), not a TVMFFIFieldSetter.
   */
  kTVMFFIFieldFlagBitSetterIsFunctionObj = 1 << 11,
  kTVMFFIFieldFlagBitMaskSEqHashDefSimple = 1 << 12 /* opens a simple def region */
#ifdef __cplusplus
};
#else
} TVMFFIFieldFlagBitMask;
#endif

/* How structural equality and hashing treat instances of a type. */
#ifdef __cplusplus
enum TVMFFISEqHashKind : int32_t {
#else
typedef enum {
#endif
  kTVMFFISEqHashKindUnsupported = 0,
  kTVMFFISEqHashKindTreeNode = 1,       /* compare as a tree: by content */
  kTVMFFISEqHashKindFreeVar = 2,        /* a variable, matched by binding */
  kTVMFFISEqHashKindDAGNode = 3,        /* compare as a DAG: sharing matters */
  kTVMFFISEqHashKindConstTreeNode = 4,  /* a tree without free variables */
  kTVMFFISEqHashKindUniqueInstance = 5  /* pointer identity suffices */
#ifdef __cplusplus
};
#else
} TVMFFISEqHashKind;
#endif

/* The definition region a structural visitor is in while visiting a field. */
#ifdef __cplusplus
enum TVMFFIDefRegionKind : int32_t {
#else
typedef enum {
#endif
  kTVMFFIDefRegionKindNone = 0,    /* free variables here are uses */
  kTVMFFIDefRegionKindPattern = 1, /* the value and variables in its type bind here */
  kTVMFFIDefRegionKindSimple = 2   /* only the variable itself binds here */
#ifdef __cplusplus
};
#else
} TVMFFIDefRegionKind;
#endif

/*
 * One reflected field of an object type: where it sits (offset from the
 * object header), how big it is, how to read and write it, its default, and
 * the static type index its declaration promises (kTVMFFIAny when any).
 */
typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata; /* JSON text */
  int64_t flags;            /* TVMFFIFieldFlagBitMask bits */
  int64_t size;
  int64_t alignment;
  int64_t offset;
  TVMFFIFieldGetter getter;
  void* setter; /* TVMFFIFieldSetter, or a Function handle (see the flag) */
  TVMFFIAny default_value_or_factory;
  int32_t field_static_type_index;
} TVMFFIFieldInfo;

/*
 * One reflected method: a Function (stored as a borrowed value) whose first
 * argument is self unless kTVMFFIFieldFlagBitMaskIsStaticMethod is set.
 */
typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata; /* JSON text */
  int64_t flags;
  TVMFFIAny method;
} TVMFFIMethodInfo;

/* Optional per-type facts used to create instances by reflection. */
typedef struct {
  TVMFFIByteArray doc;
  TVMFFIObjectCreator creator; /* NULL when instances cannot be made blank */
  int32_t total_size;          /* sizeof the object, 0 when unknown */
  TVMFFISEqHashKind structural_eq_hash_kind;
} TVMFFITypeMetadata;

/*
 * One named attribute across all types: the value for type index t is
 * data[t - begin_index] when begin_index <= t < begin_index + size, and
 * absent otherwise (an entry holding kTVMFFINone is also absent).
 * Attributes are not inherited.
 */
typedef struct {
  const TVMFFIAny* data;
  int32_t size;
  int32_t begin_index;
} TVMFFITypeAttrColumn;

/*
 * Everything the runtime knows about one type. Records live at fixed
 * addresses for the life of the process. type_ancestors[d] is the record of
 * the ancestor at depth d, for d < type_depth (the root Object is depth 0).
 */
typedef struct TVMFFITypeInfo {
  int32_t type_index;
  int32_t type_depth;
  TVMFFIByteArray type_key;
  const struct TVMFFITypeInfo** type_ancestors;
  uint64_t type_key_hash;
  int32_t num_fields;
  int32_t num_methods;
  const TVMFFIFieldInfo* fields;
  const TVMFFIMethodInfo* methods;
  const TVMFFITypeMetadata* metadata; /* NULL until registered */
} TVMFFITypeInfo;

/* Registers f under name in the global function table. */
TVM_FFI_DLL int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                                        int allow_override);

/* Registers method_info->method under method_info->name, keeping doc and metadata. */
TVM_FFI_DLL int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* method_info,
                                                      int allow_override);

/* Appends a reflected field to a type's record. */
TVM_FFI_DLL int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info);

/* Appends a reflected method to a type's record. */
TVM_FFI_DLL int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info);

/* Sets a type's metadata record. */
TVM_FFI_DLL int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata);

/* Sets the value of attribute attr_name for one type. */
TVM_FFI_DLL int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* attr_name,
                                       const TVMFFIAny* attr_value);

/* The column of an attribute, or NULL if no type ever registered it. */
TVM_FFI_DLL const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* attr_name);

/* -------------------------------------------- process services (no raise) */

/*
 * A text backtrace of the calling thread, most recent frame first. filename,
 * lineno and func describe the caller when debug information is missing (each
 * may be NULL). The array stays valid until the next call on this thread.
 */
TVM_FFI_DLL const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno,
                                                   const char* func, int cross_ffi_boundary);

/*
 * Finds or allocates the index of type_key.
 *
 * static_type_index >= 0 registers the key at that fixed index; -1 asks for a
 * fresh index from kTVMFFIDynObjectBegin up. parent_type_index is the parent's
 * index, -1 for a root, or -2 to only look up: then the result is the existing
 * index or -2. num_child_slots and child_slots_can_overflow size the range
 * reserved for the type's descendants (a hint an implementation may ignore).
 */
TVM_FFI_DLL int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key,
                                              int32_t static_type_index, int32_t type_depth,
                                              int32_t num_child_slots,
                                              int32_t child_slots_can_overflow,
                                              int32_t parent_type_index);

/* The record of a registered type index. */
TVM_FFI_DLL TVM_FFI_ATTRIBUTE_PURE const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index);

/*
 * If *handle_addr is NULL, calls init_func once (even under concurrent
 * callers) and stores what it produced. A failing init_func raises and
 * returns nonzero, which is passed on.
 */
TVM_FFI_DLL int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result));

/* If *handle_addr is not NULL, calls deinit_func on it once and clears it. */
TVM_FFI_DLL int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit_func)(void* handle));

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ------------------------------------------------------- layout helpers */
/*
 * Every cell sits right after the 24-byte header, so these are offset
 * arithmetic only. As in upstream's header they are C++ only: C code computes
 * the same offsets itself (or includes tvm_ffi_abi/object_cells.h, this
 * project's C versions under names of its own), so that C written against
 * this header also builds against upstream's.
 */
#ifdef __cplusplus

/* The type index stored in an object's header. */
inline int32_t TVMFFIObjectGetTypeIndex(TVMFFIObjectHandle obj) {
  return static_cast<TVMFFIObject*>(obj)->type_index;
}

/* The bytes of a kTVMFFISmallStr / kTVMFFISmallBytes value, as a view into it. */
inline TVMFFIByteArray TVMFFISmallBytesGetContentByteArray(const TVMFFIAny* value) {
  return TVMFFIByteArray{value->v_bytes, static_cast<size_t>(value->small_str_len)};
}

/* The TVMFFIByteArray cell of a String or Bytes object. */
inline TVMFFIByteArray* TVMFFIBytesGetByteArrayPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIByteArray*>(reinterpret_cast<char*>(obj) + sizeof(TVMFFIObject));
}

/* The TVMFFIErrorCell of an Error object. */
inline TVMFFIErrorCell* TVMFFIErrorGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIErrorCell*>(reinterpret_cast<char*>(obj) + sizeof(TVMFFIObject));
}

/* The TVMFFIFunctionCell of a Function object. */
inline TVMFFIFunctionCell* TVMFFIFunctionGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIFunctionCell*>(reinterpret_cast<char*>(obj) +
                                                sizeof(TVMFFIObject));
}

/* The TVMFFIOpaqueObjectCell of an opaque object. */
inline TVMFFIOpaqueObjectCell* TVMFFIOpaqueObjectGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIOpaqueObjectCell*>(reinterpret_cast<char*>(obj) +
                                                    sizeof(TVMFFIObject));
}

/* The TVMFFIShapeCell of a Shape object. */
inline TVMFFIShapeCell* TVMFFIShapeGetCellPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<TVMFFIShapeCell*>(reinterpret_cast<char*>(obj) + sizeof(TVMFFIObject));
}

/* The DLTensor embedded in a Tensor object. */
inline DLTensor* TVMFFITensorGetDLTensorPtr(TVMFFIObjectHandle obj) {
  return reinterpret_cast<DLTensor*>(reinterpret_cast<char*>(obj) + sizeof(TVMFFIObject));
}

/* A DLDevice from its two integers. */
inline DLDevice TVMFFIDLDeviceFromIntPair(int32_t device_type, int32_t device_id) {
  return DLDevice{static_cast<DLDeviceType>(device_type), device_id};
}
#endif /* __cplusplus */

#endif /* TVM_FFI_C_API_H_ */
