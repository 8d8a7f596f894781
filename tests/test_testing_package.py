"""The ``testing`` package (``tvm_ffi_api/testing``) under both front ends, and loading its library.

Each test runs in a fresh interpreter: loading the testing library registers
types, which would renumber the types of every later test in the process.
"""

from __future__ import annotations

import json

import pytest

from subprocess_utils import run_python

FRONTENDS = ["ref", "fast"]


def upstream_names() -> dict:
    """The public names of upstream's ``tvm_ffi.testing`` and what each is."""
    return json.loads(run_python("""
        import json, tvm_ffi, tvm_ffi.testing as t
        def kind(v):
            return ("function" if isinstance(v, tvm_ffi.Function)
                    else "class" if isinstance(v, type) else "callable" if callable(v) else "other")
        print(json.dumps({n: kind(getattr(t, n)) for n in dir(t) if not n.startswith("__")}))
    """))


@pytest.fixture(scope="module")
def upstream() -> dict:
    return upstream_names()


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_the_package_has_upstreams_names(frontend: str, upstream: dict) -> None:
    ours = json.loads(run_python(f"""
        import json, tvm_ffi_{frontend} as api, tvm_ffi_{frontend}.testing as t
        def kind(v):
            return ("function" if isinstance(v, api.Function)
                    else "class" if isinstance(v, type) else "callable" if callable(v) else "other")
        names = {{n: kind(getattr(t, n)) for n in dir(t) if not n.startswith("__")}}
        keys = {{n: getattr(t, n).__tvm_ffi_type_info__.type_key for n in names
                if names[n] == "class" and "__tvm_ffi_type_info__" in vars(getattr(t, n))}}
        print(json.dumps({{"names": names, "keys": keys}}))
    """))
    missing = {n: k for n, k in upstream.items() if ours["names"].get(n) != k}
    assert not missing
    assert ours["keys"]["TestIntPair"] == "testing.TestIntPair"
    assert ours["keys"]["_TestCxxClassDerivedDerived"] == "testing.TestCxxClassDerivedDerived"
    assert ours["keys"]["_SchemaAllTypes"] == "testing.SchemaAllTypes"


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_the_drop_in_loads_the_testing_library_at_import(frontend: str) -> None:
    # Upstream's core links its testing library, so its tests use testing.* globals
    # right after `import tvm_ffi`; the types get upstream's indices (138 onwards).
    out = run_python(f"""
        import os
        os.environ["TVM_FFI_IMPL"] = "{frontend}"
        from tvm_ffi_common import dropin
        dropin.install_from_environment()
        import tvm_ffi
        from tvm_ffi_{frontend}.type_info import type_key_to_index
        print(tvm_ffi.get_global_func("testing.add_one")(1),
              type_key_to_index("testing.TestCustomHash"), type_key_to_index("testing.TestFrozenCxx"))
    """)
    assert out.split() == ["2", "138", "172"]


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_our_package_loads_it_when_the_testing_package_is_imported(frontend: str) -> None:
    out = run_python(f"""
        import tvm_ffi_{frontend} as api
        print(api.get_global_func("testing.add_one", allow_missing=True))
        import tvm_ffi_{frontend}.testing
        print(api.get_global_func("testing.add_one")(41))
    """)
    assert out.split() == ["None", "42"]


def test_a_library_that_cannot_register_raises_import_error() -> None:
    # With no runtime installed every registration fails: the library keeps the
    # error instead of crashing, and loading it through the package says why.
    out = run_python("""
        from tvm_ffi_common import libinfo
        try:
            libinfo.load_testing_library()
        except ImportError as error:
            print(str(error).splitlines()[0])
    """)
    assert "libtvm_ffi_testing.so could not register its functions and types" in out
    assert "no TVM FFI runtime" in out


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_run_with_gpu_lock_holds_the_lock_file(frontend: str, tmp_path) -> None:
    out = run_python(f"""
        import fcntl, os
        os.environ["TVM_FFI_TEST_LOCK_DIR"] = {str(tmp_path / "locks")!r}
        from tvm_ffi_{frontend}.testing import run_with_gpu_lock

        def held(a, *, b):
            # Another open file description cannot take the lock while it is held.
            with open(os.path.join(os.environ["TVM_FFI_TEST_LOCK_DIR"], "gpu.lock")) as f:
                try:
                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return "free"
                except BlockingIOError:
                    return (a, b)

        print(run_with_gpu_lock(held, 1, b=2))
        with open(os.path.join(os.environ["TVM_FFI_TEST_LOCK_DIR"], "gpu.lock")) as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            print("released")
    """)
    assert out.split("\n")[:2] == ["(1, 2)", "released"]


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_fields_release_what_they_replace(frontend: str) -> None:
    # Each field slot owns one reference; setting, copying and dropping objects
    # keeps the counts exact.
    out = run_python(f"""
        import tvm_ffi_{frontend} as api, tvm_ffi_{frontend}.testing as t
        count = api.get_global_func("testing.object_use_count")
        child = t.create_object("testing.TestObjectBase")
        edges = t.create_object("testing.TestDeepCopyEdges", v_any=child, v_obj=child)
        counts = [count(child)]
        edges.v_any = 1
        counts.append(count(child))
        copies = [api.get_global_func("ffi.MakeObjectFromPackedArgs")(
            "testing.TestDeepCopyEdges", "v_any", child, "v_obj", None) for _ in range(100)]
        counts.append(count(child))
        del copies
        counts.append(count(child))
        del edges
        counts.append(count(child))
        derived = t.create_object("testing.TestObjectDerived", v_map={{}}, v_array=[])
        array = api.Array([child])
        derived.v_array = array
        counts += [count(array), count(child)]
        derived.v_array = []
        counts.append(count(array))
        print(counts)
    """)
    assert out.strip() == "[3, 2, 102, 2, 1, 2, 2, 1]"


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_threads_share_the_library(frontend: str) -> None:
    # Conversions look global functions up on first use and call them: from many
    # threads at once, each call still gets its own answer.
    out = run_python(f"""
        import threading
        import tvm_ffi_{frontend} as api, tvm_ffi_{frontend}.testing as t
        errors = []

        def work(n):
            try:
                for i in range(50):
                    got = t.schema_id_map_str_int({{"k": n + i, "v": True}})
                    assert dict(got) == {{"k": n + i, "v": 1}}
                    assert t.create_object("testing.TestObjectBase", v_i64=n).add_i64(i) == n + i
            except Exception as error:  # noqa: BLE001
                errors.append(error)

        threads = [threading.Thread(target=work, args=(1000 * k,)) for k in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(errors)
    """)
    assert out.strip() == "[]"
