"""Behaviours a bad-input fuzz found differing from upstream, held to upstream's.

Each snippet runs under upstream, fast and ref, each in a fresh interpreter, and prints what
it saw; the three outputs must be equal:

* registering a type key that exists (a built-in such as ``ffi.Array``, whose class ours
  makes on first use, or one registered earlier) raises ``ValueError: Type key '...' is
  already registered``, except a key whose registration failed (a retry takes it);
* a List iterates the length it had when iteration started: items appended meanwhile are
  not visited, and a List cleared meanwhile raises upstream's ``IndexError``;
* ``remove_global_func`` returns None, whether or not the name was registered;
* setting an attribute a py_class does not declare raises ``AttributeError``;
* ``tvm_ffi.cpp.load_inline`` with empty C++ sources returns a Module (with no functions);
* a Function, Tensor, Error or opaque Python object is a ``core.CObject`` and not an
  ``Object``; containers and modules are both.

Where ours deliberately differs (a Dict changed during iteration raises Python's
``RuntimeError``, tests/stress_cases.py) the case is pinned there, not here.
"""

from __future__ import annotations

import pytest
from subprocess_utils import run_python

MODULES = {"upstream": "tvm_ffi", "fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref"}

SNIPPETS = {
    "type keys": r"""
for key in ["ffi.Array", "ffi.Map", "ffi.Function", "ffi.Object", "fuzz.Twice", "fuzz.Twice"]:
    try:
        @api.dataclasses.py_class(key)
        class Taken(api.Object):
            pass
        print(key, "registered")
    except Exception as error:
        print(key, type(error).__name__, error)
""",
    "type key after a failed registration": r"""
# a decoration that fails (an annotation no converter takes) leaves its key free for a retry
# under the same parent; the key is then taken again
for attempt, annotation in [("bad", object), ("good", int), ("again", int)]:
    try:
        api.dataclasses.py_class("fuzz.Retried")(
            type("Retried", (api.Object,), {"__annotations__": {"x": annotation}}))
        print(attempt, "registered")
    except Exception as error:
        print(attempt, type(error).__name__, str(error).splitlines()[0][:60])
""",
    "list iteration": r"""
grown = api.List([1, 2, 3])
seen = []
for x in grown:
    seen.append(x)
    grown.append(x + 10)
print("appended while iterating:", seen, len(grown))
cleared = api.List([1, 2, 3])
seen = []
try:
    for x in cleared:
        seen.append(x)
        cleared.clear()
except IndexError as error:
    print("cleared while iterating:", seen, "IndexError", error)
shrunk = api.List([1, 2, 3, 4])
seen = []
try:
    for x in shrunk:
        seen.append(x)
        shrunk.pop()
except IndexError as error:
    print("popped while iterating:", seen, "IndexError", error)
""",
    "unknown attribute on a py_class instance": r"""
@api.dataclasses.py_class("fuzz.Point")
class Point(api.Object):
    x: int

point = Point(1)
for name in ["y", "__dict__", "x"]:
    try:
        setattr(point, name, 2)
        print(name, "set", getattr(point, name))
    except Exception as error:
        print(name, type(error).__name__, error)
""",
    "load_inline with empty sources": r"""
import tempfile
with tempfile.TemporaryDirectory() as directory:
    for sources in ["", [""]]:
        module = api.cpp.load_inline("fuzz_empty", cpp_sources=sources, build_directory=directory)
        print(repr(sources), type(module).__name__, isinstance(module, api.Module))
""",
    "object hierarchy": r"""
import numpy as np
values = {"function": api.get_global_func("ffi.Array"),
          "tensor": api.from_dlpack(np.zeros(3, dtype="float32")),
          "opaque": api.convert(object()),
          "error": api.convert(ValueError("e")),
          "array": api.convert([1]),
          "module": api.system_lib() if hasattr(api, "system_lib") else api.Array([])}
for name, value in values.items():
    print(name, type(value).__name__, isinstance(value, api.Object),
          isinstance(value, api.core.CObject), issubclass(type(value), api.Object),
          api.convert(value) is value)
""",
    "remove_global_func": r"""
api.register_global_func("fuzz.temporary", lambda: 1)
print(api.remove_global_func("fuzz.temporary"), api.remove_global_func("fuzz.temporary"),
      api.get_global_func("fuzz.temporary", allow_missing=True))
""",
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_matches_upstream(name):
    """fast and ref print exactly what upstream prints."""
    outputs = {frontend: run_python(f"import {module} as api\n" + SNIPPETS[name])
               for frontend, module in MODULES.items()}
    assert outputs["upstream"].strip(), outputs
    assert outputs["fast"] == outputs["upstream"], outputs
    assert outputs["ref"] == outputs["upstream"], outputs
