"""The C++ face at work: a library built against upstream's headers (tests/kernels/cxx_face.cc)
uses libtvm_ffi.so's C++ symbols and defines a ModuleObj subclass; under ref and fast it must
print what it prints under upstream.

Both directions of module interop: C++ calls the virtual functions of a module a runtime
loaded (through the vtable pointer the runtime puts before each module), and the runtime's
``ffi.Module*`` globals (so the Python API) serve a module C++ made.
"""

from __future__ import annotations

import os

import pytest

from subprocess_utils import IMPORTS, run_python
from subprocess_utils import run_under_each as run_each
from subprocess_utils import same_as_upstream as assert_all_equal

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def library(kernels) -> str:
    with open(os.path.join(HERE, "kernels", "cxx_face.cc")) as f:
        return kernels.build("cxx_face", f.read())


def test_value_operations_match_upstream(library):
    text = assert_all_equal(run_each("print(lib['operations']())", library))
    assert "sequal 101" in text and "roundtrip 1" in text and "thrown ValueError 1" in text


def test_traversals_made_in_cxx_walk_the_runtimes_containers(library):
    """TVM's passes drive visitors and mutators made in C++ through the containers' hooks."""
    text = assert_all_equal(run_each("""
    print(lib['traversals']([1, [2, 3], {'k': 4}]))
    print(lib['traversals'](api.convert({'a': [5, 6]})))
    """, library))
    assert text == 'sum 10 mapped [10,[20,30],{"k":40}]\nsum 11 mapped {"a":[50,60]}\n'


def test_cxx_calls_virtuals_of_a_module_the_runtime_loaded(library):
    text = assert_all_equal(run_each("""
    print(lib['probe_module'](lib, 'add_one'))
    print(lib['probe_module'](lib, 'missing'))
    print(lib['load_and_call'](LIB_PATH, 'add_one'))
    """, library))
    assert "kind library" in text and "call 21" in text and "doc adds one" in text


def test_runtime_serves_a_module_cxx_made(library):
    text = assert_all_equal(run_each("""
    demo = lib['make_demo_module']()
    print(type(demo).__name__, demo.kind, demo['twice'](21), demo.implements_function('twice'))
    print(demo.implements_function('nope'), demo.get_function_doc('twice'))
    print(demo.inspect_source('c'), len(demo.imports), demo.get_write_formats())
    print(lib['probe_module'](demo, 'twice'))
    demo.import_module(lib)
    print(len(demo.imports), demo.imports[0].kind, demo.get_function('add_one', query_imports=True)(1))
    try:
        lib.import_module(demo)
    except RuntimeError as e:
        print('cycle', e)
    demo.clear_imports(); print(len(demo.imports))
    try:
        demo.write_to_file('x', 'y')
    except RuntimeError as e:
        print('write', e)
    """, library))
    assert "demo 42 True" in text and "doubles x" in text and "source:c" in text


def test_imports_across_kinds_from_cxx(library):
    text = assert_all_equal(run_each("""
    demo = lib['make_demo_module']()
    print(lib['import_in_cxx'](lib, demo))
    print(lib['probe_module'](lib, 'twice'))
    print(lib['clear_in_cxx'](lib), len(lib.imports))
    print(lib['import_in_cxx'](demo, lib))
    """, library))
    assert "after-import 1" in text and "Cyclic dependency" in text


def test_context_symbols_are_visible_to_cxx(library):
    outputs = {}
    for name in ("ref", "fast"):
        outputs[name] = run_python(f"""
        import ctypes
        {IMPORTS[name]}
        from tvm_ffi_common.capi import LIB
        lib = api.load_module({library!r})
        value = ctypes.c_int(5)
        LIB.TVMFFIEnvModRegisterContextSymbol(b"cxx_face_test_a", ctypes.addressof(value))
        print(lib['context_symbols']())
        """)
    assert outputs["ref"] == outputs["fast"] == "cxx_face_test_a=1;\n"
