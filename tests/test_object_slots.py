"""Object subclasses carry no instance ``__dict__`` unless they ask for one, in every core.

Upstream's ``Object`` gives a subclass that declares no ``__slots__`` an empty
one: a wrapper costs no dictionary, and a misspelt attribute assignment raises
``AttributeError`` instead of creating an attribute the object never sees.
Ours does the same through ``tvm_ffi_api/object_meta.py``: the reference's and
the cffi core's ``Object`` are Python classes made with that metaclass; the
compiled core's is an extension type given it at import. Each core runs in
its own interpreter.
"""

from __future__ import annotations

import json

import pytest

from subprocess_utils import run_python

#: How each core is imported (the cffi core is the one PyPy runs; CPython can run it too).
CORES = {
    "ref": "import tvm_ffi_ref as api",
    "fast": "import tvm_ffi_fast as api",
    "fast-cffi": "import os\nos.environ['TVM_FFI_FAST_CORE'] = 'cffi'\nimport tvm_ffi_fast as api",
}

CHECKS = """
import abc, collections.abc, copy, json, pickle, sys
import {package}.testing as testing

def typo_raises(obj):
    try:
        obj.v_i64_typo = 1
    except AttributeError:
        return True
    return False

pair = testing.TestIntPair(1, 2)
derived = testing.create_object("testing.TestObjectDerived", v_i64=20,
                                v_map=api.convert({{"a": 1}}), v_array=api.convert([1, 2]))
fallback = testing.make_unregistered_object()   # a class made for a type nobody registered

class Plain(api.Object):                 # a user subclass that declares nothing
    pass

class Derived(Plain):                    # and one of it
    def method(self):
        return 1

class WithDict(api.Object):              # a class that asks for instance attributes
    __slots__ = ("__dict__",)

class Both(api.Object, collections.abc.Hashable):   # an ABC mixed in: no metaclass conflict
    def __hash__(self):
        return 0

with_dict = WithDict()
with_dict.note = "kept"
array = api.Array([1, 2])
print(json.dumps({{
    "slots": [c.__dict__.get("__slots__") for c in
              (testing.TestIntPair, testing.TestObjectDerived, Plain, Derived, Both, type(fallback))],
    "no_dict_entry": ["__dict__" not in c.__dict__ for c in (testing.TestIntPair, Plain, Derived)],
    "instances_without_dict": [not hasattr(o, "__dict__") for o in (pair, derived, fallback,
                                                                   array, Plain(), Derived())],
    "typo_raises": [typo_raises(o) for o in (pair, derived, Plain(), Derived())],
    "field_write_still_works": (setattr(derived, "v_i64", 21), derived.v_i64)[1],
    "with_dict": [WithDict.__slots__, with_dict.note],
    "module_has_dict": "__dict__" in api.Module.__dict__.get("__slots__", ()),
    "isinstance": [isinstance(pair, api.Object), issubclass(api.Function, api.core.CObject),
                   isinstance(Both(), collections.abc.Hashable), isinstance(array, api.Object)],
    "metaclass_is_abc": isinstance(api.Object, abc.ABCMeta),
    "copies": [copy.copy(pair).a, pickle.loads(pickle.dumps(pair)).b,
               list(copy.deepcopy(array)), list(pickle.loads(pickle.dumps(array)))],
    "weakref": __import__("weakref").ref(pair)() is pair,
}}))
"""


@pytest.mark.parametrize("core", sorted(CORES))
def test_subclasses_get_empty_slots(core):
    package = "tvm_ffi_ref" if core == "ref" else "tvm_ffi_fast"
    out = run_python(CORES[core] + "\n" + CHECKS.format(package=package))
    result = json.loads(out.strip().splitlines()[-1])
    assert result["slots"] == [[]] * 6
    assert result["no_dict_entry"] == [True] * 3
    assert result["instances_without_dict"] == [True] * 6
    assert result["typo_raises"] == [True] * 4
    assert result["field_write_still_works"] == 21
    assert result["with_dict"] == [["__dict__"], "kept"]
    assert result["module_has_dict"] is True
    assert result["isinstance"] == [True] * 4
    assert result["metaclass_is_abc"] is True
    assert result["copies"] == [1, 2, [1, 2], [1, 2]]
    assert result["weakref"] is True

