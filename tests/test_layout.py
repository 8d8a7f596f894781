"""The tree's promises about where code lives (see tvm_ffi_api/__init__.py).

* Each front end runs its own core and the shared folder, never the other
  front end's files: importing every module of ``tvm_ffi_fast`` executes no
  file under ``tvm_ffi_ref/``, and the other way round.
* The shared folder is mounted, not imported: its modules exist only as
  modules of a front end.
"""

from __future__ import annotations

import json
import os

import pytest

from subprocess_utils import run_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Lists every file each import loaded, after importing every module the package offers.
LOADED_FILES = """
import importlib, json, os, pkgutil, sys
import {package} as package

names = set()
for path in package.__path__:
    for info in pkgutil.walk_packages([path], prefix="{package}."):
        names.add(info.name)
for name in sorted(names):
    if name.rsplit(".", 1)[-1] == "__main__":
        continue
    importlib.import_module(name)
print(json.dumps(sorted({{os.path.realpath(m.__file__) for m in list(sys.modules.values())
                         if getattr(m, "__file__", None)}})))
print(json.dumps(sorted(names)))
"""


def _loaded(package: str):
    out = run_python(LOADED_FILES.format(package=package), timeout=300).splitlines()
    return json.loads(out[-2]), json.loads(out[-1])


@pytest.mark.parametrize("package,other", [("tvm_ffi_fast", "tvm_ffi_ref"),
                                           ("tvm_ffi_ref", "tvm_ffi_fast")])
def test_a_front_end_never_executes_the_other_front_ends_files(package, other):
    files, modules = _loaded(package)
    foreign = os.path.join(ROOT, other) + os.sep
    assert not [f for f in files if f.startswith(foreign)]
    # ... while it does run the shared folder's modules, as its own
    shared = os.path.join(ROOT, "tvm_ffi_api") + os.sep
    assert any(f.startswith(shared) for f in files)
    assert f"{package}.container" in modules and f"{package}.object" in modules


def test_the_shared_folder_is_not_a_package_of_its_own():
    out = run_python("""
    try:
        import tvm_ffi_api.container
    except ImportError:
        print("refused")
    """)
    assert out.strip() == "refused"


def test_both_front_ends_use_one_ctypes_mirror_and_their_own_shared_modules():
    out = run_python("""
    import tvm_ffi_ref, tvm_ffi_fast, tvm_ffi_common.abi as abi
    print(tvm_ffi_ref.abi is abi, tvm_ffi_fast.abi is abi)
    print(tvm_ffi_ref.Array is tvm_ffi_fast.Array, tvm_ffi_ref.Array.__module__,
          tvm_ffi_fast.Array.__module__)
    """)
    assert out.splitlines() == ["True True", "False tvm_ffi_ref.container tvm_ffi_fast.container"]
