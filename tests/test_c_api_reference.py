"""spec/16-c-api.md covers the whole C API: every export of libtvm_ffi.so, with upstream's signature.

* ``nm -D`` of our ``libtvm_ffi.so``: every ``TVMFFI*`` function it defines has an
  entry in the reference, and every entry that is not an inline helper is
  exported;
* the signatures the page prints (read from our headers) are upstream's,
  declaration by declaration, and both header sets declare the same functions;
* every entry says what the function takes, gives and how it fails, and the
  page shows each one.
"""

from __future__ import annotations

import os
import subprocess

from tvm_ffi_common import libinfo
from tvm_ffi_explain import c_api_reference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def exported_functions(library: str):
    """The ``TVMFFI*`` functions ``library`` defines, as ``nm -D`` lists them."""
    done = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True,
                          text=True, check=True)
    names = set()
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "W") and parts[2].startswith("TVMFFI"):
            names.add(parts[2])
    return names


def test_every_exported_function_is_in_the_reference_and_nothing_else():
    exported = exported_functions(libinfo.library_path())
    entries = c_api_reference.entries()
    declared = c_api_reference.declarations(libinfo.include_paths()[0])
    assert len(exported) >= 50
    assert exported - set(entries) == set(), "exported but not in the reference"
    inline = {name for name, d in declared.items() if d.inline}
    assert set(entries) - inline == exported, "in the reference but not exported"
    assert set(entries) == set(declared)


def test_the_signatures_are_upstreams(upstream_include):
    ours = c_api_reference.declarations(libinfo.include_paths()[0])
    theirs = c_api_reference.declarations(upstream_include)
    assert set(ours) == set(theirs)
    differ = {name: (ours[name].signature, theirs[name].signature) for name in ours
              if c_api_reference.comparable(ours[name].signature)
              != c_api_reference.comparable(theirs[name].signature)}
    assert not differ
    assert {n for n, d in ours.items() if d.inline} == {n for n, d in theirs.items() if d.inline}


def test_every_entry_is_complete_and_shown():
    with open(os.path.join(ROOT, "spec", "16-c-api.md"), encoding="utf-8") as f:
        page = f.read()
    for name, entry in c_api_reference.entries().items():
        assert entry.takes and entry.gives and entry.errors, name
        assert f"#### `{name}`\n" in page, name
    flagged = dict(c_api_reference.flagged())
    # the exceptions issue 19 names are flagged, with the fact that makes them one
    assert "borrowed" in flagged["TVMFFIEnvModLookupFromImports"]
    assert "one address" in flagged["TVMFFIGetTypeInfo"]
    assert "caller's `TVMFFIAny`" in flagged["TVMFFIBigIntGetContentByteArray"]


def test_wrap_keeps_lines_short_and_text_whole():
    signature = ("int TVMFFIErrorCreateWithCauseAndExtraContext(const TVMFFIByteArray* kind, "
                 "const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace, "
                 "TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, "
                 "TVMFFIObjectHandle* out);")
    wrapped = c_api_reference.wrap(signature, width=80)
    assert all(len(line) <= 80 for line in wrapped.splitlines())
    assert " ".join(wrapped.split()) == signature
    assert c_api_reference.comparable("int f(void);") == c_api_reference.comparable("int f( );")


def test_no_entry_says_an_error_is_raised_where_its_flag_says_none_is():
    # TVMFFIErrorCreate said "fails: status -1, the error raised" above a flag saying
    # that it returns -1 *without* raising anything.
    contradicted = []
    for name, entry in c_api_reference.entries().items():
        raises_nothing = "without* raising" in entry.exception or "without raising" in entry.exception
        if raises_nothing and ("the error raised" in entry.errors or "nothing raised" not in entry.errors):
            contradicted.append(name)
    assert contradicted == []
    assert "nothing raised" in c_api_reference.entries()["TVMFFIErrorCreate"].errors
