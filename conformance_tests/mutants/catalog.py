"""The mutants: plausible ABI bugs, each one line (or a few) of one file.

Each :class:`Mutant` names the file, a regular expression that must match
exactly once (so a mutant that no longer fits the code fails loudly), its
replacement (literal text), the bug it stands for, and *hints*: the tests
expected to catch it, which a run tries first (the whole suite follows if
they do not). Areas: the reference runtime (``tvm_ffi_ref``), the Python API
both front ends mount (``tvm_ffi_api``), the fast C runtime
(``tvm_ffi_fast/src``) and the fast front end (``tvm_ffi_fast/src/frontend``).
A ``.c`` mutant rebuilds the copy's ``tvm_ffi_fast._core`` (:mod:`.cbuild`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

T_VALUES = "conformance_tests/test_values.py::"
T_CONTAINERS = "conformance_tests/test_containers.py::test_container_program"
T_CALLS = "conformance_tests/test_calls.py::test_call_program"
T_STATE = "conformance_tests/test_runtime_state.py::"
T_STRUCTURAL = "conformance_tests/test_structural.py::test_structural_operations_agree"
T_DATACLASSES = "conformance_tests/test_dataclasses.py::test_dataclass_programs"
T_EDGES = "conformance_tests/test_edges.py::"
T_CONTAINER_EDGES = "conformance_tests/test_container_edges.py::test_container_edges"
T_SURFACE = "conformance_tests/test_surface_edges.py::"
T_VISITORS = "conformance_tests/test_structural.py::test_structural_visitors_and_mutators"


@dataclass(frozen=True)
class Mutant:
    """One planted bug."""

    name: str
    path: str  # relative to the project root
    pattern: str  # a regular expression (multiline mode) that matches exactly once
    replacement: str  # literal text
    about: str  # the bug, in a few words
    hints: Tuple[str, ...] = ()

    @property
    def area(self) -> str:
        if self.path.startswith("tvm_ffi_fast/src/frontend/"):
            return "fast front end"
        if self.path.startswith("tvm_ffi_fast/cffi_core/"):
            return "cffi core"
        if self.path.startswith("tvm_ffi_fast/src/"):
            return "fast runtime"
        if self.path.startswith("tvm_ffi_api/"):
            return "Python API"
        if self.path.startswith("c_api/"):
            return "libtvm_ffi.so"
        return "ref runtime" if self.path.startswith("tvm_ffi_ref/runtime/") else "ref front end"

    @property
    def needs_c_build(self) -> bool:
        return self.path.endswith(".c")

    @property
    def where(self) -> str:
        return self.path.split("/", 1)[1] if self.path.startswith("tvm_ffi_") else self.path


def _m(name, path, pattern, replacement, about, *hints) -> Mutant:
    return Mutant(name, path, pattern, replacement, about, tuple(hints))


REF = "tvm_ffi_ref/runtime/"
FAST = "tvm_ffi_fast/src/"
FRONT = "tvm_ffi_fast/src/frontend/"

MUTANTS: List[Mutant] = [
    # ------------------------------------------------------------ reference runtime
    _m("ref-small-str-8", REF + "strings.py", r"^SMALL_STR_MAX = 7$", "SMALL_STR_MAX = 8",
       "an 8-byte str travels inline (encoding)", T_VALUES + "test_string_encoding"),
    _m("ref-map-hash", REF + "hashing.py", r"^_STABLE_MULTIPLIER = 1099511628211$",
       "_STABLE_MULTIPLIER = 1099511628213", "long string keys hash differently (hashing)",
       T_CONTAINERS),
    _m("ref-small-map-max", REF + "map_layout.py", r"^SMALL_MAX_SLOTS = 4$", "SMALL_MAX_SLOTS = 8",
       "maps of 5 to 8 entries stay small (form threshold)", T_VALUES + "test_container_encoding"),
    _m("ref-small-erase-swap", REF + "map_storage.py",
       r"ctypes\.memmove\(pair, pair \+ PAIR_SIZE, \(cell\.size - i - 1\) \* PAIR_SIZE\)",
       "ctypes.memmove(pair, pair_address(cell, cell.size - 1), PAIR_SIZE)",
       "erasing from a small map moves the last pair into the hole (order)", T_CONTAINERS),
    _m("ref-dense-erase-order", REF + "map_dense.py",
       r"(?<=ZERO_PAIR, PAIR_SIZE\)\n        )self\.replace_in_list\(last, i\)",
       "self.unlink(last)\n        self.push_back(i)",
       "a dense erase that pulls a chain's last link forward appends it to the "
       "iteration list (order)", T_CONTAINERS),
    _m("ref-dense-load", REF + "map_dense.py", r"^MAX_LOAD_FACTOR = 0\.99$",
       "MAX_LOAD_FACTOR = 0.75", "a dense table rehashes at 75% load (growth threshold)",
       T_CONTAINERS),
    _m("ref-list-growth", REF + "sequence_edits.py",
       r"list_reserve\(address, max\(cell\.capacity \* LIST_GROWTH_FACTOR, ",
       "list_reserve(address, max(cell.capacity * 3 // 2, ",
       "a List grows by half its capacity, not double (capacity)", T_CONTAINERS),
    _m("ref-map-keyerror-kind", REF + "maps.py",
       r'raise FFIError\("KeyError", "key is not in Map"\)',
       'raise FFIError("IndexError", "key is not in Map")',
       "a missing map key raises the wrong error kind", T_CONTAINERS),
    _m("ref-bfloat-bits", REF + "dtype.py", r'\(b"bfloat", CODE\.kDLBfloat, 16\)',
       '(b"bfloat", CODE.kDLBfloat, 32)', '"bfloat" defaults to 32 bits (dtype field)',
       T_STATE + "test_dtype_grammar_exhaustive"),
    _m("ref-type-slot-offset", REF + "registry.py",
       r"index = parent\.info\.type_index \+ parent\.allocated_slots$",
       "index = parent.info.type_index + parent.allocated_slots + 1",
       "a child type's index is one past its slot in the parent's run (type indices)",
       T_STATE + "test_type_registration"),
    _m("ref-callback-result-ref", "tvm_ffi_ref/convert.py",
       r"(?<=_OBJECT_BEGIN:\n)            LIB\.TVMFFIObjectIncRef\(out\.v_ptr\)$",
       "            LIB.TVMFFIObjectIncRef(out.v_ptr)\n"
       "            LIB.TVMFFIObjectIncRef(out.v_ptr)",
       "an object a Python callback returns to C++ gets one reference too many (counts)",
       T_CALLS),
    _m("ref-free-vars-region", REF + "structural_equal.py",
       r"self\.region = REGION\.kTVMFFIDefRegionKindPattern if map_free_vars",
       "self.region = REGION.kTVMFFIDefRegionKindPattern if not map_free_vars",
       "structural equality maps free variables exactly when told not to", T_STRUCTURAL),
    _m("ref-dataclass-char-order", REF + "dataclass_compare.py",
       r"return _sign\(\(a \^ 0x80\) - \(b \^ 0x80\)\)", "return _sign(a - b)",
       "strings order as unsigned bytes, not as signed chars (dataclass order)",
       T_DATACLASSES),
    _m("ref-bigint-sign-word", REF + "strings.py",
       r"if \(value == 0 and signed >= 0\) or \(value == -1 and signed < 0\):",
       "if value in (0, -1):",
       "a BigInt drops the word that carries its sign (2**63 reads as negative) (encoding)",
       T_VALUES + "test_scalar_encoding"),
    _m("ref-compact-strides", REF + "tensor.py",
       r"for i in range\(len\(shape\) - 1, -1, -1\):", "for i in range(len(shape)):",
       "a tensor imported without strides gets column-major ones (DLPack fields)",
       T_VALUES + "test_ndarray_encoding"),
    _m("ref-seq-hash-order", REF + "structural_hash.py",
       r"^            result = stable_hash_combine\(result, item_hash\)",
       "            result = stable_hash_combine(item_hash, result)",
       "a sequence's structural hash combines its elements the wrong way round (hashing)",
       T_STRUCTURAL),
    _m("ref-pyclass-kw-only", REF + "pyclass.py",
       r"if not field\.flags & FLAGS\.kTVMFFIFieldFlagBitMaskKwOnly:\n\s+positional\.append\(i\)",
       "positional.append(i)",
       "a keyword-only field also binds positionally (dataclass __init__)", T_DATACLASSES),
    # ------------------------------------------------------------ the Python API, both cores
    _m("api-torch-contiguous", "tvm_ffi_api/dlpack_exchange.py",
       r"import_managed_tensor\(managed, True, 0, False\)",
       "import_managed_tensor(managed, True, 0, True)",
       "torch tensors through the exchange API must be contiguous (DLPack fields)",
       T_VALUES + "test_ndarray_encoding"),
    # ------------------------------------------------------------ fast C runtime
    _m("fast-small-map-max", FAST + "maps.c", r"^#define SMALL_MAX_SLOTS 4$",
       "#define SMALL_MAX_SLOTS 8", "maps of 5 to 8 entries stay small (form threshold)",
       T_VALUES + "test_container_encoding"),
    _m("fast-small-erase-swap", FAST + "maps.c",
       r"memmove\(&kv\[index\], &kv\[index \+ 1\], \(m->size - index - 1\) \* sizeof\(FrKV\)\);",
       "kv[index] = kv[m->size - 1];",
       "erasing from a small map moves the last pair into the hole (order)", T_CONTAINERS),
    _m("fast-dense-erase-order", FAST + "map_dense.c", r"list_replace\(m, last, i\);",
       "list_unlink(m, last);\n    list_push_back(m, i);",
       "a dense erase that pulls a chain's last link forward appends it to the "
       "iteration list (order)", T_CONTAINERS),
    _m("fast-dense-load", FAST + "map_dense.c", r"\(double\)m->base\.slots \* 0\.99;",
       "(double)m->base.slots * 0.75;", "a dense table rehashes at 75% load (growth threshold)",
       T_CONTAINERS),
    _m("fast-list-growth", FAST + "containers.c", r"cap = seq->cell\.capacity \* 2;",
       "cap = seq->cell.capacity * 3 / 2;", "a List grows by half its capacity (capacity)",
       T_CONTAINERS),
    _m("fast-map-keyerror-kind", FAST + "map_globals.c",
       r'return fr_raise\("KeyError", "key is not in Map"\);',
       'return fr_raise("IndexError", "key is not in Map");',
       "a missing map key raises the wrong error kind", T_CONTAINERS),
    _m("fast-dtype-lanes-2", FAST + "dtype.c", r"if \(lanes > 1\) \{",
       "if (lanes > 2) {", "a dtype of 2 lanes prints without its lanes (dtype field)",
       T_STATE + "test_dtype_grammar_exhaustive"),
    _m("fast-type-key-hash", FAST + "registry.c",
       r"entry->info\.type_key_hash = fr_std_hash_bytes\(key, key_size\);",
       "entry->info.type_key_hash = fr_std_hash_bytes(key, key_size - 1);",
       "a type's key hash leaves out the key's last byte (type info records)",
       T_STATE + "test_builtin_type_infos"),
    _m("fast-free-vars-region", FAST + "structural_equal.c",
       r"eq\.region = map_free_vars \? kTVMFFIDefRegionKindPattern : kTVMFFIDefRegionKindNone;",
       "eq.region = map_free_vars ? kTVMFFIDefRegionKindNone : kTVMFFIDefRegionKindPattern;",
       "structural equality maps free variables exactly when told not to", T_STRUCTURAL),
    _m("fast-dataclass-char-order", FAST + "dataclass_compare.c",
       r"signed char x = \(signed char\)a\.data\[i\], y = \(signed char\)b\.data\[i\];",
       "unsigned char x = (unsigned char)a.data[i], y = (unsigned char)b.data[i];",
       "strings order as unsigned bytes, not as signed chars (dataclass order)",
       T_DATACLASSES),
    _m("fast-compact-strides", FAST + "tensor.c", r"for \(i = ndim - 1; i >= 0; --i\) \{",
       "for (i = 0; i < ndim; ++i) {",
       "a tensor imported without strides gets column-major ones (DLPack fields)",
       T_VALUES + "test_ndarray_encoding"),
    _m("fast-seq-hash-size", FAST + "structural_hash.c",
       r"f->result = fr_hash_combine\(key_hash\(ti\), \(uint64_t\)f->n\);",
       "f->result = key_hash(ti);",
       "a sequence's structural hash leaves out its length (hashing)", T_STRUCTURAL),
    _m("fast-pyclass-kw-only", FAST + "pyclass.c",
       r"if \(f->init && !f->kw_only && f->has_default == pass\) \{",
       "if (f->init && f->has_default == pass) {",
       "a keyword-only field also binds positionally (dataclass __init__)", T_DATACLASSES),
    # ------------------------------------------------------------ fast front end
    _m("front-small-str-8", FRONT + "encode.c", r"if \(size <= 7\) \{", "if (size <= 8) {",
       "an 8-byte str or bytes travels inline (encoding)", T_VALUES + "test_string_encoding"),
    _m("front-bool-as-int", FRONT + "decode.c",
       r"return PyBool_FromLong\(value->v_int64 != 0\);",
       "return PyLong_FromLongLong(value->v_int64);",
       "a bool result decodes as an int (kinds)", T_VALUES + "test_echo_roundtrip"),
    _m("front-small-bytes-as-str", FRONT + "decode.c",
       r"return small_content\(value, 0\);", "return small_content(value, 1);",
       "short bytes come back as str (kinds)", T_VALUES + "test_echo_roundtrip"),
    _m("front-device-id-16", FRONT + "encode.c",
       r"out->v_device\.device_id = \(int32_t\)device_id;",
       "out->v_device.device_id = (int32_t)(int16_t)device_id;",
       "a device index is cut to 16 bits (device fields)", T_VALUES + "test_misc_encoding"),
    _m("front-callback-result-ref", FRONT + "callback.c",
       r"status = fx_encode_owned\(value, result\);",
       "status = fx_encode_owned(value, result);\n"
       "  if (status == 0 && result->type_index >= kTVMFFIStaticObjectBegin)\n"
       "    TVMFFIObjectIncRef(result->v_obj);",
       "an object a Python callback returns to C++ gets one reference too many (counts)",
       T_CALLS),
    _m("front-torch-contiguous", FRONT + "exchange.c",
       r"handle = import_managed\(managed, 0, 0\);", "handle = import_managed(managed, 0, 1);",
       "torch tensors through the exchange API must be contiguous (DLPack fields)",
       T_VALUES + "test_ndarray_encoding"),
]

#: Fresh mutants (issue 34), one per area the surface map found uncovered, written from the
#: API's docstrings and upstream's headers: what each behaviour must do, then one plausible
#: way to get it wrong. ``FRESH_KILLERS`` records the property that kills each.
MUTANTS += [
    _m("api-list-del-step-forward", "tvm_ffi_api/container.py",
       r"indices = reversed\(range\(start, stop, step\)\) if step > 0 else range\(start, stop, step\)",
       "indices = range(start, stop, step)",
       "deleting a List slice with a step > 1 erases front to back, so later indices shift "
       "(slice deletion)", T_CONTAINER_EDGES),
    _m("api-stream-restore-null", "tvm_ffi_api/stream.py",
       r"_set_stream\(self\.device_type, self\.device_id, self\.prev_stream\)",
       "_set_stream(self.device_type, self.device_id, 0)",
       "leaving use_raw_stream sets no stream instead of the one before (environment API)",
       T_EDGES + "test_stream_environment"),
    _m("api-contiguous-unit-dims", "tvm_ffi_api/tensor.py",
       r"if t\.shape\[k\] == 1:\n                continue",
       "if t.shape[k] == 0:\n                continue",
       "is_contiguous counts a unit dimension's stride (DLPack contiguity)",
       T_EDGES + "test_dlpack_options"),
    _m("ref-hash-negative-zero", REF + "structural_hash.py",
       r"^        return stable_hash_combine\(index, payload\)",
       "        return stable_hash_combine(index, 0 if index == TI.kTVMFFIFloat and "
       "payload == 1 << 63 else payload)",
       "-0.0 hashes as 0.0 (structural hash of floats)", T_EDGES + "test_structural_hash_edges"),
    _m("ref-missing-item-sides", REF + "structural_equal.py",
       r"self\.record\(ARRAY_ITEM, index, ARRAY_ITEM_MISSING, index\)",
       "self.record(ARRAY_ITEM_MISSING, index, ARRAY_ITEM, index)",
       "the missing-element step goes on the longer side (access paths to missing elements)",
       T_EDGES + "test_access_paths_to_missing"),
    _m("fast-env-original-stream", FAST + "env.c",
       r"if \(opt_out_original_stream != NULL\) \*opt_out_original_stream = row->ids\[device_id\];",
       "if (opt_out_original_stream != NULL) *opt_out_original_stream = NULL;",
       "TVMFFIEnvSetStream reports no original stream (environment API, C API)",
       T_EDGES + "test_stream_environment", T_EDGES + "test_c_api_edges"),
    _m("cffi-float-sign-of-zero", "tvm_ffi_fast/cffi_core/convert.py",
       r"        p\.zero_padding = 0\n        p\.v_float64 = value\n        return",
       "        p.zero_padding = 0\n        p.v_float64 = value + 0.0\n        return",
       "the cffi core passes -0.0 as 0.0 (float encoding, cffi core)",
       T_EDGES + "test_mixed_positional_arguments"),
]

MUTANTS += [
    _m("api-factory-as-default", "tvm_ffi_api/pyclass_fields.py",
       r"for condition, bit in \(\(field\.default_factory is not MISSING, \"DefaultFromFactory\"\),",
       "for condition, bit in ((False, \"DefaultFromFactory\"),",
       "a default factory is registered as the default value itself, not called per instance "
       "(dataclass default factories)", T_EDGES + "test_default_factories_and_deepcopy_sharing"),
    _m("ref-deepcopy-no-memo", REF + "deep_copy.py",
       r"        if address in self\.copies:\n            return self\.copies\[address\]\n",
       "",
       "DeepCopy copies an object met twice twice, losing the sharing (DeepCopy of containers)",
       T_CONTAINER_EDGES),
]

MUTANTS += [
    _m("api-itemsize-floor", "tvm_ffi_api/dtype.py", r"return \(bits \* lanes \+ 7\) // 8",
       "return bits * lanes // 8",
       "itemsize rounds sub-byte dtypes down to 0 (dtype methods)",
       T_EDGES + "test_dtype_methods"),
    _m("api-device-repr-order", "tvm_ffi_api/device.py",
       r"return f\"device\(type='\{self\.__device_type_name__\(\)\}', index=\{self\._index\}\)\"",
       "return f\"device(index={self._index}, type='{self.__device_type_name__()}')\"",
       "repr(Device) lists index before type (Device accessors)", T_EDGES + "test_device_methods"),
]

# Fresh mutants of the second round (issue 34, session 40): one per area the surface map had
# "not covered", each written from the docstring or header comment of the code it breaks.
MUTANTS += [
    _m("api-attrmap-get-default", "tvm_ffi_api/dataclasses/enum.py",
       r"return self\[variant\] if variant in self else default",
       "return self[variant] if variant in self else None",
       "EnumAttrMap.get ignores its default (FFI enums)", T_SURFACE + "test_ffi_enums"),
    _m("api-remove-global-noop", "tvm_ffi_api/registry.py",
       r'    get_global_func\("ffi\.FunctionRemoveGlobal"\)\(name\)\n',
       "",
       "remove_global_func leaves the function registered (the global registry)",
       T_SURFACE + "test_global_registry"),
    _m("api-update-backtrace-appends", "tvm_ffi_api/error.py",
       r"self\._update_backtrace\(backtrace, abi\.TVMFFIBacktraceUpdateMode\."
       r"kTVMFFIBacktraceUpdateModeReplace\)",
       "self._update_backtrace(backtrace, abi.TVMFFIBacktraceUpdateMode."
       "kTVMFFIBacktraceUpdateModeAppend)",
       "Error.update_backtrace appends instead of replacing (Error backtrace methods)",
       T_SURFACE + "test_error_objects"),
    _m("api-implements-no-imports", "tvm_ffi_api/module.py",
       r'return bool\(_api\("ModuleImplementsFunction"\)\(self, name, query_imports\)\)',
       'return bool(_api("ModuleImplementsFunction")(self, name, False))',
       "Module.implements_function never looks in imports (Module's methods)",
       T_SURFACE + "test_module_methods"),
    _m("api-replace-ignores-changes", "tvm_ffi_api/dataclasses/common.py",
       r"return obj\.__replace__\(\*\*changes\)", "return obj.__replace__()",
       "dataclasses.replace copies without the changes (dataclass helpers)",
       T_SURFACE + "test_field_records_and_helpers"),
    _m("api-device-reduce-index", "tvm_ffi_api/device.py",
       r"return \(Device\._from_pair, \(self\._type, self\._index\)\)",
       "return (Device._from_pair, (self._type, 0))",
       "a pickled Device loses its index (pickles)", T_SURFACE + "test_identity_hashes_and_pickles"),
    _m("ref-region-pattern-overridden", REF + "structural_traversal.py",
       r"        if self\.region == REGION\.kTVMFFIDefRegionKindPattern:\n            return fn\(\)\n",
       "",
       "with_def_region_kind replaces a Pattern region instead of keeping it (StructuralVisitor/"
       "Mutator)", T_VISITORS),
    _m("ref-cstr-parts-drop-last", REF + "errors.py",
       r"parts\[i\] for i in range\(num_parts\) if parts\[i\] is not None",
       "parts[i] for i in range(num_parts - 1) if parts[i] is not None",
       "TVMFFIErrorSetRaisedFromCStrParts drops the last part (C API errors)",
       T_SURFACE + "test_c_api_surface"),
    # (libtvm_ffi.so itself is not rebuilt for a mutant, cbuild.py: its entries are broken in
    # the runtime behind them.)
    _m("fast-syslib-no-fallback", FAST + "module.c",
       r"    found = system_symbol\(fr_buf_cstr\(&buf\), buf\.size\);\n    if \(found == NULL\) \{",
       "    found = system_symbol(fr_buf_cstr(&buf), buf.size);\n    if (0) {",
       "a system library with a prefix no longer falls back to the name alone (module symbols, "
       "system library)",
       T_SURFACE + "test_c_api_surface"),
]

# Session 41's fresh mutants, written from the runtime sources, the API docstrings and
# upstream's headers before the properties were read (one or more per area the hidden
# mutants are in, and per area the surface map had left uncovered). Their hints were
# guessed from the test names alone; FRESH_KILLERS records what really kills each.
CFFI = "tvm_ffi_fast/cffi_core/"
MUTANTS += [
    # typed functions with several parameters of different types
    _m("cffi-fourth-arg-from-third", CFFI + "function.py",
       r"encode\(packed \+ 3, args\[3\], frame\)", "encode(packed + 3, args[2], frame)",
       "the cffi core passes a call's third argument again as its fourth (argument order)",
       T_CALLS, T_EDGES + "test_mixed_positional_arguments"),
    _m("cffi-callback-args-reversed", CFFI + "function.py",
       r"for i in range\(num_args\)\]\)", "for i in reversed(range(num_args))])",
       "a Python callback called from C with several arguments gets them in reverse order "
       "(cffi core)", T_CALLS, T_EDGES + "test_mixed_positional_arguments"),
    _m("front-call-args-cut-at-8", FRONT + "function.c",
       # general_call's kernel call, which takes every call of more than 8 arguments
       r"status = scoped_call\(handle, packed, \(int32_t\)n, &result, scope, release_gil, 1\);",
       "status = scoped_call(handle, packed, (int32_t)(n > FX_STACK_ARGS ? FX_STACK_ARGS : n), "
       "&result, scope, release_gil, 1);",
       "a call with more than 8 arguments passes only the first 8 (argument count)", T_CALLS, T_EDGES + "test_mixed_positional_arguments"),
    # structural hashing of tensors and of floats' edge values
    _m("fast-tensor-hash-skips-dim0", FAST + "structural_hash.c",
       r"  for \(i = 0; i < t->ndim; \+\+i\) \{\n    result = fr_hash_combine\(result, "
       r"\(uint64_t\)t->shape\[i\]\);",
       "  for (i = 1; i < t->ndim; ++i) {\n    result = fr_hash_combine(result, "
       "(uint64_t)t->shape[i]);",
       "a tensor's structural hash leaves out its first dimension (hash of tensors)",
       T_EDGES + "test_structural_hash_edges"),
    _m("ref-hash-negative-nan", REF + "structural_hash.py",
       r"if index == TI\.kTVMFFIFloat and _is_nan\(payload\):",
       "if index == TI.kTVMFFIFloat and _is_nan(payload) and payload < 1 << 63:",
       "a NaN with its sign bit set hashes by its bits, not as the quiet NaN (hash of floats)",
       T_EDGES + "test_structural_hash_edges"),
    _m("fast-hash-negative-zero", FAST + "structural_hash.c",
       r"    \} else if \(ti == kTVMFFISmallStr\) \{\n      \*out = bytes_hash",
       "    } else if (ti == kTVMFFIFloat && value->v_float64 == 0.0) {\n"
       "      *out = fr_hash_combine((uint64_t)ti, 0);\n"
       "    } else if (ti == kTVMFFISmallStr) {\n      *out = bytes_hash",
       "-0.0 hashes as 0.0 in the fast runtime (hash of floats)",
       T_EDGES + "test_structural_hash_edges"),
    # access paths to missing elements
    _m("fast-map-missing-lhs-unrecorded", FAST + "structural_equal_walk.c",
       r"        return fr_se_record\(eq, MAP_ITEM_MISSING, &lhs_key, MAP_ITEM, &kv->key\) < 0 "
       r"\? -1 : 0;",
       "        return 0;",
       "a map key only the right-hand side has leaves no mismatch path (access paths to missing "
       "elements)", T_EDGES + "test_access_paths_to_missing"),
    _m("api-array-item-missing-plain", "tvm_ffi_api/access_path.py",
       r"return self\._array_item_missing\(index\)", "return self._array_item(index)",
       "AccessPath.array_item_missing builds a plain element step (access paths)",
       T_EDGES + "test_access_paths_to_missing"),
    # dataclass default factories, DeepCopy sharing
    _m("ref-factory-result-cached", REF + "reflection_make_object.py",
       r"        value = _call\(default\.v_ptr, \[\]\)\n        try:\n            call_setter\(field, "
       r"address, value\)\n        finally:\n            anyvalue\.dec_ref_any\(value\)\n",
       "        cache = globals().setdefault('_FACTORY_RESULTS', {})\n"
       "        if default.v_ptr not in cache:\n"
       "            cache[default.v_ptr] = _call(default.v_ptr, [])\n"
       "        call_setter(field, address, cache[default.v_ptr])\n",
       "a default factory runs once; every later instance shares its first result (dataclass "
       "default factories)", T_EDGES + "test_default_factories_and_deepcopy_sharing"),
    _m("fast-deepcopy-list-unshared", FAST + "deep_copy.c",
       r"  if \(!unshared\) slot = fr_ptrmap_find\(&c->copies, value->v_obj, NULL\);\n"
       r"  if \(slot != NULL\) \{",
       "  if (!unshared) slot = fr_ptrmap_find(&c->copies, value->v_obj, NULL);\n"
       "  if (slot != NULL && (ti != kTVMFFIList || slot->value == IN_PROGRESS)) {",
       "DeepCopy copies a List met twice twice, losing the sharing (DeepCopy of containers)",
       T_CONTAINER_EDGES),
    # the environment API (streams set and restored), signals
    _m("ref-stream-device-id-ignored", REF + "env.py",
       r"return this_thread\(\)\.streams\.get\(\(device_type, device_id\)\)",
       "return this_thread().streams.get((device_type, 0))",
       "a stream set for device id k reads back as device 0's (environment API)",
       T_EDGES + "test_stream_environment"),
    _m("fast-null-stream-kept", FAST + "env.c",
       r"  row->ids\[device_id\] = stream;\n",
       "  if (stream != NULL) row->ids[device_id] = stream;\n",
       "setting a NULL stream keeps the previous one (environment API, C API NULL handles)",
       T_EDGES + "test_stream_environment"),
    _m("api-stream-exit-device-0", "tvm_ffi_api/stream.py",
       r"_set_stream\(self\.device_type, self\.device_id, self\.prev_stream\)",
       "_set_stream(self.device_type, 0, self.prev_stream)",
       "leaving use_raw_stream restores device 0's stream, not the block's device's "
       "(environment API)", T_EDGES + "test_stream_environment"),
    _m("fast-signal-swallowed", FAST + "env.c",
       r"  return status != 0 \? -1 : 0;\n\}", "  return 0;\n}",
       "TVMFFIEnvCheckSignals reports no signal when the check found one (env signals)",
       T_SURFACE + "test_environment_kernels"),
    # (Its first form, the handler's exception dropped in check_signals' except, and its
    # second, the final status, changed lines no generated case reaches: ref runs a raising
    # handler at its callback's entry, kept by keep_signal_error, and defers Ctrl-C.)
    _m("ref-signal-swallowed", REF + "env.py",
       r"        this_thread\(\)\.pending_signal_error = KeyboardInterrupt\(\)\n        return -1\n",
       "        this_thread().pending_signal_error = KeyboardInterrupt()\n        return 0\n",
       "the reference's TVMFFIEnvCheckSignals reports no signal for a Ctrl-C deferred while the "
       "runtime ran (env signals)",
       T_SURFACE + "test_environment_kernels"),
    _m("ref-signal-entry-error-reported", REF + "env.py",
       r'@implements\("TVMFFIEnvCheckSignals", on_entry_error=keep_signal_error\)',
       '@implements("TVMFFIEnvCheckSignals")',
       "a signal handler raising as the reference's TVMFFIEnvCheckSignals is entered fails the "
       "check with the handler's exception as the raised error, not kept for the front end "
       "(env signals)",
       T_SURFACE + "test_environment_kernels"),
    # DLPack import and export options
    _m("api-dlpack-copy-false-refused", "tvm_ffi_api/tensor.py",
       r"            if copy:\n", "            if copy is not None:\n",
       "__dlpack__(copy=False) is refused as copy=True is (DLPack export options)",
       T_EDGES + "test_dlpack_options"),
    _m("api-dlpack-own-device-refused", "tvm_ffi_api/tensor.py",
       r"if dl_device is not None and tuple\(dl_device\) != self\.__dlpack_device__\(\):",
       "if dl_device is not None:",
       "__dlpack__(dl_device=<its own device>) is refused (DLPack export options)",
       T_EDGES + "test_dlpack_options"),
    _m("fast-contiguous-unit-dims", FAST + "tensor.c",
       r"    if \(t->shape\[k\] == 1\) continue;\n", "",
       "the fast runtime counts a unit dimension's stride in contiguity (require_contiguous, "
       "hash of tensors)", T_EDGES + "test_dlpack_options"),
    _m("ref-empty-tensor-not-contiguous", REF + "tensor.py",
       r"    if 0 in shape:\n        return True  # an empty tensor has no layout to violate\n",
       "",
       "the reference judges an empty tensor's strides (contiguity of empty tensors)",
       T_EDGES + "test_dlpack_options"),
    # List slice deletion with steps
    _m("api-list-del-negative-step-upward", "tvm_ffi_api/container.py",
       r"else range\(start, stop, step\)\n", "else reversed(range(start, stop, step))\n",
       "deleting a List slice with a negative step erases from the low end, so later indices "
       "shift (slice deletion)", T_CONTAINER_EDGES),
    _m("api-list-del-empty-range", "tvm_ffi_api/container.py",
       r"_ffi\.ListEraseRange\(self, start, max\(stop, start\)\)",
       "_ffi.ListEraseRange(self, start, stop)",
       "del lst[i:j] with j before i asks the runtime to erase a reversed range (slice deletion)",
       T_CONTAINER_EDGES),
    # C API NULL handles and arguments
    # (TVMFFIErrorSetRaisedFromCStr with a NULL kind was tried first: upstream itself aborts
    # there, std::string from NULL, so it has no rule to hold ours to.)
    _m("ref-set-stream-null-out", REF + "env.py",
       r"    if opt_out_original_stream:\n        opt_out_original_stream\[0\] = previous\n",
       "    opt_out_original_stream[0] = previous\n",
       "TVMFFIEnvSetStream writes the previous stream through a NULL opt_out_original_stream "
       "(C API NULL arguments)", T_EDGES + "test_c_api_edges", T_EDGES + "test_stream_environment"),
    _m("fast-allocator-null-out-written", FAST + "env.c",
       r"  if \(opt_out_original != NULL\) \*opt_out_original = t_allocator;\n",
       "  *opt_out_original = t_allocator;\n",
       "TVMFFIEnvSetDLPackManagedTensorAllocator writes through a NULL opt_out_original (C API "
       "NULL arguments)", T_SURFACE + "test_c_api_surface"),
    # module lookups from imports (a row the surface map had as not covered)
    _m("fast-lookup-imports-no-global", FAST + "module.c",
       r"  if \(func == NULL\) func = fr_global_lookup\(func_name, size\);\n", "",
       "TVMFFIEnvModLookupFromImports never falls back to the global table (module symbols)",
       T_SURFACE + "test_environment_kernels"),
    _m("ref-lookup-imports-shallow", REF + "module.py",
       r"cached = get_function\(imported, func_name, True\)",
       "cached = get_function(imported, func_name, False)",
       "TVMFFIEnvModLookupFromImports looks only at direct imports, not theirs (module symbols)",
       T_SURFACE + "test_environment_kernels"),
    # the cffi core's decoding
    _m("cffi-bool-as-int", CFFI + "convert.py",
       r"        return p\.v_int64 != 0\n", "        return p.v_int64\n",
       "the cffi core decodes a bool result as an int (kinds)", "conformance_tests/test_values.py"),
]

#: Which property kills each fresh mutant (checked with ``--only``; see the README).
FRESH_KILLERS = {
    "api-list-del-step-forward": T_CONTAINER_EDGES,
    "api-stream-restore-null": T_EDGES + "test_stream_environment",
    "api-contiguous-unit-dims": T_EDGES + "test_dlpack_options",
    "ref-hash-negative-zero": T_EDGES + "test_structural_hash_edges",
    "ref-missing-item-sides": T_EDGES + "test_access_paths_to_missing",
    "fast-env-original-stream": T_EDGES + "test_stream_environment",
    "cffi-float-sign-of-zero": T_EDGES + "test_mixed_positional_arguments",
    "api-factory-as-default": T_EDGES + "test_default_factories_and_deepcopy_sharing",
    "ref-deepcopy-no-memo": T_CONTAINER_EDGES,
    "api-itemsize-floor": T_EDGES + "test_dtype_methods",
    "api-device-repr-order": T_EDGES + "test_device_methods",
    "api-attrmap-get-default": T_SURFACE + "test_ffi_enums",
    "api-remove-global-noop": T_SURFACE + "test_global_registry",
    "api-update-backtrace-appends": T_SURFACE + "test_error_objects",
    "api-implements-no-imports": T_SURFACE + "test_module_methods",
    "api-replace-ignores-changes": T_SURFACE + "test_field_records_and_helpers",
    "api-device-reduce-index": T_SURFACE + "test_identity_hashes_and_pickles",
    "ref-region-pattern-overridden": T_VISITORS,
    "ref-cstr-parts-drop-last": T_SURFACE + "test_c_api_surface",
    "fast-syslib-no-fallback": T_SURFACE + "test_c_api_surface",
    # session 41 (hints-only, seeds 0 and 2)
    "cffi-fourth-arg-from-third": T_CALLS,
    "cffi-callback-args-reversed": T_CALLS,
    "front-call-args-cut-at-8": T_EDGES + "test_mixed_positional_arguments",
    "fast-tensor-hash-skips-dim0": T_EDGES + "test_structural_hash_edges",
    "ref-hash-negative-nan": T_EDGES + "test_structural_hash_edges",
    "fast-hash-negative-zero": T_EDGES + "test_structural_hash_edges",
    "fast-map-missing-lhs-unrecorded": T_EDGES + "test_access_paths_to_missing",
    "api-array-item-missing-plain": T_EDGES + "test_access_paths_to_missing",
    "ref-factory-result-cached": T_EDGES + "test_default_factories_and_deepcopy_sharing",
    "fast-deepcopy-list-unshared": T_CONTAINER_EDGES,
    "ref-stream-device-id-ignored": T_EDGES + "test_stream_environment",
    "fast-null-stream-kept": T_EDGES + "test_stream_environment",
    "api-stream-exit-device-0": T_EDGES + "test_stream_environment",
    "fast-signal-swallowed": T_SURFACE + "test_environment_kernels",
    "ref-signal-swallowed": T_SURFACE + "test_environment_kernels",
    "api-dlpack-copy-false-refused": T_EDGES + "test_dlpack_options",
    "api-dlpack-own-device-refused": T_EDGES + "test_dlpack_options",
    "fast-contiguous-unit-dims": T_EDGES + "test_dlpack_options",
    "ref-empty-tensor-not-contiguous": T_EDGES + "test_dlpack_options",
    "api-list-del-negative-step-upward": T_CONTAINER_EDGES,
    "api-list-del-empty-range": T_CONTAINER_EDGES,
    "ref-set-stream-null-out": T_EDGES + "test_c_api_edges",
    "fast-allocator-null-out-written": T_SURFACE + "test_c_api_surface",
    "fast-lookup-imports-no-global": T_SURFACE + "test_environment_kernels",
    "ref-lookup-imports-shallow": T_SURFACE + "test_environment_kernels",
    "cffi-bool-as-int": T_VALUES + "test_echo_roundtrip",
}

BY_NAME: Dict[str, Mutant] = {m.name: m for m in MUTANTS}
assert len(BY_NAME) == len(MUTANTS), "two mutants share a name"

#: The CI subset (``test_mutation.py``): one mutant of the reference runtime and one of
#: the fast front end, each caught by a short property.
CI_SUBSET = ["ref-small-str-8", "front-small-str-8"]
