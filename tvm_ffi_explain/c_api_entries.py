"""What each ``TVMFFI*`` function does with ownership: the table behind ``spec/16-c-api.md``.

One :class:`Entry` per function of ``tvm/ffi/c_api.h`` and
``tvm/ffi/extra/c_env_api.h``, grouped as the page shows them. The facts come
from upstream's headers and sources (``apache-tvm-ffi`` 0.1.15.post2); the
wording is ours. "Upstream ends the process" marks the functions whose
failure upstream does not report (it prints the error and calls ``exit``);
both runtimes of this project return the failure value with the error
raised instead (``docs/runtimes.md``, "Where upstream crashes").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple


@dataclass(frozen=True)
class Entry:
    """What one function does with ownership."""

    name: str
    takes: str  # the inputs, and who keeps them
    gives: str  # the outputs, and who must release them
    errors: str = "status -1, the error raised"
    exception: str = ""  # what breaks the usual pattern, flagged on the page


_ABORTS = ("upstream ends the process (prints the error, then `exit(-1)`); this project's "
           "runtimes return {value} with the error raised")
_NO_STATUS = "nothing to fail: no status"
_INLINE = "an inline C++ function of the header: pointer arithmetic, no call into the library"

#: (section title, one line about it, its entries), in page order.
SECTIONS: List[Tuple[str, str, List[Entry]]] = [
    ("Version", "", [
        Entry("TVMFFIGetVersion", "`out_version`, the caller's struct to fill.",
              "the version of the `libtvm_ffi.so` the process loaded (this project: 0.1.16). "
              "The header promises this one function never changes, whatever the version: "
              "call it first to learn which ABI you are talking to.", _NO_STATUS),
    ]),
    ("Objects and reference counts",
     "The combined count and the deleter protocol are on [page 3](03-objects.md); C++ "
     "kernels do both inline, without calling these.", [
        Entry("TVMFFIObjectIncRef", "`obj`, any live object (at least one strong reference).",
              "one more strong reference, owned by the caller.",
              "status 0 always; a NULL or dead `obj` is undefined behaviour"),
        Entry("TVMFFIObjectDecRef", "`obj` and one strong reference the caller owned, which it "
              "gives up.", "nothing; the last strong reference runs the object's deleter.",
              "status 0 always; a NULL `obj` or a reference the caller did not own is undefined "
              "behaviour"),
        Entry("TVMFFIObjectCreateOpaque", "`handle`, owned by the new object from now on; "
              "`deleter(handle)` runs when the object dies (NULL: nothing runs).",
              "`*out`, an owned object of type `kTVMFFIOpaquePyObject` holding `handle`.",
              "status -1 with `RuntimeError` when `type_index` is not `kTVMFFIOpaquePyObject`"),
        Entry("TVMFFIObjectGetTypeIndex", "`obj`, borrowed.", "the type index in its header.",
              _INLINE),
    ]),
    ("Object memory", "Where objects are allocated ([page 3](03-objects.md)).", [
        Entry("TVMFFIGetCustomAllocator", "nothing.",
              "the process's object allocator, never NULL; the runtime owns it.",
              _ABORTS.format(value="NULL")),
        Entry("TVMFFISetCustomAllocator", "`allocator`, which must stay valid for the rest of "
              "the process; NULL restores the built-in one.", "nothing.",
              exception="not synchronised with object creation: install it once, before other "
                        "threads create objects"),
    ]),
    ("Values", "Turning bytes into owned values and back ([page 1](01-any.md), "
               "[page 7](07-strings.md)).", [
        Entry("TVMFFIAnyViewToOwnedAny", "`any_view`, a borrowed value (an argument).",
              "`*out`, an owned value: an object gets one more strong reference, a "
              "`kTVMFFIRawStr` becomes a String, a `kTVMFFIByteArrayPtr` a Bytes, a "
              "`kTVMFFIObjectRValueRef` moves the object out of the caller's slot (which "
              "becomes NULL); POD values are copied.",
              exception="a `kTVMFFIDLTensorPtr` is copied as it is: the \"owned\" value still "
                        "points at the caller's `DLTensor`, valid only as long as that struct"),
        Entry("TVMFFIStringFromByteArray", "`input`, copied.",
              "`*out`, an owned str: `kTVMFFISmallStr` for at most 7 bytes, else a String "
              "object."),
        Entry("TVMFFIBytesFromByteArray", "`input`, copied.",
              "`*out`, owned bytes: `kTVMFFISmallBytes` for at most 7, else a Bytes object."),
        Entry("TVMFFIBigIntFromByteArray", "`input`: whole 64-bit words, least significant "
              "first, two's complement, copied (redundant sign words allowed).",
              "`*out`, an owned int: `kTVMFFIInt` when it fits in 64 bits, else a BigInt object "
              "in minimal form.",
              "status -1 with `ValueError` when the size is not a multiple of 8"),
        Entry("TVMFFIBigIntGetContentByteArray", "`value`, a borrowed `kTVMFFIInt` or BigInt "
              "value.", "a byte array viewing its words; nothing to release.",
              "no status: `value` must be an int",
              exception="the view is borrowed, and for a `kTVMFFIInt` it points *into the "
                        "caller's `TVMFFIAny`*: it dies with that 16-byte slot, not with any "
                        "object"),
        Entry("TVMFFISmallBytesGetContentByteArray", "`value`, a borrowed small str or bytes.",
              "a byte array viewing the bytes inside `value` itself.", _INLINE),
        Entry("TVMFFIBytesGetByteArrayPtr", "`obj`, a borrowed String or Bytes object.",
              "a pointer to its cell, valid while the object lives.", _INLINE),
        Entry("TVMFFIShapeGetCellPtr", "`obj`, a borrowed Shape object.",
              "a pointer to its cell, valid while the object lives.", _INLINE),
        Entry("TVMFFIDataTypeFromString", "`str`, read.", "`*out`, the dtype.",
              "status -1 with `ValueError` for a name upstream does not parse"),
        Entry("TVMFFIDataTypeToString", "`dtype`, read.",
              "`*out`, an owned String object.",
              exception="always a String object (`kTVMFFIStr`), even for names of at most 7 "
                        "bytes such as `float32`, unlike `TVMFFIStringFromByteArray`"),
        Entry("TVMFFIDLDeviceFromIntPair", "two integers.", "a `DLDevice` by value.", _INLINE),
    ]),
    ("Functions", "The packed calling convention is [page 5](05-calls.md).", [
        Entry("TVMFFIFunctionCreate", "`self`, owned by the new Function from now on "
              "(`deleter(self)` runs when it dies; NULL: nothing runs); `safe_call`, the entry.",
              "`*out`, an owned Function whose calls pass `self` as the handle."),
        Entry("TVMFFIFunctionCall", "`func` and `args`, borrowed; `*result` must hold a type "
              "index below 64 (set it to `kTVMFFINone`).",
              "`*result`, an owned value, on status 0.",
              "whatever the function returns: -1 with the error raised; -2 (legacy) when the "
              "calling front end already has an exception pending",
              exception="`args` is not `const` in this signature, but the callee must not "
                        "write it: a safe-call receives `const TVMFFIAny*`"),
        Entry("TVMFFIFunctionGetGlobal", "`name`, read.",
              "`*out`, an owned Function, or NULL when no global has that name (not an "
              "error)."),
        Entry("TVMFFIFunctionSetGlobal", "`name`, copied; `f`, borrowed: the table takes a "
              "reference of its own, so the caller still releases its one.", "nothing.",
              "status -1 with `RuntimeError` when the name is taken and `allow_override` is 0"),
        Entry("TVMFFIFunctionSetGlobalFromMethodInfo", "`method_info`: its strings are copied "
              "and its Function gets a reference of the table's own.", "nothing.",
              "as `TVMFFIFunctionSetGlobal`"),
        Entry("TVMFFIFunctionGetCellPtr", "`obj`, a borrowed Function.",
              "a pointer to its cell (`safe_call`, `cpp_call`), valid while it lives.", _INLINE),
    ]),
    ("Errors", "The raised-error slot is one per thread ([page 6](06-errors.md)).", [
        Entry("TVMFFIErrorSetRaised", "`error`, borrowed: the slot takes a reference of its own, "
              "so the caller still releases its one.",
              "the error in this thread's slot (replacing any there).", _NO_STATUS),
        Entry("TVMFFIErrorSetRaisedFromCStr", "`kind` and `message`, copied.",
              "a new Error, with a backtrace, in this thread's slot.", _NO_STATUS),
        Entry("TVMFFIErrorSetRaisedFromCStrParts", "`kind` and `message_parts[0..num_parts)`, "
              "copied and joined (NULL parts skipped).",
              "a new Error in this thread's slot.", _NO_STATUS),
        Entry("TVMFFIErrorMoveFromRaised", "nothing.",
              "`*result`, the error that was in this thread's slot, now owned by the caller, or "
              "NULL when there was none; the slot is empty afterwards.", _NO_STATUS),
        Entry("TVMFFIErrorCreate", "`kind`, `message`, `backtrace`, all copied (none may be "
              "NULL).", "`*out`, an owned Error object.",
              "status -1 with nothing raised (out of memory is its only failure)",
              exception="a failure (out of memory) returns -1 *without* raising anything: "
                        "raising would itself need an Error"),
        Entry("TVMFFIErrorCreateWithCauseAndExtraContext", "the three texts, copied; "
              "`cause_chain` and `extra_context`, borrowed (the new error takes references of "
              "its own; either may be NULL).", "`*out`, an owned Error object.",
              "as `TVMFFIErrorCreate`"),
        Entry("TVMFFIErrorGetCellPtr", "`obj`, a borrowed Error.",
              "a pointer to its cell, valid while it lives.", _INLINE),
        Entry("TVMFFIBacktrace", "`filename` and `func` (may be NULL), read.",
              "the backtrace text, owned by the library.", _NO_STATUS,
              exception="the returned pointer is to *thread-local* storage that the next call "
                        "on the same thread overwrites: copy the text before calling again"),
    ]),
    ("Tensors and DLPack", "Hand-over both ways ([page 10](10-tensors.md)).", [
        Entry("TVMFFITensorFromDLPack", "`from`, whose ownership passes to the new Tensor on "
              "success (its `deleter` runs when the Tensor dies).",
              "`*out`, an owned Tensor viewing the same memory.",
              "status -1 with `RuntimeError` when `require_alignment` or `require_contiguous` "
              "fails; the caller then still owns `from`"),
        Entry("TVMFFITensorFromDLPackVersioned", "as `TVMFFITensorFromDLPack`, for the "
              "versioned struct.", "`*out`, an owned Tensor.",
              "as `TVMFFITensorFromDLPack`, and `RuntimeError` for sub-byte types marked "
              "padded"),
        Entry("TVMFFITensorToDLPack", "`from`, borrowed.",
              "`*out`, a `DLManagedTensor` the caller owns (call its `deleter` once); it holds a "
              "reference to the Tensor until then."),
        Entry("TVMFFITensorToDLPackVersioned", "`from`, borrowed.",
              "`*out`, a `DLManagedTensorVersioned` the caller owns, version 1.3, as "
              "`TVMFFITensorToDLPack`."),
        Entry("TVMFFITensorCreateUnsafeView", "`source`, borrowed (the view takes a reference "
              "that keeps it alive); `prototype`, whose shape and strides are copied.",
              "`*out`, an owned Tensor over `prototype->data`.",
              exception="nothing checks that `prototype->data` lies inside `source`'s memory: "
                        "the caller promises it"),
        Entry("TVMFFITensorGetDLTensorPtr", "`obj`, a borrowed Tensor.",
              "the `DLTensor` right after its header, valid while it lives.", _INLINE),
    ]),
    ("Types and reflection", "The registry is [page 4](04-types.md), reflection "
                             "[page 13](13-reflection.md).", [
        Entry("TVMFFITypeKeyToIndex", "`type_key`, read.", "`*out_tindex`.",
              "status -1 with `InternalError` (`Cannot find type ...`) for an unknown key"),
        Entry("TVMFFITypeGetOrAllocIndex", "`type_key`, copied; the index, depth, child slots "
              "and parent of the type to register.",
              "the type's index, allocating one on first use.",
              _ABORTS.format(value="-1"),
              exception="`parent_type_index` -2 is a query: nothing is registered, and an "
                        "unknown key gives -2 rather than an error"),
        Entry("TVMFFIGetTypeInfo", "`type_index`, of a registered type.",
              "a pointer to its `TVMFFITypeInfo`, owned by the runtime.",
              _ABORTS.format(value="NULL"),
              exception="the record lives at one address for the rest of the process (cache "
                        "it), but its `fields` and `methods` arrays move when more are "
                        "registered: re-read them"),
        Entry("TVMFFITypeRegisterField", "`info`, copied (its strings too).", "nothing."),
        Entry("TVMFFITypeRegisterMethod", "`info`, copied; its method value gets a reference "
              "of the registry's own.", "nothing."),
        Entry("TVMFFITypeRegisterMetadata", "`metadata`, copied.", "nothing.",
              "status -1 when the type has metadata already"),
        Entry("TVMFFITypeRegisterAttr", "`attr_name`, copied; `attr_value`, borrowed (the "
              "column keeps an owned copy).", "nothing."),
        Entry("TVMFFIGetTypeAttrColumn", "`attr_name`, read.",
              "a pointer to the column, owned by the runtime, or NULL when no type registered "
              "that attribute (not an error).", _ABORTS.format(value="NULL"),
              exception="the column struct stays put, but its `data` array moves when a type "
                        "with a larger index registers the attribute: read `data` and `size` "
                        "anew for each lookup"),
        Entry("TVMFFIOpaqueObjectGetCellPtr", "`obj`, a borrowed opaque object.",
              "a pointer to its cell (`handle`).", _INLINE),
    ]),
    ("Initialising once", "For code without C++'s thread-safe statics (generated code, C).", [
        Entry("TVMFFIHandleInitOnce", "`handle_addr`, the caller's `void*` variable; "
              "`init_func`, called at most once, under a lock, only while `*handle_addr` is "
              "NULL.", "`*handle_addr` set to what `init_func` produced (the caller's).",
              "`init_func`'s own nonzero status, with its error; -1 with `RuntimeError` when "
              "it produced NULL",
              exception="the fast path is one acquire load: `*handle_addr` must only ever be "
                        "written through these two functions"),
        Entry("TVMFFIHandleDeinitOnce", "`handle_addr`; `deinit_func`, called with the old "
              "handle when it was not NULL.", "`*handle_addr` set to NULL (an atomic exchange).",
              "`deinit_func`'s status"),
    ]),
    ("The environment", "Streams, the tensor allocator and signals ([page 12](12-env.md)); "
                        "every table is per OS thread.", [
        Entry("TVMFFIEnvSetStream", "the device, and `stream`, a handle the table only records "
              "(never created, synchronised or destroyed).",
              "`*opt_out_original_stream` (when not NULL): the stream it replaces.",
              "status -1 with `ValueError` for a negative device (upstream: undefined)"),
        Entry("TVMFFIEnvGetStream", "the device.",
              "this thread's current stream for it, or NULL when none was set; not owned.",
              _ABORTS.format(value="NULL")),
        Entry("TVMFFIEnvSetDLPackManagedTensorAllocator", "`allocator`, a function pointer "
              "that must stay valid while installed; `write_to_global_context` also makes it "
              "the process-wide one.",
              "`*opt_out_original_allocator` (when not NULL): this thread's previous one.",
              exception="the previous allocator given back is the *thread's*, never the "
                        "process-wide one; and the process-wide one is a plain variable, so set "
                        "it before other threads allocate"),
        Entry("TVMFFIEnvGetDLPackManagedTensorAllocator", "nothing.",
              "this thread's allocator when it has one, else the process-wide one (NULL when "
              "neither is set).", _ABORTS.format(value="NULL"),
              exception="upstream's header comment says the process-wide one is looked at "
                        "first; its code (and ours) looks at the thread's first"),
        Entry("TVMFFIEnvTensorAlloc", "`prototype`: its dtype, ndim, shape and device are "
              "read, the rest ignored.",
              "`*out`, an owned Tensor from this thread's allocator (as "
              "`TVMFFIEnvGetDLPackManagedTensorAllocator` finds it).",
              "-1 with `RuntimeError` (`allocator is nullptr ...`) when there is none",
              exception="when the allocator fails, its own nonzero status comes back, not "
                        "necessarily -1, with the error it reported through `SetError`"),
        Entry("TVMFFIEnvCheckSignals", "nothing.",
              "0 when nothing is pending (or no `PyErr_CheckSignals` was registered).",
              "-1 when the environment's signal check reported an exception",
              exception="on -1 nothing is in the raised-error slot: the exception (say "
                        "`KeyboardInterrupt`) is pending in the environment; the kernel stops "
                        "and raises an error of kind `EnvErrorAlreadySet`"),
        Entry("TVMFFIEnvRegisterCAPI", "`name`, one of `PyErr_CheckSignals`, "
              "`PyGILState_Ensure`, `PyGILState_Release`; `symbol`, its address, kept.",
              "nothing.", "status -1 with `ValueError` (`Unknown env API ...`) for another "
                          "name"),
    ]),
    ("Modules", "The symbol conventions are [page 11](11-modules.md).", [
        Entry("TVMFFIEnvModLookupFromImports", "`library_ctx`, the Module the loader stored in "
              "the library's `__tvm_ffi__library_ctx`; `func_name`, read.",
              "`*out`, the Function found in the module's imports, else in the global table.",
              "status -1 with `RuntimeError` when neither has it",
              exception="`*out` is *borrowed*: the module caches it and keeps it alive; the "
                        "caller must not release it"),
        Entry("TVMFFIEnvModRegisterContextSymbol", "`name`, copied; `symbol`, a pointer kept "
              "as it is.", "nothing now; every library loaded later that defines a `void*` "
              "variable `name` gets `symbol` written into it."),
        Entry("TVMFFIEnvModRegisterSystemLibSymbol", "`name` (`__tvm_ffi_<function>`) and "
              "`symbol`, kept.", "nothing now; `ffi.SystemLib(prefix)` finds the symbol.",
              "status 0 always"),
    ]),
]
