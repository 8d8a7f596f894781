"""The optional torch add-on (``_optional_torch_c_dlpack``) and its build script.

torch 2.13 publishes its own DLPack exchange table, so the add-on is never
built here (building it takes minutes: upstream's suite does it, see
``compat/run_upstream_suite.py``); what is tested is how the module decides,
the legacy attribute it moves, and the build script's command line, lock and
cache, in each front end's interpreter.
"""

from __future__ import annotations

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST, run_frontend

SETUP = r'''
import os, pathlib, subprocess, sys, tempfile
from types import SimpleNamespace
import importlib
addon = importlib.import_module(api.__name__ + "._optional_torch_c_dlpack")
import_module = importlib.import_module
SCRIPT = pathlib.Path(api.__file__).parent / "utils" / "_build_optional_torch_c_dlpack.py"


def fake_torch(available, cuda=None, hip=None):
    return SimpleNamespace(cuda=SimpleNamespace(is_available=lambda: available),
                           version=SimpleNamespace(cuda=cuda, hip=hip))


def run_script(*args):
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)
    return (done.returncode, done.stdout.strip(), done.stderr.strip().splitlines()[-1:])
'''

CASES = [
    ("device", "[addon._torch_extension_device(fake_torch(False)), "
     "addon._torch_extension_device(fake_torch(True, cuda='12.8')), "
     "addon._torch_extension_device(fake_torch(True, hip='7.2')), "
     "addon._torch_extension_device(fake_torch(True))]"),
    ("legacy_attribute",
     "class Legacy:\n"
     "    __c_dlpack_exchange_api__ = 1234\n"
     "class Plain:\n"
     "    pass\n"
     "moved = addon._check_and_update_dlpack_c_exchange_api(Legacy)\n"
     "result = (moved, type(Legacy.__dlpack_c_exchange_api__).__name__, "
     "import_module(api.__name__ + '.dlpack_exchange').api_address(Legacy.__dlpack_c_exchange_api__), "
     "addon._check_and_update_dlpack_c_exchange_api(Plain))"),
    ("torch_publishes_its_own",
     "import torch\n"
     "result = (addon.load_torch_c_dlpack_extension(), "
     "hasattr(torch.Tensor, '__dlpack_c_exchange_api__'))"),
    ("script_is_next_to_the_package", "SCRIPT.is_file()"),
]

#: The script itself is the same file under every front end: run once.
SCRIPT_CASES = [
    ("script_refuses_both_backends", "run_script('--build-with-cuda', '--build-with-rocm')[0]"),
    ("script_finds_it_built",
     "out = tempfile.mkdtemp()\n"
     "pathlib.Path(out, 'libprebuilt.so').write_bytes(b'')\n"
     "result = run_script('--output-dir', out, '--libname', 'libprebuilt.so')[:2] == "
     "(0, os.path.join(out, 'libprebuilt.so'))"),
]

EXPECTED = {
    "device": ["pylist", [["str", "cpu"], ["str", "cuda"], ["str", "rocm"], ["str", "cuda"]]],
    "legacy_attribute": ["pytuple", [["bool", True], ["str", "PyCapsule"], ["int", 1234],
                                     ["bool", False]]],
    "torch_publishes_its_own": ["pytuple", [["none"], ["bool", True]]],
    "script_is_next_to_the_package": ["bool", True],
    "script_refuses_both_backends": ["int", 2],
    "script_finds_it_built": ["bool", True],
}


@pytest.fixture(scope="module")
def results():
    pytest.importorskip("torch")
    first = FRONTENDS_UNDER_TEST[0]
    return {fe: run_frontend(fe, CASES + (SCRIPT_CASES if fe == first else []), setup=SETUP)
            for fe in FRONTENDS_UNDER_TEST}


@pytest.mark.parametrize("frontend", FRONTENDS_UNDER_TEST)
@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_addon(results, frontend, case):
    assert results[frontend][case] == EXPECTED[case]


@pytest.mark.parametrize("case", [c[0] for c in SCRIPT_CASES])
def test_build_script(results, case):
    assert results[FRONTENDS_UNDER_TEST[0]][case] == EXPECTED[case]
