"""``Function.release_gil``, upstream's per-function switch, in every front end.

A call releases the GIL around the kernel by default, as upstream's does; a Function whose
``release_gil`` is set to False keeps it (the two GIL hand-overs are most of a scalar call's
cost: benchmarks/bench_limits.py, the "fast-held" column), and ``TVM_FFI_RELEASE_GIL_BY_DEFAULT=0``
makes that the default for new Functions, as upstream reads it. What holding it must not give
back: a Python callback from the kernel still runs, errors still arrive as exceptions, and a
call whose List argument another thread's call holds still waits for it without the GIL (a
thread never waits for a container lock with the GIL: holds.c, and ``_hold_containers`` in
the reference). The reference keeps the GIL through a ``PYFUNCTYPE`` pointer; the cffi core
records the switch only (cffi releases the GIL around every call).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from frontend_harness import build_corpus_kernels
from subprocess_utils import run_python

SCRIPT = r'''
import json, threading, time
import {module} as api

callbacks = api.load_module({callbacks!r})
containers = api.load_module({containers!r})
out = {{}}
call1, append = callbacks.call1, containers.list_append
out["default"] = call1.release_gil
call1.release_gil = False
append.release_gil = False
out["set"] = [call1.release_gil, append.release_gil]
out["callback"] = call1(lambda x: x + 1, 41)
try:
    callbacks.throw_value_error.release_gil = False
    callbacks.throw_value_error(7)
except ValueError as error:
    out["error"] = str(error)

# Thread B's call holds lst (a List argument) while its Python callback sleeps without the GIL;
# thread A appends to lst through a Function holding the GIL: A must wait for the lock with the
# GIL released, or B's callback never gets it back.
lst = api.List([1])
started = threading.Event()

def slow(x):
    started.set()
    time.sleep(0.3)
    return x

def b():
    callbacks.call1(slow, lst)

thread = threading.Thread(target=b)
thread.start()
started.wait()
append(lst, 2)
thread.join()
out["list"] = list(lst)
print(json.dumps(out))
'''


#: front end -> (its module, the environment that picks it)
FRONT_ENDS = {"fast": ("tvm_ffi_fast", {}), "ref": ("tvm_ffi_ref", {}),
              "fast-cffi": ("tvm_ffi_fast", {"TVM_FFI_FAST_CORE": "cffi"})}


@pytest.mark.parametrize("frontend", list(FRONT_ENDS))
def test_release_gil_off_keeps_callbacks_errors_and_container_locks(kernels, frontend):
    module, env = FRONT_ENDS[frontend]
    libs = build_corpus_kernels(kernels, ["callbacks", "containers"])
    out = json.loads(run_python(SCRIPT.format(module=module, **libs), timeout=60, env=env))
    assert out["default"] is True
    assert out["set"] == [False, False]
    assert out["callback"] == 42
    assert "value 7 is not allowed" in out["error"]
    assert out["list"] == [1, 2]


def test_release_gil_default_follows_the_environment_as_upstream_does():
    seen = {}
    for value in ("0", "1", None):
        env = dict(os.environ)
        env.pop("TVM_FFI_RELEASE_GIL_BY_DEFAULT", None)
        if value is not None:
            env["TVM_FFI_RELEASE_GIL_BY_DEFAULT"] = value
        for name, (package, picks) in [*FRONT_ENDS.items(), ("upstream", ("tvm_ffi", {}))]:
            code = (f"import {package} as api; f = api.get_global_func('ffi.String');"
                    "print(f.release_gil, f('ab'))")
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=dict(env, **picks), timeout=60)
            assert done.returncode == 0, done.stderr
            seen[value, name] = done.stdout.split()
    for value, held in (("0", "False"), ("1", "True"), (None, "True")):
        assert {seen[value, name][0] for name in [*FRONT_ENDS, "upstream"]} == {held}, seen
        assert all(seen[value, name][1] == "ab" for name in [*FRONT_ENDS, "upstream"])
