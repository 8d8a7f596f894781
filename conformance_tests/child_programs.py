"""Generated programs run by a worker: call sequences over registers (reference counts
compared after every step) and operations on one container (its state read after each)."""

from __future__ import annotations

import gc
import json
import sys
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:  # annotations only (a worker imports its modules as scripts)
    from child_env import Env

try:
    from .child_recipes import CALLBACK_LOG, build
    from .child_results import attempt, normalize, raised
    from .harness_faults import fault
except ImportError:  # run as a script: the worker process
    from child_recipes import CALLBACK_LOG, build
    from child_results import attempt, normalize, raised
    from harness_faults import fault


def is_ffi_object(env: Env, value: Any) -> bool:
    """Whether ``value`` wraps a TVM FFI object (upstream's Function, Tensor, Error and
    OpaquePyObject classes do not derive from ``api.Object``)."""
    api = env.api
    return isinstance(value, (api.Object, api.Function, api.Tensor)) or (
        type(value).__name__ in ("Error", "OpaquePyObject") and hasattr(value, "same_as"))


def _counts(env: Env, registers: List[Any]) -> List[Any]:
    if sys.implementation.name != "cpython":  # wrappers dropped so far are garbage: collect
        gc.collect()  # them (their references go at the next call, the probe's below)
    objects = [r for r in registers if is_ffi_object(env, r)]
    return json.loads(str(env.probe.strong_counts(*objects))) if objects else []




def run_program(env: Env, program: Dict[str, Any]) -> List[Any]:
    """Runs a generated call sequence (see ``strategies.programs``); one record per step.

    ``program["init"]`` recipes fill the first registers; each step is
    ``("call", function, [arg recipes or ("reg", i)])`` (its result becomes a
    new register), ``("drop", i)`` or ``("counts",)``. Every record ends with
    the strong counts of all object registers, so reference counting is
    compared after every step.

    On CPython the cycle collector does not run meanwhile: what a step leaves in a
    reference cycle (an exception's traceback holding a callback's arguments) keeps its
    references when the counts are read, whether or not an allocation threshold happened
    to be crossed during the step.
    """
    collecting = gc.isenabled()
    if sys.implementation.name == "cpython":
        gc.disable()
    try:
        return _run_program(env, program)
    finally:
        if collecting:
            gc.enable()


def _run_program(env: Env, program: Dict[str, Any]) -> List[Any]:
    CALLBACK_LOG.clear()
    registers: List[Any] = []
    out: List[Any] = []
    for recipe in program["init"]:
        try:
            registers.append(build(env, recipe))
        except Exception as error:  # noqa: BLE001
            registers.append(None)
            out.append(["init-raises"] + raised(error)[1:])
    out.append(["init", _counts(env, registers)])
    for step in program["steps"]:
        kind = step[0]
        if kind == "call":
            _, name, arg_recipes = step
            try:
                args = [build(env, r, registers) for r in arg_recipes]
            except Exception as error:  # noqa: BLE001
                out.append(["args-raise"] + raised(error)[1:])
                continue
            function = getattr(env.calls, name, None)
            if function is None:
                raise fault(f"the calls kernel has no function {name!r}")
            result: Any = None
            try:
                result = function(*args)
                record = normalize(env, result)
            except Exception as error:  # noqa: BLE001
                record = raised(error)
            del args
            registers.append(result)
            out.append([name, record, _counts(env, registers)])
        elif kind == "drop":
            if registers:
                registers.pop(step[1] % len(registers))
            out.append(["drop", _counts(env, registers)])
        elif kind == "counts":
            out.append(["counts", _counts(env, registers)])
    out.append(["callback-log", list(CALLBACK_LOG)])
    CALLBACK_LOG.clear()
    # C++ may still hold references: release them, and count once more.
    out.append(["release", attempt(env, lambda: env.calls.release()), _counts(env, registers)])
    registers.clear()
    return out


#: What is read of a container after every operation: its form (small/dense), size,
#: capacity (a map's slots), where its data lives, and its reference counts.
_STATE_FIELDS = ("form", "size", "slots", "capacity", "data", "strong", "weak")


def container_state(env: Env, container: Any) -> List[Any]:
    """The probe's report of ``container`` cut to :data:`_STATE_FIELDS`."""
    report = env.dump(container)[0].get("obj") or {}
    return [report.get(field) for field in _STATE_FIELDS]


def run_container(env: Env, program: Dict[str, Any]) -> List[Any]:
    """Builds a container and applies generated operations, Python- and C++-side.

    ``program["make"]`` is ``("py", recipe)`` (the recipe makes an api.Array,
    List, Map or Dict) or ``("cpp", "map"|"dict"|"array"|"list", [recipes])``
    (built by C++ code compiled from upstream's headers, pairs flattened for
    maps). Each op returns a record; ``("dump",)`` records the probe's full
    layout report of the container, and every other op is followed by its
    state (:func:`container_state`), so a wrong capacity or form shows at once.
    """
    api, calls = env.api, env.calls
    out: List[Any] = []
    make = program["make"]
    shared = None
    try:
        # ``program["shared"]``: values built once, which ``("reg", i)`` in the recipes names
        # (one object at several places of the container).
        shared = [build(env, r) for r in program["shared"]] if "shared" in program else None
        if make[0] == "py":
            box = [build(env, make[1], shared)]
        else:
            items = [build(env, r) for r in make[2]]
            box = [getattr(calls, "make_" + make[1])(api.Array(items))]
    except Exception as error:  # noqa: BLE001
        return [["make-raises"] + raised(error)[1:]]
    out.append(["made", env.dump(box[0])[0]])

    def arg(recipe):
        return build(env, recipe, shared)

    for op in program["ops"]:
        name = op[0]
        c = box[0]

        def run(thunk):
            out.append([name, attempt(env, thunk)])

        if name == "dump":
            out.append(["dump", env.dump(c)[0]])
        elif name == "py_items":
            run(lambda: list(c.items()) if hasattr(c, "items") else list(c))
        elif name == "py_len":
            run(lambda: len(c))
        elif name == "py_get":
            run(lambda: c[arg(op[1])])
        elif name == "py_getdefault":
            run(lambda: c.get(arg(op[1]), "<missing>"))
        elif name == "py_contains":
            run(lambda: arg(op[1]) in c)
        elif name == "py_set":
            def setitem():
                c[arg(op[1])] = arg(op[2])
            run(setitem)
        elif name == "py_del":
            def delitem():
                del c[arg(op[1])]
            run(delitem)
        elif name == "py_pop":
            run(lambda: c.pop(arg(op[1])) if op[1] is not None else c.pop())
        elif name == "py_append":
            run(lambda: c.append(arg(op[1])))
        elif name == "py_insert":
            run(lambda: c.insert(op[1], arg(op[2])))
        elif name == "py_clear":
            run(lambda: c.clear())
        elif name == "py_reverse":
            run(lambda: c.reverse())
        elif name == "py_extend":
            run(lambda: c.extend([arg(r) for r in op[1]]))
        elif name == "py_slice":
            run(lambda: c[op[1]:op[2]:op[3]])
        elif name in _EDGE_OPS:
            run(lambda: _EDGE_OPS[name](env, c, [arg(r) if isinstance(r, tuple) else r
                                                  for r in op[1:]]))
        elif name.startswith("cpp_"):
            # C++ reads or mutates the container in place (inline header code).
            fn = getattr(calls, name[4:])
            run(lambda: fn(c, *[arg(r) for r in op[1:]]))
        else:
            raise fault(f"unknown container op {op!r}")
        if name != "dump":
            out.append(["state", container_state(env, c)])
    out.append(["final", env.dump(box[0])[0]])
    return out


def _del_slice(c, start, stop, step):
    del c[start:stop:step]


def _set_slice(c, start, stop, step, values):
    c[start:stop:step] = values


def _deepcopy_sharing(env, c):
    """A deep copy's contents, and which of its items are one object (sharing kept or not)."""
    import copy

    twin = copy.deepcopy(c)
    items = list(twin.values()) if hasattr(twin, "values") else list(twin)
    objects = [x for x in items if isinstance(x, env.api.Object)]
    return [twin, [[i for i, y in enumerate(objects) if x.same_as(y)] for x in objects],
            [x.same_as(y) for x in objects for y in (list(c.values()) if hasattr(c, "values")
                                                     else list(c))
             if isinstance(y, env.api.Object)]]


#: Operations of ``test_container_edges`` (a name, then arguments: recipes are built first):
#: slices deleted and assigned with any step, the dict methods beyond get/set/pop, ``remove``,
#: truth, equality and deep copies (whether the copy keeps its items' sharing).
_EDGE_OPS = {
    "py_del_slice": lambda env, c, a: _del_slice(c, *a),
    "py_set_slice": lambda env, c, a: _set_slice(c, a[0], a[1], a[2], list(a[3:])),
    "py_keys": lambda env, c, a: list(c.keys()),
    "py_values": lambda env, c, a: list(c.values()),
    "py_popitem": lambda env, c, a: c.popitem(),
    "py_setdefault": lambda env, c, a: c.setdefault(*a),
    "py_update": lambda env, c, a: c.update({a[i]: a[i + 1] for i in range(0, len(a), 2)}),
    "py_remove": lambda env, c, a: c.remove(a[0]),
    "py_bool": lambda env, c, a: bool(c),
    "py_eq": lambda env, c, a: [c == c, c == a[0], c != a[0]],
    "py_iter": lambda env, c, a: list(iter(c)),
    "py_deepcopy": lambda env, c, a: _deepcopy_sharing(env, c),
}
