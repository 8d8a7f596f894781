"""setup.py's rules for a user's build: no -Werror unless CI asks, each library rebuilt on its own.

setup.py is run with ``setuptools.setup`` replaced by a no-op, so its rules are read without
building anything.
"""

from __future__ import annotations

import os
import runpy
import time

import pytest
import setuptools

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Every C library setup.py builds into tvm_ffi_common/lib.
LIBRARIES = {"libtvm_ffi.so", "libtvm_ffi_example_kernels.so", "libtvm_ffi_broken_kernels.so",
             "libtvm_ffi_testing.so", "libtvm_ffi_check_fault.so"}


def _rules(monkeypatch, werror=None) -> dict:
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    if werror is None:
        monkeypatch.delenv("TVM_FFI_ABI_WERROR", raising=False)
    else:
        monkeypatch.setenv("TVM_FFI_ABI_WERROR", werror)
    return runpy.run_path(os.path.join(ROOT, "setup.py"))


def test_a_users_build_never_gets_werror(monkeypatch):
    assert "-Werror" not in _rules(monkeypatch)["CFLAGS"]
    assert "-Werror" not in _rules(monkeypatch, "0")["CFLAGS"]
    assert "-Werror" in _rules(monkeypatch, "1")["CFLAGS"]


def test_each_library_has_its_own_inputs(monkeypatch):
    rules = _rules(monkeypatch)
    assert set(rules["LIBRARY_INPUTS"]) == LIBRARIES
    assert next(iter(rules["LIBRARY_INPUTS"])) == "libtvm_ffi.so"  # the others link to it


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_a_missing_or_stale_library_and_only_it_is_rebuilt(monkeypatch, tmp_path, name):
    stale_libraries = _rules(monkeypatch)["stale_libraries"]
    future = time.time() + 10 ** 6  # newer than every input
    for library in LIBRARIES:
        (tmp_path / library).write_bytes(b"")
        os.utime(tmp_path / library, (future, future))
    assert stale_libraries(str(tmp_path)) == []
    os.utime(tmp_path / name, (0, 0))  # older than every input
    assert stale_libraries(str(tmp_path)) == [name]
    (tmp_path / name).unlink()
    assert stale_libraries(str(tmp_path)) == [name]


def test_objects_go_to_the_build_folder_it_is_given(monkeypatch, tmp_path):
    rules = _rules(monkeypatch)
    commands = []
    monkeypatch.setitem(rules["build_libtvm_ffi"].__globals__, "_run", commands.append)
    rules["build_libtvm_ffi"](str(tmp_path / "lib"), str(tmp_path / "temp"))
    objects = [cmd[cmd.index("-o") + 1] for cmd in commands if "-c" in cmd]
    assert objects and all(o.startswith(str(tmp_path / "temp") + os.sep) for o in objects)
