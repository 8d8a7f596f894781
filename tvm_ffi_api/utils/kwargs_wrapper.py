"""Keyword arguments and defaults in front of a positional-only function.

TVM FFI functions take positional arguments only. :func:`make_kwargs_wrapper`
builds a plain Python function with a real signature (positional parameters
with right-aligned defaults, then keyword-only ones) that calls the target
with every argument in order. The wrapper is compiled from generated source,
so a call costs what a hand-written wrapper costs: no ``inspect`` binding at
call time. The generated text holds only the validated parameter names;
default values stay objects, reached through the wrapper's globals (``None``
and booleans are written in place, being their own spelling).
"""

from __future__ import annotations

import functools
import inspect
import keyword
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .unpack_dataclass import unpack_dataclass_to_tuple

#: Names the generated code uses for itself; user parameters may not take them.
_TARGET = "__i_target_func"
_MISSING = "__i_MISSING"
_DEFAULTS = "__i_arg_defaults"
_UNPACK = "__i_unpack"
_RESERVED = frozenset({_TARGET, _MISSING, _DEFAULTS, _UNPACK})


class _Missing:
    """Stands for "not given" in a generated signature (a default is then looked up)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


_NOT_GIVEN = _Missing()


def _check_names(names: Sequence[Any], what: str) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate {what.lower()} names found in: {list(names)}")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what} name must be a string, got {type(name).__name__}: "
                            f"{name!r}")
        if keyword.iskeyword(name):
            raise ValueError(f"Invalid {what.lower()} name: {name!r} is a Python keyword and "
                             "cannot be used as a parameter name")
        if not name.isidentifier():
            raise ValueError(f"Invalid {what.lower()} name: {name!r} is not a valid Python "
                             "identifier")


def _check_arguments(arg_names: List[str], arg_defaults: Any, kwonly_names: List[str],
                     kwonly_defaults: Dict[str, Any]) -> None:
    _check_names(arg_names, "Argument")
    if not isinstance(arg_defaults, tuple):
        raise TypeError(f"arg_defaults must be a tuple, got {type(arg_defaults).__name__}")
    if len(arg_defaults) > len(arg_names):
        raise ValueError(f"arg_defaults has {len(arg_defaults)} values but only "
                         f"{len(arg_names)} positional arguments")
    _check_names(kwonly_names, "Keyword-only argument")
    for name in kwonly_defaults:
        if name not in kwonly_names:
            raise ValueError(f"Default provided for '{name}' which is not in kwonly_names: "
                             f"{kwonly_names}")
    both = set(arg_names) & set(kwonly_names)
    if both:
        raise ValueError(f"Arguments cannot be both positional and keyword-only: {both}")
    taken = (set(arg_names) | set(kwonly_names)) & _RESERVED
    if taken:
        raise ValueError(f"Argument names conflict with internal names: {taken}. Please avoid "
                         'using names starting with "__i_"')


def _generate(params: List[Tuple[str, bool, Any]], first_kwonly: int,
              unpacked: frozenset) -> Tuple[str, Dict[str, Any]]:
    """The wrapper's source and the defaults it looks up: ``params`` are
    ``(name, has_default, default)`` in order, keyword-only from ``first_kwonly``."""
    signature, passed, looked_up = [], [], {}
    for position, (name, has_default, default) in enumerate(params):
        if position == first_kwonly:
            signature.append("*")
        value = name
        if not has_default:
            signature.append(name)
        elif default is None or type(default) is bool:
            signature.append(f"{name}={default!r}")
        else:
            signature.append(f"{name}={_MISSING}")
            looked_up[name] = default
            value = f"({_DEFAULTS}[{name!r}] if {name} is {_MISSING} else {name})"
        passed.append(f"{_UNPACK}({value})" if name in unpacked else value)
    source = (f"def wrapper({', '.join(signature)}):\n"
              f"    return {_TARGET}({', '.join(passed)})\n")
    return source, looked_up


def make_kwargs_wrapper(target_func: Callable, arg_names: List[str], arg_defaults: tuple = (),
                        kwonly_names: Optional[List[str]] = None,
                        kwonly_defaults: Optional[Dict[str, Any]] = None,
                        prototype: Optional[Callable] = None,
                        map_dataclass_to_tuple: Optional[List[str]] = None) -> Callable:
    """A function ``wrapper(<arg_names>, *, <kwonly_names>)`` calling ``target_func``
    with all of them, positionally, in that order.

    ``arg_defaults`` are the defaults of the last positional parameters (as a
    function's ``__defaults__``); ``kwonly_defaults`` those of keyword-only
    ones (others are required). ``prototype`` lends the wrapper its name, doc,
    module, qualified name and annotations. Arguments named in
    ``map_dataclass_to_tuple`` are turned from dataclass instances into
    tuples (``utils.unpack_dataclass.unpack_dataclass_to_tuple``) on the way.
    Bad names or defaults raise ``TypeError``/``ValueError`` naming them.
    """
    kwonly_names = list(kwonly_names or [])
    kwonly_defaults = dict(kwonly_defaults or {})
    _check_arguments(arg_names, arg_defaults, kwonly_names, kwonly_defaults)
    first_default = len(arg_names) - len(arg_defaults)
    params = [(name, i >= first_default, arg_defaults[i - first_default] if i >= first_default
               else None) for i, name in enumerate(arg_names)]
    params += [(name, name in kwonly_defaults, kwonly_defaults.get(name))
               for name in kwonly_names]
    unpacked = frozenset(map_dataclass_to_tuple or ())
    source, looked_up = _generate(params, len(arg_names) if kwonly_names else -1, unpacked)
    scope: Dict[str, Any] = {_TARGET: target_func, _MISSING: _NOT_GIVEN, _DEFAULTS: looked_up}
    if unpacked:
        scope[_UNPACK] = unpack_dataclass_to_tuple
    made: Dict[str, Any] = {}
    exec(compile(source, "<kwargs_wrapper>", "exec"), scope, made)  # noqa: S102 - our own text
    wrapper = made["wrapper"]
    if prototype is not None:
        functools.update_wrapper(wrapper, prototype, updated=())
    return wrapper


def make_kwargs_wrapper_from_signature(target_func: Callable, signature: inspect.Signature,
                                       prototype: Optional[Callable] = None,
                                       exclude_arg_names: Optional[Iterable[str]] = None,
                                       map_dataclass_to_tuple: Optional[List[str]] = None
                                       ) -> Callable:
    """:func:`make_kwargs_wrapper` with the parameters of ``signature`` (less those in
    ``exclude_arg_names``, which need not exist); ``*args``/``**kwargs`` are refused."""
    excluded = set(exclude_arg_names or ())
    arg_names: List[str] = []
    arg_defaults: List[Any] = []
    kwonly_names: List[str] = []
    kwonly_defaults: Dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name in excluded:
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise ValueError("*args not supported in wrapper generation")
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise ValueError("**kwargs not supported in wrapper generation")
        has_default = param.default is not inspect.Parameter.empty
        if param.kind is inspect.Parameter.KEYWORD_ONLY:
            kwonly_names.append(name)
            if has_default:
                kwonly_defaults[name] = param.default
            continue
        if arg_defaults and not has_default:
            raise ValueError(f"Required positional parameter '{name}' cannot follow "
                             "parameters with defaults")
        arg_names.append(name)
        if has_default:
            arg_defaults.append(param.default)
    return make_kwargs_wrapper(target_func, arg_names, tuple(arg_defaults), kwonly_names,
                               kwonly_defaults, prototype, map_dataclass_to_tuple)
