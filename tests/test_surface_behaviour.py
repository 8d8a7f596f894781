"""Behaviour upstream's own test suite found different, held the same under both front ends.

Copying and pickling objects (never two owners of one reference), errors
pickled by value, one backtrace frame per crossing however deep callbacks
nest, a moved reference as a callback's result and argument, keep-alive
objects released with their Function, Function subclasses, and module
function docs as ``String``. Each front end runs in its own interpreter.
"""

from __future__ import annotations

import json

import pytest

from subprocess_utils import run_python

PACKAGES = ["tvm_ffi_fast", "tvm_ffi_ref"]

#: A kernel library in C: a safe-call entry, an MLIR "packed" entry, and a
#: module function with a long doc (TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC's symbol).
ENTRIES_C = r"""
#include <string.h>
#include <tvm/ffi/c_api.h>

static int add_one(const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add_one expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + 1;
  return 0;
}

int add_one_safe_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  return add_one(args, num_args, result);
}

void add_one_mlir_packed(void** packed) {
  const TVMFFIAny* args = *(const TVMFFIAny**)packed[1];
  int32_t num_args = *(int32_t*)packed[2];
  TVMFFIAny* result = *(TVMFFIAny**)packed[3];
  *(int*)packed[4] = add_one(args, num_args, result);
}

int __tvm_ffi_add_one(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)self;
  return add_one(args, num_args, result);
}

static const char DOC[] = "Adds one to an integer, a docstring long enough to be an object.";

int __tvm_ffi__doc_add_one(void* self, const TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* result) {
  TVMFFIByteArray text = {DOC, sizeof(DOC) - 1};
  (void)self;
  (void)args;
  (void)num_args;
  return TVMFFIStringFromByteArray(&text, result);
}
"""


def _run(package: str, code: str) -> dict:
    out = run_python(f"import json\nimport {package} as api\n" + code)
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def entries(kernels) -> str:
    return kernels.build("surface_entries", ENTRIES_C, language="c")


@pytest.mark.parametrize("package", PACKAGES)
def test_copying_and_pickling_objects_never_share_a_reference(package):
    # copy and pickle go through the runtime's JSON graph, deepcopy through ffi.DeepCopy:
    # each makes a new object with the same content, never a second handle to the first
    result = _run(package, """
import copy, gc, pickle
inner = api.List([2.5])
lst = api.List([1, "a", inner])
copies = {"copy": copy.copy(lst), "deepcopy": copy.deepcopy(lst),
          "pickle": pickle.loads(pickle.dumps(lst))}
empty = pickle.loads(pickle.dumps(api.List.__new__(api.List)))
out = {how: {"type": type(c).__name__, "first": [c[0], c[1]], "inner": list(c[2]),
             "same": c.same_as(lst), "inner_same": c[2].same_as(inner)}
       for how, c in copies.items()}
del lst, inner
gc.collect()
print(json.dumps({"copies": out, "empty": empty.__chandle__()}))
""")
    for how, copied in result["copies"].items():
        assert copied["type"] == "List" and copied["first"] == [1, "a"], how
        assert copied["inner"] == [2.5] and not copied["same"], how
    # a container's copy is a new graph all the way down, as upstream's (checked on 0.1.15.post2)
    assert not any(copied["inner_same"] for copied in result["copies"].values())
    assert result["empty"] == 0


@pytest.mark.parametrize("package", PACKAGES)
def test_shapes_copy_and_pickle_as_shapes(package):
    # a Shape is a tuple keeping its ffi.Shape object; copies are new Shapes of the same
    # dimensions, alone or inside Python containers (upstream's behaviour)
    result = _run(package, """
import copy, pickle
s = api.Shape((2, 3, 4))
made = [copy.copy(s), copy.deepcopy(s), pickle.loads(pickle.dumps(s)),
        copy.deepcopy([s, {"k": s}])[1]["k"], api.get_global_func("ffi.DeepCopy")(s)]
print(json.dumps([[type(m).__name__, list(m), m == s] for m in made]))
""")
    assert result == [["Shape", [2, 3, 4], True]] * 5


@pytest.mark.parametrize("package", PACKAGES)
def test_type_schema_accepts_values_of_opaque_pointer_handlers(package):
    # a class in core._OPAQUE_PTR_HANDLERS is a ctypes.c_void_p to the type converter too
    result = _run(package, """
import ctypes
class Event:
    __slots__ = ("address",)
    def __init__(self, address):
        self.address = address
schema = api.core.TypeSchema.from_annotation(ctypes.c_void_p)
try:
    schema.check_value(Event(1))
    before = "accepted"
except TypeError as e:
    before = "TypeError" if "c_void_p" in str(e) else str(e)
api.core._OPAQUE_PTR_HANDLERS[Event] = lambda event: event.address
schema.check_value(Event(0xCAFE))
print(json.dumps([before, schema.convert(Event(0xCAFE)).type_index]))
""")
    assert result == ["TypeError", 4]  # kTVMFFIOpaquePtr


@pytest.mark.parametrize("package", PACKAGES)
def test_errors_pickle_and_copy_by_value(package):
    result = _run(package, """
import copy, pickle
err = api.core.Error("TypeError", "boom", 'File "a.py", line 1, in f\\n')
back = pickle.loads(pickle.dumps(err))
empty = pickle.loads(pickle.dumps(api.core.Error.__new__(api.core.Error)))
def raise_value_error():
    raise ValueError("inner")
try:
    api.convert(raise_value_error)()
except ValueError as e:
    raised = e
restored = pickle.loads(pickle.dumps(raised))
copied = copy.deepcopy(raised)
def rethrow(_):
    raise restored
try:
    api.convert(rethrow)(1)
except ValueError as e:
    again = str(e)
print(json.dumps({
    "back": [type(back).__name__, back.kind, back.message, back.backtrace,
             back.same_as(err), back.extra_context],
    "empty": empty.__chandle__(),
    "restored": [type(restored).__name__, restored.args[0],
                 restored.__tvm_ffi_error__.kind, restored.__tvm_ffi_error__.message],
    "copied": [type(copied).__name__, copied.__tvm_ffi_error__.message],
    "again": again}))
""")
    assert result["back"] == ["Error", "TypeError", "boom", 'File "a.py", line 1, in f\n',
                              False, None]
    assert result["empty"] == 0
    assert result["restored"] == ["ValueError", "inner", "ValueError", "inner"]
    assert result["copied"] == ["ValueError", "inner"]
    assert result["again"] == "inner"


@pytest.mark.parametrize("package", PACKAGES)
def test_a_backtrace_has_one_frame_per_crossing(package):
    result = _run(package, """
def leaf():
    raise ValueError("deep")
func = api.convert(leaf)
for _ in range(6):
    func = api.convert((lambda inner: (lambda: inner()))(func))
try:
    func()
except ValueError as e:
    backtrace = e.__tvm_ffi_error__.backtrace
print(json.dumps({"leaf": backtrace.count("in leaf"), "lambdas": backtrace.count("<lambda>"),
                  "order": backtrace.find("in leaf") < backtrace.find("<lambda>")}))
""")
    assert result == {"leaf": 1, "lambdas": 6, "order": True}


@pytest.mark.parametrize("package", PACKAGES)
def test_a_moved_reference_is_taken_over_as_argument_and_result(package):
    result = _run(package, """
seen = []
def callback(x):
    seen.append(type(x).__name__)
    return x._move()
f = api.convert(callback)
a = api.convert([1, 2])
kept = f(a)                  # a stays: the callback moved its own wrapper
moved = f(a._move())         # a is moved into the call
sink = api.convert(lambda y: None)
def twice(x):
    sink(x._move())          # x is moved into sink: nothing is left to return
    return x._move()
try:
    api.convert(twice)(api.convert([3]))
except ValueError as e:
    twice_error = str(e)
print(json.dumps({"kept": list(kept), "a_after_copy": kept.same_as(moved),
                  "moved": list(moved), "a": a.__ctypes_handle__().value, "seen": seen,
                  "twice": twice_error}))
""")
    assert result["kept"] == [1, 2] and result["moved"] == [1, 2] and result["a_after_copy"]
    assert result["a"] is None and result["seen"] == ["Array", "Array"]
    assert result["twice"] == "RValueRef already moved"


@pytest.mark.parametrize("package", PACKAGES)
def test_keep_alive_objects_live_as_long_as_their_function(package, entries):
    result = _run(package, f"""
import ctypes, gc, sys
lib = ctypes.CDLL({entries!r})
safe_call = ctypes.cast(lib.add_one_safe_call, ctypes.c_void_p).value
packed = ctypes.cast(lib.add_one_mlir_packed, ctypes.c_void_p).value
keep = [1, 2, 3]
base = sys.getrefcount(keep)
counts = []
for make, symbol in ((api.Function.__from_extern_c__, safe_call),
                     (api.Function.__from_mlir_packed_safe_call__, packed)):
    plain = make(symbol)
    f = make(symbol, keep_alive_object=keep)
    counts.append([plain(1), f(41), sys.getrefcount(keep) - base])
    try:
        f(None)
    except TypeError as e:
        counts[-1].append(str(e))
    held = [f]
    f = None
    counts[-1].append(sys.getrefcount(keep) - base)
    held.clear()
    gc.collect()
    counts[-1].append(sys.getrefcount(keep) - base)
try:
    api.Function.__from_extern_c__(0)
except ValueError as e:
    null = str(e)
print(json.dumps({{"counts": counts, "null": null}}))
""")
    for row in result["counts"]:
        assert row == [2, 42, 1, "add_one expects one int", 1, 0]
    assert "c_symbol" in result["null"]


@pytest.mark.parametrize("package", PACKAGES)
def test_function_subclasses_and_attributes(package):
    result = _run(package, """
class Jit:
    def __init__(self, metadata):
        self.metadata = metadata
class MyFunction(api.Function, Jit):
    def __init__(self, metadata):
        Jit.__init__(self, metadata)
    __call__ = api.Function.__call__
f = MyFunction(128)
f.__move_handle_from__(api.convert(lambda x: x * 2))
echo = api.convert(lambda x: x)
g = api.convert(lambda: 1)
g.note = "set"
print(json.dumps({"call": f(21), "meta": f.metadata, "same": echo(f).same_as(f),
                  "attr": g.note, "vars": sorted(vars(g))}))
""")
    assert result == {"call": 42, "meta": 128, "same": True, "attr": "set", "vars": ["note"]}


@pytest.mark.parametrize("package", PACKAGES + ["tvm_ffi"])
def test_function_docs_come_back_as_the_runtime_returns_them(package, entries):
    # upstream (tvm_ffi) is the oracle: a long doc is a String, not a plain str
    result = _run(package, f"""
module = api.load_module({entries!r})
doc = module.get_function_doc("add_one")
print(json.dumps({{"type": type(doc).__name__, "doc": doc, "none": module.get_function_doc("x"),
                   "call": module.add_one(1)}}))
""")
    assert result["type"] == "String"
    assert result["doc"].startswith("Adds one") and result["none"] is None and result["call"] == 2
