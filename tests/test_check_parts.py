"""The checker's parts, one by one: signatures read from error text, guard pages,
constructors of a library's own types, how a call's outcome is counted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tvm_ffi_check import discover, guard, objects
from tvm_ffi_check.function_check import outcome_kind

# ------------------------------------------------------------ error text

UPSTREAM = ("Mismatched number of arguments when calling: `f(0: int, 1: str, 2: Array<int>, "
            "3: Map<str, Optional<float>>, 4: (0: int) -> int, 5: DLTensor*, 6: ffi.Tensor, "
            "7: Variant<int, str>, 8: my.Thing) -> void`. Expected 9 but got 0 arguments")
TVM = ("Expected 3 arguments when calling:\n  `vadd(A: Tensor([T.int64(16), n], float32), "
       "n: int32, x: float32)`")


def test_an_upstream_typed_functions_error_names_its_signature():
    signature = discover.signature_from_message(UPSTREAM)
    assert signature.source == "error text"
    assert signature.describe() == (
        "(int, ffi.String, ffi.Array[int], ffi.Map[ffi.String, Optional[float]], ffi.Function, "
        "DLTensor*, ffi.Tensor, Variant[int, ffi.String], my.Thing) -> None")


def test_a_tvm_compiled_functions_error_names_shapes_and_dtypes():
    signature = discover.signature_from_message(TVM)
    assert signature.params[0] == {"type": "ffi.Tensor", "shape": [16, "n"], "dtype": "float32"}
    assert signature.params[1:] == [{"type": "int"}, {"type": "float"}]
    assert signature.text.startswith("vadd(A: Tensor(")


@pytest.mark.parametrize("message, arity", [
    (UPSTREAM, 9), (TVM, 3), ("add() takes 2 argument(s), got 0", 2),
    ("f: expected 4 arguments", 4), ("no count here", None)])
def test_the_argument_count_an_error_names(message, arity):
    assert discover.arity_from_message(message) == arity


def test_text_that_names_no_signature_gives_none():
    assert discover.signature_from_message("ValueError: bad value") is None
    assert discover.type_from_text("Weird<") is None


@pytest.mark.parametrize("kind, message, refused", [
    ("TypeError", "anything", True),
    ("ValueError", "Invalid A.shape[0] on argument #0 when calling:\n  `f(...)`", True),
    ("ValueError", "x must be positive", False),
    ("RuntimeError", "", False)])
def test_a_refusal_is_an_argument_check(kind, message, refused):
    assert discover.refused(kind, message) is refused


@pytest.mark.parametrize("answer, kind", [
    ({"outcome": ("result", ("int", 1))}, "returned"),
    ({"outcome": ("error", "TypeError", "Mismatched type")}, "refused TypeError"),
    ({"outcome": ("error", "ValueError", "no")}, "raised ValueError"),
    ({"outcome": ("interrupted",)}, "interrupted"),
    ({"unmade": "making x failed"}, "argument not made"),
    ({"crash": "killed by SIGSEGV"}, "crashed")])
def test_outcomes_are_counted_by_whether_the_body_ran(answer, kind):
    assert outcome_kind(answer) == kind


# ------------------------------------------------------------ guard pages


def test_guarded_data_ends_against_an_inaccessible_page():
    with guard.recording() as regions:
        guard.label("args[2]")
        data = guard.guarded_bytes(20, "tensor(int8[20])")
    (region,) = regions
    assert data.ctypes.data == region["start"] and region["end"] == region["start"] + 20
    assert region["end"] % guard.PAGE == 0  # flush against the guard
    data[:] = 7  # the data itself is usable
    fault = {"address": region["end"] + 3, "access": "read", "signal": int(signal.SIGSEGV)}
    message = guard.describe_fault(fault, regions)
    assert "out-of-bounds read of tensor(int8[20]) passed as args[2]" in message
    assert "byte offset 23, 3 byte(s) past its end" in message
    below = dict(fault, address=region["start"] - 8, access="write")
    assert "8 byte(s) before its start" in guard.describe_fault(below, regions)
    assert guard.describe_fault(dict(fault, address=region["start"] + 1), regions) is None


def test_touching_a_guard_page_kills_with_the_address_recorded():
    if guard.reporter_path() is None:
        pytest.fail("the fault reporter is not built: pip install -e .")
    script = textwrap.dedent("""
        import ctypes, os, sys
        from tvm_ffi_check import guard
        record = guard.SharedFaultRecord()
        record.clear()
        assert guard.install_reporter(record)
        data = guard.guarded_bytes(16, "x")
        pid = os.fork()
        if pid == 0:
            ctypes.c_char.from_address(data.ctypes.data + 16).value = b"!"  # one past the end
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        print(os.WTERMSIG(status), record.read()["address"] - data.ctypes.data,
              record.read()["access"])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    signo, offset, access = done.stdout.split()
    assert int(signo) == signal.SIGSEGV and int(offset) == 16, done.stderr
    assert access in ("write", "access")


# ------------------------------------------------------------ library objects


def _schema(ret, *params):
    return json.dumps({"type_schema": json.dumps(
        {"type": "ffi.Function", "named_args": {"return": [ret], "params": list(params)}})})


def test_an_object_is_made_by_its_constructor_first():
    kind = {"key": "my.Pair", "creatable": True, "fields": [], "methods": [
        {"name": "make", "static": True, "metadata": _schema({"type": "my.Pair"},
                                                              {"type": "int"})},
        {"name": "__ffi_init__", "static": True,
         "metadata": _schema({"type": "ffi.Object"}, {"type": "int"}, {"type": "int"})}]}
    made = objects.constructor(kind)
    assert made.via == "__ffi_init__" and made.params == ({"type": "int"}, {"type": "int"})
    kind["methods"].pop()
    assert objects.constructor(kind).via == "make"


def test_an_object_without_a_constructor_is_made_from_its_fields():
    field = {"name": "x", "metadata": json.dumps({"type_schema": '{"type":"int"}'}),
             "has_default": False}
    kind = {"key": "my.Point", "creatable": True, "methods": [], "fields": [
        field, {"name": "hidden", "metadata": "", "has_default": True}]}
    made = objects.constructor(kind)
    assert made.via == "" and made.fields == ("x",) and made.params == ({"type": "int"},)
    kind["fields"].append({"name": "y", "metadata": "", "has_default": False})
    assert objects.constructor(kind) is None  # a required field nobody can fill
    assert objects.constructor(dict(kind, fields=[field], creatable=False)) is None


def test_the_worker_never_imports_hypothesis():
    # Each forked child would otherwise pay for the import; the checker's side alone uses it.
    script = ("import sys; from tvm_ffi_check import _worker, objects, probe, repeat, guard, "
              "values, targets, deadline; print('hypothesis' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert done.stdout.strip() == "False", done.stderr
