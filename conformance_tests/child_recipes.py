"""Recipes: plain data describing a Python value (see ``strategies.py``), built the same way
by every worker, and the Python callbacks a recipe describes."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, List, Optional

if TYPE_CHECKING:  # annotations only (a worker imports its modules as scripts)
    from child_env import Env

try:
    from .child_results import normalize
    from .child_values import EXCEPTIONS, Opaque, float_from_bits
    from .dlpack_values import make_compact_tensor
    from .harness_faults import fault
    from .torch_values import make_torch_tensor, split_view
except ImportError:  # run as a script: the worker process
    from child_results import normalize
    from child_values import EXCEPTIONS, Opaque, float_from_bits
    from dlpack_values import make_compact_tensor
    from harness_faults import fault
    from torch_values import make_torch_tensor, split_view


def make_ndarray(np, dtype: str, shape, view, seed: int):
    """A NumPy array of ``dtype``: a base array of ``shape`` filled from ``seed``, then ``view``.

    ``view`` is a list of per-axis ``(start, stop, step)`` slices (None: the
    whole axis), optionally followed by ``"T"`` (transpose).
    """
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape)) if shape else 1
    dt = np.dtype(dtype)
    if dt.kind == "b":
        base = rng.integers(0, 2, size=count).astype(dt)
    else:
        raw = rng.integers(0, 256, size=count * dt.itemsize, dtype=np.uint8).tobytes()
        base = np.frombuffer(raw, dtype=dt).copy()
    slices, transpose = split_view(view)
    out = base.reshape(shape)
    out = out[slices] if slices else out
    return out.T if transpose else out


def build(env: Env, recipe: Any, registers: Optional[List[Any]] = None,
          received: Optional[tuple] = None) -> Any:
    """The Python value a recipe describes (see ``strategies.py`` for the recipes).

    ``("reg", i)``, at any depth, is the i-th value a call program holds
    (``registers``, modulo their number; None when it holds none): outside a
    program it is a fault of the suite. Inside a callback's recipes,
    ``("arg", i)`` is the i-th argument the callback received (modulo their
    number; None when none) and ``("args",)`` all of them, as a list
    (``received``): outside a callback either is a fault.
    """
    api, np = env.api, env.np
    tag = recipe[0]

    def sub(item: Any) -> Any:
        return build(env, item, registers, received)

    if tag == "reg":
        if registers is None:
            raise fault(f"a register outside a call program: {recipe!r}")
        return registers[recipe[1] % len(registers)] if registers else None
    if tag in ("arg", "args"):
        if received is None:
            raise fault(f"a callback's argument outside a callback: {recipe!r}")
        if tag == "args":
            return list(received)
        return received[recipe[1] % len(received)] if received else None
    if tag == "none":
        return None
    if tag == "bool":
        return bool(recipe[1])
    if tag == "int":
        return int(recipe[1])
    if tag == "float":
        return float_from_bits(recipe[1])
    if tag == "str":
        return recipe[1]
    if tag == "bytes":
        return bytes(recipe[1])
    if tag == "bytearray":
        return bytearray(recipe[1])
    if tag == "dtype":
        return api.dtype(recipe[1])
    if tag == "npdtype":
        return np.dtype(recipe[1])
    if tag == "device":
        return api.device(recipe[1], recipe[2])
    if tag == "list":
        return [sub(item) for item in recipe[1]]
    if tag == "tuple":
        return tuple(sub(item) for item in recipe[1])
    if tag == "dict":
        return {sub(k): sub(v) for k, v in recipe[1]}
    if tag == "Array":
        return api.Array([sub(item) for item in recipe[1]])
    if tag == "List":
        return api.List([sub(item) for item in recipe[1]])
    if tag == "Map":
        return api.Map({sub(k): sub(v) for k, v in recipe[1]})
    if tag == "Dict":
        return api.Dict({sub(k): sub(v) for k, v in recipe[1]})
    if tag == "Shape":
        return api.Shape(tuple(recipe[1]))
    if tag == "ndarray":
        return make_ndarray(np, *recipe[1:])
    if tag == "tensor":
        return api.from_dlpack(make_ndarray(np, *recipe[1:]))
    if tag == "torch":
        return make_torch_tensor(*recipe[1:])
    if tag == "compact":
        return make_compact_tensor(api, env.abi, np, *recipe[1:])
    if tag == "npscalar":
        return np.dtype(recipe[1]).type(recipe[2])
    if tag == "voidp":
        return ctypes.c_void_p(recipe[1])
    if tag == "exception":
        return EXCEPTIONS[recipe[1]](recipe[2])
    if tag == "opaque":
        return Opaque(recipe[1])
    if tag == "callable":
        return make_callback(env, recipe[1], registers)
    if tag == "converted":
        return api.convert(sub(recipe[1]))
    if tag == "pyobject":
        return env.held_class(sub(recipe[1]))
    raise fault(f"unknown recipe {recipe!r}")


#: What the Python callbacks of the current program received, in order.
CALLBACK_LOG: List[Any] = []


def make_callback(env: Env, behaviour: Any, registers: Optional[List[Any]] = None):
    """A Python callable: ``("return", recipe)``, ``("raise", class, message)``,
    ``("identity",)``, ``("record", tag)`` (logs what it received, returns the
    number of arguments), ``("reenter", kernel function, extra recipe)``
    (calls the kernel with its arguments plus one built value), ``("nest",
    kernel function, [recipes])`` (calls the kernel with the built recipes, in
    which ``("arg", i)``/``("args",)`` are what the callback received and a
    ``("callable", ...)`` is the next callback down) or ``("catch", kernel
    function, [recipes])`` (the same, returning the class name of what it
    raised). Recipes are built at each call, so ``("return", ("reg", i))``
    hands C++ back an object the program holds (as it is then), and its count
    is compared afterwards."""
    kind = behaviour[0]

    if kind == "return":
        def callback(*args):
            return build(env, behaviour[1], registers)
    elif kind == "raise":
        def callback(*args):
            raise EXCEPTIONS[behaviour[1]](behaviour[2])
    elif kind == "identity":
        def callback(*args):
            return args[0] if args else None
    elif kind == "record":
        def callback(*args):
            CALLBACK_LOG.append([behaviour[1], [normalize(env, a) for a in args]])
            return len(args)
    elif kind == "reenter":
        def callback(*args):
            return getattr(env.calls, behaviour[1])(*args, build(env, behaviour[2], registers))
    elif kind in ("nest", "catch"):
        function = getattr(env.calls, behaviour[1], None)
        if function is None:
            raise fault(f"the calls kernel has no function {behaviour[1]!r}")

        def nested(args):
            return function(*[build(env, r, registers, args) for r in behaviour[2]])

        if kind == "nest":
            def callback(*args):
                return nested(args)
        else:
            def callback(*args):
                try:
                    nested(args)
                except Exception as error:  # noqa: BLE001 - what was caught is the result
                    return type(error).__name__
                return "returned"
    else:
        raise fault(f"unknown callback behaviour {behaviour!r}")
    return callback
