"""The surface map (``README.md``, "Surface map") names every public name and C API entry.

The names come from the code and the headers (:mod:`surface`), never from a hand-kept
list: a public name added to the API, or a ``TVMFFI*`` function added to the headers,
fails here until the map gives it a row, with the property that compares it with upstream
or "not covered" and why. A row must name a property that exists (``file.py::test``) and
a name that is still public, so the map cannot go stale either way.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from . import surface

NOT_COVERED = "not covered: "


def _public_python_names():
    done = subprocess.run([sys.executable, os.path.join(surface.HERE, "surface.py")],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TVM_FFI_IMPL=""))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _tests_in(filename):
    with open(os.path.join(surface.HERE, filename)) as f:
        tree = ast.parse(f.read())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and node.name.startswith("test_")}


def test_every_public_name_has_a_row():
    rows = surface.surface_map()
    names = _public_python_names() + surface.c_api_names()
    assert len(names) > 300, names  # the listing itself works
    missing = [name for name in names if name not in rows]
    assert not missing, f"public names without a row in README.md's surface map: {missing}"
    stale = sorted(set(rows) - set(names))
    assert not stale, f"surface-map rows for names that are not public: {stale}"


def test_every_row_names_a_property_or_a_reason():
    problems = []
    for name, cell in surface.surface_map().items():
        if cell.startswith(NOT_COVERED):
            if len(cell) <= len(NOT_COVERED) + 3:
                problems.append(f"{name}: 'not covered' without a reason")
            continue
        for ref in cell.replace("`", "").split(","):
            filename, _, test = ref.strip().partition("::")
            if not (filename.startswith("test_") and os.path.exists(
                    os.path.join(surface.HERE, filename)) and test in _tests_in(filename)):
                problems.append(f"{name}: {ref.strip()!r} is no property of conformance_tests")
    assert not problems, "\n".join(problems)
