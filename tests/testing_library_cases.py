"""Calls into the testing library, run under upstream and each front end and compared.

``SETUP`` binds ``t`` (the front end's ``testing`` package), ``g``
(``get_global_func``), ``setf`` (assign a field, read it back) and ``attr``
(a type attribute of a type key). Objects are compared through ``repr``,
which prints their reflected fields.
"""

from __future__ import annotations

from typing import List, Tuple

SETUP = """
import importlib
t = importlib.import_module(api.__name__ + ".testing")
g = api.get_global_func
if api.__name__ == "tvm_ffi":
    from tvm_ffi.core import _lookup_type_attr as _lookup
    from tvm_ffi.core import _object_type_key_to_index as _index
else:
    _lookup = importlib.import_module(api.__name__ + ".reflection").lookup_type_attr
    _index = importlib.import_module(api.__name__ + ".type_info").type_key_to_index

def attr(type_key, name):
    return _lookup(_index(type_key), name)

def setf(obj, name, value):
    setattr(obj, name, value)
    return getattr(obj, name)

def base(**fields):
    return t.create_object("testing.TestObjectBase", **fields)

x = np.arange(4, dtype="float32")
"""


def _calls(prefix: str, function: str, arguments: List[str]) -> List[Tuple[str, str]]:
    return [(f"{prefix}[{argument}]", f'g("testing.{function}")({argument})')
            for argument in arguments]


CASES: List[Tuple[str, str]] = [
    # ---- plain functions
    ("add_one", "t.add_one(41)"),
    *_calls("add_one", "add_one", ["True", "2**40", "'x'", "1.5", "", "1, 2"]),
    ("nop", 'g("testing.nop")(1, "a", None)'),
    ("echo", 'g("testing.echo")("abc", 2)'),
    ("echo-object", 'repr(g("testing.echo")(t.TestIntPair(1, 2)))'),
    ("apply", 'g("testing.apply")(lambda a, b: a * b, 6, 7)'),
    ("apply-not-function", 'g("testing.apply")(1, 2)'),
    ("apply-error", 'g("testing.apply")(g("testing.test_raise_error"), "TypeError", "boom")'),
    ("raise", 'g("testing.test_raise_error")("ValueError", "error XYZ")'),
    ("raise-other-kind", 'g("testing.test_raise_error")("MyKind", "msg")'),
    ("raise-bad-argument", 'g("testing.test_raise_error")(1, "x")'),
    ("raise-backtrace", """
try:
    g("testing.test_raise_error")("ValueError", "m")
except ValueError as e:
    result = "TestRaiseError" in e.__tvm_ffi_error__.backtrace
"""),
    ("use-count", "g('testing.object_use_count')(api.Array([1]))"),
    ("use-count-held", """
b = base()
holder = t.create_object("testing.TestObjectPtrHolder", value=b)
result = [g("testing.object_use_count")(b)]
del holder
result.append(g("testing.object_use_count")(b))
"""),
    *_calls("use-count", "object_use_count", ["1", "None"]),
    ("system-lib", 'api.system_lib("testing.")["add_one"](5)'),
    ("check-signal", 'g("testing.run_check_signal")(0)'),
    ("c-symbol", 'isinstance(g("testing.get_add_one_c_symbol")(), int)'),
    ("optional-tensor", '[g("testing.optional_tensor_view_has_value")(v) for v in (None, x)]'),
    ("optional-tensor-bad", 'g("testing.optional_tensor_view_has_value")(1)'),
    # ---- tensors inside containers
    *[(name, f'g("testing.{name}")(x)') for name in (
        "make_array_with_tensor", "make_nested_array_with_tensor", "make_map_with_tensor",
        "make_dict_with_tensor", "make_empty_array_with_tensor_input")],
    ("make_array_with_mixed", 'g("testing.make_array_with_mixed")(x, 5)'),
    ("make_list_with_tensor", 'g("testing.make_list_with_tensor")(x, 3)'),
    ("make_nested_map_with_tensor", 'g("testing.make_nested_map_with_tensor")(x, x)'),
    ("make_array_with_tensor-bad", 'g("testing.make_array_with_tensor")(1)'),
    # ---- schema fixtures: conversions and their errors
    *_calls("arr_int", "schema_id_arr_int", [
        "[1, True]", "[1, 'a']", "api.List(['a'])", "api.List([1, 2])", "1", "[1.0]", "None"]),
    ("arr_int-same", "(lambda a: g('testing.schema_id_arr_int')(a).same_as(a))(api.Array([1]))"),
    ("list_int-same", "(lambda a: g('testing.schema_id_list_int')(a).same_as(a))(api.List([1]))"),
    *_calls("list_int", "schema_id_list_int", ["api.Array([10, 20])", "api.Array(['n'])"]),
    *_calls("arr_str", "schema_id_arr_str", ["[1]", "api.List(['abcdefghij', 'a'])"]),
    *_calls("list_str", "schema_id_list_str", ["api.Array(['a', 'b'])"]),
    *_calls("arr_obj", "schema_id_arr_obj", ["['ab']", "[None]"]),
    *_calls("list_obj", "schema_id_list_obj", ["api.List(['ab'])"]),
    *_calls("arr", "schema_id_arr", ["1", "api.List([1])", "[1, 'a']"]),
    *_calls("map_str_int", "schema_id_map_str_int", [
        "{'a': 'b'}", "{1: 2}", "{'a': True}", "api.Dict({'a': 1})"]),
    *_calls("map_str_str", "schema_id_map_str_str", ["{'a': 'b'}"]),
    *_calls("map_str_obj", "schema_id_map_str_obj", ["{'a': 1}"]),
    *_calls("map", "schema_id_map", ["1", "api.Dict({1: 2})", "{1: 2}"]),
    *_calls("dict_str_int", "schema_id_dict_str_int", ["api.Map({'a': 1})", "{'a': 'x'}"]),
    *_calls("dict_str_str", "schema_id_dict_str_str", ["{'a': 'b'}"]),
    *_calls("int", "schema_id_int", ["3", "'3'"]),
    *_calls("float", "schema_id_float", ["1", "True", "'a'"]),
    *_calls("bool", "schema_id_bool", ["1", "2", "1.0"]),
    *_calls("device", "schema_id_device", [
        "'cuda:1'", "'cpu'", "'metal:2 extra'", "'bogus:x'", "'cuda:'", "1",
        "api.device('cuda', 3)"]),
    *_calls("dtype", "schema_id_dtype", ["'float32'", "'int8x4'", "'bogus'", "1"]),
    *_calls("string", "schema_id_string", ["'abcdefghijk'", "b'x'", "1"]),
    *_calls("bytes", "schema_id_bytes", ["b'abcdefghij'", "bytearray(b'xy')", "'x'"]),
    *_calls("func", "schema_id_func", ["1"]),
    ("func-callable", 'g("testing.schema_id_func")(lambda: 7)()'),
    *_calls("func_typed", "schema_id_func_typed", ["1"]),
    *_calls("any", "schema_id_any", ["1", "'s'", "None", "x"]),
    *_calls("object", "schema_id_object", ["1", "None", "'ab'", "'a long string value'"]),
    *_calls("opt_int", "schema_id_opt_int", ["None", "True", "'a'"]),
    *_calls("opt_str", "schema_id_opt_str", ["1", "'abcdefghijkl'"]),
    *_calls("opt_obj", "schema_id_opt_obj", ["1", "None"]),
    *_calls("variant", "schema_id_variant_int_str", ["1.5", "'x'", "True", "None"]),
    *_calls("variant_mix", "schema_variant_mix", ["[1, 'a']", "[1]", "api.List([2])", "'s'"]),
    *_calls("arr_map_opt", "schema_arr_map_opt", [
        "[1, None, 3], {'a': [1]}, 'k'", "[1, None], {'k': [7]}, 'k'", "[1], {'a': [1]}, None",
        "[1, 'x'], {}, None", "[1], {'a': [1, 'z']}, 'q'"]),
    *_calls("dltensor", "schema_id_dltensor", ["x", "1"]),
    *_calls("tensor", "schema_id_tensor", ["x", "1"]),
    *_calls("tensor_view_input", "schema_tensor_view_input", ["x", "1"]),
    *_calls("no_args", "schema_no_args", ["", "1"]),
    *_calls("no_return", "schema_no_return", ["1"]),
    *_calls("no_args_no_return", "schema_no_args_no_return", [""]),
    *_calls("packed", "schema_packed", ["1, 2"]),
    # ---- objects made by their constructors
    ("pair", "(lambda p: (repr(p), p.a, p.b, p.sum(), g('testing.TestIntPairSum')(p)))"
             "(t.TestIntPair(3, 4))"),
    ("pair-arity", "t.TestIntPair(1)"),
    ("pair-type", "t.TestIntPair('a', 1)"),
    ("pair-sum-bad", 'g("testing.TestIntPairSum")(base())'),
    ("noncopyable", "t.TestNonCopyable(5).value"),
    ("compare", "repr(t.TestCompare(1, 'a', 2))"),
    ("hash", "repr(t.TestHash(1, 'a', 2))"),
    ("custom-hash", "repr(t.TestCustomHash(1, 'a'))"),
    ("unregistered", "(lambda o: (repr(o), o.v1, o.v2, o.get_v1_plus_one(), o.get_v2_plus_two()))"
                     "(t.make_unregistered_object())"),
    ("visit-graph", '[repr(g("testing.make_visit_region_graph")(b)) for b in (False, True)]'),
    ("enum-variant", "[repr(g('testing.enum_variant_get')(n)) for n in ('Alpha', 'Beta')]"),
    ("enum-variant-fields", "(lambda e: (e._int_index, e._str_index))"
                            "(g('testing.enum_variant_get')('Beta'))"),
    ("enum-variant-missing", "g('testing.enum_variant_get')('Gamma')"),
    ("enum-state", "repr(attr('testing.TestEnumVariant', '__ffi_enum__'))"),
    # ---- objects made by reflection, and their fields
    ("create-base", "(lambda o: (o.v_i64, o.v_f64, o.v_str, o.add_i64(4)))(base(v_i64=3))"),
    ("create-base-long-str", "base(v_str='x' * 20).v_str"),
    *[(f"create-base-bad-{name}", f"base({name}={value})")
      for name, value in (("v_i64", "'x'"), ("v_f64", "'x'"), ("v_str", "1"), ("nope", "1"))],
    ("create-derived", "repr(t.create_object('testing.TestObjectDerived', v_map={1: 2}, "
                       "v_array=[1]))"),
    ("create-derived-missing", "t.create_object('testing.TestObjectDerived')"),
    ("create-schema", "t.create_object('testing.SchemaAllTypes')"),
    ("create-holder", "t.create_object('testing.TestObjectPtrHolder')"),
    *[(f"create-holder-{label}", f"t.create_object('testing.TestObjectPtrHolder', value={value})")
      for label, value in (("none", "None"), ("pair", "t.TestIntPair(1, 2)"))],
    ("create-holder-derived", "repr(t.create_object('testing.TestObjectPtrHolder', "
                              "value=t.create_object('testing.TestObjectDerived', v_map={}, "
                              "v_array=[])))"),
    ("create-edges", "(lambda d: (d.v_any, d.v_obj))"
                     "(t.create_object('testing.TestDeepCopyEdges', v_any=1, v_obj=None))"),
    ("create-edges-bad", "t.create_object('testing.TestDeepCopyEdges', v_any=1, v_obj=1)"),
    ("create-edges-missing", "t.create_object('testing.TestDeepCopyEdges')"),
    *[(f"set-v_i64-{value}", f"setf(base(), 'v_i64', {value})") for value in ("'x'", "1.5", "True")],
    *[(f"set-v_str-{value}", f"setf(base(), 'v_str', {value})") for value in ("1", "'y' * 30")],
    *[(f"set-{name}-{value}", "repr(setf(t.create_object('testing.TestObjectDerived', v_map={}, "
                              f"v_array=[]), '{name}', {value}))")
      for name, value in (("v_array", "api.List([1])"), ("v_array", "None"), ("v_map", "1"),
                          ("v_map", "api.Dict({1: 2})"))],
    # ---- type attributes
    *[(f"new-{key}", f"repr(attr('testing.{key}', '__ffi_new__')())") for key in (
        "TestObjectDerived", "TestCxxAutoInitAllInitOff", "TestCxxInitSubset", "TestVisitRegions",
        "TestCxxClassDerivedDerived", "TestCompare")],
    ("final", "[attr('testing.' + k, '__ffi_type_final__') for k in ('TestIntPair', "
              "'TestObjectBase', 'TestVisitHook', 'TestNonCopyable', 'TestCxxIntEnum')]"),
    ("shallow-copy", "(lambda p, c: (repr(c), c.same_as(p)))(*(lambda p: (p, attr("
                     "'testing.TestIntPair', '__ffi_shallow_copy__')(p)))(t.TestIntPair(1, 2)))"),
    ("shallow-copy-bad", "attr('testing.TestIntPair', '__ffi_shallow_copy__')(base())"),
    ("shallow-copy-refs", """
b = base()
holder = t.create_object("testing.TestObjectPtrHolder", value=b)
copy = attr("testing.TestObjectPtrHolder", "__ffi_shallow_copy__")(holder)
result = [g("testing.object_use_count")(b), copy.value.same_as(b)]
del copy
result.append(g("testing.object_use_count")(b))
"""),
    ("convert", "repr(attr('testing.TestIntPair', '__ffi_convert__')(t.TestIntPair(1, 2)))"),
    *[(f"convert-{value}", f"attr('testing.TestIntPair', '__ffi_convert__')({value})")
      for value in ("1", "None")],
    ("hook-hash", "attr('testing.TestCustomHash', '__ffi_hash__')"
                  "(t.TestCustomHash(3, 'a'), lambda v: v * 100)"),
    ("hook-hash-bad-result", "attr('testing.TestCustomHash', '__ffi_hash__')"
                             "(t.TestCustomHash(3, 'a'), lambda v: 'x')"),
    ("hook-eq", "attr('testing.TestCustomCompare', '__ffi_eq__')(t.TestCustomCompare(3, 'a'), "
                "t.TestCustomCompare(3, 'b'), lambda a, b: a == b)"),
    ("hook-compare", "attr('testing.TestCustomCompare', '__ffi_compare__')("
                     "t.TestCustomCompare(3, 'a'), t.TestCustomCompare(4, 'b'), lambda a, b: -1)"),
    # ---- the hooks at work in recursive hashing and comparison
    ("custom-hash-ignores-label", "g('ffi.RecursiveHash')(t.TestCustomHash(1, 'a')) == "
                                  "g('ffi.RecursiveHash')(t.TestCustomHash(1, 'b'))"),
    ("custom-compare", "[g('ffi.Recursive' + op)(t.TestCustomCompare(1, 'a'), "
                       "t.TestCustomCompare(2, 'a')) for op in ('Eq', 'Lt', 'Gt')]"),
    ("eq-without-hash", "g('ffi.RecursiveHash')(t.TestEqWithoutHash(1, 'a'))"),
    ("eq-without-hash-eq", "g('ffi.RecursiveEq')(t.TestEqWithoutHash(1, 'a'), "
                           "t.TestEqWithoutHash(1, 'b'))"),
    ("compare-off", "g('ffi.RecursiveEq')(t.TestCompare(1, 'a', 2), t.TestCompare(1, 'a', 3))"),
    ("hash-off", "g('ffi.RecursiveHash')(t.TestHash(1, 'a', 2)) == "
                 "g('ffi.RecursiveHash')(t.TestHash(1, 'a', 3))"),
]
