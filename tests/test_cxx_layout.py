"""Layout proof of the C++ face: the same program built twice, once against upstream's headers
and once against ours (c_api/src/cxx_abi.h), prints the same facts.

The facts are what the compiler decides for a C++ class: sizes, where the object header and
the members sit inside a ModuleObj, the vtable slot of each virtual function (an Itanium
pointer to a virtual member function holds 1 + the slot's byte offset), the bases of
Error, and the typeinfo names.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tvm_ffi_common import libinfo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include <typeinfo>
%(includes)s
namespace ffi = tvm::ffi;

template <typename M>
long Slot(M member) {  // 1 + byte offset in the vtable for a virtual member function
  long word;
  std::memcpy(&word, &member, sizeof(word));
  return word;
}

struct Peek : ffi::ModuleObj {  // reaches the protected member
  static long ImportsAt() {
    auto member = &Peek::imports_;
    long offset;
    std::memcpy(&offset, &member, sizeof(offset));
    return offset;
  }
};

int main() {
  alignas(16) static char storage[256];
  ffi::ModuleObj* m = reinterpret_cast<ffi::ModuleObj*>(storage);
  ffi::Error* e = reinterpret_cast<ffi::Error*>(storage);
  std::printf("sizeof ModuleObj %%zu Error %%zu Any %%zu String %%zu Module %%zu OptionalInt %%zu\n",
              sizeof(ffi::ModuleObj), sizeof(ffi::Error), sizeof(ffi::Any), sizeof(ffi::String),
              sizeof(ffi::Module), sizeof(ffi::Optional<int>));
  std::printf("header at %%ld\n", (long)(reinterpret_cast<char*>(static_cast<ffi::Object*>(m)) - storage));
  std::printf("imports_ at %%ld\n", Peek::ImportsAt());
  std::printf("Error: ObjectRef at %%ld, std::exception at %%ld\n",
              (long)(reinterpret_cast<char*>(static_cast<ffi::ObjectRef*>(e)) - storage),
              (long)(reinterpret_cast<char*>(static_cast<std::exception*>(e)) - storage));
  std::printf("slots kind %%ld mask %%ld get %%ld implements %%ld doc %%ld metadata %%ld\n",
              Slot(&ffi::ModuleObj::kind), Slot(&ffi::ModuleObj::GetPropertyMask),
              Slot(static_cast<%(opt_fn)s (ffi::ModuleObj::*)(const ffi::String&)>(
                  &ffi::ModuleObj::GetFunction)),
              Slot(static_cast<bool (ffi::ModuleObj::*)(const ffi::String&)>(
                  &ffi::ModuleObj::ImplementsFunction)),
              Slot(static_cast<%(opt_str)s (ffi::ModuleObj::*)(const ffi::String&)>(
                  &ffi::ModuleObj::GetFunctionDoc)),
              Slot(static_cast<%(opt_str)s (ffi::ModuleObj::*)(const ffi::String&)>(
                  &ffi::ModuleObj::GetFunctionMetadata)));
  std::printf("slots write %%ld formats %%ld bytes %%ld source %%ld import %%ld clear %%ld\n",
              Slot(&ffi::ModuleObj::WriteToFile), Slot(&ffi::ModuleObj::GetWriteFormats),
              Slot(&ffi::ModuleObj::SaveToBytes), Slot(&ffi::ModuleObj::InspectSource),
              Slot(&ffi::ModuleObj::ImportModule), Slot(&ffi::ModuleObj::ClearImports));
  std::printf("what %%ld\n", Slot(&ffi::Error::what));
  std::printf("typeinfo %%s %%s\n", typeid(ffi::ModuleObj).name(), typeid(ffi::Error).name());
  return 0;
}
"""

UPSTREAM = {
    "includes": "#include <tvm/ffi/error.h>\n#include <tvm/ffi/extra/module.h>",
    "opt_fn": "ffi::Optional<ffi::Function>",
    "opt_str": "ffi::Optional<ffi::String>",
}
OURS = {
    "includes": '#include "cxx_abi.h"',
    "opt_fn": "ffi::ObjectRef",
    "opt_str": "ffi::Any",
}


def build_and_run(tmp_path, name: str, fills: dict, include_dirs, lib_dir: str) -> str:
    source = tmp_path / f"{name}.cc"
    source.write_text(PROGRAM % fills)
    binary = tmp_path / name
    cmd = [os.environ.get("CXX", "c++"), "-std=c++17", "-O1", str(source), "-o", str(binary),
           *[f"-I{d}" for d in include_dirs], f"-L{lib_dir}", "-ltvm_ffi",
           f"-Wl,-rpath,{lib_dir}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def facts(tmp_path_factory, upstream_dir):
    tmp = tmp_path_factory.mktemp("cxx_layout")
    theirs = build_and_run(tmp, "upstream", UPSTREAM, [os.path.join(upstream_dir, "include")],
                           os.path.join(upstream_dir, "lib"))
    ours = build_and_run(tmp, "ours", OURS, [os.path.join(ROOT, "c_api", "src"),
                                             os.path.join(ROOT, "c_api", "include")],
                         libinfo.library_dir())
    return theirs, ours


def test_same_facts_under_both_headers(facts):
    theirs, ours = facts
    assert ours == theirs


def test_the_facts_are_the_documented_ones(facts):
    """What tvm_ffi_runtime.h and the runtimes rely on, stated outright."""
    theirs, _ = facts
    assert "header at 8\n" in theirs  # the vtable pointer is 8 bytes before the header
    assert "imports_ at 32\n" in theirs  # 24 past the header: the reflected field's offset
    assert "sizeof ModuleObj 48 " in theirs
    assert "slots kind 1 mask 9 get 17 implements 25 doc 33 metadata 41\n" in theirs
    assert "Error: ObjectRef at 8, std::exception at 0\n" in theirs
