"""The dataclass API (py_class, c_class helpers, enums, typed methods) and the type converter.

Each case runs under upstream, the reference and the fast front end (one
interpreter each) and must give upstream's result; the expected results are
written here too, so a change of upstream's behaviour shows. The cases cover
what the two front ends build above their runtimes: type schemas from
annotations and JSON, the converter's rules and messages, the generated
``__init__`` (positional, keyword, defaults, ``KW_ONLY``, ``init=False``),
frozen fields, comparisons, hashing, ``repr``, copying, ``fields``/``asdict``/
``replace``, deferred annotations, enums, ``@method``, and the runtime's
``__ffi_convert__`` attributes and generated ``__ffi_init__``.
"""

from __future__ import annotations

import pytest

from frontend_harness import run_frontend

SETUP = """
import copy, sys, types
from typing import Any, Callable, Dict, List, Optional, Tuple, Union
core, dc = api.core, api.dataclasses
TypeSchema = core.TypeSchema
A = TypeSchema.from_annotation
module = types.ModuleType("dc_cases")
module.api = api
sys.modules["dc_cases"] = module
exec(compile('''
import dataclasses
from typing import Any, ClassVar, Dict, List, Optional, Tuple, Union
py_class, field, KW_ONLY = api.dataclasses.py_class, api.dataclasses.field, api.dataclasses.KW_ONLY


@py_class("dc.Point", eq=True, order=True, unsafe_hash=True)
class Point(api.Object):
    x: int
    y: float = 0.5
    name: str = field(default="p", repr=False)


@py_class("dc.Bag")
class Bag(api.Object):
    items: List[int] = field(default_factory=list)
    table: Dict[str, float] = field(default_factory=dict)
    pair: Tuple[int, str] = (0, "")
    either: Union[int, str] = 0
    maybe: Optional[Point] = None
    anything: Any = None


@py_class("dc.Frozen", frozen=True)
class Frozen(api.Object):
    a: int
    b: str = "b"


@py_class("dc.Options")
class Options(api.Object):
    required: int
    _: KW_ONLY
    keyword: str = "k"
    hidden: int = field(default=7, init=False)
    counter: ClassVar[int] = 0


@py_class("dc.Node")
class Node(api.Object):
    value: int
    next: Optional["Later"] = None


@py_class("dc.Later")
class Later(api.Object):
    node: Node


@py_class("dc.Methods")
class Methods(api.Object):
    x: int

    @api.method
    def twice(self, k: int) -> int:
        return self.x * 2 * k

    @api.method
    @staticmethod
    def answer() -> int:
        return 42

    def plain(self) -> int:
        return self.x


class Color(api.dataclasses.IntEnum, type_key="dc.Color"):
    red = api.dataclasses.entry(value=1)
    blue = api.dataclasses.entry(value=5)


@py_class("dc.Paint")
class Paint(api.Object):
    color: Color


@dataclasses.dataclass
class In:
    a: int
    b: list


@dataclasses.dataclass
class Out:
    inner: In
    tag: str
''', "dc_cases", "exec", dont_inherit=True), module.__dict__)
ns = module.__dict__
Point, Bag, Frozen, Options, Node, Later = (ns[n] for n in
                                           ("Point", "Bag", "Frozen", "Options", "Node", "Later"))
Methods, Color, Paint = ns["Methods"], ns["Color"], ns["Paint"]


def convert(schema, value):
    return core._to_py_class_value(schema.convert(value))


def error(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001
        return [type(err).__name__, str(err)]
    return None


def info_field_names(cls):
    return [f.name for f in cls.__tvm_ffi_type_info__.fields]
"""

#: (case id, source, expected normalized result).
CASES = [
    # ------------------------------------------------------------- schemas
    ("schema from annotations",
     "[repr(A(t)) for t in (int, Optional[str], List[Dict[str, int]], Tuple[int, ...], "
     "Union[int, str, None], Callable[[int], str], tuple, Point)]",
     ["pylist", [["str", s] for s in ("int", "str | None", "List[Dict[str, int]]", "Array[int]",
                                       "int | str | None", "Callable[[int], str]", "tuple",
                                       "dc.Point")]]),
    ("schema from JSON folds C++ spellings",
     "[repr(TypeSchema.from_json_str(s)) for s in ('{\"type\":\"ffi.Array\",\"args\":"
     "[{\"type\":\"ffi.String\"}]}', '{\"type\":\"Variant\",\"args\":[{\"type\":\"int\"},"
     "{\"type\":\"ffi.Map\"}]}', '{\"type\":\"std::optional\",\"args\":[{\"type\":\"bool\"}]}')]",
     ["pylist", [["str", "Array[str]"], ["str", "int | Map[Any, Any]"], ["str", "bool | None"]]]),
    ("schema JSON round trip",
     "s = A(Dict[str, List[Optional[int]]])\nresult = TypeSchema.from_json_obj(s.to_json()) == s",
     ["bool", True]),
    ("schema arity errors",
     "[error(TypeSchema, o, a) for o, a in (('Optional', ()), ('Union', (A(int),)), "
     "('Map', (A(int),)))]",
     ["pylist", [["pylist", [["str", "ValueError"], ["str", m]]] for m in (
         "Optional must have exactly one argument", "Union must have at least two arguments",
         "Map must have 0 or 2 arguments")]]),
    ("unknown annotation", "error(A, complex)",
     ["pylist", [["str", "TypeError"], ["str", "Cannot convert <class 'complex'> to TypeSchema"]]]),
    # ----------------------------------------------------------- converter
    ("scalar conversions",
     "[convert(A(int), True), convert(A(float), 3), convert(A(bool), 0), convert(A(bytes), "
     "bytearray(b'ab')), convert(A(Optional[int]), None)]",
     ["pylist", [["int", 1], ["float", (3.0).hex()], ["bool", False], ["bytes", "6162"],
                 ["none"]]]),
    ("conversion messages",
     "[error(A(t).check_value, v)[1] for t, v in ((int, 'x'), (int, 1 << 70), "
     "(List[int], [1, 'a']), (Dict[str, int], {'k': 'v'}), (Tuple[int, str], (1,)), "
     "(Union[int, str], 1.5), (Point, Bag()))]",
     ["pylist", [["str", m] for m in (
         "type check failed for int: expected int, got str",
         "type check failed for int: integer 1180591620717411303424 out of int64 range "
         "[-9223372036854775808, 9223372036854775807]",
         "type check failed for List[int]: element [1]: expected int, got str",
         "type check failed for Dict[str, int]: value for key 'k': expected int, got str",
         "type check failed for tuple[int, str]: expected tuple of length 2, got tuple of "
         "length 1",
         "type check failed for int | str: expected int | str, got float",
         "type check failed for dc.Point: expected dc.Point, got dc.Bag")]]),
    ("containers convert, or pass through unchanged",
     "a = api.Array([1, 2])\nl = convert(A(List[int]), a)\n"
     "result = [type(l).__name__, list(l), convert(A(Tuple[int, ...]), a).same_as(a), "
     "type(convert(A(Dict[str, int]), {'a': 1})).__name__]",
     ["pylist", [["str", "List"], ["pylist", [["int", 1], ["int", 2]]], ["bool", True],
                 ["str", "Dict"]]]),
    ("protocol values are followed",
     "class V:\n    def __tvm_ffi_value__(self):\n        return 5\n"
     "result = [convert(A(int), V()), error(A(str).check_value, V())[1]]",
     ["pylist", [["int", 5], ["str", "type check failed for str: expected str, got int"]]]),
    ("Shape converts lists through __ffi_convert__",
     "s = convert(TypeSchema('ffi.Shape'), [1, 2, 3])\n"
     "result = [type(s).__name__, tuple(s), "
     "error(TypeSchema('ffi.Shape').convert, [1, 'x'])[1].splitlines()[0]]",
     ["pylist", [["str", "Shape"], ["pytuple", [["int", 1], ["int", 2], ["int", 3]]],
                 ["str", "type conversion failed for ffi.Shape: expected ffi.Shape, got list"]]]),
    ("built-in __ffi_convert__ attributes",
     "f = lambda key: core._lookup_type_attr(core._object_type_key_to_index(key), "
     "'__ffi_convert__')\n"
     "result = [type(f('ffi.List')(api.Array([1]))).__name__, f('ffi.Object')(None), "
     "error(f('ffi.String'), 1)[1], error(f('ffi.Map'))[1]]",
     ["pylist", [["str", "List"], ["none"], ["str", "Cannot cast from `int` to `str`"],
                 ["str", "Mismatched number of arguments when calling: "
                         "`ffi.Map.__ffi_convert__(0: AnyView) -> Map<Any, Any>`. Expected 1 "
                         "but got 0 arguments"]]]),
    # ---------------------------------------------------------- py_class
    ("init: positional, keywords, defaults",
     "p, q = Point(1), Point(y=2.0, x=3, name='q')\n"
     "result = [(p.x, p.y, p.name), (q.x, q.y, q.name)]",
     ["pylist", [["pytuple", [["int", 1], ["float", (0.5).hex()], ["str", "p"]]],
                 ["pytuple", [["int", 3], ["float", (2.0).hex()], ["str", "q"]]]]]),
    ("init errors",
     "[error(Point)[1], error(Point, 1, 2.0, 'n', 4)[1], error(Point, 1, z=2)[1], "
     "error(Point, 'a')[1], error(Options, 1, 2)[1], error(Options)[1]]",
     ["pylist", [["str", m] for m in (
         "dc.Point.__ffi_init__() missing required argument: 'x'",
         "dc.Point.__ffi_init__() takes at most 3 positional argument(s), but 4 were given",
         "dc.Point.__ffi_init__() got an unexpected keyword argument 'z'",
         "dc.Point.__ffi_init__() field 'x':\n  expected int, got str",
         "dc.Options.__ffi_init__() takes at most 1 positional argument(s), but 2 were given",
         "dc.Options.__ffi_init__() missing required argument: 'required'")]]),
    ("kw_only, init=False and ClassVar",
     "o = Options(1, keyword='x')\n"
     "result = [o.required, o.keyword, o.hidden, info_field_names(Options), "
     "str(__import__('inspect').signature(Options))]",
     ["pylist", [["int", 1], ["str", "x"], ["int", 7],
                 ["pylist", [["str", "required"], ["str", "keyword"], ["str", "hidden"]]],
                 ["str", "(required, *, keyword=<MISSING>)"]]]),
    ("field values convert on assignment",
     "b = Bag()\nb.items = (1, True)\nb.table = {'a': 1}\nb.pair = [2, 'two']\nb.either = 'e'\n"
     "b.anything = [1]\n"
     "result = [type(b.items).__name__, list(b.items), dict(b.table), tuple(b.pair), b.either, "
     "type(b.anything).__name__, error(setattr, b, 'maybe', 3)[1]]",
     ["pylist", [["str", "List"], ["pylist", [["int", 1], ["int", 1]]],
                 ["pydict", [[["str", "a"], ["float", (1.0).hex()]]]],
                 ["pytuple", [["int", 2], ["str", "two"]]], ["str", "e"], ["str", "Array"],
                 ["str", "expected dc.Point, got int"]]]),
    ("frozen fields",
     "f = Frozen(1)\nmsg = error(setattr, f, 'a', 2)\ntype(f).a.set(f, 3)\n"
     "g = dc.replace(f, b='c')\nresult = [msg[0], f.a, (g.a, g.b)]",
     ["pylist", [["str", "AttributeError"], ["int", 3],
                 ["pytuple", [["int", 3], ["str", "c"]]]]]),
    ("eq, order and hash by value",
     "result = [Point(1) == Point(1), Point(1) != Point(2), Point(1) < Point(2), "
     "Point(1, 0.5) <= Point(1, 0.5), hash(Point(1)) == hash(Point(1)), Bag() == Bag()]",
     ["pylist", [["bool", True]] * 5 + [["bool", False]]]),
    ("repr", "[repr(Point(1)), repr(Bag(items=[1]))]",
     ["pylist", [["str", "dc.Point(x=1, y=0.5)"],
                 ["str", "dc.Bag(items=[1], table={}, pair=(0, \"\"), either=0, maybe=None, "
                         "anything=None)"]]]),
    ("copy shares fields, a copy is another object",
     "b = Bag(items=[1])\nc = copy.copy(b)\n"
     "result = [c.same_as(b), c.items.same_as(b.items), list(c.items)]",
     ["pylist", [["bool", False], ["bool", True], ["pylist", [["int", 1]]]]]),
    # A setter stores an object (or None) its converter would pass on unchanged without calling
    # it (the fast runtime judges that by type, pyclass_schema.c); the rest still converts.
    ("object values pass through field setters",
     "p, n = Point(1), Node(2)\nlater = Later(n)\nb = Bag(maybe=p, anything=p)\nn.next = later\n"
     "b2 = Bag()\nb2.anything = api.Array([1])\narr = b2.anything\nb2.items = api.Array([3])\n"
     "result = [b.maybe.same_as(p), b.anything.same_as(p), n.next.same_as(later), "
     "b2.anything.same_as(arr), type(b2.items).__name__, list(b2.items), "
     "error(setattr, b, 'maybe', n)[1], error(setattr, n, 'next', p)[1]]",
     ["pylist", [["bool", True]] * 4 + [
         ["str", "List"], ["pylist", [["int", 3]]], ["str", "expected dc.Point, got dc.Node"],
         ["str", "expected dc.Later, got dc.Point"]]]),
    ("None passes through Optional and Any fields only",
     "b = Bag(maybe=Point(1), anything=1)\nb.maybe = None\nb.anything = None\n"
     "result = [b.maybe, b.anything, error(Later, None)[1]]",
     ["pylist", [["none"], ["none"],
                 ["str", "dc.Later.__ffi_init__() field 'node':\n  expected dc.Node, got None"]]]),
    ("deep copy and structural map rebuild py_class fields",
     "p = Point(1)\nb = Bag(items=[1], maybe=p, anything=api.Array([p, Node(3)]))\n"
     "c = copy.deepcopy(b)\nm = api.structural_map(b, [(int, lambda x: x + 10)])\n"
     "result = [c.maybe.same_as(p), c.maybe.x, c.anything[0].same_as(c.maybe), "
     "type(c.anything).__name__, type(c.items).__name__, list(c.items), c.anything[1].value, "
     "m.maybe.same_as(p), m.maybe.x, m.anything[1].value, type(m.items).__name__, list(m.items)]",
     ["pylist", [["bool", False], ["int", 1], ["bool", True], ["str", "Array"], ["str", "List"],
                 ["pylist", [["int", 1]]], ["int", 3], ["bool", False], ["int", 11], ["int", 13],
                 ["str", "List"], ["pylist", [["int", 11]]]]]),
    ("deep copy keeps sharing that only the graph holds",
     "b = Bag(maybe=Point(1))\nb.anything = api.Array([b.maybe, api.Array([b.maybe])])\n"
     "n = Node(1)\nn.next = Later(n)\nc, m = copy.deepcopy(b), copy.deepcopy(n)\n"
     "result = [c.anything[0].same_as(c.maybe), c.anything[1][0].same_as(c.maybe), "
     "c.maybe.same_as(b.maybe), m.next.node.same_as(m), m.same_as(n)]",
     ["pylist", [["bool", True], ["bool", True], ["bool", False], ["bool", True],
                 ["bool", False]]]),
    ("fields, asdict, astuple, is_dataclass",
     "p = Point(1, 2.0, 'n')\n"
     "result = [[f.name for f in dc.fields(p)], dc.asdict(p), dc.astuple(p), "
     "dc.is_dataclass(Point), dc.is_dataclass(api.Array([]))]",
     ["pylist", [["pylist", [["str", "x"], ["str", "y"], ["str", "name"]]],
                 ["pydict", [[["str", "x"], ["int", 1]], [["str", "y"], ["float", (2.0).hex()]],
                             [["str", "name"], ["str", "n"]]]],
                 ["pytuple", [["int", 1], ["float", (2.0).hex()], ["str", "n"]]],
                 ["bool", True], ["bool", False]]]),
    ("match_args", "Point.__match_args__",
     ["pytuple", [["str", "x"], ["str", "y"], ["str", "name"]]]),
    ("a forward reference resolves once the class exists",
     "n = Node(1)\nlater = Later(n)\nn.next = later\nresult = [n.next.node.value, "
     "repr(A(Optional[Later]))]",
     ["pylist", [["int", 1], ["str", "dc.Later | None"]]]),
    ("a duplicate type key is refused",
     "class Again(api.Object):\n    x: int\nresult = error(dc.py_class('dc.Point'), Again)",
     ["pylist", [["str", "ValueError"], ["str", "Type key 'dc.Point' is already registered"]]]),
    ("type info",
     "info = Point.__tvm_ffi_type_info__\n"
     "result = [info.type_key, [f.name for f in info.fields], info.parent_type_info.type_key, "
     "core._type_cls_to_type_info(Point) is info, info.fields[1].metadata]",
     ["pylist", [["str", "dc.Point"], ["pylist", [["str", "x"], ["str", "y"], ["str", "name"]]],
                 ["str", "ffi.Object"], ["bool", True],
                 ["pydict", [[["str", "type_schema"], ["pydict", [[["str", "type"],
                                                                    ["str", "float"]]]]]]]]]),
    # ----------------------------------------------------- methods, enums
    ("@method registers typed methods",
     "info = Methods.__tvm_ffi_type_info__\nm = {x.name: x for x in info.methods}\n"
     "result = [sorted(n for n in m if not n.startswith('__')), m['twice'].func(Methods(3), 2), "
     "m['answer'].is_static, m['answer'].func(), m['twice'].metadata['type_schema']]",
     ["pylist", [["pylist", [["str", "answer"], ["str", "twice"]]], ["int", 12], ["bool", True],
                 ["int", 42],
                 ["pydict", [[["str", "type"], ["str", "Callable"]],
                             [["str", "named_args"], ["pydict", [
                                 [["str", "return"], ["pylist", [["pydict", [[["str", "type"],
                                                                              ["str", "int"]]]]]]],
                                 [["str", "params"], ["pylist", [
                                     ["pydict", [[["str", "type"], ["str", "dc.Methods"]]]],
                                     ["pydict", [[["str", "type"], ["str", "int"]]]]]]]]]]]]]]),
    ("a classmethod cannot be a typed method",
     "error(api.method, classmethod(lambda cls: 0))[0]", ["str", "TypeError"]),
    ("int enums", "[Color(5).same_as(Color.blue), Color.red.value, Color.blue.name, "
                  "repr(Color.red), len(Color), error(Color, 3)[1]]",
     ["pylist", [["bool", True], ["int", 1], ["str", "blue"], ["str", "Color.red"], ["int", 2],
                 ["str", "3 is not a valid Color"]]]),
    ("an enum field takes a variant or its payload",
     "p = Paint(5)\nq = Paint(Color.red)\nresult = [p.color.same_as(Color.blue), "
     "q.color.same_as(Color.red), "
     "error(Paint, 9)[0]]",
     ["pylist", [["bool", True], ["bool", True], ["str", "TypeError"]]]),
    ("standard dataclasses unpack to tuples",
     "from importlib import import_module\n"
     "unpack = import_module(api.__name__ + '.utils.unpack_dataclass').unpack_dataclass_to_tuple\n"
     "In, Out = ns['In'], ns['Out']\n"
     "result = [unpack(Out(In(1, [In(2, [])]), 't')), unpack({'k': [In(3, [])]})]",
     ["pylist", [["pytuple", [["pytuple", [["int", 1], ["pylist", [["pytuple", [["int", 2],
                                                                                 ["pylist", []]]]]]]],
                              ["str", "t"]]],
                 ["pydict", [[["str", "k"], ["pylist", [["pytuple", [["int", 3], ["pylist", []]]]]]]]]]]),
    ("named tuples convert like fields",
     "T = dc.common._make_namedtuple('T', dc.fields(Point))\nt = T(True, 2, 'n')\n"
     "result = [t.x, t.y, error(T, 'a', 1.0, 'n')[1]]",
     ["pylist", [["int", 1], ["float", (2.0).hex()],
                 ["str", "T.x: type conversion failed for int: expected int, got str"]]]),
]


@pytest.fixture(scope="module")
def results():
    cases = [(case_id, source) for case_id, source, _ in CASES]
    return {frontend: run_frontend(frontend, cases, setup=SETUP)
            for frontend in ("upstream", "ref", "fast")}


@pytest.mark.parametrize("case_id,expected", [(c[0], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_case(results, case_id, expected):
    upstream = results["upstream"][case_id]
    assert upstream == expected, "upstream's result changed"
    for frontend in ("ref", "fast"):
        assert results[frontend][case_id] == upstream, frontend
