"""load_module names the path and the problem when a file is no kernel library."""

import os

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST
from subprocess_utils import run_python

LIBM = "/usr/lib/x86_64-linux-gnu/libm.so.6"
IMPORTS = {"ref": "import tvm_ffi_ref as api", "fast": "import tvm_ffi_fast as api"}


@pytest.mark.parametrize("frontend", [f for f in FRONTENDS_UNDER_TEST if f in IMPORTS])
def test_load_module_refuses_what_is_no_kernel_library(frontend, tmp_path):
    not_elf = tmp_path / "notes.so"
    not_elf.write_text("not a library\n")
    cases = [str(tmp_path / "missing.so"), str(not_elf), str(tmp_path)]
    if os.path.exists(LIBM):
        cases.append(LIBM)
    out = run_python(f"""
    {IMPORTS[frontend]}
    for path in {cases!r}:
        try:
            api.load_module(path)
            print("loaded", path)
        except (RuntimeError, OSError) as e:
            print(type(e).__name__, path in str(e))
    """)
    assert out.splitlines() == ["RuntimeError True"] * len(cases)
