"""What real libraries built for upstream do with TVM FFI, reproduced without the libraries.

Each test is a pattern that broke one of them on ours (``compat/run_real_libraries.py`` runs
the libraries themselves, opt-in):

* TVM's ``Device`` subclass reads and overrides the class's name maps and
  ``__device_type_name__``, and registers itself with ``core._set_class_device``;
* flashinfer's JIT (and any build tool) compiles C++ against upstream's header-only API with
  the flags ``libinfo`` and ``python -m tvm_ffi.config`` report;
* TVM's Relax passes run native ``__s_visit__`` and ``__s_mutate__`` hooks; TIRx hands a C++ subclass of
  ``ffi.StructuralMutator`` to the containers' typed hooks;
* TIRx and jax-tvm-ffi keep objects in C++ statics, released after Python has finalized.

The C++ side is ``tests/kernels/library_patterns.cc``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import textwrap

import pytest

from subprocess_utils import IMPORTS, run_python
from subprocess_utils import run_under_each as run_each
from subprocess_utils import same_as_upstream as assert_all_equal

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def library(kernels) -> str:
    with open(os.path.join(HERE, "kernels", "library_patterns.cc")) as f:
        return kernels.build("library_patterns", f.read())


# ------------------------------------------------------------ TVM's Device subclass

TVM_STYLE_DEVICE = """
RPC_SESS_MASK = 128

class Device(api.core.Device):
    # as TVM's tvm.runtime.Device: its own properties, and the type name read from the
    # base class's map, remote (RPC) devices named by their session
    @property
    def exist(self):
        return self.dlpack_device_type() == 1

    def __device_type_name__(self):
        if self.dlpack_device_type() >= RPC_SESS_MASK:
            session = self.dlpack_device_type() // RPC_SESS_MASK - 1
            kind = self.dlpack_device_type() % RPC_SESS_MASK
            return f"remote[{session}]:{Device._DEVICE_TYPE_TO_NAME[kind]}"
        return Device._DEVICE_TYPE_TO_NAME[self.dlpack_device_type()]

api.core._set_class_device(Device)
"""


def test_a_tvm_style_device_subclass_prints_and_comes_back_from_calls():
    text = assert_all_equal(run_each(TVM_STYLE_DEVICE + textwrap.dedent("""
    import numpy as np
    cpu = api.device("cpu", 0)
    print(type(cpu).__name__, str(cpu), repr(cpu), cpu.exist, cpu.type)
    print(str(Device(2 * RPC_SESS_MASK + 2, 1)), repr(Device("cuda", 3)))
    print(Device._DEVICE_NAME_TO_TYPE["mps"], Device._DEVICE_TYPE_TO_NAME[2])
    tensor = api.from_dlpack(np.arange(3.0))
    print(type(tensor.device).__name__, tensor.device)
    echoed = api.convert(lambda d: d)(Device("cuda", 1))  # out through C and back
    print(type(echoed).__name__, echoed)
    """)))
    assert text.splitlines()[0] == "Device cpu:0 device(type='cpu', index=0) True cpu"
    assert "remote[1]:cuda:1" in text
    assert "Device cpu:0" in text and "Device cuda:1" in text


def test_a_subclass_overriding_the_name_map_is_used_by_str_and_the_constructor():
    # the maps are class attributes looked up through the instance, as upstream's are
    text = assert_all_equal(run_each("""
    class Renamed(api.Device):
        _DEVICE_TYPE_TO_NAME = {**api.Device._DEVICE_TYPE_TO_NAME, 1: "host"}
        _DEVICE_NAME_TO_TYPE = {**api.Device._DEVICE_NAME_TO_TYPE, "host": 1}

    print(str(Renamed("host", 2)), repr(Renamed(1)), str(api.Device("cpu")))
    try:
        api.Device("host")
    except ValueError as e:
        print("ValueError", e)
    """))
    assert text == "host:2 device(type='host', index=0) cpu:0\nValueError Unknown device: host\n"


def test_a_tvm_style_derived_object_that_forwards_its_attributes():
    """TVM's ``derived_object`` wraps an Object subclass whose ``__setattr__`` and
    ``__getattr__`` forward to an instance it makes in ``__init__``: making the wrapper must
    not go through them (upstream sets its handle as a C field)."""
    text = assert_all_equal(run_each("""
    class Derived(api.Object):
        __slots__ = ("__dict__",)  # as TVM's adds when its base has none

        def __init__(self):
            object.__setattr__(self, "_inst", {"answer": 42})
        def __getattr__(self, name):
            return self._inst[name]
        def __setattr__(self, name, value):
            self._inst[name] = value

    d = Derived()
    d.extra = 1
    print(d.answer, d.extra)
    del d
    print("deleted")
    """))
    assert text == "42 1\ndeleted\n"


# ------------------------------------------------------------ C++ headers for build tools


def _build_with_reported_flags(source: str, output: str, impl: str, cache: str,
                               via_config: bool) -> None:
    """Compiles ``source`` into ``output`` with flags taken only from our package's
    ``libinfo`` (``tvm_ffi_<impl>.libinfo``) or the drop-in's ``python -m tvm_ffi.config``."""
    env = dict(os.environ, TVM_FFI_CACHE_DIR=cache)
    if via_config:
        env["TVM_FFI_IMPL"] = impl
        flags = subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--cxxflags",
                                "--ldflags", "--libs"], capture_output=True, text=True,
                               env=env, check=True).stdout.split()
    else:
        script = (f"import tvm_ffi_{impl}.libinfo as info, os\n"
                  "print(' '.join(['-I' + p for p in info.include_paths()] +\n"
                  "               ['-L' + os.path.dirname(info.find_libtvm_ffi()), '-ltvm_ffi']))")
        flags = shlex.split(subprocess.run([sys.executable, "-c", script], capture_output=True,
                                           text=True, env=env, check=True).stdout)
        flags.append("-std=c++17")
    done = subprocess.run([os.environ.get("CXX", "c++"), "-shared", "-fPIC", "-O1", source,
                           *flags, "-o", output], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("impl,via_config", [("fast", True), ("ref", False)],
                         ids=["config-cxxflags-fast", "libinfo-ref"])
def test_cxx_built_with_the_reported_flags_loads_and_runs(tmp_path, impl, via_config):
    """A C++ unit using upstream's header-only API (``tvm/ffi/function.h`` ...), built with
    nothing but the flags our package reports (the drop-in's ``config --cxxflags --ldflags
    --libs``, or a front end's ``libinfo``), as flashinfer's JIT builds its kernels; then
    loaded and called under both front ends."""
    output = str(tmp_path / "libpatterns.so")
    _build_with_reported_flags(os.path.join(HERE, "kernels", "library_patterns.cc"), output,
                               impl, str(tmp_path / "cache"), via_config)
    for front_end in ("ref", "fast"):
        text = run_python(f"""
        {IMPORTS[front_end]}
        lib = api.load_module({output!r})
        print(lib["sum_with_derived_visitor"](api.convert([1, [2, 3], {{"k": 4}}])))
        """)
        assert text == "10\n", front_end


def test_our_c_headers_win_in_the_reported_include_path(tmp_path):
    """Through the single directory ``find_include_path`` reports, ``tvm/ffi/c_api.h`` and
    ``dlpack/dlpack.h`` are ours, ``tvm/ffi/function.h`` upstream's."""
    code = textwrap.dedent("""
    import os, tvm_ffi_fast.libinfo as info
    from tvm_ffi_common import libinfo as common
    root = info.find_include_path()
    ours = os.path.realpath(common.include_paths()[0])
    for header in ("tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h", "dlpack/dlpack.h",
                   "tvm/ffi/function.h", "tvm/ffi/container/array.h"):
        found = os.path.realpath(os.path.join(root, header))
        print(header, "ours" if found.startswith(ours + os.sep) else "upstream")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, TVM_FFI_CACHE_DIR=str(tmp_path)), check=True)
    assert done.stdout.split() == ["tvm/ffi/c_api.h", "ours", "tvm/ffi/extra/c_env_api.h",
                                   "ours", "dlpack/dlpack.h", "ours", "tvm/ffi/function.h",
                                   "upstream", "tvm/ffi/container/array.h", "upstream"]


@pytest.mark.parametrize("impl", ["ref", "fast"])
def test_without_upstreams_headers_one_line_says_what_to_install(impl):
    """``config --cxxflags`` fails with one line (no traceback); ``find_include_path`` still
    answers with our C headers, after the same line (once)."""
    hide = (f"import tvm_ffi_{impl}.cpp.headers as headers\n"
            "headers.find_upstream_cxx_include = lambda: None\n")
    config = subprocess.run(
        [sys.executable, "-c", hide + f"import sys, tvm_ffi_{impl}.config as c\n"
                                      "sys.exit(c.main(['--cxxflags']))"],
        capture_output=True, text=True)
    assert config.returncode == 1 and config.stdout == ""
    assert len(config.stderr.splitlines()) == 1, config.stderr
    assert "pip install apache-tvm-ffi==0.1.15.post2" in config.stderr
    path = subprocess.run(
        [sys.executable, "-c", hide + f"import tvm_ffi_{impl}.libinfo as info\n"
                                      "print(info.find_include_path()); info.find_include_path()"],
        capture_output=True, text=True, check=True)
    assert os.path.isfile(os.path.join(path.stdout.strip(), "tvm", "ffi", "c_api.h"))
    assert not os.path.exists(os.path.join(path.stdout.strip(), "tvm", "ffi", "function.h"))
    assert len(path.stderr.splitlines()) == 1 and "apache-tvm-ffi" in path.stderr


@pytest.mark.parametrize("impl", ["ref", "fast"])
def test_include_paths_walks_the_header_trees_once(tmp_path, impl):
    """``include_paths()`` asks for the merged directory three times; the header trees are
    walked on the first call only, and again when the cache root changes or the merged
    directory is deleted (flashinfer's JIT asks on every kernel build)."""
    code = textwrap.dedent(f"""
    import os, shutil
    import tvm_ffi_{impl}.libinfo as info
    import tvm_ffi_{impl}.cpp.headers as headers
    walks = []
    real_walk = os.walk
    def counting_walk(*args, **kwargs):
        walks.append(args[0])
        return real_walk(*args, **kwargs)
    headers.os.walk = counting_walk
    first = info.include_paths()
    after_first = len(walks)
    second = info.include_paths()
    print(after_first > 0, len(walks) - after_first, first == second)
    os.environ["TVM_FFI_CACHE_DIR"] = {str(tmp_path / "other")!r}
    moved = info.find_include_path()
    print(len(walks) > after_first, moved.startswith({str(tmp_path / "other")!r}))
    count = len(walks)
    shutil.rmtree(moved)
    print(info.find_include_path() == moved, os.path.isdir(moved), len(walks) > count)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, TVM_FFI_CACHE_DIR=str(tmp_path / "cache")))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True 0 True\nTrue True\nTrue True True\n"


# ------------------------------------------------------------ structural traversals


def test_a_native_s_visit_hook_runs(library):
    """TVM's Relax nodes register ``__s_visit__`` as a native function pointer; the pair's
    hook visits its second field first, which the reflected descent would not."""
    text = assert_all_equal(run_each("""
    pair = lib["make_pair"](api.convert([1, 2]), 3)
    seen = []
    api.structural.structural_walk(pair, [(int, seen.append)])
    print(seen)
    nested = api.convert([pair, lib["make_pair"](4, 5)])
    seen.clear()
    api.structural.structural_walk(nested, [(int, seen.append)])
    print(seen)
    """, library))
    assert text == "[3, 1, 2]\n[3, 1, 2, 5, 4]\n"


def test_a_native_s_visit_hook_stops_at_an_interrupt_and_reports_an_error(library):
    text = assert_all_equal(run_each("""
    pair = lib["make_pair"](api.convert([1, 2]), 3)
    stop = api.structural.structural_walk(
        pair, [(int, lambda v: api.structural.VisitInterrupt(v) if v == 1 else None)])
    print(type(stop).__name__)
    def fail(value):
        raise ValueError(f"no {value}")
    try:
        api.structural.structural_walk(pair, [(int, fail)])
    except ValueError as e:
        print("ValueError", e)
    """, library))
    assert text == "VisitInterrupt\nValueError no 3\n"


def test_a_native_s_mutate_hook_runs(library):
    """TVM's Relax nodes also register ``__s_mutate__`` as a native function pointer (its
    LegalizeOps mutates what it has just visited); the pair's hook mutates its second field
    first, keeps the pair when nothing changed and copies it otherwise."""
    text = assert_all_equal(run_each("""
    pair = lib["make_pair"](api.convert([1, 2]), 3)
    seen = []
    def times_ten(value):
        seen.append(value)
        return value * 10
    mapped = api.structural.structural_map(pair, [(int, times_ten)])
    print(seen, mapped.first, mapped.second, mapped.same_as(pair), pair.first, pair.second)
    kept = api.structural.structural_map(pair, [(str, lambda s: s + "!")])
    print(kept.same_as(pair))
    seen.clear()
    nested = api.convert([pair, lib["make_pair"](4, 5)])
    mutated = api.structural.structural_mutate(
        nested, [(int, lambda value, mutator: times_ten(value))])
    print(seen, mutated[0].first, mutated[0].second, mutated[1].first, mutated[1].second)
    """, library))
    assert text == ("[3, 1, 2] (10, 20) 30 False (1, 2) 3\nTrue\n"
                    "[3, 1, 2, 5, 4] (10, 20) 30 40 50\n")


def test_a_native_s_mutate_hook_passes_an_error_through(library):
    text = assert_all_equal(run_each("""
    pair = lib["make_pair"](api.convert([1, 2]), 3)
    def fail(value):
        raise ValueError(f"no {value}")
    try:
        api.structural.structural_map(api.convert([pair]), [(int, fail)])
    except ValueError as e:
        print("ValueError", e)
    """, library))
    assert text == "ValueError no 3\n"


def test_cxx_subclasses_of_the_visitor_and_mutator_pass_the_typed_hooks(library):
    """TIRx's mutator is a C++ subclass of ``ffi.StructuralMutator``: the containers' typed
    ``__s_visit__`` / ``__s_mutate__`` hooks take it, as a C++ ObjectRef parameter would."""
    text = assert_all_equal(run_each("""
    print(lib["sum_with_derived_visitor"](api.convert([1, [2, 3], {"k": 4}])))
    print(lib["scale_with_derived_mutator"](api.convert([1, [2, 3], {"k": 4}])))
    """, library))
    assert text == '10\n(10, (20, 30), {"k": 40})\n'


# ------------------------------------------------------------ interpreter exit


@pytest.mark.parametrize("impl", ["ref", "fast"])
def test_objects_held_by_a_cxx_static_until_exit(library, impl):
    """A C++ static releases what it holds after Python has finalized: no crash, exit 0.
    Under ref those releases are dropped (``c_api/src/host_callbacks.c``)."""
    code = textwrap.dedent(f"""
    import numpy as np
    {IMPORTS[impl]}
    lib = api.load_module({library!r})
    held = [api.from_dlpack(np.arange(4.0)), lambda x: x + 1, api.convert({{"k": [1, 2]}}),
            api.convert("a string longer than seven bytes"), lib["make_pair"](1, 2), lib,
            api.convert([lambda: 1, api.from_dlpack(np.arange(2.0))])]
    print(*[lib["hold_until_exit"](value) for value in held])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "1 2 3 4 5 6 7\n", "")


@pytest.mark.parametrize("impl", ["ref", "fast"])
def test_dlpack_exports_released_by_the_last_collection(impl):
    """NumPy arrays and torch tensors made from our DLPack exports, kept in a reference cycle
    (freed by the interpreter's last garbage collection, after ``atexit``) and in module
    globals (torn down at exit): no crash, exit 0. Under ref their deleters pass the exit
    gate ``interpreter_exit.py`` shuts: those releases are dropped (without the gate the
    process dies of SIGSEGV)."""
    code = textwrap.dedent(f"""
    import gc
    import numpy as np
    import torch
    {IMPORTS[impl]}
    gc.disable()  # no collection before exit frees the cycle
    class Holder:
        pass
    holder = Holder()
    holder.self = holder  # a cycle: only the last collection frees it
    holder.arrays = [np.from_dlpack(api.from_dlpack(np.arange(5.0))) for _ in range(3)]
    holder.tensors = [torch.from_dlpack(api.from_dlpack(torch.arange(4.0))) for _ in range(3)]
    holder.capsule = api.from_dlpack(np.arange(3.0)).__dlpack__()
    kept = [torch.from_dlpack(api.from_dlpack(np.ones(2)))]
    del holder
    print(float(kept[0].sum()))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "2.0\n", "")
