"""The worker process: one front end, fed cases over a pipe.

Run as ``python child.py <frontend> <config.json>`` by :mod:`workers`. The
process imports exactly one front end as ``api`` (``tvm_ffi`` for
"upstream", ``tvm_ffi_ref`` for "ref", ``tvm_ffi_fast`` for "fast"), loads the
conformance kernels with ``api.load_module`` and then answers requests until
its stdin closes.

Framing: each message is an 8-byte little-endian length and a pickle. A
request is ``(op, payload)``; the reply is ``("ok", result)`` or
``("harness-error", traceback)`` when this file itself failed (a bug in the
suite, never a front-end result: see ``harness_faults.py``). The front end's
own exceptions are results: ``["raises", class name, first line of the message]``.

Everything a case does is described by plain data (*recipes*, see
:func:`build`) so that every worker constructs the very same Python values
from the same description. This file imports nothing from the project except,
by file path, ``tvm_ffi_common/abi.py`` (a pure description of the C structs),
so the upstream worker never loads our library, and its sibling
``torch_values.py`` (torch tensors, built and reported).
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import json
import os
import pickle
import struct
import sys
import traceback
from typing import Any, Dict, List, Optional

try:
    from .dlpack_values import make_compact_tensor
    from .harness_faults import fault, take as take_faults
    from .torch_values import make_torch_tensor, normalize_torch, split_view
except ImportError:  # run as a script: the worker process
    from dlpack_values import make_compact_tensor
    from harness_faults import fault, take as take_faults
    from torch_values import make_torch_tensor, normalize_torch, split_view

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# --------------------------------------------------------------------------
# framing
# --------------------------------------------------------------------------


def _read_exact(stream, size: int) -> bytes:
    chunks, got = [], 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_message(stream) -> Any:
    """The next message, or None at end of stream."""
    header = _read_exact(stream, 8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack("<Q", header)
    data = _read_exact(stream, size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def write_message(stream, message: Any) -> None:
    data = pickle.dumps(message, protocol=4)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


# --------------------------------------------------------------------------
# the environment of one front end
# --------------------------------------------------------------------------


class Env:
    """What every handler uses: ``api``, ``np``, ``lib`` (ctypes, C API bound), kernels."""

    def __init__(self, frontend: str, config: Dict[str, Any]):
        self.frontend = frontend
        mutant = os.environ.get("CONFORMANCE_REF_PATH")
        if frontend == "ref" and mutant:
            sys.path.insert(0, mutant)
        package = frontend[len("pypy-"):] if frontend.startswith("pypy-") else frontend
        if frontend == "upstream":
            import tvm_ffi as api
            lib_path = os.path.join(os.path.dirname(api.__file__), "lib", "libtvm_ffi.so")
        elif package == "ref":
            import tvm_ffi_ref as api
            from tvm_ffi_common import libinfo
            lib_path = libinfo.library_path()
        elif package == "fast":
            import tvm_ffi_fast as api
            from tvm_ffi_common import libinfo
            lib_path = libinfo.library_path()
        else:
            raise ValueError(f"unknown front end {frontend!r}")
        import numpy

        self.api = api
        self.np = numpy
        spec = importlib.util.spec_from_file_location(
            "conformance_abi", os.path.join(ROOT, "tvm_ffi_common", "abi.py"))
        self.abi = importlib.util.module_from_spec(spec)
        sys.modules["conformance_abi"] = self.abi
        spec.loader.exec_module(self.abi)
        # A CDLL object of our own: binding argtypes on it leaves the front
        # end's own handle (if it has one) untouched.
        self.lib = self.abi.bind(ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL))
        self.lib_path = lib_path
        self.kernels = {name: api.load_module(path) for name, path in config["kernels"].items()}
        self.probe = self.kernels["probe"]
        self.calls = self.kernels.get("calls")

    def dump(self, *values: Any) -> Any:
        """The probe's JSON report of ``values`` as the front end passes them.

        Where collection is not prompt (PyPy), wrappers made while building the values are
        garbage still holding references: collected first, so the counts are the values' own.
        """
        if sys.implementation.name != "cpython":
            gc.collect()
        return json.loads(str(self.probe.dump(*values)))


# --------------------------------------------------------------------------
# recipes: plain data -> Python values
# --------------------------------------------------------------------------


class Opaque:
    """A Python object no rule converts: it travels as an OpaquePyObject."""

    def __init__(self, tag: int):
        self.tag = tag

    def __repr__(self) -> str:
        return f"Opaque({self.tag})"


class ConformanceError(RuntimeError):
    """An exception class nobody registers: crosses as kind "RuntimeError" (or its name)."""


EXCEPTIONS = {
    cls.__name__: cls
    for cls in (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError,
                AssertionError, ZeroDivisionError, NotImplementedError, MemoryError,
                ConformanceError)
}


def float_from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def bits_of_float(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


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


def build(env: Env, recipe: Any, registers: Optional[List[Any]] = None) -> Any:
    """The Python value a recipe describes (see ``strategies.py`` for the recipes).

    ``("reg", i)``, at any depth, is the i-th value a call program holds
    (``registers``, modulo their number; None when it holds none): outside a
    program it is a fault of the suite.
    """
    api, np = env.api, env.np
    tag = recipe[0]

    def sub(item: Any) -> Any:
        return build(env, item, registers)

    if tag == "reg":
        if registers is None:
            raise fault(f"a register outside a call program: {recipe!r}")
        return registers[recipe[1] % len(registers)] if registers else None
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
    raise fault(f"unknown recipe {recipe!r}")


#: What the Python callbacks of the current program received, in order.
CALLBACK_LOG: List[Any] = []


def make_callback(env: Env, behaviour: Any, registers: Optional[List[Any]] = None):
    """A Python callable: ``("return", recipe)``, ``("raise", class, message)``,
    ``("identity",)``, ``("record", tag)`` (logs what it received, returns the
    number of arguments) or ``("reenter", kernel function, extra recipe)``
    (calls the kernel with its arguments plus one built value). Recipes are built
    at each call, so ``("return", ("reg", i))`` hands C++ back an object the
    program holds (as it is then), and its count is compared afterwards."""
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
    else:
        raise fault(f"unknown callback behaviour {behaviour!r}")
    return callback


# --------------------------------------------------------------------------
# normalization: front-end values -> plain data, compared exactly
# --------------------------------------------------------------------------


def first_line(text: str) -> str:
    lines = str(text).splitlines()
    return lines[0] if lines else ""


def raised(error: BaseException) -> List[Any]:
    return ["raises", type(error).__name__, first_line(str(error))]


def normalize(env: Env, value: Any, depth: int = 0) -> Any:
    """Plain data for a result; floats by their bits, str/bytes with exactness of class.

    Objects that are not containers are reported by the probe (type key,
    header and body), so two front ends agree only if the objects agree.
    """
    api, np = env.api, env.np
    if depth > 40:
        return ["too-deep"]

    def norm(v):
        return normalize(env, v, depth + 1)

    if isinstance(value, BaseException):
        return ["exception", type(value).__name__, first_line(str(value))]
    if value is None:
        return ["none"]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int) and not isinstance(value, np.generic):
        return ["int", int(value)]
    if isinstance(value, float) and not isinstance(value, np.generic):
        return ["float", bits_of_float(value)]
    if isinstance(value, api.dtype):
        return ["dtype", str(value)]
    if isinstance(value, str):
        # A long string a kernel returns is a str subclass; a short one a plain str.
        return ["str" if type(value) is str else "String", str(value)]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes" if type(value) is bytes else "Bytes", bytes(value).hex()]
    if isinstance(value, api.Device):
        return ["device", str(value)]
    if isinstance(value, api.Shape):
        return ["shape", [int(d) for d in value]]
    if isinstance(value, api.List):
        return ["list", [norm(item) for item in value]]
    if isinstance(value, api.Array):
        return ["array", [norm(item) for item in value]]
    if isinstance(value, api.Dict):
        return ["dict", [[norm(k), norm(v)] for k, v in value.items()]]
    if isinstance(value, api.Map):
        return ["map", [[norm(k), norm(v)] for k, v in value.items()]]
    as_torch = normalize_torch(value)
    if as_torch is not None:
        return as_torch
    if isinstance(value, api.Tensor):
        array = np.from_dlpack(value)
        return ["tensor", str(value.dtype), [int(d) for d in value.shape],
                [int(s) for s in value.strides], str(value.device),
                np.ascontiguousarray(array).tobytes().hex()]
    if isinstance(value, np.ndarray):
        return ["ndarray", str(value.dtype), list(value.shape),
                np.ascontiguousarray(value).tobytes().hex()]
    if isinstance(value, np.generic):
        return ["npscalar", str(value.dtype), value.tobytes().hex()]
    if isinstance(value, ctypes.c_void_p):
        return ["voidp", value.value]
    # Upstream's Error and OpaquePyObject classes do not derive from api.Object: go by name.
    if type(value).__name__ == "Error" and hasattr(value, "kind") and hasattr(value, "message"):
        return ["error-object", str(value.kind), str(value.message), env.dump(value)[0]]
    if type(value).__name__ == "OpaquePyObject" and hasattr(value, "pyobject"):
        return ["opaque-object", norm(value.pyobject())]
    if isinstance(value, api.Function):
        return ["function"]
    if isinstance(value, api.Module):
        return ["module"]
    if isinstance(value, api.Object):
        return ["object", env.dump(value)[0]]
    if isinstance(value, tuple):
        return ["pytuple", [norm(item) for item in value]]
    if isinstance(value, list):
        return ["pylist", [norm(item) for item in value]]
    if isinstance(value, dict):
        return ["pydict", [[norm(k), norm(v)] for k, v in value.items()]]
    if isinstance(value, Opaque):
        return ["opaque", value.tag]
    return ["pyobject", type(value).__name__]


def attempt(env: Env, thunk) -> Any:
    """``normalize(thunk())``, or the exception it raised, as a result."""
    try:
        value = thunk()
    except Exception as error:  # noqa: BLE001 - the exception is the result
        return raised(error)
    try:
        return normalize(env, value)
    except Exception as error:  # noqa: BLE001
        return ["normalize-raises"] + raised(error)[1:]


# --------------------------------------------------------------------------
# handlers
# --------------------------------------------------------------------------


def op_hello(env: Env, payload: Any) -> Any:
    name = getattr(env.api, "runtime_name", None)
    core = sys.modules.get("tvm_ffi_fast._core")  # the fast runtime's compiled extension
    return {"frontend": env.frontend, "module": os.path.abspath(env.api.__file__),
            "runtime": name() if callable(name) else "upstream", "lib": env.lib_path,
            "core": os.path.abspath(core.__file__) if core is not None else None,
            "interpreter": sys.implementation.name}


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
    """
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
    try:
        if make[0] == "py":
            box = [build(env, make[1])]
        else:
            items = [build(env, r) for r in make[2]]
            box = [getattr(calls, "make_" + make[1])(api.Array(items))]
    except Exception as error:  # noqa: BLE001
        return [["make-raises"] + raised(error)[1:]]
    out.append(["made", env.dump(box[0])[0]])

    def arg(recipe):
        return build(env, recipe)

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
