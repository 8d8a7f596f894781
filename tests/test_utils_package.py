"""``utils`` (upstream's ``tvm_ffi.utils``): the file lock, keyword-argument wrappers and
CUBIN embedding. Pure Python over no core, so one front end (fast) runs them, each
case in its own interpreter.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from subprocess_utils import run_python


def _run(code: str) -> dict:
    return json.loads(run_python("import json\n" + textwrap.dedent(code)).strip().splitlines()[-1])


def test_file_lock_excludes_other_holders(tmp_path):
    lock_path = tmp_path / "x.lock"
    counter = tmp_path / "counter"
    counter.write_text("0")
    worker = textwrap.dedent(f"""
        import time
        from tvm_ffi_fast.utils.lockfile import FileLock
        with FileLock({str(lock_path)!r}):
            value = int(open({str(counter)!r}).read())
            time.sleep(0.05)
            open({str(counter)!r}, "w").write(str(value + 1))
    """)
    workers = [subprocess.Popen([sys.executable, "-c", worker]) for _ in range(4)]
    assert [w.wait(timeout=120) for w in workers] == [0, 0, 0, 0]
    assert counter.read_text() == "4"
    result = _run(f"""
        from tvm_ffi_fast.utils import FileLock
        first, second = FileLock({str(lock_path)!r}), FileLock({str(lock_path)!r})
        taken = [first.acquire(), first.acquire(), second.acquire()]
        try:
            second.blocking_acquire(timeout=0.2, poll_interval=0.05)
        except TimeoutError as e:
            timeout = "after 0.2 seconds" in str(e)
        first.release()
        first.release()
        taken.append(second.acquire())
        try:
            second.blocking_acquire()
        except RuntimeError as e:
            held = str(e)
        second.release()
        try:
            with FileLock({str(lock_path)!r}) as lock:
                inside = lock._file_descriptor is not None
                raise ValueError("inside")
        except ValueError:
            pass
        print(json.dumps({{"taken": taken, "timeout": timeout, "held": held, "inside": inside,
                          "free_after_error": FileLock({str(lock_path)!r}).acquire()}}))
    """)
    assert result == {"taken": [True, False, False, True], "timeout": True,
                      "held": "Lock is already held by this instance.", "inside": True,
                      "free_after_error": True}


def test_kwargs_wrapper_signatures_defaults_and_validation():
    result = _run("""
        import inspect
        from tvm_ffi_fast.utils.kwargs_wrapper import (make_kwargs_wrapper,
                                                       make_kwargs_wrapper_from_signature)
        target = lambda *args: args
        shared = [1]
        w = make_kwargs_wrapper(target, ["a", "b", "c"], arg_defaults=(shared, True),
                                kwonly_names=["d", "e"], kwonly_defaults={"e": "x"})
        calls = [w(1, d=4), w(1, 2, 3, d=4, e=5), w(a=0, c=None, d=1)]
        def proto(x, y=2, *, z):
            "Doc of proto."
        w2 = make_kwargs_wrapper_from_signature(target, inspect.signature(proto), proto,
                                                exclude_arg_names=["y", "absent"])
        errors = []
        for args, kwargs in [((["a", "a"],), {}), ((["a"],), {"kwonly_names": ["b", "b"]}),
                             ((["a", 1],), {}), ((["a-b"],), {}), ((["if"],), {}),
                             ((["a"],), {"arg_defaults": [1]}), ((["a"],), {"arg_defaults": (1, 2)}),
                             ((["a"],), {"kwonly_names": ["a"]}),
                             ((["a"],), {"kwonly_names": ["b"], "kwonly_defaults": {"c": 1}}),
                             ((["__i_target_func"],), {})]:
            try:
                make_kwargs_wrapper(target, *args, **kwargs)
            except (TypeError, ValueError) as e:
                errors.append([type(e).__name__, str(e).split(":")[0]])
        P = inspect.Parameter
        for params in ([P("a", P.POSITIONAL_OR_KEYWORD), P("args", P.VAR_POSITIONAL)],
                       [P("a", P.POSITIONAL_OR_KEYWORD), P("kw", P.VAR_KEYWORD)],
                       [P("a", P.POSITIONAL_OR_KEYWORD, default=1),
                        P("b", P.POSITIONAL_OR_KEYWORD)]):
            # (the last is no valid Python signature: built unchecked)
            signature = inspect.Signature(params, __validate_parameters__=False)
            try:
                make_kwargs_wrapper_from_signature(target, signature)
            except ValueError as e:
                errors.append(["ValueError", str(e)])
        print(json.dumps({"calls": [list(c) for c in calls], "same_default": w(1, d=0)[1] is shared,
                          "signature": str(inspect.signature(w)),
                          "w2": [list(w2(1, z=3)), w2.__name__, w2.__doc__, str(inspect.signature(w2))],
                          "errors": errors}))
    """)
    assert result["calls"] == [[1, [1], True, 4, "x"], [1, 2, 3, 4, 5], [0, [1], None, 1, "x"]]
    assert result["same_default"] is True
    assert result["w2"][:3] == [[1, 3], "proto", "Doc of proto."]
    assert [e[0] for e in result["errors"]] == ["ValueError", "ValueError", "TypeError",
                                                "ValueError", "ValueError", "TypeError",
                                                "ValueError", "ValueError", "ValueError",
                                                "ValueError", "ValueError", "ValueError",
                                                "ValueError"]
    messages = [e[1] for e in result["errors"]]
    assert messages[0].startswith("Duplicate argument names found in")
    assert messages[9].startswith("Argument names conflict with internal names")
    assert messages[10:] == ["*args not supported in wrapper generation",
                             "**kwargs not supported in wrapper generation",
                             "Required positional parameter 'b' cannot follow parameters "
                             "with defaults"]


@pytest.mark.skipif(any(shutil.which(t) is None for t in ("cc", "ld", "objcopy", "nm")),
                    reason="needs a C compiler and GNU binutils")
def test_embed_cubin_puts_the_bytes_between_local_symbols(tmp_path):
    source = tmp_path / "use.c"
    source.write_text("extern const unsigned char __tvm_ffi__cubin_k[];\n"
                      "extern const unsigned char __tvm_ffi__cubin_k_end[];\n"
                      "long cubin_size(void) { return __tvm_ffi__cubin_k_end - "
                      "__tvm_ffi__cubin_k; }\n")
    subprocess.run(["cc", "-c", "-fPIC", "-o", str(tmp_path / "use.o"), str(source)], check=True)
    (tmp_path / "k.cubin").write_bytes(b"CUBIN" * 20)
    done = subprocess.run([sys.executable, "-m", "tvm_ffi_fast.utils.embed_cubin",
                           "--input-obj", str(tmp_path / "use.o"), "--cubin",
                           str(tmp_path / "k.cubin"), "--name", "k",
                           "--output-obj", str(tmp_path / "out" / "new.o")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    symbols = subprocess.run(["nm", str(tmp_path / "out" / "new.o")], capture_output=True,
                             text=True).stdout
    assert " r __tvm_ffi__cubin_k\n" in symbols or " d __tvm_ffi__cubin_k\n" in symbols
    subprocess.run(["cc", "-shared", "-o", str(tmp_path / "libk.so"),
                    str(tmp_path / "out" / "new.o")], check=True)
    size = run_python(f"import ctypes; print(ctypes.CDLL({str(tmp_path / 'libk.so')!r})"
                      ".cubin_size())")
    assert size.strip() == "100"
    missing = subprocess.run([sys.executable, "-m", "tvm_ffi_fast.utils.embed_cubin",
                              "--input-obj", str(tmp_path / "none.o"), "--cubin",
                              str(tmp_path / "k.cubin"), "--name", "k", "--output-obj",
                              str(tmp_path / "x.o")], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "Input object file not found" in missing.stderr
