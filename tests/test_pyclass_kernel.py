"""A Python-defined object type is a real FFI type: C++ reads, writes and makes its objects.

``tests/kernels/pyclass_reflection.cc`` is compiled against upstream's headers
and knows nothing of the Python classes below: it finds their fields through
``TVMFFITypeInfo`` (``reflection::ForEachFieldInfo``, the field getters and
setters), reads native fields straight from memory at their offsets, makes
objects through the generated ``__ffi_init__`` type attribute and calls a
method registered with ``@method``. It also reads objects through the structs
of ``tests/kernels/pyclass_abi.h``, the header ``dataclasses.gen_abi_cpp``
generates for these types (each front end must generate exactly that text). Every case runs under upstream, the
reference and the fast front end, and must give the same result under each
(the results are also written out here, so a change shows).
"""

from __future__ import annotations

import os

import pytest

from frontend_harness import KERNEL_DIR, run_frontend

#: The Python-defined types, made in a module of their own (annotations resolve in it).
TYPES = """
from typing import List, Optional

py_class, field = api.dataclasses.py_class, api.dataclasses.field


@py_class("pyk.Base")
class Base(api.Object):
    tag: str
    flag: bool = False


@py_class("pyk.Point", eq=True)
class Point(Base):
    x: int = 0
    y: float = 0.0
    items: List[int] = field(default_factory=list)
    parent: Optional[Base] = None

    @api.method
    def norm1(self) -> float:
        return abs(self.x) + abs(self.y)

    @api.method
    def shifted(self, dx: int) -> "Point":
        return Point(self.tag, self.flag, self.x + dx, self.y)
"""

#: A setup snippet defining ``Base`` and ``Point`` (the types above).
DEFINE_TYPES = f"""
import sys, types
module = types.ModuleType("pyk_types")
module.api = api
sys.modules["pyk_types"] = module
exec(compile({TYPES!r}, "pyk_types", "exec", dont_inherit=True), module.__dict__)
Base, Point = module.Base, module.Point
"""

SETUP = DEFINE_TYPES + """
g = api.get_global_func
layout, get_field, set_field = (g("pyclass_reflection." + n)
                                for n in ("layout", "get_field", "set_field"))
read_int64_at = g("pyclass_reflection.read_int64_at")
read_double_at = g("pyclass_reflection.read_double_at")
make, call_method = g("pyclass_reflection.make"), g("pyclass_reflection.call_method")
describe = g("pyclass_reflection.describe")
"""

with open(os.path.join(KERNEL_DIR, "pyclass_abi.h")) as _header:
    #: gen_abi_cpp's header for the types (pinned: the kernel is compiled with it).
    ABI_HEADER = _header.read()

#: (case id, source, expected normalized result).
CASES = [
    ("layout", "layout(Point('p'))",
     ["str", "pyk.Point tag@24/16:-1 flag@40/1:2 x@48/8:1 y@56/8:3 items@64/8:64 "
             "parent@72/16:-1"]),
    ("reads fields through getters",
     "p = Point('abcdefghij', True, 7, 2.5, [1, 2], Base('b'))\n"
     "result = [get_field(p, n) for n in ('tag', 'flag', 'x', 'y', 'items')]\n"
     "result.append(get_field(p, 'parent').same_as(p.parent))",
     ["pylist", [["str", "abcdefghij"], ["bool", True], ["int", 7], ["float", (2.5).hex()],
                 ["list", [["int", 1], ["int", 2]]], ["bool", True]]]),
    ("reads native fields at their offsets",
     "p = Point('t', x=-9, y=0.25)\nresult = (read_int64_at(p, 'x'), read_double_at(p, 'y'))",
     ["pytuple", [["int", -9], ["float", (0.25).hex()]]]),
    ("writes through setters, converting",
     "p = Point('t')\nset_field(p, 'x', True)\nset_field(p, 'y', 3)\n"
     "set_field(p, 'items', (4, 5))\nset_field(p, 'tag', 'longer than seven')\n"
     "result = (p.x, p.y, type(p.items).__name__, list(p.items), p.tag)",
     ["pytuple", [["int", 1], ["float", (3.0).hex()], ["str", "List"],
                  ["pylist", [["int", 4], ["int", 5]]], ["str", "longer than seven"]]]),
    ("a setter refuses a value of the wrong type",
     "p = Point('t')\nset_field(p, 'x', 'seven')",
     ["raises", "TypeError", "expected int, got str"]),
    ("a setter refuses an object of another type",
     "p = Point('t')\nset_field(p, 'parent', api.Array([1]))",
     ["raises", "TypeError", "expected pyk.Base, got ffi.Array"]),
    ("makes an object through __ffi_init__",
     "q = make('pyk.Point', ['made', True, 3, 1.5])\n"
     "result = (type(q) is Point, q.tag, q.flag, q.x, q.y, len(q.items), q.parent is None)",
     ["pytuple", [["bool", True], ["str", "made"], ["bool", True], ["int", 3],
                  ["float", (1.5).hex()], ["int", 0], ["bool", True]]]),
    ("__ffi_init__ reports a missing argument",
     "make('pyk.Point', [])",
     ["raises", "TypeError", "pyk.Point.__ffi_init__() missing required argument: 'tag'"]),
    ("__ffi_init__ reports a conversion error with the field",
     "make('pyk.Point', ['t', False, 'x'])",
     ["raises", "TypeError", "pyk.Point.__ffi_init__() field 'x':"]),
    ("calls a Python method by name",
     "result = (call_method(Point('t', x=-2, y=1.5), 'norm1', []), "
     "call_method(Point('t', x=1), 'shifted', [4]).x)",
     ["pytuple", [["float", (3.5).hex()], ["int", 5]]]),
    ("gen_abi_cpp generates the pinned header",
     "api.dataclasses.gen_abi_cpp(['pyk.*']) == open(" + repr(os.path.join(KERNEL_DIR,
                                                                            "pyclass_abi.h"))
     + ").read()",
     ["bool", True]),
    ("the generated structs read live objects",
     "describe(Point('made', True, 7, 0.5, [1, 2, 3]))",
     ["str", "made flag=1 x=7 y=0.500000 items=3"]),
    ("objects C++ made compare by value like Python's",
     "result = make('pyk.Point', ['a', False, 1]) == Point('a', False, 1)",
     ["bool", True]),
]


@pytest.fixture(scope="module")
def pyclass_results(kernels):
    with open(os.path.join(KERNEL_DIR, "pyclass_reflection.cc")) as f:
        library = kernels.build("pyclass_reflection", ABI_HEADER + f.read())
    cases = [(case_id, source) for case_id, source, _ in CASES]
    return {frontend: run_frontend(frontend, cases, setup=SETUP, libs={"pyk": library})
            for frontend in ("upstream", "ref", "fast")}


@pytest.mark.parametrize("case_id,expected", [(c[0], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_case(pyclass_results, case_id, expected):
    upstream = pyclass_results["upstream"][case_id]
    assert upstream == expected, "upstream's result changed"
    for frontend in ("ref", "fast"):
        assert pyclass_results[frontend][case_id] == upstream, frontend
