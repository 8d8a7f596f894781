"""Compiles a C program that prints the ABI as a C compiler sees it.

The program is generated from ``tvm_ffi_common.abi``: for every struct its size,
alignment and, per field, offset and size; every enum value and enum size;
every version macro. A second source assigns every exported function to a
pointer typed with the prototype the mirror declares, so that a mismatch
between the mirror and the header is a compile error. The same source compiles against our
headers and upstream's, as C11 and as C++17.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import tempfile
from typing import Dict, List, Tuple

from tvm_ffi_common import abi

Layout = Dict[Tuple[str, ...], int]


def _prelude(extra_include: str) -> List[str]:
    return [
        "#include <stddef.h>",
        "#include <stdio.h>",
        "#include <tvm/ffi/c_api.h>",
        "#include <tvm/ffi/extra/c_env_api.h>",
        extra_include,
    ]


def signature_source(functions, extra_include: str = "") -> str:
    """A translation unit that compiles only if every prototype matches the header."""
    lines = _prelude(extra_include)
    for fn in functions:
        pointer = fn.c_declarator().replace(fn.name, f"(*check_{fn.name})", 1)
        lines.append(f"{pointer} = {fn.name};")
    return "\n".join(lines) + "\n"


def probe_source(structs, enums, macros, extra_include: str = "") -> str:
    """The probe's C source for the given subsets of the mirror."""
    lines = _prelude(extra_include) + [
        "#ifdef __cplusplus",
        "#include <type_traits>",
        "#define ALIGNOF(T) alignof(T)",
        "#define SAME_TYPE(expr, T) std::is_same<decltype(expr), T>::value",
        "#else",
        "#define ALIGNOF(T) _Alignof(T)",
        "#define SAME_TYPE(expr, T) __builtin_types_compatible_p(__typeof__(expr), T)",
        "#endif",
        "int main(void) {",
    ]
    for struct in structs:
        name = struct.__name__
        lines.append(f'  printf("struct {name} size %zu\\n", sizeof({name}));')
        lines.append(f'  printf("struct {name} align %zu\\n", (size_t)ALIGNOF({name}));')
        for field in abi.c_fields(struct):
            lines.append(
                f'  printf("field {name} {field.name} offset %zu\\n", offsetof({name}, {field.name}));'
            )
            lines.append(
                f'  printf("field {name} {field.name} size %zu\\n", sizeof((({name}*)0)->{field.name}));'
            )
            spelling = abi.FIELD_C_TYPES.get((name, field.name))
            if spelling:
                lines.append(f'  printf("fieldtype {name} {field.name} %d\\n", '
                             f"(int)SAME_TYPE((({name}*)0)->{field.name}, {spelling}));")
    for enum_type in enums:
        lines.append(f'  printf("enumsize {enum_type.__name__} %zu\\n", sizeof({enum_type.__name__}));')
        for member, _ in abi.enum_members(enum_type):
            lines.append(f'  printf("enum {member} %lld\\n", (long long){member});')
    for macro in macros:
        lines.append(f'  printf("macro {macro} %lld\\n", (long long)({macro}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def expected_layout(structs, enums, macros) -> Layout:
    """What the probe must print if the mirror is right, in the same keys."""
    out: Layout = {}
    for struct in structs:
        name = struct.__name__
        out[("struct", name, "size")] = ctypes.sizeof(struct)
        out[("struct", name, "align")] = ctypes.alignment(struct)
        for field in abi.c_fields(struct):
            out[("field", name, field.name, "offset")] = field.offset
            out[("field", name, field.name, "size")] = field.size
            if (name, field.name) in abi.FIELD_C_TYPES:
                out[("fieldtype", name, field.name)] = 1
    for enum_type in enums:
        out[("enumsize", enum_type.__name__)] = 4
        for member, value in abi.enum_members(enum_type):
            out[("enum", member)] = value
    for macro in macros:
        out[("macro", macro)] = abi.MACROS[macro]
    return out


def compile_source(source: str, include_dirs: List[str], language: str, output: str) -> None:
    """Compiles source as C11 or C++17 into output ("-" for a syntax check only)."""
    suffix, compiler, std = {
        "c": (".c", os.environ.get("CC", "cc"), "-std=c11"),
        "c++": (".cc", os.environ.get("CXX", "c++"), "-std=c++17"),
    }[language]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe" + suffix)
        with open(src, "w") as f:
            f.write(source)
        cmd = [compiler, std, "-Wall", "-Werror", "-Wno-unused-variable"]
        cmd += [f"-I{d}" for d in include_dirs] + [src]
        cmd += ["-fsyntax-only"] if output == "-" else ["-o", output]
        done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"probe failed to compile:\n{' '.join(cmd)}\n{done.stderr}")


def run_probe(source: str, include_dirs: List[str], language: str) -> Layout:
    """Compiles and runs the probe; returns what it printed, parsed."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "probe")
        compile_source(source, include_dirs, language, exe)
        output = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    layout: Layout = {}
    for line in output.splitlines():
        *key, value = line.split()
        layout[tuple(key)] = int(value)
    return layout
