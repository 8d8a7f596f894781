"""libtvm_ffi_testing.so (c_api/testing) against upstream's testing library.

Two views, each compared with upstream (``apache-tvm-ffi``'s own
``libtvm_ffi_testing.so``, loaded by ``import tvm_ffi``):

* the records, read through the C API: every ``testing.*`` type's index,
  parent, metadata, fields (offset, size, alignment, flags, static type index,
  default, doc, metadata JSON), methods and type attributes, and the metadata
  of every ``testing.*`` global function, must be upstream's byte for byte;
* the behaviour, through each Python API (``tests/frontend_harness.py``):
  the globals with good and bad arguments, the objects' constructors, fields,
  methods, hooks and attributes, with upstream's results and error messages.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import upstream_package_dir
from frontend_harness import FRONTENDS_UNDER_TEST, run_frontend
from subprocess_utils import run_python
from testing_library_cases import CASES, SETUP

# Reads the records of the testing types and globals of the process's runtime as JSON.
DUMP = """
import ctypes, json
from tvm_ffi_common import abi

def text(array):
    return ctypes.string_at(array.data, array.size).decode() if array.size else None

def index_of(key):
    out = ctypes.c_int32()
    name = key.encode()
    lib.TVMFFITypeKeyToIndex(ctypes.byref(abi.TVMFFIByteArray(
        ctypes.cast(ctypes.c_char_p(name), ctypes.c_void_p), len(name))), ctypes.byref(out))
    return out.value

def attr(index, name):
    data = name.encode()
    column = lib.TVMFFIGetTypeAttrColumn(ctypes.byref(abi.TVMFFIByteArray(
        ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))))
    if not column:
        return None
    column = column.contents
    offset = index - column.begin_index
    if not 0 <= offset < column.size or column.data[offset].type_index == 0:
        return None
    value = column.data[offset]
    return [value.type_index, value.v_int64 if value.type_index < 64 else None]

def any_value(value):
    return [value.type_index, value.v_int64 if value.type_index < 64 else None]

ATTRS = ["__ffi_init__", "__ffi_new__", "__ffi_shallow_copy__", "__ffi_convert__",
         "__ffi_type_final__", "__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_enum__"]
types = {}
for key in sorted(k for k in map(str, api.get_global_func("ffi.GetRegisteredTypeKeys")())
                  if k.startswith("testing.")):
    index = index_of(key)
    info = lib.TVMFFIGetTypeInfo(index).contents
    record = {"index": index, "depth": info.type_depth,
              "parent": text(info.type_ancestors[info.type_depth - 1].contents.type_key),
              "attrs": {name: attr(index, name) for name in ATTRS}, "fields": [], "methods": []}
    for i in range(info.num_fields):
        f = info.fields[i]
        record["fields"].append([text(f.name), text(f.doc), text(f.metadata), f.flags, f.size,
                                 f.alignment, f.offset, f.field_static_type_index,
                                 any_value(f.default_value_or_factory), bool(f.getter),
                                 bool(f.setter)])
    for i in range(info.num_methods):
        m = info.methods[i]
        record["methods"].append([text(m.name), text(m.doc), text(m.metadata), m.flags,
                                  m.method.type_index])
    if info.metadata:
        md = info.metadata.contents
        record["metadata"] = [text(md.doc), md.total_size, md.structural_eq_hash_kind,
                              bool(md.creator)]
    types[key] = record
names = sorted(n for n in api.registry.list_global_func_names() if n.startswith("testing."))
functions = {n: str(api.get_global_func("ffi.GetGlobalFuncMetadata")(n)) for n in names}
auto_init = api.get_global_func("ffi._RegisterFFIInit", allow_missing=True) is not None
print(json.dumps({"types": types, "functions": functions, "auto_init": auto_init}, sort_keys=True))
"""

LOADERS = {
    "upstream": (
        "import os, ctypes, tvm_ffi as api, tvm_ffi.testing\n"
        "lib = ctypes.CDLL(os.path.join({dir!r}, 'lib', 'libtvm_ffi.so'))\n"
        "from tvm_ffi_common import abi as _abi\n_abi.bind(lib)\n"
    ),
    "ref": "import tvm_ffi_ref as api, tvm_ffi_ref.testing\nlib = api.LIB\n",
    "fast": "import tvm_ffi_fast as api, tvm_ffi_fast.testing\nfrom tvm_ffi_common.capi import LIB as lib\n",
}


def dump(runtime: str) -> dict:
    loader = LOADERS[runtime].format(dir=upstream_package_dir())
    return json.loads(run_python(loader + textwrap.dedent(DUMP)))


@pytest.fixture(scope="module")
def upstream_records() -> dict:
    return dump("upstream")


def expected_records(upstream: dict, auto_init: bool) -> dict:
    """Upstream's records as a runtime with or without ``ffi._RegisterFFIInit`` has them.

    A type without an explicit constructor gets its ``__ffi_init__`` from that
    runtime function (upstream's library calls it when the runtime has it).
    """
    types = json.loads(json.dumps(upstream["types"]))
    for record in types.values():
        explicit = any(method[0] == "__ffi_init__" for method in record["methods"])
        if not auto_init and not explicit:
            record["attrs"]["__ffi_init__"] = None
    return types


@pytest.mark.parametrize("runtime", ["ref", "fast"])
def test_records_are_upstreams(runtime: str, upstream_records: dict) -> None:
    ours = dump(runtime)
    assert upstream_records["auto_init"]
    expected = expected_records(upstream_records, ours["auto_init"])
    assert len(expected) == 35 and len(upstream_records["functions"]) == 59
    assert sorted(ours["types"]) == sorted(expected)
    for key, record in expected.items():
        assert ours["types"][key] == record, key
    assert ours["functions"] == upstream_records["functions"]


# ---------------------------------------------------------------- behaviour


@pytest.fixture(scope="module")
def upstream_results() -> dict:
    return run_frontend("upstream", CASES, setup=SETUP)


@pytest.mark.parametrize("frontend", FRONTENDS_UNDER_TEST)
def test_behaviour_is_upstreams(frontend: str, upstream_results: dict) -> None:
    ours = run_frontend(frontend, CASES, setup=SETUP)
    assert not [r for r in upstream_results.values() if r[0] in ("crash", "setup-error")]
    differences = {case: (ours[case], expected) for case, expected in upstream_results.items()
                   if ours[case] != expected}
    assert not differences
