"""The contract between the shared API and its cores, checked against every core.

``tvm_ffi_api/{object,convert,function,shortcuts}.pyi`` declare what a core
provides (``tvm_ffi_api/__init__.py`` says how a core is mounted). Here:

* every name a shared module takes from a core module is declared in that stub;
* each core (the reference's, fast's compiled and fast's cffi core, each in
  its own process: one runtime a process) has every declared name, functions
  with the declared parameters (names, kinds, defaults), classes with the
  declared bases, methods and fields;
* a core defines no public name the stubs do not declare, except the few in
  :data:`CORE_OWN`, each with the reason it is public.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API = os.path.join(ROOT, "tvm_ffi_api")
CORE_MODULES = ("object", "convert", "function", "shortcuts")

#: The cores: (front end, ``TVM_FFI_FAST_CORE``, the folder of its four modules).
CORES = {
    "ref": ("tvm_ffi_ref", None, "tvm_ffi_ref"),
    "compiled": ("tvm_ffi_fast", "compiled", "tvm_ffi_fast/compiled_core"),
    "cffi": ("tvm_ffi_fast", "cffi", "tvm_ffi_fast/cffi_core"),
}

#: Public names a core defines beyond the contract, by core and module, each with why it is
#: public: a name used only inside one core (or by a tool built on the reference), never by the
#: shared API. Anything else a core defines is private (``_name``) or declared in the stubs.
CORE_OWN = {
    "ref": {
        "convert": {
            "construct_nested": "the reference's shortcuts build nested containers through it",
            "pod_to_python": "the reference's decoding of plain values, used by its to_python",
            "round_trip": "tvm_ffi_explain shows what a value becomes when a kernel returns it",
        },
        "function": {},
        "shortcuts": {
            "ENABLED": "whether the reference runtime serves the process (shortcuts on)",
            "construct_packed": "the reference's shortcuts build containers from packed args",
        },
    },
    "cffi": {
        # The cffi core's modules share their encoders and cffi plumbing with each other.
        "object": {"decref": "cffi core internal", "incref": "cffi core internal"},
        "convert": {name: "cffi core internal" for name in (
            "address_of", "decode_borrowed", "decode_owned", "device_type_of", "encode",
            "encode_owned", "give_back", "result_is_sound", "result_violation", "take_out")},
        "function": {
            "call_packed": "cffi core internal",
            "lend_callback": "cffi core internal",
            "return_lent": "cffi core internal",
            # extern "Python" callbacks: cffi finds them by these names (core.cdef)
            "tvm_ffi_cffi_safe_call": "named in core.cdef",
            "tvm_ffi_cffi_release_callback": "named in core.cdef",
        },
        "shortcuts": {
            "construct_nested": "the cffi core's shortcuts build nested containers through it",
            "tvm_ffi_cffi_field_convert": "named in core.cdef",
        },
    },
}

#: Declared names a core does not provide, with the reason none is needed there.
CORE_ABSENT = {
    "compiled": {
        "shortcuts": {
            "take_pending_signal_error": "the compiled core raises the exception a failed "
                                         "TVMFFIEnvCheckSignals left in C (errors.c); error.py "
                                         "asks for it only under the Python cores",
        },
    },
}


def _stub_tree(module: str) -> ast.Module:
    with open(os.path.join(API, module + ".pyi")) as f:
        return ast.parse(f.read())


def _top_level_names(tree: ast.Module, imported_from=lambda node: set()) -> set:
    """Names a module binds at its top: defs, classes, assignments, and the imports
    ``imported_from(node)`` picks."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(imported_from(node))
    return names


def _declared(module: str) -> set:
    # a stub re-exports a shared name explicitly: ``from .x import X as X``
    return _top_level_names(_stub_tree(module),
                            lambda node: {a.name for a in node.names if a.asname == a.name})


def _taken_from_cores() -> dict:
    """What the shared modules import from each core module, by module."""
    taken = {m: set() for m in CORE_MODULES}
    for folder, _, files in os.walk(API):
        depth = 0 if folder == API else os.path.relpath(folder, API).count(os.sep) + 1
        for name in files:
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name)) as f:
                tree = ast.parse(f.read())
            aliases = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == depth + 1:
                    if node.module in taken:
                        taken[node.module].update(a.name for a in node.names)
                    elif node.module is None:
                        aliases.update({a.asname or a.name: a.name for a in node.names
                                        if a.name in taken})
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id in aliases):
                    taken[aliases[node.value.id]].add(node.attr)
    return taken


def _defined_by(path: str) -> set:
    """The public names a core module's file defines itself (not imports of shared names)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    names = _top_level_names(  # the compiled core's C types come from ``_frontend``
        tree, lambda node: ({a.asname or a.name for a in node.names}
                            if node.module == "_frontend" else set()))
    return {n for n in names if not n.startswith("_")}


def test_every_name_the_shared_api_takes_from_a_core_is_declared():
    taken = _taken_from_cores()
    assert sum(len(v) for v in taken.values()) > 30  # the scan sees the imports
    undeclared = {m: sorted(taken[m] - _declared(m)) for m in CORE_MODULES}
    assert not any(undeclared.values()), undeclared


@pytest.mark.parametrize("core", sorted(CORES))
def test_a_core_defines_no_public_name_the_contract_does_not_declare(core):
    folder = CORES[core][2]
    extra = {}
    for module in CORE_MODULES:
        own = set(CORE_OWN.get(core, {}).get(module, {}))
        found = _defined_by(os.path.join(ROOT, folder, module + ".py")) - _declared(module) - own
        if found:
            extra[module] = sorted(found)
    assert not extra, f"{core}: declare these in tvm_ffi_api/*.pyi or make them private: {extra}"


# ------------------------------------------------------------- each core, in its own process

_PROBE = r'''
import importlib, inspect, json, os, sys
package = importlib.import_module(sys.argv[1])
out = {}
for module in sys.argv[2].split(","):
    core = importlib.import_module(sys.argv[1] + "." + module)
    info = {"file": os.path.relpath(core.__file__, sys.argv[3]), "names": {}}
    for name in dir(core):
        value = getattr(core, name)
        entry = {"callable": callable(value), "class": isinstance(value, type)}
        try:
            sig = inspect.signature(value)
        except (TypeError, ValueError):
            sig = None
        if sig is not None and not isinstance(value, type):
            entry["params"] = [[p.name, p.kind.name,
                                None if p.default is p.empty else repr(p.default)]
                               for p in sig.parameters.values()]
        if isinstance(value, type):
            entry["mro"] = [c.__module__ + "." + c.__qualname__ for c in value.__mro__]
            entry["attrs"] = sorted(a for a in dir(value))
            entry["fields"] = list(getattr(value, "_fields", ()))
        info["names"][name] = entry
    out[module] = info
print(json.dumps(out))
'''


def _probe(core: str) -> dict:
    package, fast_core, _ = CORES[core]
    env = dict(os.environ)
    env.pop("TVM_FFI_FAST_CORE", None)
    if fast_core is not None:
        env["TVM_FFI_FAST_CORE"] = fast_core
    done = subprocess.run([sys.executable, "-c", _PROBE, package, ",".join(CORE_MODULES), ROOT],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _stub_params(node: ast.FunctionDef) -> list:
    args = node.args
    params = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(positional, defaults):
        kind = "POSITIONAL_ONLY" if arg in args.posonlyargs else "POSITIONAL_OR_KEYWORD"
        params.append([arg.arg, kind, None if default is None else repr(ast.literal_eval(default))])
    if args.vararg:
        params.append([args.vararg.arg, "VAR_POSITIONAL", None])
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append([arg.arg, "KEYWORD_ONLY",
                       None if default is None else repr(ast.literal_eval(default))])
    if args.kwarg:
        params.append([args.kwarg.arg, "VAR_KEYWORD", None])
    return params


@pytest.mark.parametrize("core", sorted(CORES))
def test_a_core_provides_the_declared_names_with_the_declared_signatures(core):
    probed = _probe(core)
    problems = []
    unchecked_signatures = []
    for module in CORE_MODULES:
        info = probed[module]
        assert info["file"].startswith(CORES[core][2] + os.sep), info["file"]  # the core mounted
        names = info["names"]
        absent_ok = CORE_ABSENT.get(core, {}).get(module, {})
        for node in _stub_tree(module).body:
            if isinstance(node, ast.FunctionDef):
                declared = [(node.name, node)]
            elif isinstance(node, ast.ClassDef):
                declared = [(node.name, node)]
            elif isinstance(node, ast.Assign):
                declared = [(t.id, node) for t in node.targets]
            elif isinstance(node, ast.AnnAssign):
                declared = [(node.target.id, node)]
            elif isinstance(node, ast.ImportFrom):
                declared = [(a.name, node) for a in node.names if a.asname == a.name]
            else:
                declared = []
            for name, decl in declared:
                where = f"{core}: {module}.{name}"
                if name in absent_ok:
                    if name in names:
                        problems.append(f"{where} is listed absent in CORE_ABSENT but exists")
                    continue
                if name not in names:
                    problems.append(f"{where} is missing")
                    continue
                entry = names[name]
                if isinstance(decl, ast.FunctionDef):
                    if not entry["callable"]:
                        problems.append(f"{where} is not callable")
                    elif "params" not in entry:  # a C function without a text signature
                        unchecked_signatures.append(where)
                    elif entry["params"] != _stub_params(decl):
                        problems.append(f"{where}{entry['params']} != declared {_stub_params(decl)}")
                elif isinstance(decl, ast.ClassDef):
                    if not entry["class"]:
                        problems.append(f"{where} is not a class")
                        continue
                    for base in decl.bases:
                        base_name = base.id if isinstance(base, ast.Name) else None
                        if base_name in names and names[base_name]["class"]:
                            if names[base_name]["mro"][0] not in entry["mro"]:
                                problems.append(f"{where} does not derive from {base_name}")
                    fields = [s.target.id for s in decl.body if isinstance(s, ast.AnnAssign)]
                    # A NamedTuple's fields in order; a C struct sequence (the compiled
                    # core's) has no ``_fields``: each field an attribute then.
                    if fields and entry["fields"] != fields and (
                            entry["fields"] or not set(fields) <= set(entry["attrs"])):
                        problems.append(f"{where} fields {entry['fields']} != {fields}")
                    for item in decl.body:
                        if isinstance(item, ast.FunctionDef) and item.name not in entry["attrs"]:
                            problems.append(f"{where} has no {item.name}")
                elif isinstance(decl, ast.ImportFrom):  # a shared name the core hands on
                    if decl.names and entry["class"]:
                        shared = f"{CORES[core][0]}.{decl.module}.{name}"
                        if shared not in entry["mro"] and not _stands_in(entry, decl, name):
                            problems.append(f"{where} is neither {shared} nor derived from it")
    assert not problems, problems
    # Only the compiled core's C functions may lack a signature to compare.
    if core != "compiled":
        assert not unchecked_signatures, unchecked_signatures
    else:  # those the compiled core writes in Python still have theirs compared
        assert len(unchecked_signatures) < 20, unchecked_signatures


def _stands_in(entry: dict, decl: ast.ImportFrom, name: str) -> bool:
    """The compiled core's own extension types stand in for the shared Python classes
    ``object_wrapper.CObject``/``Object``/``TensorBase``: they must offer every method those
    do (an ``Object`` its type index too)."""
    if decl.module != "object_wrapper":
        return False
    required = {"same_as", "__chandle__", "__init_handle_by_constructor__",
                "__move_handle_from__", "_adopt"}
    if name == "Object":
        required.add("type_index")
    return required <= set(entry["attrs"])
