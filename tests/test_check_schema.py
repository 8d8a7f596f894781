"""Type schemas as upstream writes them, and the argument values the checker makes from them."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tvm_ffi_check import schema as schemas
from tvm_ffi_check.values import TensorArg, format_call


def t(key, *args):
    return {"type": key, "args": list(args)} if args else {"type": key}


def upstream_metadata(ret, *params):
    """``__tvm_ffi__metadata_<name>``'s text, as TVM_FFI_DLL_EXPORT_TYPED_FUNC writes it."""
    schema = {"type": "ffi.Function", "named_args": {"return": [ret], "params": list(params)}}
    return json.dumps({"type_schema": json.dumps(schema, separators=(",", ":"))})


def test_upstreams_metadata_gives_the_signature():
    signature = schemas.parse_metadata(upstream_metadata(
        t("int"), t("ffi.Array", t("int")), t("Optional", t("ffi.String"))))
    assert signature.describe() == "(ffi.Array[int], Optional[ffi.String]) -> int"
    assert len(signature.params) == 2


def test_the_schema_may_also_be_an_object_or_positional():
    text = json.dumps({"type_schema": {"type": "ffi.Function",
                                       "args": [t("float"), t("float"), t("bool")]}})
    assert schemas.parse_metadata(text).describe() == "(float, bool) -> float"


def test_metadata_without_a_schema_has_no_signature():
    assert schemas.parse_metadata('{"doc": "no schema here"}') is None


@pytest.mark.parametrize("text, complaint", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({"type_schema": "{oops"}), "type_schema is not JSON"),
    (json.dumps({"type_schema": json.dumps(t("int"))}), "not an ffi.Function"),
    (json.dumps({"type_schema": {"type": "ffi.Function"}}), "without parameters"),
    (json.dumps({"type_schema": {"type": "ffi.Function",
                                 "named_args": {"return": [t("int")], "params": [7]}}}),
     "not a type schema"),
])
def test_bad_metadata_is_refused_with_a_reason(text, complaint):
    with pytest.raises(schemas.SchemaError, match=complaint):
        schemas.parse_metadata(text)


#: Every type key upstream's headers write (and the C++-only ones), with a parameter.
EVERY_TYPE = [
    t("None"), t("bool"), t("int"), t("float"), t("void*"), t("DataType"), t("Device"),
    t("DLTensor*"), t("const char*"), t("std::string"), t("TVMFFIByteArray*"), t("Any"),
    t("ffi.String"), t("ffi.Bytes"), t("ffi.BigInt"), t("ffi.Shape"), t("ffi.Tensor"),
    t("ffi.Function"), t("ffi.Error"), t("ffi.Object"), t("ffi.Array", t("int")),
    t("ffi.List", t("ffi.String")), t("ffi.Map", t("ffi.String"), t("float")),
    t("ffi.Dict", t("int"), t("Any")), t("Optional", t("int")),
    t("Variant", t("int"), t("ffi.String")), t("Tuple", t("int"), t("float")),
    t("ObjectRValueRef", t("ffi.Array", t("int"))), t("my.CustomObject"),
]


@pytest.mark.parametrize("type_schema", EVERY_TYPE, ids=lambda s: schemas.describe_type(s))
def test_every_type_gives_values_the_front_end_can_pass(type_schema):
    from tvm_ffi_check.probe import Packed

    @settings(max_examples=30, deadline=None, database=None)
    @given(schemas.strategy_for(type_schema))
    def packs(value):
        packed = Packed([value])
        try:
            assert packed.array[0].type_index is not None
            repr(value)
        finally:
            packed.close()

    packs()


def test_tensors_cover_strided_offset_and_pointer_forms():
    seen = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(schemas.strategy_for(t("DLTensor*")))
    def collect(value):
        assert isinstance(value, TensorArg)
        seen.add((value.layout, value.as_pointer))

    collect()
    assert {"contiguous", "transposed", "offset"} <= {layout for layout, _ in seen}
    assert {True, False} <= {pointer for _, pointer in seen}


def test_no_schema_sweeps_argument_counts_and_kinds():
    counts, kinds = set(), set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(schemas.arguments_for(None))
    def collect(args):
        counts.add(len(args))
        kinds.update(type(a).__name__ for a in args)

    collect()
    assert counts == {0, 1, 2, 3}
    assert {"NoneType", "bool", "int", "float", "str", "bytes", "list", "dict", "TensorArg",
            "DeviceArg", "DTypeArg", "FunctionArg", "ShapeArg"} <= kinds


@given(st.lists(st.integers(), max_size=3))
def test_a_failing_call_reads_like_python(xs):
    shown = repr(xs) if len(repr(xs)) <= 120 else repr(xs)[:117] + "..."  # each argument: 120
    assert format_call("f", (xs, "a")) == f"f({shown}, 'a')"
