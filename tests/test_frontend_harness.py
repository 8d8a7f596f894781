"""The front-end harness itself: normalization is exact, failures are contained.

If the harness blurred two different results together, or one crashing case
took the rest of the corpus down with it, the corpus comparisons would prove
little; these tests pin that down (against upstream, which exists today).
"""

from __future__ import annotations

import math
import types

import pytest

from frontend_harness import (
    ARR, F, I, NONE, PYDICT, PYLIST, PYTUPLE, RAISES, S, normalize, plain, run_frontend,
)


class _Nothing:
    """Stands in for every api class: no value is an instance of it."""


FAKE_API = types.SimpleNamespace(
    dtype=_Nothing, Device=_Nothing, Shape=_Nothing, List=_Nothing, Array=_Nothing, Dict=_Nothing,
    Map=_Nothing, Tensor=_Nothing, Function=_Nothing, Module=_Nothing, Object=_Nothing,
)


def norm(value):
    return normalize(value, FAKE_API)


def test_floats_compare_bit_for_bit():
    assert norm(0.0) != norm(-0.0)
    assert norm(float("nan")) == norm(float("nan")) == F(math.nan)
    assert norm(float("inf")) != norm(float("-inf"))
    assert norm(1.0) != norm(1)  # a float is not an int
    assert norm(5e-324) == F(5e-324) != F(0.0)


def test_bools_ints_and_none_stay_distinct():
    assert norm(True) != norm(1)
    assert norm(False) != norm(0) != norm(None)
    assert norm(2**100) == I(2**100)
    assert norm(None) == NONE


def test_str_and_bytes_stay_distinct():
    assert norm("ab") == S("ab") != norm(b"ab")
    assert norm("a\x00b") != norm("a")
    assert norm(bytearray(b"\x00")) == norm(b"\x00")


def test_python_containers_keep_kind_and_order():
    assert norm((1, 2)) == PYTUPLE(I(1), I(2)) != norm([1, 2])
    assert norm({"b": 1, "a": 2}) == PYDICT((S("b"), I(1)), (S("a"), I(2)))
    assert norm({"b": 1, "a": 2}) != norm({"a": 2, "b": 1})


def test_exceptions_and_unknown_objects():
    assert norm(ValueError("first\nsecond")) == ["exception", "ValueError", "first"]
    assert norm(object()) == ["pyobject", "object"]


def test_plain_builds_scalars_only():
    assert plain(1.5) == F(1.5) and plain(None) == NONE and plain(True) != plain(1)
    with pytest.raises(TypeError):
        plain([1])


def test_upstream_run_contains_crashes_and_hangs():
    cases = [
        ("before", "1 + 1"),
        ("crash", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"),
        ("after_crash", "api.convert([1, 'x'])"),
        ("hang", "import time\ntime.sleep(30)"),
        ("after_hang", "api.convert({'b': 1, 'a': 2})"),
        ("raises", "raise KeyError('k')"),
        ("no_result", "x = 1"),
        ("exception_value", "ValueError('v')"),
        ("nan_and_neg_zero", "(float('nan'), -0.0, 0.0)"),
    ]
    # upstream symbolizes a backtrace on SIGSEGV, which takes seconds on a loaded machine
    results = run_frontend("upstream", cases, setup="import math", case_timeout=8)
    assert results["before"] == I(2)
    assert results["crash"][:2] == ["crash", "exit status -11"]
    assert results["after_crash"] == ARR(I(1), S("x"))
    assert results["hang"][0] == "crash" and "Timeout" in results["hang"][2]
    assert results["after_hang"] == ["map", [[S("b"), I(1)], [S("a"), I(2)]]]
    assert results["raises"] == RAISES("KeyError", "'k'")
    assert results["no_result"][0] == "harness-error"
    assert results["exception_value"] == ["exception", "ValueError", "v"]
    assert results["nan_and_neg_zero"] == PYTUPLE(F(math.nan), F(-0.0), F(0.0))
    assert len(results) == len(cases)


def test_setup_failure_marks_every_case():
    results = run_frontend("upstream", [("a", "1"), ("b", "2")], setup="raise ImportError('no way')")
    assert results["a"][:3] == ["setup-error", "ImportError", "no way"]
    assert results["b"][:3] == ["setup-error", "ImportError", "no way"]


def test_unknown_frontend_and_duplicate_ids_are_refused():
    with pytest.raises(ValueError):
        run_frontend("tvm_ffi", [("a", "1")])
    with pytest.raises(ValueError):
        run_frontend("upstream", [("a", "1"), ("a", "2")])


def test_missing_frontend_module_is_a_setup_error(monkeypatch):
    import frontend_harness

    monkeypatch.setitem(frontend_harness.FRONTEND_IMPORTS, "missing", "import tvm_ffi_does_not_exist as api")
    results = run_frontend("missing", [("a", "1")])
    assert results["a"][:2] == ["setup-error", "ModuleNotFoundError"]


def test_normalize_under_upstream_tags_every_ffi_kind():
    """The api-class checks in normalize fire for upstream's own classes."""
    results = run_frontend("upstream", [
        ("kinds", "[api.dtype('int8'), api.device('cpu'), api.Shape((1,)), api.List([1]), api.Array([1]),"
                  " api.Dict({1: 2}), api.Map({1: 2}), api.convert(lambda: 0), api.convert('a long str value'),"
                  " np.arange(2, dtype=np.int32), api.from_dlpack(np.zeros(1))]"),
    ])
    tags = [item[0] for item in results["kinds"][1]]
    assert tags == ["dtype", "device", "shape", "list", "array", "dict", "map", "function", "str", "ndarray", "tensor"]
    assert results["kinds"][1][9] == ["ndarray", "int32", [2], [I(0), I(1)]]
    assert PYLIST() == ["pylist", []]
