"""Worker side of the dataclass property: a generated ``@py_class`` and what is done with it.

A program (see ``dataclass_strategies.py``) is plain data: a class spec (type
key, decorator options, fields with an annotation, an optional default and
keyword-only flag) and steps (construct from positional and keyword
recipes, read or write a field, ``repr``, ``==``/``<``/``hash`` of two
instances, a shallow copy). The class is made in a module of its own, so its
annotations resolve as in user code; each step's result is normalized (or
the exception it raised), so every front end must report exactly what
upstream reports.
"""

from __future__ import annotations

import copy
import sys
import types
from typing import Any, Dict, List

#: Annotation spellings a spec may use, each written into the class body as is.
ANNOTATIONS = ("int", "float", "bool", "str", "bytes", "Any", "Optional[int]",
               "Optional[str]", "List[int]", "Dict[str, int]", "Tuple[int, str]",
               "Union[int, str]", "List[Optional[float]]")

_HEADER = "from typing import Any, Dict, List, Optional, Tuple, Union\n"


def make_class(env: Any, spec: Dict[str, Any]) -> type:
    """The ``@py_class`` a spec describes (its defaults are recipes, built here)."""
    from child_recipes import build

    module = types.ModuleType(f"conformance_dc_{spec['key'].replace('.', '_')}")
    module.api = env.api
    module.defaults = {name: build(env, default) for name, _, default, _ in spec["fields"]
                       if default is not None}
    sys.modules[module.__name__] = module
    options = ", ".join(f"{name}={value!r}" for name, value in spec["options"].items())
    lines = [_HEADER, f"@api.dataclasses.py_class({spec['key']!r}, {options})",
             "class Generated(api.Object):"]
    for name, annotation, default, kw_only in spec["fields"]:
        value = f"defaults[{name!r}]" if default is not None else None
        if kw_only:
            value = (f"api.dataclasses.field(kw_only=True, default={value})" if value
                     else "api.dataclasses.field(kw_only=True)")
        lines.append(f"    {name}: {annotation}" + (f" = {value}" if value else ""))
    if not spec["fields"]:
        lines.append("    pass")
    exec(compile("\n".join(lines) + "\n", module.__name__, "exec", dont_inherit=True),
         module.__dict__)
    return module.Generated


def _step(env: Any, cls: type, instances: List[Any], step: List[Any]) -> Any:
    from child_recipes import build

    kind = step[0]
    if kind == "construct":
        args = [build(env, r) for r in step[1]]
        kwargs = {name: build(env, r) for name, r in step[2]}
        instances.append(cls(*args, **kwargs))
        return instances[-1]
    target = instances[step[1] % len(instances)]
    if kind == "read":
        return getattr(target, step[2])
    if kind == "write":
        setattr(target, step[2], build(env, step[3]))
        return getattr(target, step[2])
    if kind == "repr":
        return repr(target)
    if kind == "copy":
        made = copy.copy(target)
        return [made.same_as(target), repr(made)]
    other = instances[step[2] % len(instances)]
    if kind == "eq":
        return [target == other, target != other]
    if kind == "lt":
        return [target < other, target <= other, target > other, target >= other]
    if kind == "hash":
        return hash(target) == hash(other)
    from harness_faults import fault

    raise fault(f"unknown step {kind!r}")


def _plain(env: Any, value: Any) -> Any:
    """An instance by its type key and fields (its type index depends on what each runtime
    registered before), anything else as the suite normalizes it."""
    from child_results import normalize

    dc = env.api.dataclasses
    if isinstance(value, list):
        return [_plain(env, item) for item in value]
    if isinstance(value, env.api.Object) and dc.is_dataclass(value):
        return ["instance", type(value).__tvm_ffi_type_info__.type_key,
                [[f.name, _plain(env, getattr(value, f.name))] for f in dc.fields(value)]]
    return normalize(env, value)


def run_dataclass_program(env: Any, program: Dict[str, Any]) -> List[Any]:
    """The normalized result of the class definition, then of each step."""
    from child_results import raised

    try:
        cls = make_class(env, program["spec"])
    except Exception as error:  # noqa: BLE001 - the definition's failure is the result
        return [raised(error)]
    instances: List[Any] = []
    results = [["defined", [f.name for f in env.api.dataclasses.fields(cls)]]]
    for step in program["steps"]:
        if step[0] != "construct" and not instances:
            results.append(["skipped"])
            continue
        try:
            value = _step(env, cls, instances, step)
        except Exception as error:  # noqa: BLE001 - the exception is the result
            results.append(raised(error))
            continue
        results.append(_plain(env, value))
    return results
