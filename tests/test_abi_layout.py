"""The ctypes mirror, our headers and upstream's headers describe one ABI.

Every size, alignment, field offset, enum value and macro is printed by a C
program compiled against each header set (as C11 and as C++17) and compared
with ``tvm_ffi_common.abi``; every prototype is type-checked against each header
set; and the mirror is shown to cover everything those headers declare.
"""

from __future__ import annotations

import os
import subprocess

import pytest

import header_scan
import layout_probe
from tvm_ffi_common import libinfo
from tvm_ffi_common import abi

HEADERS = ["dlpack/dlpack.h", "tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h"]
UPSTREAM_MACROS = sorted(abi.MACROS)


def _ours():
    return libinfo.include_paths()[0]


def _diff(expected, actual):
    lines = []
    for key in sorted(set(expected) | set(actual)):
        if expected.get(key) != actual.get(key):
            lines.append(f"{' '.join(key)}: mirror {expected.get(key)} C {actual.get(key)}")
    return "\n".join(lines)


@pytest.mark.parametrize("language", ["c", "c++"])
def test_our_headers_match_the_mirror(language):
    structs, enums = list(abi.STRUCTS), list(abi.ENUMS)
    source = layout_probe.probe_source(structs, enums, UPSTREAM_MACROS, "#include <tvm_ffi_runtime.h>")
    actual = layout_probe.run_probe(source, [_ours()], language)
    expected = layout_probe.expected_layout(structs, enums, UPSTREAM_MACROS)
    assert actual == expected, _diff(expected, actual)


@pytest.mark.parametrize("language", ["c", "c++"])
def test_upstream_headers_match_the_mirror(language, upstream_include):
    structs, enums = abi.UPSTREAM_STRUCTS, abi.UPSTREAM_ENUMS
    source = layout_probe.probe_source(structs, enums, UPSTREAM_MACROS)
    actual = layout_probe.run_probe(source, [upstream_include], language)
    expected = layout_probe.expected_layout(structs, enums, UPSTREAM_MACROS)
    assert actual == expected, _diff(expected, actual)


@pytest.mark.parametrize("language", ["c", "c++"])
@pytest.mark.parametrize("which", ["ours", "upstream"])
def test_prototypes_match_the_headers(which, language, request):
    include = _ours() if which == "ours" else request.getfixturevalue("upstream_include")
    source = layout_probe.signature_source(abi.C_API_FUNCTIONS)
    layout_probe.compile_source(source, [include], language, "-")


def test_runtime_table_prototypes_match_tvm_ffi_runtime_h():
    source = layout_probe.signature_source(abi.RUNTIME_FUNCTIONS, "#include <tvm_ffi_runtime.h>")
    layout_probe.compile_source(source, [_ours()], "c", "-")


@pytest.mark.parametrize("which", ["ours", "upstream"])
def test_mirror_covers_every_declaration(which, request):
    include = _ours() if which == "ours" else request.getfixturevalue("upstream_include")
    declared = header_scan.scan(include, HEADERS)
    # The scanner must have found the ABI at all before "equal" means anything.
    assert len(declared.structs) == 24 and len(declared.functions) == 50
    assert len(declared.enums["TVMFFITypeIndex"]) == 33
    mirrored_structs = {s.__name__ for s in abi.UPSTREAM_STRUCTS}
    assert declared.structs == mirrored_structs
    mirrored_enums = {e.__name__: [m for m, _ in abi.enum_members(e)] for e in abi.UPSTREAM_ENUMS}
    assert set(declared.enums) == set(mirrored_enums)
    for name, members in declared.enums.items():
        assert sorted(members) == sorted(mirrored_enums[name]), name
    assert declared.functions == {fn.name for fn in abi.C_API_FUNCTIONS}


def test_runtime_table_has_a_slot_per_export_but_the_version():
    names = [name for name, _ in abi.TVMFFIRuntimeTable._fields_[2:]]
    assert names == [fn.name for fn in abi.C_API_FUNCTIONS if fn.name != "TVMFFIGetVersion"]


def _exported(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_our_library_exports_every_upstream_symbol(upstream_library):
    theirs = {s for s in _exported(upstream_library) if s.startswith("TVMFFI")}
    ours = _exported(libinfo.library_path())
    assert len(theirs) >= 50
    assert theirs <= ours, sorted(theirs - ours)


def test_our_library_exports_exactly_the_declared_functions():
    ours = {s for s in _exported(libinfo.library_path()) if s.startswith(("TVMFFI", "tvm_ffi_"))}
    declared = {fn.name for fn in abi.C_API_FUNCTIONS + abi.RUNTIME_FUNCTIONS}
    assert ours == declared


def test_our_library_has_the_upstream_soname():
    out = subprocess.run(["readelf", "-d", libinfo.library_path()], capture_output=True,
                         text=True, check=True).stdout
    assert "Library soname: [libtvm_ffi.so]" in out


@pytest.mark.parametrize("language", ["c", "c++"])
def test_our_headers_compile_pedantically(language, tmp_path):
    std = "-std=c99" if language == "c" else "-std=c++17"
    compiler = os.environ.get("CC", "cc") if language == "c" else os.environ.get("CXX", "c++")
    src = tmp_path / ("all" + (".c" if language == "c" else ".cc"))
    src.write_text(
        "#include <tvm/ffi/extra/c_env_api.h>\n#include <tvm_ffi_runtime.h>\n"
        "#include <tvm_ffi_abi/object_cells.h>\n"
        "#ifdef __cplusplus\n"  # the header's own helpers are C++ only, as upstream's
        "#define SMALL_BYTES TVMFFISmallBytesGetContentByteArray\n"
        "#define TYPE_INDEX TVMFFIObjectGetTypeIndex\n"
        "#else\n"
        "#define SMALL_BYTES tvm_ffi_abi_small_bytes\n"
        "#define TYPE_INDEX tvm_ffi_abi_object_type_index\n"
        "#endif\n"
        "int main(void) {\n"
        "  TVMFFIObject header; TVMFFIAny v; TVMFFIByteArray bytes;\n"
        "  header.type_index = kTVMFFIStr;\n"
        "  v.type_index = kTVMFFISmallStr; v.small_str_len = 1; v.v_int64 = 0; v.v_bytes[0] = 'x';\n"
        "  bytes = SMALL_BYTES(&v);\n"
        "  return TYPE_INDEX(&header) != kTVMFFIStr || bytes.size != 1 ||\n"
        "         tvm_ffi_abi_device(1, 0).device_type != kDLCPU;\n"
        "}\n"
    )
    cmd = [compiler, std, "-Wall", "-Wextra", "-pedantic", "-Werror", f"-I{_ours()}",
           "-fsyntax-only", str(src)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
