"""libtvm_ffi.so's C++ face: the tvm::ffi:: symbols upstream's library defines, defined by ours.

C++ libraries built against upstream's headers (TVM, TileLang, tvm-ffi-orcjit) link
the out-of-line members of ``tvm::ffi::ModuleObj``, its vtable and typeinfo,
``tvm::ffi::Error``'s, and the JSON, structural and dataclass operations from the
library. ``nm -D`` of both libraries must list the same ``tvm::ffi::`` names.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tvm_ffi_common import libinfo

pytestmark = pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")

#: nm's letters of the definitions a client can bind to; W (weak code) is left out: those
#: are std:: template instantiations every client makes for itself.
BINDABLE = set("TDRBVu")


def defined_tvm_ffi_symbols(path: str) -> dict:
    """Mangled name -> nm letter of every dynamic tvm::ffi:: symbol ``path`` defines."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and "N3tvm3ffi" in parts[2]:
            symbols[parts[2]] = parts[1]
    return symbols


def demangle(names) -> list:
    out = subprocess.run(["c++filt"], input="\n".join(sorted(names)), capture_output=True,
                         text=True, check=True).stdout
    return out.splitlines()


@pytest.fixture(scope="module")
def ours() -> dict:
    return defined_tvm_ffi_symbols(os.path.join(libinfo.library_dir(), "libtvm_ffi.so"))


@pytest.fixture(scope="module")
def theirs(upstream_library) -> dict:
    return defined_tvm_ffi_symbols(upstream_library)


def test_every_upstream_tvm_ffi_symbol_is_defined(ours, theirs):
    wanted = {name for name, letter in theirs.items() if letter in BINDABLE}
    # today's count: a changed upstream list is worth a look, not a silent pass
    assert len(wanted) == 33, demangle(wanted)
    missing = wanted - {name for name, letter in ours.items() if letter in BINDABLE}
    assert missing == set(), demangle(missing)


def test_no_tvm_ffi_symbol_beyond_upstreams(ours, theirs):
    """Helpers stay hidden: an extra export could interpose on a client's own inline copy."""
    assert set(ours) - set(theirs) == set(), demangle(set(ours) - set(theirs))


def test_kinds_of_definition_match(ours, theirs):
    """Code stays code, objects stay objects, process-unique statics stay unique (``u``)."""
    def kind(letter):
        return {"T": "code", "W": "code", "V": "object", "D": "object", "R": "object",
                "B": "object", "u": "unique"}[letter]

    for name, letter in theirs.items():
        if letter in BINDABLE:
            assert kind(ours[name]) == kind(letter), (demangle([name]), ours[name], letter)


def test_data_symbols_have_upstreams_sizes(upstream_library):
    """A vtable's size is its slot count, a typeinfo's its kind and bases, a name's its text."""
    def sizes(path):
        out = subprocess.run(["nm", "-DS", "--defined-only", path], capture_output=True,
                             text=True, check=True).stdout
        return {p[3]: int(p[1], 16) for p in (line.split() for line in out.splitlines())
                if len(p) == 4 and p[2] in "VDRBu" and "N3tvm3ffi" in p[3]}

    theirs = sizes(upstream_library)
    ours = sizes(os.path.join(libinfo.library_dir(), "libtvm_ffi.so"))
    assert theirs["_ZTVN3tvm3ffi9ModuleObjE"] == 16 + 12 * 8  # offset-to-top, typeinfo, 12 slots
    assert ours == theirs


def test_the_vtables_and_typeinfo_are_there(ours):
    for name in ("_ZTVN3tvm3ffi9ModuleObjE", "_ZTIN3tvm3ffi9ModuleObjE",
                 "_ZTSN3tvm3ffi9ModuleObjE", "_ZTVN3tvm3ffi5ErrorE", "_ZTIN3tvm3ffi5ErrorE",
                 "_ZTSN3tvm3ffi5ErrorE"):
        assert name in ours, name
