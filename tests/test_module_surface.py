"""Upstream's module surface under both front ends: ``core``, ``libinfo``/``config``,
``registry``, ``_ffi_api``, ``convert_func``, the dtype constants and the argument
protocols libraries rely on. Each front end runs in its own interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from subprocess_utils import run_python

PACKAGES = ["tvm_ffi_fast", "tvm_ffi_ref"]


def _run(package: str, code: str) -> dict:
    out = run_python(f"import json\nimport {package} as api\n" + code)
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("package", PACKAGES)
def test_core_names_and_class_overrides(package):
    result = _run(package, """
import pickle
core = api.core
def _annotation_error(cls):
    try:
        api.core.TypeSchema.from_annotation(cls)
    except TypeError as error:
        return str(error)
    return None
echo = api.convert(lambda x: x)
class MyDevice(api.Device):
    pass
core._set_class_device(MyDevice)
made, returned = api.device("cuda", 1), echo(api.Device("cpu", 0))
override = [type(made).__name__, type(returned).__name__, core._CLASS_DEVICE.__name__]
core._set_class_device(api.Device)
class MyTensor(api.Tensor):
    pass
import numpy as np
core._set_class_tensor(MyTensor)
tensors = [type(api.from_dlpack(np.zeros(3))).__name__, type(echo(np.zeros(2))).__name__]
core._set_class_tensor(api.Tensor)
tensors.append(type(echo(np.zeros(2))).__name__)
cdt = core.DataType("float32x4")
back = pickle.loads(pickle.dumps(cdt))
string = api.convert("a long string of more than seven bytes")
print(json.dumps({
    "override": override, "reset": type(api.device("cpu")).__name__, "tensors": tensors,
    "missing": [isinstance(core.MISSING, core.Object),
                core.MISSING.same_as(api.container.MISSING), api.Map({"a": 1}).get("b", 7)],
    "kwargs": isinstance(core.KWARGS, api.Object),
    "datatype": [str(cdt), cdt.lanes, cdt.itemsize, back == cdt, str(echo(cdt))],
    "native": [isinstance(string, core.PyNativeObject), isinstance(string, core.String),
               isinstance(api.Shape((1, 2)), core.PyNativeObject)],
    "containers": [isinstance(api.Array([1]), core.CContainerBase),
                   isinstance(api.Dict(), api.CContainerBase), core.CObject is not api.Object,
                   issubclass(api.Array, core.CObject), isinstance(api.Array([1]), core.CObject),
                   isinstance(echo, core.CObject), issubclass(core.CObject, api.Object)],
    "cobject_annotation": _annotation_error(core.CObject),
    "errors": [core.ERROR_NAME_TO_TYPE["ValueError"].__name__,
               type(core._convert_to_ffi_error(KeyError("k"))).__name__],
    "type_index": core._object_type_key_to_index("ffi.Array") == api.abi.TVMFFITypeIndex.kTVMFFIArray,
    "unknown_key": core._object_type_key_to_index("no.such.type"),
    "shape": core._shape_obj_get_py_tuple(api.Shape((4, 5))._tvm_ffi_cached_object),
    "stream": [core._env_set_current_stream(2, 0, 1234), core._env_get_current_stream(2, 0),
               core._env_set_current_stream(2, 0, 0)],
    "opaque": type(core._convert_to_opaque_object(object())).__name__,
    "repr": core.object_repr(api.Array([1, 2])),
    "dlpack": list(core.__dlpack_version__),
}))
""")
    assert result["override"] == ["MyDevice", "MyDevice", "MyDevice"]
    assert result["reset"] == "Device"
    assert result["tensors"] == ["MyTensor", "MyTensor", "Tensor"]
    assert result["missing"] == [True, True, 7]
    assert result["kwargs"] is True
    assert result["datatype"] == ["float32x4", 4, 16, True, "float32x4"]
    assert result["native"] == [True, True, True]
    # CObject: the base every wrapper is an instance of, itself no registered type (so an
    # annotation of it is refused, as upstream's is), and no Object subclass
    assert result["containers"] == [True, True, True, True, True, True, False]
    assert "not registered" in result["cobject_annotation"]
    assert result["errors"] == ["ValueError", "Error"]
    assert result["type_index"] is True and result["unknown_key"] is None
    assert result["shape"] == [4, 5]
    assert result["stream"] == [0, 1234, 1234]
    assert result["opaque"] == "OpaquePyObject"
    assert result["repr"] == "(1, 2)"
    assert result["dlpack"][0] == 1


@pytest.mark.parametrize("package", PACKAGES)
def test_a_dropped_cany_releases_its_object(package):
    """A ``CAny`` holding an object drops its reference when collected (through the core's
    configured release, ``releases.py``), raising nothing in its finalizer."""
    result = _run(package, """
import ctypes, gc, sys
ignored = []
sys.unraisablehook = lambda hook: ignored.append(repr(hook.exc_value))
array = api.Array([1, 2])
strong = lambda: ctypes.c_uint32.from_address(array._handle).value  # low half: strong count
before = strong()
held = api.CAny(array)
during = strong()
del held
gc.collect()
print(json.dumps([before, during, strong(), ignored]))
""")
    assert result == [1, 2, 1, []]


@pytest.mark.parametrize("package", PACKAGES)
def test_argument_protocols_and_torch_dtypes(package):
    # A stand-in torch module: what is checked is the mapping of torch.dtype values to
    # DLDataType, in pure Python, whatever torch is installed.
    result = _run(package, """
import sys, types
torch = types.ModuleType("torch")
class dtype:
    def __init__(self, name):
        self.name = name
torch.dtype = dtype
for name in ("int8 int16 int32 int64 uint8 float16 float32 float64 bfloat16 bool "
             "float8_e4m3fn complex64").split():
    setattr(torch, name, dtype(name))
# torch's aliases are the same dtype objects
for alias, name in (("short", "int16"), ("int", "int32"), ("long", "int64"),
                    ("half", "float16"), ("float", "float32"), ("double", "float64")):
    setattr(torch, alias, getattr(torch, name))
sys.modules["torch"] = torch
echo = api.convert(lambda x: x)
class Stream:
    def __cuda_stream__(self):
        return ("cuda", 77)
class Event:
    __slots__ = ("address",)
    def __init__(self, address):
        self.address = address
api.core._OPAQUE_PTR_HANDLERS[Event] = lambda event: event.address
try:
    echo(torch.complex64)
except ValueError as e:
    unsupported = e.args[0]
try:
    api.convert(torch.complex64)
    converted_unsupported = None
except KeyError:
    converted_unsupported = "KeyError"
print(json.dumps({
    "echo": [str(echo(torch.int8)), str(echo(torch.long)), str(echo(torch.bfloat16)),
             str(echo(torch.bool)), str(echo(torch.float8_e4m3fn))],
    "convert": [str(api.convert(torch.half)), type(api.convert(torch.int)).__name__],
    "unsupported": [unsupported, converted_unsupported],
    "stream": echo(Stream()).value, "handler": echo(Event(0xCAFE)).value,
}))
""")
    assert result["echo"] == ["int8", "int64", "bfloat16", "bool", "float8_e4m3fn"]
    assert result["convert"] == ["float16", "dtype"]
    assert result["unsupported"] == ["Unsupported torch dtype: ", "KeyError"]
    assert result["stream"] == 77 and result["handler"] == 0xCAFE


@pytest.mark.parametrize("package", PACKAGES)
def test_top_level_names_registry_and_ffi_api(package):
    result = _run(package, """
import sys, types
@api.register_global_func("surface_test.twice")
def twice(x):
    return 2 * x
api.register_global_func("surface_test.nested.skip", lambda: 0)
target = types.ModuleType("surface_target")
sys.modules["surface_target"] = target
api.init_ffi_api("surface_test", "surface_target")
from importlib import import_module
ffi_api = import_module(api.__name__ + "._ffi_api")
try:
    ffi_api.NoSuchFunction
    missing = None
except AttributeError as e:
    missing = "ffi.NoSuchFunction" in str(e)
class NoApi:
    pass
try:
    api.convert_func(lambda x: x, tensor_cls=NoApi)
except TypeError as e:
    tensor_cls = "__dlpack_c_exchange_api__" in str(e)
print(json.dumps({
    "init": [target.twice(4), target.twice.__name__, hasattr(target, "skip")],
    "ffi_api": [ffi_api.ArraySize(api.Array([1, 2, 3])), "MapSize" in dir(ffi_api), missing],
    "keys": "ffi.Array" in api.registry.get_registered_type_keys(),
    "convert_func": [api.convert_func(lambda x: x + 1)(1), tensor_cls],
    "dtypes": [str(api.float32), type(api.bfloat16).__name__, "float8_e4m3fn" in dir(api),
               "float4_e2m1fnx2" in api.__all__],
    "version": [list(api.__version_tuple__), api.__version__],
    "any": [repr(api.CAny(3)), repr(api.CAny()),
            api.CAny([1]).type_index == api.abi.TVMFFITypeIndex.kTVMFFIArray,
            type(api.core._to_py_class_value(api.CAny("ab"))).__name__,
            list(api.core._to_py_class_value(api.CAny([1, 2])))],
    "names": sorted(n for n in ("core", "libinfo", "registry", "error", "container")
                    if hasattr(api, n)),
}))
""")
    assert result["init"] == [8, "twice", False]
    assert result["ffi_api"] == [3, True, True]
    assert result["keys"] is True
    assert result["convert_func"] == [2, True]
    assert result["dtypes"] == ["float32", "dtype", True, True]
    assert result["version"][1] == ".".join(str(p) for p in result["version"][0])
    assert result["any"] == ["CAny(int=3)", "CAny(None)", True, "String", [1, 2]]
    assert result["names"] == ["container", "core", "error", "libinfo", "registry"]


@pytest.mark.parametrize("package", PACKAGES)
def test_libinfo_answers_for_this_installation(package, tmp_path):
    result = _run(package, f"""
from pathlib import Path
from importlib import import_module
libinfo = import_module(api.__name__ + ".libinfo")
from tvm_ffi_common import libinfo as common
lib = Path({str(tmp_path)!r}) / "libsurface_dummy.so"
lib.write_bytes(b"")
try:
    libinfo._find_library_by_basename("x", "tvm_ffi", extra_lib_paths=[str(lib.parent)])
except TypeError as e:
    bad_path = str(e)
try:
    libinfo._find_library_by_basename("no-such-dist", "surely_absent", use_env_path=False)
except RuntimeError as e:
    absent = "libsurely_absent.so" in str(e)
print(json.dumps({{
    "lib": [libinfo.find_libtvm_ffi() == str(Path(common.library_path()).resolve()),
            libinfo.load_lib_ctypes("apache-tvm-ffi", "tvm_ffi", "RTLD_GLOBAL")
            is common.load_library()],
    "include": Path(libinfo.find_include_path(), "tvm", "ffi", "c_api.h").is_file(),
    "dlpack": Path(libinfo.find_dlpack_include_path(), "dlpack", "dlpack.h").is_file(),
    "cmake": Path(libinfo.find_cmake_path(), "tvm_ffi-config.cmake").is_file(),
    "core": Path(libinfo.find_cython_lib()).name.startswith("_core"),
    "paths": libinfo.include_paths() == [libinfo.find_include_path()],
    "found": str(libinfo._find_library_by_basename("no-such-dist", "surface_dummy",
                                                   extra_lib_paths=[lib.parent])) == str(lib),
    "bad_path": bad_path, "absent": absent,
    # upstream's Python helper header: the installed apache-tvm-ffi's copy, found on disk
    "helper": [Path(libinfo.find_python_helper_include_path(), "tvm_ffi_python_helpers.h")
               .is_file(), "site-packages" in str(Path(libinfo.find_python_helper_include_path(),
                                                        "tvm_ffi_python_helpers.h").resolve()),
               "tvm_ffi" not in __import__("sys").modules or
               __import__("sys").modules["tvm_ffi"] is api],
    "source": Path(libinfo.find_source_path(), "src", "dispatch.c").is_file(),
}}))
""")
    assert result["helper"] == [True, True, True]
    assert result["source"] is True
    assert result["lib"] == [True, True]
    assert result["include"] and result["dlpack"] and result["cmake"] and result["core"]
    assert result["paths"] and result["found"] and result["absent"]
    assert result["bad_path"].startswith("extra_lib_paths[0] must be a pathlib.Path, got str")


def _config(module: str, *flags: str, impl=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("TVM_FFI_IMPL", None)
    if impl is not None:
        env["TVM_FFI_IMPL"] = impl
    return subprocess.run([sys.executable, "-m", module, *flags], env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("module,impl", [("tvm_ffi_fast.config", None), ("tvm_ffi.config", "ref")])
def test_config_command_prints_flags(module, impl):
    done = _config(module, "--includedir", "--libfiles", "--cxxflags", "--libs", "--ldflags",
                   impl=impl)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    include, library, cxxflags, libs, ldflags = done.stdout.splitlines()
    assert os.path.isfile(os.path.join(include, "tvm", "ffi", "c_api.h"))
    assert library.endswith("libtvm_ffi.so") and os.path.isfile(library)
    assert cxxflags == f"-I{include} -I{include} -std=c++17"
    assert libs == "-ltvm_ffi" and ldflags == f"-L{os.path.dirname(library)}"
    assert "usage" in _config(module, impl=impl).stdout


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_cmake_package_builds_a_kernel_library(tmp_path):
    cmake_dir = _config("tvm_ffi_fast.config", "--cmakedir").stdout.strip()
    (tmp_path / "k.c").write_text("#include <tvm/ffi/c_api.h>\n#include <dlpack/dlpack.h>\n"
                                  "int k(void) { TVMFFIVersion v; TVMFFIGetVersion(&v); "
                                  "return v.major; }\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(k C)\n"
        "find_package(tvm_ffi CONFIG REQUIRED)\nadd_library(k SHARED k.c)\n"
        "target_link_libraries(k PRIVATE tvm_ffi::shared)\n")
    build = tmp_path / "build"
    for command in (["cmake", "-S", str(tmp_path), "-B", str(build), f"-Dtvm_ffi_DIR={cmake_dir}"],
                    ["cmake", "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    needed = subprocess.run(["readelf", "-d", str(build / "libk.so")], capture_output=True,
                            text=True).stdout
    assert "[libtvm_ffi.so]" in needed
