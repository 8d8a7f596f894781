"""Known disagreements between our front ends and upstream: bugs, each with a repro.

Every entry here is a bug in a front end (upstream is the specification).
The properties leave inputs that hit one out, so that they keep checking
everything else; ``test_known_divergences.py`` runs each entry's minimal
reproduction as a strict xfail, so fixing the bug turns that test red until
the entry is deleted from here (and the properties cover the input again).

A recipe node is matched in a *context*: ``"arg"`` (the value is passed to a
kernel, or built) or ``"convert"`` (the value goes through ``api.convert``:
the top of a ``test_convert`` case, or the inside of a ``("converted", x)``
recipe). A container operation (``test_containers``) is matched as a node in
the context ``"op:<container kind>"`` (``"op:Array"``, ``"op:Dict"``, ...).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, NamedTuple, Tuple


class Divergence(NamedTuple):
    id: str
    summary: str
    matches: Callable[[Any, str], bool]  # (recipe node, context) -> does it hit the bug?
    repro: str  # Python for the API as ``api`` (and ``np``); its value differs from upstream's


def walk(recipe: Any, context: str = "arg") -> Iterator[Tuple[Any, str]]:
    """Every ``(recipe node, context)`` inside ``recipe``."""
    if isinstance(recipe, tuple) and recipe and isinstance(recipe[0], str):
        yield recipe, context
        if recipe[0] == "converted":
            yield from walk(recipe[1], "convert")
            return
    if isinstance(recipe, (list, tuple)):
        for item in recipe:
            if isinstance(item, (list, tuple)):
                yield from walk(item, "arg")


KNOWN: List[Divergence] = [
    Divergence(
        "convert-numpy-dtype",
        "api.convert(numpy.dtype) gives the dtype of upstream's table entry, and raises "
        "KeyError(dtype) for any numpy.dtype outside it (bool, complex64, '>i4', ...); "
        "ref's convert encodes the value as an argument and decodes it (ValueError).",
        lambda r, ctx: ctx == "convert" and r[0] == "npdtype",
        "result = api.convert(np.dtype('bool'))",
    ),
    Divergence(
        "convert-str-bytes-class",
        "api.convert(str) returns upstream's core.String and api.convert(bytes/bytearray) its "
        "core.Bytes whatever the length, with no object behind them (each pass makes a fresh "
        "String/Bytes object, like a plain str); ref returns a plain str/bytes up to 7 bytes, "
        "and beyond that a String/Bytes holding the object it made, which every later pass "
        "shares (so reference counts differ: Array([convert(b'0123456789')]) holds a copy "
        "upstream, the same object in ref).",
        lambda r, ctx: ctx == "convert" and r[0] in ("str", "bytes", "bytearray"),
        "result = [type(api.convert('abc')).__name__, type(api.convert(b'0123456789')).__name__]",
    ),
    Divergence(
        "convert-numpy-scalar",
        "api.convert(numpy integer/float scalar) returns it unchanged (it is a numbers.Number); "
        "ref turns it into a Python int/float.",
        lambda r, ctx: ctx == "convert" and r[0] == "npscalar" and r[1] != "bool",
        "result = type(api.convert(np.int32(3))).__name__",
    ),
    Divergence(
        "convert-opaque",
        "api.convert of a value no rule converts (numpy.bool_, api.Device, a plain object) "
        "returns an OpaquePyObject wrapping it (api.Device included: convert has no Device "
        "rule upstream); ref returns the value itself.",
        lambda r, ctx: ctx == "convert" and (r[0] in ("opaque", "device")
                                            or (r[0] == "npscalar" and r[1] == "bool")),
        "result = type(api.convert(object())).__name__",
    ),
    Divergence(
        "convert-identity",
        "api.convert(x) of a value that already is an FFI object returns x itself upstream "
        "(`convert(a) is a` for Array, List, Map, Dict, Shape, String, Bytes); upstream's "
        "Function, Tensor and Error are not core.Object, so convert wraps a Function in a new "
        "Python-callback Function, re-imports a Tensor by DLPack (a new Tensor object) and "
        "turns an Error into an OpaquePyObject. ref returns a new wrapper of the same object "
        "(one more strong reference while both live) in every case.",
        lambda r, ctx: ctx == "convert" and r[0] in ("Array", "List", "Map", "Dict", "Shape",
                                                     "tensor", "converted"),
        "a = api.Array([1])\nresult = api.convert(a) is a",
    ),
]


def container_op_divergent(kind: str, op: Any) -> bool:
    """Whether a container operation on a container of ``kind`` hits a known divergence."""
    return any(d.matches(op, "op:" + kind) for d in KNOWN) or any(
        hits_known_divergence(item) for item in op[1:] if isinstance(item, tuple))


def hits_known_divergence(recipe: Any, context: str = "arg") -> bool:
    return any(d.matches(node, ctx) for node, ctx in walk(recipe, context) for d in KNOWN)


def without_known_divergences(recipes: List[Any], context: str = "arg") -> List[Any]:
    """The recipes that hit no known divergence (the others are covered by their repro)."""
    return [r for r in recipes if not hits_known_divergence(r, context)]
