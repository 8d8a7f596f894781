"""The worker process: one front end, fed cases over a pipe.

Run as ``python child.py <frontend> <config.json>`` by :mod:`workers`. The
process imports exactly one front end as ``api`` (``tvm_ffi`` for
"upstream", ``tvm_ffi_ref`` for "ref", ``tvm_ffi_fast`` for "fast" and, on its cffi
core, for "fast-cffi"), loads the conformance kernels with ``api.load_module`` and then answers requests until
its stdin closes.

Framing: each message is an 8-byte little-endian length and a pickle. A
request is ``(op, payload)``; the reply is ``("ok", result)`` or
``("harness-error", traceback)`` when this file itself failed (a bug in the
suite, never a front-end result: see ``harness_faults.py``). The front end's
own exceptions are results: ``["raises", class name, first line of the message]``.

Everything a case does is described by plain data (*recipes*, see
:func:`build`) so that every worker constructs the very same Python values
from the same description. The worker imports nothing from the project except,
by file path, ``tvm_ffi_common/abi.py`` (a pure description of the C structs),
so the upstream worker never loads our library, and its sibling modules:

* ``framing.py``: the messages on the pipes (shared with :mod:`workers`);
* ``child_env.py``: :class:`Env`, the front end, NumPy, the bound C API and the kernels;
* ``child_values.py``, ``child_recipes.py``: recipes built into Python values and callbacks;
* ``child_results.py``: values and exceptions normalized into comparable data;
* ``child_programs.py``: generated call programs and container programs;
* ``torch_values.py``, ``dlpack_values.py``: torch tensors and compact DLPack tensors;
* ``state_worker.py``, ``decode_worker.py``, ``structural_worker.py``,
  ``dataclass_child.py``: the operations of their areas.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
from typing import Any, List

try:
    from .child_env import HERE, Env
    from .child_programs import run_container, run_program
    from .child_recipes import build
    from .child_results import attempt, normalize, raised
    from .framing import read_message, write_message
    from .harness_faults import fault, take as take_faults
except ImportError:  # run as a script: the worker process
    from child_env import HERE, Env
    from child_programs import run_container, run_program
    from child_recipes import build
    from child_results import attempt, normalize, raised
    from framing import read_message, write_message
    from harness_faults import fault, take as take_faults


# --------------------------------------------------------------------------
# handlers
# --------------------------------------------------------------------------


def op_hello(env: Env, payload: Any) -> Any:
    name = getattr(env.api, "runtime_name", None)
    core = sys.modules.get("tvm_ffi_fast._core")  # the fast runtime's compiled extension
    return {"frontend": env.frontend, "module": os.path.abspath(env.api.__file__),
            "runtime": name() if callable(name) else "upstream", "lib": env.lib_path,
            "core": os.path.abspath(core.__file__) if core is not None else None,
            "interpreter": sys.implementation.name,
            "fast_core": getattr(env.api, "_CORE", None)}


def op_dump(env: Env, recipes: List[Any]) -> List[Any]:
    """For each recipe: the probe's report of the value as passed to a kernel."""
    out = []
    for recipe in recipes:
        try:
            value = build(env, recipe)
        except Exception as error:  # noqa: BLE001
            out.append(["build-raises"] + raised(error)[1:])
            continue
        try:
            out.append(["dump", env.dump(value)[0]])
        except Exception as error:  # noqa: BLE001
            out.append(raised(error))
        del value
    return out


def _each_value(env: Env, recipes: List[Any], thunk) -> List[Any]:
    out = []
    for recipe in recipes:
        try:
            value = build(env, recipe)
        except Exception as error:  # noqa: BLE001
            out.append(["build-raises"] + raised(error)[1:])
            continue
        out.append(attempt(env, lambda: thunk(value)))
        del value
    return out


def op_echo(env: Env, recipes: List[Any]) -> List[Any]:
    """For each recipe: the value after a round trip through ``calls.echo`` (C++ ``Any -> Any``)."""
    return _each_value(env, recipes, lambda value: env.calls.echo(value))


def op_convert(env: Env, recipes: List[Any]) -> List[Any]:
    """For each recipe: ``api.convert`` of the value."""
    return _each_value(env, recipes, lambda value: env.api.convert(value))


def op_explain(env: Env, recipes: List[Any]) -> List[Any]:
    """For each recipe: what ``tvm-ffi-explain`` makes of the value (reference front end).

    Both renderings (text, SVG) are drawn. A value that can be passed gives
    ``["explained", type index explain shows for args[0], type index the probe
    kernel receives]``; one that cannot gives ``["cannot-pass", error class]``
    next to what passing it to the probe raises.
    """
    from tvm_ffi_explain import explain, render_svg, render_text

    def one(value: Any) -> Any:
        explanation = explain(value)
        render_text(explanation)
        render_svg(explanation)
        if explanation.error is not None:
            try:
                env.dump(value)
                passed = ["passes"]
            except Exception as error:  # noqa: BLE001 - the expected outcome
                passed = raised(error)
            return ["cannot-pass", explanation.error.split(":")[0], passed]
        type_field = explanation.roots[0].sections[0].fields[0]
        assert type_field.name == "type_index", type_field.name
        return ["explained", int.from_bytes(type_field.raw[:4], "little", signed=True),
                env.dump(value)[0]["ti"]]

    out = []
    for recipe in recipes:
        try:
            value = build(env, recipe)
        except Exception as error:  # noqa: BLE001
            out.append(["build-raises"] + raised(error)[1:])
            continue
        try:
            out.append(one(value))
        except Exception as error:  # noqa: BLE001 - the explainer failing is the finding
            out.append(["explain-raises", type(error).__name__, traceback.format_exc()])
        del value
    return out

def op_program(env: Env, programs: List[Any]) -> List[Any]:
    return [run_program(env, p) for p in programs]


def op_container(env: Env, programs: List[Any]) -> List[Any]:
    return [run_container(env, p) for p in programs]


def op_dataclass(env: Env, programs: List[Any]) -> List[Any]:
    """For each program: a generated @py_class and steps on it (``dataclass_child.py``)."""
    from dataclass_child import run_dataclass_program

    return [run_dataclass_program(env, program) for program in programs]


def _load_worker(name: str):
    """A sibling module of operations, loaded by path (the worker is no package)."""
    spec = importlib.util.spec_from_file_location(f"conformance_{name}",
                                                  os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The runtime-state, decoding and structural operations live in modules of their own.
_state_worker = _load_worker("state_worker")
type_info_record = _state_worker.type_info_record
OPS = {name[3:]: fn for name, fn in globals().items() if name.startswith("op_")}
OPS.update(_state_worker.handlers(raised))
OPS.update(_load_worker("decode_worker").handlers(
    build=build, raised=raised, normalize=normalize, attempt=attempt,
    type_info_record=type_info_record, fault=fault, take_faults=take_faults))
OPS.update(_load_worker("structural_worker").handlers(build, attempt))
OPS.update(_load_worker("edge_worker").handlers(build, attempt, raised))
OPS.update(_load_worker("surface_worker").handlers(build, attempt, raised))
OPS.update(_load_worker("capi_surface_worker").handlers(build, attempt, raised))
OPS.update(_load_worker("names_worker").handlers(build, attempt, raised))


def main(frontend: str, config_path: str) -> None:
    # The pipe to the parent is a private duplicate of stdout; fd 1 itself now
    # goes to stderr, so nothing a library prints can corrupt the framing.
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    with open(config_path) as f:
        config = json.load(f)
    try:
        env = Env(frontend, config)
    except BaseException:  # noqa: BLE001 - reported to the parent, which fails loudly
        write_message(channel, ("setup-error", traceback.format_exc()))
        return
    write_message(channel, ("ok", op_hello(env, None)))
    while True:
        request = read_message(requests)
        if request is None:
            break
        op, payload = request
        take_faults()
        try:
            reply = ("ok", OPS[op](env, payload))
        except BaseException:  # noqa: BLE001
            reply = ("harness-error", traceback.format_exc())
        faults = take_faults()
        if faults and reply[0] == "ok":
            # A fault of the suite's own code that the front end swallowed (a callback's
            # exception becomes the kernel's error): the reply would only look like a result.
            reply = ("harness-error", "the suite's own code failed during the request:\n"
                     + "\n".join(faults))
        write_message(channel, reply)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
