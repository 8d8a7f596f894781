"""Containers under each runtime: the ffi.* container functions, and Map/Dict
layouts compared bit for bit (slot counts, Fibonacci shift, metadata bytes,
insertion-order links) with upstream's for keys whose hash does not depend on
addresses.
"""

from __future__ import annotations

import pytest

from runtime_client import OURS, RUNTIMES, run_all, tagged

SEQUENCES = r"""
def cap(obj):
    return abi.TVMFFISeqCell.from_address(obj.handle + 24).capacity

def deleter_set(obj):
    return bool(abi.TVMFFISeqCell.from_address(obj.handle + 24).data_deleter)

a = call("ffi.Array", 1, "two", "a string longer than 7", None, 2.5, True)
cell = abi.TVMFFISeqCell.from_address(a.handle + 24)
print("array: %r" % ((show(a), cap(a), deleter_set(a), cell.data == a.handle + 56),))
print("array size: %r" % (call("ffi.ArraySize", a),))
print("array get: %r" % ([show(call("ffi.ArrayGetItem", a, i)) for i in range(6)],))
print("array get bad: %r" % ([err(call, "ffi.ArrayGetItem", a, i) for i in (6, -1)],))
print("array contains: %r" % ([call("ffi.ArrayContains", a, v) for v in (1, "two", "a string longer than 7",
                                                                         None, 2.5, True, 3, "x", 1.0)],))
print("array empty: %r" % ((show(call("ffi.Array")), cap(call("ffi.Array"))),))
print("array raw str: %r" % (show(call("ffi.Array", RawStr(b"raw text longer than seven"), RawStr(b"raw"))),))

l = call("ffi.List", 1, 2, 3)
print("list: %r" % ((show(l), cap(l), deleter_set(l)),))
print("list 6: %r" % (cap(call("ffi.List", *range(6))),))
print("list 0: %r" % (cap(call("ffi.List")),))
caps = []
for i in range(10):
    call("ffi.ListAppend", l, i * 10)
    caps.append(cap(l))
print("list append: %r" % ((show(l), caps),))
call("ffi.ListInsert", l, 0, "first")
call("ffi.ListInsert", l, call("ffi.ListSize", l), "last")
print("list insert: %r" % ((show(l), cap(l)),))
print("list insert bad: %r" % ((err(call, "ffi.ListInsert", l, 100, 0), cap(l)),))
print("list pop: %r" % ((show(call("ffi.ListPop", l, 0)), show(call("ffi.ListPop", l, 12)), show(l)),))
print("list pop bad: %r" % (err(call, "ffi.ListPop", l, 12),))
call("ffi.ListSetItem", l, 1, "set")
print("list set: %r" % ((show(l), err(call, "ffi.ListSetItem", l, -1, 0)),))
call("ffi.ListErase", l, 0)
print("list erase: %r" % ((show(l), err(call, "ffi.ListErase", l, 99)),))
call("ffi.ListEraseRange", l, 2, 5)
call("ffi.ListEraseRange", l, 3, 3)
print("list erase range: %r" % ((show(l), err(call, "ffi.ListEraseRange", l, 4, 2),
                                  err(call, "ffi.ListEraseRange", l, 0, 99)),))
rep = call("ffi.List", "r1", "r2", "r3")
call("ffi.ListReplaceSlice", l, 1, 3, rep)
print("list replace: %r" % ((show(l), cap(l)),))
call("ffi.ListReplaceSlice", l, 0, 2, l)
print("list replace self: %r" % (show(l),))
call("ffi.ListReplaceSlice", l, 0, 1, call("ffi.Array", "from", "array"))
print("list replace array: %r" % (show(l),))
print("list replace bad: %r" % (err(call, "ffi.ListReplaceSlice", l, 50, 50, rep),))
call("ffi.ListReverse", l)
print("list reverse: %r" % (show(l),))
print("list contains: %r" % ((call("ffi.ListContains", l, "r3"), call("ffi.ListContains", l, "nope")),))
call("ffi.ListReserve", l, 100)
c100 = cap(l)
call("ffi.ListReserve", l, 3)
print("list reserve: %r" % ((c100, cap(l)),))
call("ffi.ListClear", l)
print("list clear: %r" % ((show(l), cap(l), call("ffi.ListSize", l)),))
# an Array where a List<Any> is expected is copied: the Array does not change
call("ffi.ListAppend", a, 99)
print("list append array: %r" % (show(a),))
print("list typed: %r" % ([err(call, "ffi.ListGetItem", a, 0), err(call, "ffi.ListAppend", 1, 2),
                           err(call, "ffi.ListSize", None)],))

s = call("ffi.Shape", 2, 3, True)
print("shape: %r" % ((show(s), err(call, "ffi.Shape", 1, "x"), show(call("ffi.Shape"))),))
print("string: %r" % ([show(call("ffi.String", v)) for v in ("ab", "a longer string", RawStr(b"raw"))],))
print("bytes: %r" % ([show(call("ffi.Bytes", v)) for v in (b"ab", b"longer bytes", ByteArr(b"\x00raw"))],))
print("string typed: %r" % ([err(call, "ffi.String", b"bytes"), err(call, "ffi.Bytes", "str")],))

# reference counts: containers hold a reference to object elements
big = call("ffi.String", "shared element value")
base = rc(big)
arr = call("ffi.Array", big, big)
lst = call("ffi.List", big)
print("rc: %r" % ((rc(big) - base),))
del arr, lst
print("rc after: %r" % ((rc(big) - base),))
"""


@pytest.fixture(scope="module")
def sequences():
    return run_all(SEQUENCES)


@pytest.mark.parametrize("runtime", OURS)
def test_sequences_agree_with_upstream(runtime, sequences):
    assert sequences[runtime] == sequences["upstream"]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_sequences(runtime, sequences):
    out = tagged(sequences[runtime])
    assert out["array"] == "([1, 'two', 'a string longer than 7', None, 2.5, True], 6, False, True)"
    assert out["array get bad"] == (
        "[('ERR', 'IndexError', 'Index 6 out of bounds 6'), ('ERR', 'IndexError', 'Index -1 out of "
        "bounds 6')]")
    assert out["array contains"] == "[True, True, True, True, True, True, False, False, False]"
    assert out["array empty"] == "([], 0)"
    assert out["list"] == "(('List', [1, 2, 3]), 4, True)"
    assert out["list 6"] == "6" and out["list 0"] == "4"
    assert out["list append"] == (
        "(('List', [1, 2, 3, 0, 10, 20, 30, 40, 50, 60, 70, 80, 90]), [4, 8, 8, 8, 8, 16, 16, 16, "
        "16, 16])")
    assert out["list insert bad"] == "(('ERR', 'IndexError', 'Index 100 out of bounds [0, 15]'), 16)"
    assert out["list erase range"].endswith(
        "('ERR', 'IndexError', 'Erase range [4, 2) out of bounds 8'), ('ERR', 'IndexError', 'Erase "
        "range [0, 99) out of bounds 8'))")
    assert out["list reserve"] == "(100, 100)"
    assert out["list clear"] == "(('List', []), 100, 0)"
    assert out["list append array"] == "[1, 'two', 'a string longer than 7', None, 2.5, True]"
    assert out["shape"] == (
        "(('Shape', (2, 3, 1)), ('ERR', 'ValueError', 'Expect shape to take list of int arguments'), "
        "('Shape', ()))")
    assert out["rc"] == "3" and out["rc after"] == "0"


MAPS = r"""
import math
_boxed = []
def boxed_str(text):
    # a String object made by hand (any side may make objects): header, then the byte array
    data = ctypes.create_string_buffer(text.encode())
    obj = (ctypes.c_uint64 * 5)()
    obj[0] = 1 << 40  # never freed
    ctypes.c_int32.from_address(ctypes.addressof(obj) + 8).value = 65
    obj[3] = ctypes.addressof(data); obj[4] = len(text.encode())
    _boxed.append((obj, data))
    a = abi.TVMFFIAny(); a.type_index = 65; a.v_ptr = ctypes.addressof(obj)
    return a

def flat(pairs):
    return [x for kv in pairs for x in kv]

cases = {
    "ints3": [(i, i * i) for i in range(3)],
    "ints4": [(i, i) for i in range(4)],
    "ints5": [(i, i) for i in range(5)],
    "ints17": [(i * 7919, i) for i in range(17)],
    "ints300": [(i * 104729 - 5000, i) for i in range(300)],
    "strs": [("k%d" % i, i) for i in range(20)] + [("a long key number %d" % i, i) for i in range(20)],
    "mixed": [(1, "int"), (True, "bool"), (1.0, "float"), ("1", "str"), (b"1", "bytes"), (None, "none"),
              (-0.0, "negzero"), (0.0, "zero"), (DType(2, 32, 1), "dtype"), (Dev(1, 0), "device"),
              (2 ** 80, "big"), (-(2 ** 70), "negbig")],
    "dups": [(1, "a"), (2, "b"), (1, "c"), (3, "d"), (2, "e")],
    "full-overwrite": [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (1, "again")],
    "dense-overwrite": [(i, i) for i in range(6)] + [(2, "moved")],
}
for kind in ("Map", "Dict"):
    for name, pairs in cases.items():
        m = call("ffi." + kind, *flat(pairs))
        print("%s %s: %r" % (kind, name, layout(m)))
        print("%s %s size: %r" % (kind, name, call("ffi.%sSize" % kind, m)))
        print("%s %s show: %r" % (kind, name, show(m)))

m = call("ffi.Map", *flat(cases["mixed"]))
print("lookups: %r" % ([show(call("ffi.MapGetItem", m, k)) for k, _ in cases["mixed"]],))
print("lookup boxed: %r" % ((call("ffi.MapCount", m, boxed_str("1")), call("ffi.MapCount", m, "1"),
                             call("ffi.MapCount", m, RawStr(b"1")), call("ffi.MapCount", m, ByteArr(b"1")),
                             call("ffi.MapCount", m, 1.0), call("ffi.MapCount", m, float("nan")),
                             call("ffi.MapCount", m, 2 ** 80), call("ffi.MapCount", m, 2 ** 81)),))
print("lookup missing: %r" % (err(call, "ffi.MapGetItem", m, "nope"),))
missing = call("ffi.MapGetItemOrMissing", m, "nope")
invalid = call("ffi.GetInvalidObject")
print("missing object: %r" % ((missing.handle == invalid.handle, show(missing),
                               show(call("ffi.MapGetItemOrMissing", m, 1))),))
# a boxed short string and a small string are the same key
bm = call("ffi.Map", boxed_str("abc"), 1, "abcdefgh", 2)
print("boxed key: %r" % ((call("ffi.MapCount", bm, "abc"), layout(bm)),))
sd = call("ffi.Dict", *flat([("s%d" % i, i) for i in range(8)]))
call("ffi.DictSetItem", sd, boxed_str("s3"), "replaced")
print("boxed dict: %r" % (layout(sd),))

# iteration through the functor visits the entries in layout order
def iterate(kind, m):
    it = call("ffi.%sForwardIterFunctor" % kind, m)
    out = []
    if call("ffi.%sSize" % kind, m) == 0:
        return out
    while True:
        out.append((show(callf(it, 0)), show(callf(it, 1))))
        if not callf(it, 2):
            return out
big = call("ffi.Map", *flat(cases["ints300"]))
print("iterate: %r" % ((iterate("Map", big) == show(big)[1], len(iterate("Map", big))),))
print("iterate small: %r" % (iterate("Map", call("ffi.Map", "x", 1, "y", 2)),))

# Dict mutation: grow, overwrite, erase (heads, tails, chains), clear, regrow
d = call("ffi.Dict")
steps = []
for i in range(40):
    call("ffi.DictSetItem", d, i * 31, i)
    if i in (1, 2, 3, 4, 5, 8, 16, 39):
        steps.append(layout(d))
print("dict grow: %r" % (steps,))
handle_before = d.handle
for k in (0, 31 * 5, 31 * 39, 31 * 17, 12345, 31 * 20):
    call("ffi.DictErase", d, k)
print("dict erase: %r" % ((layout(d), d.handle == handle_before),))
call("ffi.DictSetItem", d, 31 * 5, "back")
call("ffi.DictSetItem", d, 31 * 6, "overwritten")
print("dict reinsert: %r" % (layout(d),))
call("ffi.DictClear", d)
print("dict clear: %r" % ((layout(d), call("ffi.DictSize", d)),))
for i in range(5):
    call("ffi.DictSetItem", d, "again%d" % i, i)
print("dict after clear: %r" % (layout(d),))
small = call("ffi.Dict", 1, 1, 2, 2, 3, 3)
call("ffi.DictErase", small, 2)
call("ffi.DictSetItem", small, 4, 4)
call("ffi.DictSetItem", small, 5, 5)
call("ffi.DictSetItem", small, 6, 6)
print("small dict: %r" % (layout(small),))
print("dict typed: %r" % ([err(call, "ffi.DictGetItem", m, 1), err(call, "ffi.MapSize", d),
                           err(call, "ffi.Map", 1), err(call, "ffi.DictGetItem", d, "gone")],))
# a Map where a Dict<Any, Any> is expected is copied: the Map does not change
call("ffi.DictSetItem", m, "new", 1)
call("ffi.DictClear", m)
print("dict on map: %r" % (call("ffi.MapSize", m),))
print("dict count: %r" % ([call("ffi.DictCount", d, k) for k in ("again0", "again9")],))
print("nested: %r" % (show(call("ffi.Map", "arr", call("ffi.Array", 1, 2), "map", call("ffi.Dict", 1, call("ffi.List"))),),))
"""


@pytest.fixture(scope="module")
def maps():
    return run_all(MAPS)


@pytest.mark.parametrize("runtime", OURS)
def test_map_layouts_agree_with_upstream(runtime, maps):
    ours, upstream = maps[runtime].splitlines(), maps["upstream"].splitlines()
    assert len(ours) == len(upstream) == 3 * 2 * 10 + 18
    for a, b in zip(ours, upstream):
        assert a == b


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_map_semantics(runtime, maps):
    out = tagged(maps[runtime])
    assert out["Map ints3"] == "('small', 3, 4, [0, 1, 2])"
    assert out["Map ints4"] == "('small', 4, 4, [0, 1, 2, 3])"
    assert out["Map ints5"].startswith("('dense', 5, 8, 61, ")
    assert out["Map ints300"].startswith("('dense', 300, 512, 55, ")
    assert out["Dict ints300 size"] == "300"
    assert out["Map dups show"] == "('Map', [(1, 'c'), (2, 'e'), (3, 'd')])"
    # a full 4-entry small map turns dense on overwrite, and the key moves to the end
    assert out["Map full-overwrite show"] == "('Map', [(2, 'b'), (3, 'c'), (4, 'd'), (1, 'again')])"
    assert out["Map dense-overwrite show"] == (
        "('Map', [(0, 0), (1, 1), (3, 3), (4, 4), (5, 5), (2, 'moved')])")
    assert out["Map mixed size"] == "12"
    assert out["lookup boxed"] == "(1, 1, 1, 1, 1, 0, 1, 0)"
    assert out["lookup missing"] == "('ERR', 'KeyError', 'key is not in Map')"
    assert out["missing object"] == "(True, ('Obj', 'ffi.Object'), 'int')"
    assert out["iterate"] == "(True, 300)"
    assert out["iterate small"] == "[('x', 1), ('y', 2)]"
    assert out["dict erase"].endswith(", True)")
    assert out["dict clear"].endswith(", 0)")
    assert out["dict on map"] == "12"
    assert out["dict count"] == "[1, 0]"
    assert out["dict typed"] == (
        "[('ERR', 'TypeError', 'Mismatched type on argument #0 when calling: `ffi.DictGetItem(0: "
        "ffi.Dict, 1: Any) -> Any`. Expected `ffi.Dict` but got `ffi.Map`'), ('ERR', 'TypeError', "
        "'Mismatched type on argument #0 when calling: `ffi.MapSize(0: ffi.Map) -> int`. Expected "
        "`ffi.Map` but got `ffi.Dict`'), ('ERR', 'InternalError', 'Check failed: args.size() % 2 == "
        "0 (1 vs. 0) : '), ('ERR', 'KeyError', 'key is not in Map')]")


ITERATORS = r"""
for make, functor in (("ffi.Map", "ffi.MapForwardIterFunctor"),
                      ("ffi.Dict", "ffi.DictForwardIterFunctor")):
    m = call(make, "a", 1, "a longer key than seven", 2)
    before = rc(m)
    it = call(functor, m)
    keys = [show(callf(it, 0))]
    while callf(it, 2):
        keys.append(show(callf(it, 0)))
    print("%s: %r" % (functor, (rc(m) - before, keys)))  # the functor borrows the map
    if RUNTIME != "upstream":  # upstream reads past the end of its storage
        print("%s past end: %r" % (functor, err(callf, it, 0)))
"""


def test_map_iterators_borrow_their_map():
    outputs = {rt: tagged(out) for rt, out in run_all(ITERATORS).items()}
    for runtime in OURS:
        for name in ("ffi.MapForwardIterFunctor", "ffi.DictForwardIterFunctor"):
            assert outputs[runtime][name] == outputs["upstream"][name]
            assert outputs[runtime][name] == "(0, ['a', 'a longer key than seven'])"
            assert outputs[runtime][name + " past end"] == (
                "('ERR', 'IndexError', 'map iterator is past the end of the map')")
