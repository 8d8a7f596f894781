"""The type registry under each runtime: static and pre-registered types, dynamic
index allocation, TVMFFITypeInfo records, reflection and type attribute columns.

Each snippet runs once per runtime (in its own process); the outputs are
compared with upstream's and with values known from upstream's sources.
"""

from __future__ import annotations

import pytest

from runtime_client import OURS, RUNTIMES, run, run_all, tagged

TYPE_TABLE = r"""
def s(b):
    return ctypes.string_at(b.data, b.size).decode() if b.data else None

def describe(i):
    p = lib.TVMFFIGetTypeInfo(i)
    if not p:
        take_error()
        return None
    t = p.contents
    anc = [t.type_ancestors[d].contents.type_index for d in range(t.type_depth)]
    md = t.metadata.contents if t.metadata else None
    fields = [(s(f.name), s(f.doc), s(f.metadata), f.flags, f.size, f.alignment, f.offset,
               bool(f.getter), bool(f.setter), f.default_value_or_factory.type_index,
               f.field_static_type_index) for f in (t.fields[k] for k in range(t.num_fields))]
    methods = [(s(m.name), s(m.doc), s(m.metadata), m.flags, m.method.type_index)
               for m in (t.methods[k] for k in range(t.num_methods))]
    meta = (md.total_size, md.structural_eq_hash_kind, bool(md.creator), s(md.doc)) if md else None
    return (t.type_index, s(t.type_key), t.type_depth, anc, hex(t.type_key_hash), meta, fields, methods)

for i in list(range(14)) + list(range(64, 79)) + list(range(128, 138)):
    print("type%d: %r" % (i, describe(i)))
keys = call("ffi.GetRegisteredTypeKeys")
print("keys: %r" % (show(keys),))
idx = ctypes.c_int32()
for key in ("ffi.Object", "ffi.Map", "None", "ffi.StructuralKey", "ffi.reflection.AccessPath"):
    assert lib.TVMFFITypeKeyToIndex(ctypes.byref(byte_array(key)), ctypes.byref(idx)) == 0
    print("index %s: %d" % (key, idx.value))
print("missing key: %r, %r" % (lib.TVMFFITypeKeyToIndex(ctypes.byref(byte_array("no.such.Type")),
                                                        ctypes.byref(idx)), take_error()))
"""


@pytest.fixture(scope="module")
def type_tables():
    return {rt: tagged(out) for rt, out in run_all(TYPE_TABLE).items()}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_static_and_preregistered_types_match_upstream(runtime, type_tables):
    table, upstream = type_tables[runtime], type_tables["upstream"]
    type_lines = {k: v for k, v in table.items() if k.startswith("type")}
    assert len(type_lines) == 14 + 15 + 10
    assert type_lines == {k: v for k, v in upstream.items() if k.startswith("type")}
    # facts from upstream's sources, independent of the comparison
    assert table["type0"].startswith("(0, 'None', 0, [], '0xfb6ac968ce0ca5aa'")
    assert table["type64"].startswith("(64, 'ffi.Object', 0, [], '0x33a211b274fa0106', (24, 0, False")
    assert table["type71"].startswith("(71, 'ffi.Array', 1, [64]")
    assert table["type130"].startswith("(130, 'ffi.IntEnum', 2, [64, 129]")
    assert table["type137"].startswith("(137, 'ffi.StructuralKey', 1, [64]")
    assert "('imports_', None, " in table["type73"]
    assert table["type133"].count("'_") == 10 + 1  # ten methods named _..., plus _root


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_type_keys_and_lookup(runtime, type_tables):
    table = type_tables[runtime]
    assert table["keys"] == type_tables["upstream"]["keys"]
    keys = eval(table["keys"])
    assert keys[:3] == ["None", "int", "bool"] and keys[14] == "ffi.Object"
    assert keys[-1] == "ffi.StructuralKey" and len(keys) == 14 + 15 + 10
    assert table["index ffi.Map"] == "72" and table["index None"] == "0"
    assert table["index ffi.StructuralKey"] == "137"
    assert table["index ffi.reflection.AccessPath"] == "133"
    assert table["missing key"] == (
        "-1, ('InternalError', 'Check failed: (it != type_key2index_.end()) is false: "
        "Cannot find type `no.such.Type`')")


ALLOCATION = r"""
def alloc(key, depth, slots, overflow, parent, static=-1):
    return lib.TVMFFITypeGetOrAllocIndex(ctypes.byref(byte_array(key)), static, depth, slots,
                                         overflow, parent)
a = alloc("test.A", 1, 3, 1, 64)
b = alloc("test.B", 2, 0, 1, a)
c = alloc("test.C", 2, 1, 1, a)
d = alloc("test.D", 2, 0, 1, a)
e = alloc("test.E", 3, 0, 1, c)
f = alloc("test.F", 1, 0, 0, 64)
g = alloc("test.G", 1, 2, 1, 64)
print("indices: %r" % ([a, b, c, d, e, f, g],))
print("again: %r" % ((alloc("test.A", 1, 3, 1, 64), alloc("test.C", 5, 0, 0, 999)),))
print("query: %r" % ((alloc("test.Missing", 1, 0, 1, -2), alloc("test.B", 1, 0, 1, -2)),))
for i in (a, b, c, d, e, f, g):
    t = lib.TVMFFIGetTypeInfo(i).contents
    anc = [t.type_ancestors[k].contents.type_index for k in range(t.type_depth)]
    print("info%d: %r" % (i, (ctypes.string_at(t.type_key.data, t.type_key.size).decode(),
                              t.type_depth, anc, hex(t.type_key_hash), bool(t.metadata))))
keys = show(call("ffi.GetRegisteredTypeKeys"))
print("new keys: %r" % (keys[-7:],))
# a registration after the new ones lands after the overflow counter
print("next: %r" % (alloc("test.H", 1, 0, 1, 64),))
"""


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_dynamic_index_allocation_follows_child_slots(runtime):
    out = tagged(run(runtime, ALLOCATION))
    # A reserves 138..141; B and C(+1 slot) fill it; D overflows; E uses C's slot
    assert out["indices"] == "[138, 139, 140, 142, 141, 143, 144]"
    assert out["again"] == "(138, 140)"
    assert out["query"] == "(-2, 139)"
    assert out["info141"].startswith("('test.E', 3, [64, 138, 140], ")
    assert out["info143"].endswith("False)")
    assert out["new keys"] == "['test.A', 'test.B', 'test.C', 'test.E', 'test.D', 'test.F', 'test.G']"
    assert out["next"] == "147"  # G reserved 144..146


def test_dynamic_index_allocation_agrees_with_upstream():
    outputs = run_all(ALLOCATION)
    for runtime in OURS:
        assert outputs[runtime] == outputs["upstream"], runtime


REFLECTION = r"""
def alloc(key, depth, slots, overflow, parent):
    return lib.TVMFFITypeGetOrAllocIndex(ctypes.byref(byte_array(key)), -1, depth, slots,
                                         overflow, parent)
t = alloc("test.Point", 1, 0, 1, 64)
GETTER = abi.TVMFFIFieldInfo._fields_[7][1]
@GETTER
def getter(field, result):
    result[0].type_index = 1
    result[0].v_int64 = ctypes.c_int64.from_address(field).value
    return 0

def field(name, offset, flags=0, default=None, doc="", metadata=""):
    info = abi.TVMFFIFieldInfo()
    info.name = byte_array(name); info.doc = byte_array(doc); info.metadata = byte_array(metadata)
    info.flags = flags; info.size = 8; info.alignment = 8; info.offset = offset
    info.getter = getter
    info.field_static_type_index = 1
    if default is not None:
        info.default_value_or_factory = default
    return lib.TVMFFITypeRegisterField(t, ctypes.byref(info))

long_default = abi.TVMFFIAny(); long_default.type_index = 8
text = ctypes.create_string_buffer(b"a default longer than seven")
long_default.v_ptr = ctypes.addressof(text)
print("field x: %r" % (field("x", 24, doc="the x", metadata='{"k":1}'),))
print("field y: %r" % (field("y", 32, flags=2, default=long_default),))
print("dup: %r %r" % (field("x", 40), take_error()))
info = lib.TVMFFIGetTypeInfo(t).contents
fx, fy = info.fields[0], info.fields[1]
print("fields: %r" % ((info.num_fields, ctypes.string_at(fx.name.data, fx.name.size),
                       ctypes.string_at(fx.doc.data, fx.doc.size), fx.offset, fx.flags,
                       bool(fy.doc.data), fy.doc.size, fy.metadata.size),))
d = fy.default_value_or_factory
print("default: %r" % ((d.type_index, show_any(d)),))
# the getter registered is the one the runtime hands back
obj = (ctypes.c_int64 * 5)(0, 0, 0, 41, 0)
res = abi.TVMFFIAny()
print("getter: %r" % ((fx.getter(ctypes.addressof(obj) + 24, ctypes.byref(res)), res.v_int64),))

m = abi.TVMFFIMethodInfo()
m.name = byte_array("describe"); m.doc = byte_array(""); m.metadata = byte_array("{}")
m.flags = 4
m.method = gfunc("ffi.String").any()
print("method: %r" % (lib.TVMFFITypeRegisterMethod(t, ctypes.byref(m)),))
m2 = abi.TVMFFIMethodInfo(); m2.name = byte_array("constant"); m2.method.type_index = 1; m2.method.v_int64 = 5
lib.TVMFFITypeRegisterMethod(t, ctypes.byref(m2))
info = lib.TVMFFIGetTypeInfo(t).contents
meth = [(ctypes.string_at(x.name.data, x.name.size), x.flags, x.method.type_index, x.doc.size)
        for x in (info.methods[k] for k in range(info.num_methods))]
print("methods: %r" % (meth,))
print("method rc: %r" % (rc(gfunc("ffi.String")) > 1,))
fn = Obj(info.methods[0].method.v_ptr); lib.TVMFFIObjectIncRef(ctypes.c_void_p(fn.handle))
print("method call: %r" % (show(callf(fn, "via method table")),))

md = abi.TVMFFITypeMetadata(); md.doc = byte_array("A point."); md.total_size = 40
md.structural_eq_hash_kind = 1
print("metadata: %r" % (lib.TVMFFITypeRegisterMetadata(t, ctypes.byref(md)),))
info = lib.TVMFFIGetTypeInfo(t).contents
print("metadata read: %r" % ((info.metadata.contents.total_size, info.metadata.contents.structural_eq_hash_kind,
                             ctypes.string_at(info.metadata.contents.doc.data, 8)),))
print("metadata again: %r %r" % (lib.TVMFFITypeRegisterMetadata(t, ctypes.byref(md)),
                                 take_error()[1].splitlines()[0]))

seven = abi.TVMFFIAny(); seven.type_index = 1; seven.v_int64 = 7
print("attr: %r" % (lib.TVMFFITypeRegisterAttr(t, ctypes.byref(byte_array("test_attr")), ctypes.byref(seven)),))
col = lib.TVMFFIGetTypeAttrColumn(ctypes.byref(byte_array("test_attr"))).contents
print("column: %r" % ((col.size, col.begin_index, col.data[t].type_index, col.data[t].v_int64,
                       col.data[t - 1].type_index),))
first_address = ctypes.addressof(col)
seven.v_int64 = 8
print("attr again: %r %r" % (lib.TVMFFITypeRegisterAttr(t, ctypes.byref(byte_array("test_attr")), ctypes.byref(seven)),
                             take_error()))
print("attr other: %r" % (lib.TVMFFITypeRegisterAttr(64, ctypes.byref(byte_array("test_attr")), ctypes.byref(seven)),))
col2 = lib.TVMFFIGetTypeAttrColumn(ctypes.byref(byte_array("test_attr")))
print("column stable: %r" % ((ctypes.addressof(col2.contents) == first_address, col2.contents.data[64].v_int64),))
s_long = abi.TVMFFIAny(); s_long.type_index = 8; s_long.v_ptr = ctypes.addressof(text)
lib.TVMFFITypeRegisterAttr(66, ctypes.byref(byte_array("test_attr")), ctypes.byref(s_long))
print("attr converted: %r" % (show_any(col2.contents.data[66]),))
print("sentinel: %r" % (lib.TVMFFITypeRegisterAttr(0, ctypes.byref(byte_array("test_empty")), ctypes.byref(abi.TVMFFIAny())),))
empty = lib.TVMFFIGetTypeAttrColumn(ctypes.byref(byte_array("test_empty"))).contents
print("empty column: %r" % ((empty.size, bool(empty.data), empty.begin_index),))
print("no column: %r" % (bool(lib.TVMFFIGetTypeAttrColumn(ctypes.byref(byte_array("test_none")))),))
"""


@pytest.fixture(scope="module")
def reflection_outputs():
    return run_all(REFLECTION)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_reflection_registration(runtime, reflection_outputs):
    out = tagged(reflection_outputs[runtime])
    assert out["field x"] == "0" and out["field y"] == "0"
    assert out["dup"].startswith("-1 ('InternalError', ")
    assert out["dup"].endswith(
        "'Check failed: (std::string_view(existing.name.data, existing.name.size) != new_name) "
        "is false: Duplicate field name \"x\" in type \"test.Point\"')")
    assert out["fields"] == "(2, b'x', b'the x', 24, 0, False, 0, 0)"
    assert out["default"] == "(65, 'a default longer than seven')"
    assert out["getter"] == "(0, 41)"
    assert out["methods"] == "[(b'describe', 4, 68, 0), (b'constant', 0, 1, 0)]"
    assert out["method rc"] == "True"
    assert out["method call"] == "'via method table'"
    assert out["metadata"] == "0"
    assert out["metadata read"] == "(40, 1, b'A point.')"
    assert out["metadata again"] == "-1 'Overriding test.Point, possible causes:'"
    assert out["attr"] == "0"
    assert out["column"] == "(139, 0, 1, 7, 0)"  # test.Point is 138: size is index + 1
    assert out["attr again"] == (
        "-1 ('RuntimeError', 'TypeAttr `test_attr` is already registered for type index 138. To "
        "update the stored value, register a mutable container (e.g., Dict/List) once and mutate "
        "it in place on subsequent calls.')")
    assert out["column stable"] == "(True, 8)"
    assert out["attr converted"] == "'a default longer than seven'"
    assert out["empty column"] == "(0, False, 0)"
    assert out["no column"] == "False"


@pytest.mark.parametrize("runtime", OURS)
def test_reflection_registration_agrees_with_upstream(runtime, reflection_outputs):
    assert reflection_outputs[runtime] == reflection_outputs["upstream"]


@pytest.mark.parametrize("runtime", OURS)
def test_errors_upstream_aborts_on(runtime):
    # upstream terminates the process for these (a failed check throws out of a
    # TVM_FFI_LOG_EXCEPTION_CALL function); ours return the failure value with the
    # error that check throws raised instead, kind and text
    out = run(runtime, r"""
    def alloc(key, depth, slots, overflow, parent, static=-1):
        return lib.TVMFFITypeGetOrAllocIndex(ctypes.byref(byte_array(key)), static, depth, slots,
                                             overflow, parent)
    f = alloc("test.Final", 1, 0, 0, 64)
    print(alloc("test.Child", 2, 0, 1, f), take_error())
    print(alloc("test.Static", 1, 0, 0, 64, static=71), take_error())
    print(alloc("test.BadDepth", 3, 0, 1, 64), take_error())
    print(alloc("test.NoParent", 1, 0, 1, 100000), take_error())
    print(alloc("test.Hole", 1, 0, 1, 20), take_error())
    print(alloc("test.Orphan", 1, 0, 1, -1), take_error())
    print(alloc("test.StaticOrphan", 1, 0, 0, -1, static=21), take_error())
    print(alloc("test.Far", 1, 0, 0, 64, static=500), take_error())
    print(alloc("test.Low", 1, 0, 0, 64, static=20), take_error())
    print(bool(lib.TVMFFIGetTypeInfo(138 + 50)), take_error())
    print(bool(lib.TVMFFIGetTypeInfo(-3)), take_error())
    print(alloc("test.After", 1, 0, 1, 64), take_error())
    """)
    check = "('InternalError', 'Check failed: "
    assert out.splitlines() == [
        "-1 " + check + "(parent->child_slots_can_overflow) is false: Reach maximum number of "
        "sub-classes for test.Final')",
        "-1 " + check + "(type_table_[static_type_index] == nullptr) is false: Conflicting static "
        "index 71 between ffi.Array and test.Static')",
        "-1 " + check + "type_depth == parent->type_depth + 1 (3 vs. 1) : ')",
        "-1 " + check + "parent_type_index < type_table_.size() (100000 vs. 139) :  "
        "type_key=test.NoParent, static_index=-1')",
        "-1 ('InternalError', 'Check not null: parent ')",
        "-1 ('InternalError', 'Check not null: parent ')",
        "-1 ('InternalError', 'Check not null: parent ')",
        "-1 " + check + "static_type_index < type_table_.size() (500 vs. 139) : ')",
        "-1 " + check + "allocated_tindex > parent->type_index (20 vs. 64) : ')",
        "False " + check + "(entry != nullptr) is false: Cannot find type info for "
        "type_index=188')",
        "False " + check + "(entry != nullptr) is false: Cannot find type info for "
        "type_index=-3')",
        "139 None",  # nothing of the failed registrations was kept
    ]


MAKE_OBJECT = r"""
def fields(obj):
    info = lib.TVMFFIGetTypeInfo(obj.type_index).contents
    out = []
    for i in range(info.num_fields):
        f = info.fields[i]
        value = abi.TVMFFIAny()
        assert f.getter(obj.handle + f.offset, ctypes.byref(value)) == 0
        out.append((ctypes.string_at(f.name.data, f.name.size).decode(), show(from_any(value))))
    return out

step = call("ffi.MakeObjectFromPackedArgs", "ffi.reflection.AccessStep", "kind", 2, "key", "a longer key value")
print("step: %r" % ((type_key(step.type_index), fields(step)),))
step2 = call("ffi.MakeObjectFromPackedArgs", 132, "key", 5, "kind", 1)
print("by index: %r" % (fields(step2),))
interrupt = call("ffi.MakeObjectFromPackedArgs", "ffi.VisitInterrupt")
print("default: %r" % (fields(interrupt),))
print("errors: %r" % ([
    err(call, "ffi.MakeObjectFromPackedArgs", "ffi.reflection.AccessStep", "kind", 1),
    err(call, "ffi.MakeObjectFromPackedArgs", "ffi.reflection.AccessStep", "kind", 1, "key", 2, "extra", 3),
    err(call, "ffi.MakeObjectFromPackedArgs", "ffi.reflection.AccessStep", "kind"),
    err(call, "ffi.MakeObjectFromPackedArgs", "ffi.Module"),
    err(call, "ffi.MakeObjectFromPackedArgs", "no.such.Type"),
    err(call, "ffi.MakeObjectFromPackedArgs", 1.5),
    err(call, "ffi.MakeObjectFromPackedArgs", "ffi.reflection.AccessStep", "kind", "one", "key", 2),
],))
path = callf(Obj(lib.TVMFFIGetTypeInfo(133).contents.methods[0].method.v_ptr))  # _root
lib.TVMFFIObjectIncRef(ctypes.c_void_p(path.handle))
print("root path: %r" % (fields(path),))
"""


@pytest.fixture(scope="module")
def make_object_outputs():
    return run_all(MAKE_OBJECT)


@pytest.mark.parametrize("runtime", OURS)
def test_make_object_from_packed_args_agrees_with_upstream(runtime, make_object_outputs):
    assert make_object_outputs[runtime] == make_object_outputs["upstream"]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_make_object_from_packed_args(runtime, make_object_outputs):
    out = tagged(make_object_outputs[runtime])
    assert out["step"] == "('ffi.reflection.AccessStep', [('kind', 2), ('key', 'a longer key value')])"
    assert out["by index"] == "[('kind', 1), ('key', 5)]"
    assert out["default"] == "[('value', None)]"
    errors = eval(out["errors"])
    assert errors[0] == ("ERR", "TypeError", "Required field `key` not set in type `ffi.reflection.AccessStep`")
    assert errors[1] == ("ERR", "TypeError", "Type `ffi.reflection.AccessStep` does not have field `extra`")
    assert errors[3][:2] == ("ERR", "RuntimeError")
    assert errors[5] == ("ERR", "TypeError", "Cannot convert from type `float` to `str`")
    assert out["root path"] == "[('parent', None), ('step', None), ('depth', 0)]"


ATTR_COLUMNS = r"""
for name in ["__any_hash__", "__any_equal__", "__ffi_type_final__", "__ffi_enum__", "__ffi_init__",
             "__ffi_convert__", "__ffi_new__", "__ffi_shallow_copy__", "__ffi_repr__"]:
    p = lib.TVMFFIGetTypeAttrColumn(ctypes.byref(byte_array(name)))
    if not p:
        print("%s: None" % name)
        continue
    c = p.contents
    print("%s: %r" % (name, [(i, c.data[i].type_index) for i in range(c.size)
                             if c.data[i].type_index != 0]))
"""


def test_preregistered_type_attributes_are_the_same_under_ours_and_upstreams():
    outputs = {rt: tagged(out) for rt, out in run_all(ATTR_COLUMNS).items()}
    upstream = outputs["upstream"]
    ours = [outputs[rt] for rt in OURS]
    # a kernel cannot tell our runtimes apart by the columns present at load ...
    assert all(table == ours[0] for table in ours)
    # ... and each entry they hold is upstream's, of the same kind (a native
    # function pointer, a bool, a Function); upstream has more (the dataclass
    # helpers of its Python layer), which ours do not provide
    for name, entries in ours[0].items():
        if entries != "None":
            assert set(eval(entries)) <= set(eval(upstream[name])), name
    assert ours[0]["__any_hash__"] == ours[0]["__any_equal__"] == "[(78, 4), (137, 4)]"
    assert ours[0]["__ffi_type_final__"] == upstream["__ffi_type_final__"]
    assert ours[0]["__ffi_enum__"] == upstream["__ffi_enum__"] == "[]"
    # the constructors of ffi.EnumState and ffi.StructuralKey, as Functions
    assert ours[0]["__ffi_init__"] == upstream["__ffi_init__"]
    assert [index for index, _ in eval(ours[0]["__ffi_init__"])] == [128, 137]


TYPED_ERRORS = r"""
# Upstream converts a typed function's arguments last first (they are the arguments
# of a C++ call, evaluated right to left): with two bad arguments, the later one is named.
print("global two bad: %r" % (err(call, "ffi.ArrayGetItem", "x", 1.5),))
print("global three: %r" % (err(call, "ffi.FunctionFromExternC", 1, 2, None),))
print("global first bad: %r" % (err(call, "ffi.ListSetItem", 1, 2, 3),))
for t in (128, 133, 137):
    info = lib.TVMFFIGetTypeInfo(t).contents
    for k in range(info.num_methods):
        m = info.methods[k]
        name = ctypes.string_at(m.name.data, m.name.size).decode()
        f = Obj(m.method.v_ptr); lib.TVMFFIObjectIncRef(ctypes.c_void_p(f.handle))
        # a method is named <type key>.<method> in its error texts
        print("%d.%s: %r" % (t, name, (err(callf, f, 1, 2.5), err(callf, f, 1, 2, 3))))
col = lib.TVMFFIGetTypeAttrColumn(ctypes.byref(byte_array("__ffi_init__"))).contents
init = Obj(col.data[128].v_ptr); lib.TVMFFIObjectIncRef(ctypes.c_void_p(init.handle))
print("attr init: %r" % (err(callf, init, 1),))
"""


def test_typed_argument_errors_name_what_upstream_names():
    outputs = {rt: tagged(out) for rt, out in run_all(TYPED_ERRORS).items()}
    for runtime in OURS:
        assert outputs[runtime] == outputs["upstream"], runtime
    out = outputs["upstream"]
    assert "argument #1 when calling: `ffi.ArrayGetItem(" in out["global two bad"]
    assert "argument #1 when calling: `ffi.FunctionFromExternC(" in out["global three"]
    assert "`ffi.reflection.AccessPath._attr(0: ffi.reflection.AccessPath, 1: str) -> " \
           "ffi.reflection.AccessPath`. Expected `str` but got `float`" in out["133._attr"]
    assert "`ffi.EnumState.__ffi_init__() -> ffi.Object`" in out["attr init"]
