"""How the modules of ``tvm_ffi_api`` import each other, read from their source (no import).

The graph's nodes are the shared modules and the four core modules (``object``,
``convert``, ``function``, ``shortcuts``: each core's files, all three cores
in turn, since any of them may stand behind the name). An import inside a
function is an edge too: it runs later, but it is a dependency all the same,
and it would hide a cycle from the import system, not from the reader.

What holds, and fails on a change:

* the imports form no cycle, in-function ones included, with any core: the
  modules are layers, and a lower one never imports a higher one. Where a lower
  module must call a higher one, the higher one installs the callee into a slot
  of ``tvm_ffi_api/upcalls.py`` when it loads (or, inside one core, into the
  lower module itself);
* nothing of this package is imported inside a function (shared modules and
  cores alike), except :data:`LAZY_OWN`; another package imported inside a
  function is an optional dependency (:data:`OPTIONAL_PACKAGES`) or a standard
  module slow to import (:data:`DEFERRED_STANDARD`);
* every slot of ``upcalls`` is filled once a front end is imported.

``python tests/test_import_layers.py`` prints the counts.
"""

from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from collections import defaultdict
from typing import Dict, List, Set, Tuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API = os.path.join(ROOT, "tvm_ffi_api")
CORES = ("object", "convert", "function", "shortcuts")
CORE_FOLDERS = ("tvm_ffi_ref", "tvm_ffi_fast/compiled_core", "tvm_ffi_fast/cffi_core")

#: Packages a module may import inside a function: optional dependencies, imported only when
#: a value of theirs is met (the runtime needs cffi alone).
OPTIONAL_PACKAGES = {"torch", "numpy", "ml_dtypes", "torch_c_dlpack_ext", "pytest", "annotationlib"}

#: Standard modules imported inside a function, because importing them costs at start-up what
#: only a build or a lookup needs: (module, imported) -> why.
DEFERRED_STANDARD = {
    ("cpp.build_cache", "hashlib"): "OpenSSL's start-up, paid at the first build",
    ("cpp.toolchain", "importlib"): "importlib.metadata, slow to import: when nvcc is looked for",
    ("libinfo", "importlib.metadata"): "slow to import: when a library is looked for",
}

#: Modules of this package imported inside a function: (module, target) -> why. None closes a
#: cycle (the cycle test counts them); each only puts off loading what few calls need.
LAZY_OWN: Dict[Tuple[str, str], str] = {
    ("arg_setters", "_optional_torch_c_dlpack"): "torch's C exchange add-on: when torch is met",
    ("cpp.extension", "cpp.build_plan"): "the C++ build (subprocess, logging, threads: ~35 ms "
                                         "at start-up otherwise): when something is compiled",
    ("cpp.extension", "cpp.builder"): "the same",
}

#: The upcalls slots a core leaves empty, by core: the compiled core raises a kernel's
#: pending signal in C, so error.raise_taken_error (the slot's one caller) never runs there.
UNFILLED_SLOTS = {"tvm_ffi_fast/compiled_core": {"take_pending_signal_error"}}


class Import:
    """One import statement's edge: where, to which module, and whether inside a function."""

    def __init__(self, module: str, line: int, target: str, deferred: bool, relative: bool):
        self.module, self.line, self.target = module, line, target
        self.deferred, self.relative = deferred, relative


def _module_name(path: str, top: str) -> Tuple[str, bool]:
    rel = os.path.relpath(path, top)[:-3].replace(os.sep, ".")
    if rel == "__init__":
        return "", True
    if rel.endswith(".__init__"):
        return rel[: -len(".__init__")], True
    return rel, False


def _imports_of(path: str, module: str, is_package: bool) -> List[Import]:
    with open(path) as f:
        tree = ast.parse(f.read())
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = [p for p in package if p]
    found = []
    for node in ast.walk(tree):
        deferred = id(node) in inside
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, node.lineno, alias.name, deferred, False))
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append(Import(module, node.lineno, node.module or "", deferred, False))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            if node.module:
                targets = [".".join(base + node.module.split("."))]
            else:
                targets = [".".join(base + [alias.name]) for alias in node.names]
            found.extend(Import(module, node.lineno, t, deferred, True) for t in targets)
    return found


@functools.lru_cache(maxsize=None)
def graph(core_folder: str = CORE_FOLDERS[0]) -> Tuple[Set[str], List[Import]]:
    """The modules (shared, and one core's) and every import among them and out of them."""
    nodes: Set[str] = set()
    imports: List[Import] = []
    for folder, _, files in os.walk(API):
        for name in sorted(files):
            if name.endswith(".py"):
                module, is_package = _module_name(os.path.join(folder, name), API)
                if module:
                    nodes.add(module)
                    imports += _imports_of(os.path.join(folder, name), module, is_package)
    for core in CORES:
        nodes.add(core)
        imports += _imports_of(os.path.join(ROOT, core_folder, core + ".py"), core, False)
    for imp in imports:  # ``from .a import b`` of a name b, not a module: the edge is to a
        if imp.relative:
            while imp.target and imp.target not in nodes and "." in imp.target:
                imp.target = imp.target.rsplit(".", 1)[0]
    return nodes, imports


def _edges(nodes: Set[str], imports: List[Import], deferred_too: bool) -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = defaultdict(set)
    for imp in imports:
        if imp.relative and imp.target in nodes and imp.target != imp.module:
            if deferred_too or not imp.deferred:
                edges[imp.module].add(imp.target)
    return edges


def cycles(nodes: Set[str], edges: Dict[str, Set[str]]) -> List[Set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    groups: List[Set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return groups


def _own_in_function(imports: List[Import]) -> List[Import]:
    return [i for i in imports if i.deferred and (i.relative or i.target.startswith("tvm_ffi"))]


@pytest.mark.parametrize("core", CORE_FOLDERS)
def test_the_imports_form_no_cycle_in_function_imports_included(core):
    nodes, imports = graph(core)
    assert len(imports) > 300  # the scan sees them
    found = cycles(nodes, _edges(nodes, imports, deferred_too=True))
    assert not found, f"import cycles with {core}: {[sorted(g) for g in found]}"


@pytest.mark.parametrize("core", CORE_FOLDERS)
def test_no_import_inside_a_function_but_the_listed_ones(core):
    nodes, imports = graph(core)
    own = _own_in_function(imports)
    unlisted = sorted({f"{i.module}:{i.line} -> {i.target}" for i in own
                       if (i.module, i.target) not in LAZY_OWN})
    assert not unlisted, ("import these at the module's top; if that closes a cycle, move the "
                          "callee down or give it an upcalls slot: " + str(unlisted))
    stale = sorted(set(LAZY_OWN) - {(i.module, i.target) for i in own})
    assert not stale, f"no longer imported inside a function; take them off LAZY_OWN: {stale}"
    others = sorted({f"{i.module}:{i.line} imports {i.target}" for i in imports
                     if i.deferred and not i.relative and not i.target.startswith("tvm_ffi")
                     and i.target.split(".")[0] not in OPTIONAL_PACKAGES
                     and (i.module, i.target) not in DEFERRED_STANDARD})
    assert not others, "import these at the module's top: " + str(others)


_SLOTS_FILLED = """
import importlib, sys
package = importlib.import_module(sys.argv[1])
upcalls = package.upcalls
print(sorted(name for name in upcalls.PROVIDERS
             if getattr(upcalls, name) is upcalls.NotLoadedYet
             or "not installed yet" in getattr(getattr(upcalls, name), "__qualname__", "")))
"""


@pytest.mark.parametrize("core", CORE_FOLDERS)
def test_every_upcall_slot_is_filled_once_a_front_end_is_imported(core):
    env = dict(os.environ, TVM_FFI_FAST_CORE="cffi" if "cffi" in core else "compiled")
    package = "tvm_ffi_ref" if core == "tvm_ffi_ref" else "tvm_ffi_fast"
    out = subprocess.run([sys.executable, "-c", _SLOTS_FILLED, package], capture_output=True,
                         text=True, env=env, cwd=ROOT, check=True).stdout
    assert eval(out) == sorted(UNFILLED_SLOTS.get(core, ()))  # noqa: S307 - our own print


def test_a_slot_is_filled_only_by_the_module_the_table_names():
    sys.path.insert(0, ROOT)
    from tvm_ffi_api import upcalls
    from tvm_ffi_common.installed_later import installed_later

    with pytest.raises(NameError, match="module 'function' provides it"):
        upcalls.install("convert", raise_last_error=print)
    with pytest.raises(NameError, match="no slot"):
        upcalls.install("convert", no_such_slot=print)
    stand_in = installed_later("upcalls.x", "the x module")
    with pytest.raises(RuntimeError, match="installed by the x module"):
        stand_in()


def test_the_scan_sees_an_import_inside_a_function(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from . import a\n\ndef f():\n    from .b import c\n    return c\n")
    found = _imports_of(str(source), "m", False)
    assert [(i.target, i.deferred) for i in found] == [("a", False), ("b", True)]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a", "b", "c"}, {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a", "b"}, {"a": {"b"}}) == []


if __name__ == "__main__":
    for folder in CORE_FOLDERS:
        print("with the core of", folder)
        all_nodes, all_imports = graph(folder)
        in_function = [i for i in all_imports if i.deferred]
        print("  modules:", len(all_nodes))
        print("  imports inside functions:", len(in_function),
              "(of this package's modules:", len(_own_in_function(all_imports)), ")")
        for label, deferred_too in (("module level", False), ("all", True)):
            groups = cycles(all_nodes, _edges(all_nodes, all_imports, deferred_too))
            print(f"  cycles ({label}):", len(groups), [sorted(g) for g in groups])
