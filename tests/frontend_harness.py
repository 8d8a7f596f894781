"""Runs Python-API snippets under a front end and normalizes what they produce.

This is the Python-API counterpart of ``capi_harness.py``. A *front end* is a
package that implements upstream's Python API; the harness binds it to the
name ``api`` in a fresh interpreter:

* ``"upstream"`` -- ``import tvm_ffi as api`` (the oracle, ``apache-tvm-ffi``);
* ``"ref"``      -- ``import tvm_ffi_ref as api``;
* ``"fast"``     -- ``import tvm_ffi_fast as api``;
* ``"ref-over-fast"`` -- the reference Python API over the fast runtime:
  ``tvm_ffi_fast`` is imported first and serves the C API, and
  ``tvm_ffi_ref`` (which then shares it) is the API under test. This holds
  the fast runtime to upstream through a complete Python API, and exercises
  the reference front end's C-ABI-only paths;
* ``"fast-over-ref"`` -- the other way round: ``tvm_ffi_ref`` serves the C
  API and the fast front end (whose core only ever uses the C ABI) is under
  test;
* ``"fast-cffi"`` -- ``tvm_ffi_fast`` over its cffi core (the one PyPy runs) on CPython;
* ``"pypy-ref"``, ``"pypy-fast"`` -- ``tvm_ffi_ref`` and ``tvm_ffi_fast`` run by
  PyPy (``pypy_interpreter()``: ``$TVM_FFI_PYPY``, a PyPy with this project
  installed), held to upstream run by CPython as every other front end is.

One subprocess per front end runs a whole corpus of cases (``run_frontend``):
a shared *setup* snippet first, then every case, each result written to a
file as soon as it is known. A case that crashes the interpreter (or hangs
past ``CASE_TIMEOUT`` seconds) is recorded as ``["crash", ...]`` and the
remaining cases continue in a new interpreter, so one bad case cannot hide
the others. Cases must therefore depend only on the setup, never on each
other.

A case is Python source. If it is a single expression its value is the
result; otherwise it must assign ``result``. If it raises, the result is
``["raises", <exception class name>, <first line of str(exception)>]``.
Results pass through ``normalize`` and come back as plain JSON data (see
``normalize`` for the tags), so ``==`` compares two front ends exactly,
including NaN, -0.0, the order of map iteration and the class of an error.

Upstream API the harness and the corpus rely on
-----------------------------------------------
Our front ends must provide each of these with upstream's semantics (all were
checked against ``apache-tvm-ffi==0.1.15.post2``; ``corpus_cases.py`` pins
each down):

* Modules: ``api.load_module(path)`` -> ``api.Module`` (an ``api.Object``);
  ``module.<name>`` and ``module.get_function(name)`` return an
  ``api.Function``; a missing name raises ``AttributeError("Module has no
  function '<name>'")``; a missing file raises ``RuntimeError``.
* Functions: ``Function.__call__(*args)``. Python callables passed as
  arguments become Functions, and ``api.convert(callable)`` wraps one
  explicitly -- NOT ``api.Function(callable)``, which under upstream makes an
  empty handle whose call crashes the interpreter.
* Globals: ``api.register_global_func(name, f, override=False)``, also as a
  decorator ``@register_global_func(name)``; re-registering without
  ``override=True`` raises ``RuntimeError("Global Function `<name>` is
  already registered")``. ``api.get_global_func(name, allow_missing=False)``:
  a missing name raises ``ValueError("Cannot find global function <name>")``,
  or gives None with ``allow_missing=True``.
* Conversion: ``api.convert(value)`` leaves scalars as Python values, turns
  list/tuple into ``api.Array`` and dict into ``api.Map`` (recursively,
  sharing objects already converted) and callables into Functions. As
  arguments: ``numpy.dtype`` -> dtype, NumPy integer/float scalars -> int /
  float (beyond int64 -> BigInt), but ``numpy.bool_`` and any other unknown
  Python object -> an opaque object that comes back as the same object;
  ``bytearray`` -> bytes; a str with a lone surrogate raises
  ``UnicodeEncodeError``.
  Constructors ``api.Array(seq)``, ``api.List(seq)``, ``api.Map(dict)``,
  ``api.Dict()``/``api.Dict(dict)``, ``api.Shape(tuple_or_list)``.
* Containers: ``Array`` is a read-only sequence (``len``, ``a[i]`` with
  negative indices, ``IndexError("Index out of range. size: N, got index
  I")``, slicing returns a plain list, ``reversed``, iteration; no
  ``append``). ``List`` adds ``append`` and ``l[i] = v``. ``Map`` is a
  read-only mapping (``m[k]`` raising ``KeyError('key is not in Map')``,
  ``get``, ``in``, ``keys``/``values``/``items`` in the map's own iteration
  order). ``Dict`` adds ``d[k] = v`` and ``del d[k]``. ``List`` and ``Dict``
  objects passed to C++ are shared, so C++ mutation is visible; plain Python
  lists and dicts are converted copies. ``Shape`` is a tuple
  (``Shape((2, 3)) == (2, 3)``).
* Class checks the normalizer makes, in this order: ``api.dtype`` (a ``str``
  subclass; ``str(d)`` is the name), ``str``, ``bytes``, ``api.Device``
  (``str(dev)`` like ``"cpu:0"``), ``api.Shape``, ``api.List``,
  ``api.Array``, ``api.Dict``, ``api.Map``, ``api.Tensor``, ``numpy.ndarray``,
  ``api.Function``, ``api.Module``, ``api.Object``. (Upstream's
  ``api.Function``, ``api.Tensor`` and its ``Error`` class do not derive from
  ``api.Object``; the normalizer does not depend on that.) A long string
  returned by a kernel is a ``str`` subclass and long bytes a ``bytes``
  subclass; short ones are plain ``str``/``bytes``.
* Tensors: ``.shape`` and ``.strides`` (tuples), ``.dtype`` (an
  ``api.dtype``), ``.device`` (an ``api.Device``), and the DLPack protocol
  (``__dlpack__``, ``__dlpack_device__``) so that ``numpy.from_dlpack(t)``
  works. ``api.from_dlpack(x, require_alignment=.., require_contiguous=..)``
  accepts NumPy arrays and ``api.Tensor``; NumPy arrays are also accepted
  directly wherever a Tensor argument is expected.
* ``api.device("cpu")``, ``api.device("cuda", 1)``, ``api.device("cuda:1")``
  (unknown names: ``ValueError("Unknown device: <name>")``);
  ``api.dtype("float32")`` (unknown: ``ValueError("unknown dtype
  `<name>`")``). A str passed where a kernel wants a dtype or a device is
  parsed by the kernel (devices by upstream's header code inline, dtypes
  through the runtime's ``TVMFFIDataTypeFromString``).
* Errors: an error of kind K raises ``ERROR_CLASS[K](message)`` (so
  ``e.args == (message,)``); registered kinds are RuntimeError, ValueError,
  TypeError, AttributeError, KeyError, IndexError, AssertionError,
  MemoryError and whatever ``api.register_error(name, cls)`` adds; every
  other kind raises ``RuntimeError``. Exceptions raised in Python callbacks
  reach C++ with kind = the registered name of their *exact* class (else
  "RuntimeError") and message = ``str(exception)``. A Python exception passed
  as an argument travels as an error object whose class is named ``Error``.
* Objects: ``api.register_object(type_key)`` as a class decorator on an
  ``api.Object`` subclass: returned objects of that type are instances of the
  class, reflected fields are properties (``def_ro`` read-only, ``def_rw``
  writable with conversion), reflected methods are methods (static ones on
  the class), and calling the class runs the reflected constructor. Objects
  of reflected types Python never registered still expose their fields and
  methods.
* Streams: ``api.use_raw_stream(device, stream)`` (a context manager) and
  ``api.get_raw_stream(device)``.

The normalizer asks ABI questions (an object's type key, its reflected field
names, its reference count) of a small C++ kernel (``corpus_introspect.cc``)
rather than of private attributes, so no handle accessor (such as upstream's
``__chandle__``) is required of a front end.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

#: Front ends compared against upstream by every front-end test. The single
#: place to change; ``CORPUS_FRONTENDS=upstream,fast`` in the environment
#: overrides it for a run (e.g. to validate the harness against upstream).
FRONTENDS_UNDER_TEST: List[str] = (
    [name for name in os.environ.get("CORPUS_FRONTENDS", "").split(",") if name] or ["ref", "fast"]
)

#: How each front end is imported as ``api`` in the child interpreter.
FRONTEND_IMPORTS: Dict[str, str] = {
    "upstream": "import tvm_ffi as api",
    "ref": "import tvm_ffi_ref as api",
    "fast": "import tvm_ffi_fast as api",
    "ref-over-fast": "import tvm_ffi_fast\nimport tvm_ffi_ref as api",
    "fast-over-ref": "import tvm_ffi_ref\nimport tvm_ffi_fast as api",
    "pypy-ref": "import tvm_ffi_ref as api",
    "pypy-fast": "import tvm_ffi_fast as api",
    "fast-cffi": "import os\nos.environ['TVM_FFI_FAST_CORE'] = 'cffi'\nimport tvm_ffi_fast as api",
}

#: The environment variable naming the PyPy interpreter of the "pypy-*" front ends.
PYPY_ENV = "TVM_FFI_PYPY"


def pypy_interpreter() -> Optional[str]:
    """The PyPy that runs the "pypy-*" front ends (``$TVM_FFI_PYPY``), or None when unset."""
    return os.environ.get(PYPY_ENV) or None


def interpreter(frontend: str) -> str:
    """The Python that runs ``frontend``: PyPy for the "pypy-*" front ends, else this one."""
    if not frontend.startswith("pypy-"):
        return sys.executable
    pypy = pypy_interpreter()
    if pypy is None:
        raise RuntimeError(f"front end {frontend!r} needs ${PYPY_ENV}: a PyPy interpreter with "
                           "this project installed (.ci/run makes one)")
    return pypy

#: Seconds one case may run before the child interpreter is stopped.
CASE_TIMEOUT = 60

# --------------------------------------------------------------------------
# normalization (runs in the child interpreter)
# --------------------------------------------------------------------------


def _first_line(text: str) -> str:
    lines = text.splitlines()
    return lines[0] if lines else ""


def exception_summary(error: BaseException) -> List[Any]:
    """``["raises", class name, first line of str(error)]``."""
    return ["raises", type(error).__name__, _first_line(str(error))]


def normalize(value: Any, api: Any, introspect: Any = None, np: Any = None) -> Any:
    """Turns a front end's value into plain, exactly comparable JSON data.

    Each result is ``[tag, ...]``:

    ``["none"]``, ``["bool", b]``, ``["int", i]`` (any size),
    ``["float", float.hex(x)]`` (so NaN, inf and -0.0 compare exactly),
    ``["str", s]``, ``["bytes", hex]``, ``["dtype", name]``,
    ``["device", "cpu:0"]``, ``["shape", [dims]]``, ``["array", [items]]``,
    ``["list", [items]]``, ``["map", [[k, v], ...]]`` and ``["dict", ...]``
    (iteration order kept), ``["tensor", dtype, shape, strides, device,
    values]`` and ``["ndarray", dtype, shape, values]`` (values flattened in
    row-major order), ``["function"]``, ``["module"]``, ``["object",
    type_key, [[field, value], ...]]``, ``["exception", class, first line]``,
    ``["pytuple", ...]``, ``["pylist", ...]``, ``["pydict", ...]`` for plain
    Python containers and ``["pyobject", class name]`` for anything else.

    ``introspect`` is the loaded ``corpus_introspect`` kernel, used to read an
    object's type key and reflected field names through the ABI.
    """

    def norm(v: Any) -> Any:
        if isinstance(v, BaseException):
            return ["exception", type(v).__name__, _first_line(str(v))]
        if v is None:
            return ["none"]
        if isinstance(v, bool):
            return ["bool", v]
        if isinstance(v, int) and not (np is not None and isinstance(v, np.generic)):
            return ["int", int(v)]
        if isinstance(v, float) and not (np is not None and isinstance(v, np.generic)):
            return ["float", float(v).hex()]
        if isinstance(v, api.dtype):
            return ["dtype", str(v)]
        if isinstance(v, str):
            return ["str", str(v)]
        if isinstance(v, (bytes, bytearray)):
            return ["bytes", bytes(v).hex()]
        if isinstance(v, api.Device):
            return ["device", str(v)]
        if isinstance(v, api.Shape):
            return ["shape", [int(d) for d in v]]
        if isinstance(v, api.List):
            return ["list", [norm(item) for item in v]]
        if isinstance(v, api.Array):
            return ["array", [norm(item) for item in v]]
        if isinstance(v, api.Dict):
            return ["dict", [[norm(k), norm(x)] for k, x in v.items()]]
        if isinstance(v, api.Map):
            return ["map", [[norm(k), norm(x)] for k, x in v.items()]]
        if isinstance(v, api.Tensor):
            array = np.from_dlpack(v)
            return ["tensor", str(v.dtype), [int(d) for d in v.shape],
                    [int(s) for s in v.strides], str(v.device), _flat_values(array, norm)]
        if np is not None and isinstance(v, np.ndarray):
            return ["ndarray", str(v.dtype), [int(d) for d in v.shape], _flat_values(v, norm)]
        if np is not None and isinstance(v, np.generic):
            return ["npscalar", str(v.dtype), norm(v.item())]
        if isinstance(v, api.Function):
            return ["function"]
        if isinstance(v, api.Module):
            return ["module"]
        if isinstance(v, api.Object):
            if introspect is None:
                return ["object", None, []]
            type_key = str(introspect.arg_type_key(v))
            fields = [[str(name), norm(getattr(v, str(name)))]
                      for name in introspect.arg_field_names(v)]
            return ["object", type_key, fields]
        if isinstance(v, tuple):
            return ["pytuple", [norm(item) for item in v]]
        if isinstance(v, list):
            return ["pylist", [norm(item) for item in v]]
        if isinstance(v, dict):
            return ["pydict", [[norm(k), norm(x)] for k, x in v.items()]]
        return ["pyobject", type(v).__name__]

    return norm(value)


def _flat_values(array: Any, norm: Any) -> List[Any]:
    return [norm(x) for x in array.reshape(-1).tolist()]


# --------------------------------------------------------------------------
# expectations (written in the tests; the same shapes ``normalize`` makes)
# --------------------------------------------------------------------------

NONE = ["none"]
FUNCTION = ["function"]
MODULE = ["module"]


def I(value: int) -> List[Any]:  # noqa: E743 - short constructors read well in tables
    """An int of any size."""
    return ["int", int(value)]


def F(value: float) -> List[Any]:
    """A float, compared bit for bit (by its hex form)."""
    return ["float", float(value).hex()]


def B(value: bool) -> List[Any]:
    """A bool."""
    return ["bool", bool(value)]


def S(value: str) -> List[Any]:
    """A str (plain or a front end's str subclass)."""
    return ["str", value]


def BY(value: bytes) -> List[Any]:
    """A bytes value."""
    return ["bytes", bytes(value).hex()]


def DT(name: str) -> List[Any]:
    """An ``api.dtype``."""
    return ["dtype", name]


def DEV(text: str) -> List[Any]:
    """An ``api.Device`` whose str() is ``text``."""
    return ["device", text]


def SHAPE(*dims: int) -> List[Any]:
    """An ``api.Shape``."""
    return ["shape", list(dims)]


def ARR(*items: Any) -> List[Any]:
    """An ``api.Array`` of already-normalized items."""
    return ["array", list(items)]


def LST(*items: Any) -> List[Any]:
    """An ``api.List`` of already-normalized items."""
    return ["list", list(items)]


def MAP(*pairs: Tuple[Any, Any]) -> List[Any]:
    """An ``api.Map`` with these (normalized key, normalized value) pairs, in order."""
    return ["map", [[k, v] for k, v in pairs]]


def DICT(*pairs: Tuple[Any, Any]) -> List[Any]:
    """An ``api.Dict`` with these pairs, in order."""
    return ["dict", [[k, v] for k, v in pairs]]


def PYTUPLE(*items: Any) -> List[Any]:
    """A plain Python tuple of normalized items (usually several results at once)."""
    return ["pytuple", list(items)]


def PYLIST(*items: Any) -> List[Any]:
    """A plain Python list of normalized items."""
    return ["pylist", list(items)]


def PYDICT(*pairs: Tuple[Any, Any]) -> List[Any]:
    """A plain Python dict."""
    return ["pydict", [[k, v] for k, v in pairs]]


def OBJ(type_key: str, *fields: Tuple[str, Any]) -> List[Any]:
    """A reflected object: its type key and (field name, normalized value) pairs."""
    return ["object", type_key, [[name, value] for name, value in fields]]


def RAISES(class_name: str, first_line: str) -> List[Any]:
    """The case raised ``class_name`` whose message starts with ``first_line``."""
    return ["raises", class_name, first_line]


def EXC(class_name: str, first_line: str) -> List[Any]:
    """An exception instance returned (not raised) as a value."""
    return ["exception", class_name, first_line]


def ND(dtype: str, shape: Sequence[int], values: Iterable[Any]) -> List[Any]:
    """A NumPy array; ``values`` are plain Python numbers in row-major order."""
    return ["ndarray", dtype, list(shape), [plain(v) for v in values]]


def TENSOR(dtype: str, shape: Sequence[int], strides: Sequence[int], device: str,
           values: Iterable[Any]) -> List[Any]:
    """An ``api.Tensor``; ``values`` are plain Python numbers in row-major order."""
    return ["tensor", dtype, list(shape), list(strides), device, [plain(v) for v in values]]


def plain(value: Any) -> Any:
    """Normalized form of a plain Python scalar (bool, int, float, str, bytes, None)."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return B(value)
    if isinstance(value, int):
        return I(value)
    if isinstance(value, float):
        return F(value)
    if isinstance(value, str):
        return S(value)
    if isinstance(value, bytes):
        return BY(value)
    raise TypeError(f"plain() takes a scalar, got {type(value).__name__}")


def ints(*values: int) -> List[Any]:
    """Normalized ints, for building ARR/LST/PYTUPLE contents."""
    return [I(v) for v in values]


# --------------------------------------------------------------------------
# the kernels (parent side)
# --------------------------------------------------------------------------

KERNEL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")

#: The corpus kernels: name bound in every case -> (source file, language).
CORPUS_KERNELS: Dict[str, Tuple[str, str]] = {
    "introspect": ("corpus_introspect.cc", "c++"),
    "values": ("corpus_values.cc", "c++"),
    "containers": ("corpus_containers.cc", "c++"),
    "tensors": ("corpus_tensors.cc", "c++"),
    "callbacks": ("corpus_callbacks.cc", "c++"),
    "objects": ("corpus_objects.cc", "c++"),
    "ckernel": ("corpus_c.c", "c"),
}


def build_corpus_kernels(builder: Any, names: Optional[Iterable[str]] = None) -> Dict[str, str]:
    """Compiles the corpus kernels with the ``kernels`` fixture; returns name -> library path.

    C++ kernels compile against upstream's headers, the C kernel against ours.
    Builds run two at a time (CI machines have two cores).
    """
    from concurrent.futures import ThreadPoolExecutor

    wanted = list(names) if names is not None else list(CORPUS_KERNELS)

    def build(name: str) -> str:
        filename, language = CORPUS_KERNELS[name]
        with open(os.path.join(KERNEL_DIR, filename)) as f:
            source = f.read()
        return builder.build(f"corpus_{name}", source, language=language)

    with ThreadPoolExecutor(max_workers=2) as pool:
        paths = list(pool.map(build, wanted))
    return dict(zip(wanted, paths))


# --------------------------------------------------------------------------
# the runner (parent side)
# --------------------------------------------------------------------------


def run_frontend(frontend: str, cases: Sequence[Tuple[str, str]], *, setup: str = "",
                 libs: Optional[Dict[str, str]] = None, introspect: Optional[str] = None,
                 timeout: float = 600, case_timeout: float = CASE_TIMEOUT) -> Dict[str, Any]:
    """Runs ``cases`` (``(case_id, source)`` pairs) under ``frontend``; returns id -> result.

    ``libs`` maps a name to a kernel library path: each is loaded with
    ``api.load_module`` and bound to that name before ``setup`` runs.
    ``introspect`` names the entry of ``libs`` that is the introspection kernel
    (handed to ``normalize``). Every case gets a result: its normalized value,
    ``["raises", ...]``, ``["setup-error", class, message]`` when the front end
    could not even be prepared, or ``["crash", status, stderr tail]`` when the
    interpreter died (or ran past ``case_timeout`` seconds) while running it.
    ``timeout`` bounds each interpreter as a whole.
    """
    import subprocess

    if frontend not in FRONTEND_IMPORTS:
        raise ValueError(f"frontend must be one of {sorted(FRONTEND_IMPORTS)}, got {frontend!r}")
    ids = [case_id for case_id, _ in cases]
    if len(set(ids)) != len(ids):
        raise ValueError("case ids must be unique")
    results: Dict[str, Any] = {}
    pending = list(cases)
    with tempfile.TemporaryDirectory(prefix=f"corpus-{frontend}-") as workdir:
        attempt = 0
        while pending:
            attempt += 1
            job_path = os.path.join(workdir, f"job{attempt}.json")
            out_path = os.path.join(workdir, f"out{attempt}.jsonl")
            with open(job_path, "w") as f:
                json.dump({"frontend": frontend, "import": FRONTEND_IMPORTS[frontend], "setup": setup, "libs": libs or {},
                           "introspect": introspect, "cases": pending, "out": out_path,
                           "case_timeout": case_timeout}, f)
            stderr = ""
            try:
                done = subprocess.run([interpreter(frontend), os.path.abspath(__file__), job_path],
                                      capture_output=True, text=True, timeout=timeout, cwd=workdir)
                returncode: Any = done.returncode
                stderr = done.stderr
            except subprocess.TimeoutExpired as expired:
                returncode = "timeout"
                stderr = expired.stderr.decode(errors="replace") if isinstance(expired.stderr, bytes) \
                    else (expired.stderr or "")
            started, finished, setup_error = _read_output(out_path)
            results.update(finished)
            if setup_error is not None:
                for case_id, _ in pending:
                    results.setdefault(case_id, ["setup-error", *setup_error])
                break
            remaining = [(cid, src) for cid, src in pending if cid not in finished]
            if not remaining:
                break
            # The first unfinished case that started is the one that killed the child.
            culprit = next((cid for cid, _ in remaining if cid in started), remaining[0][0])
            tail = "\n".join(stderr.strip().splitlines()[-12:])
            results[culprit] = ["crash", f"exit status {returncode}", tail]
            pending = [(cid, src) for cid, src in remaining if cid != culprit]
    return results


def _read_output(path: str):
    started, finished, setup_error = set(), {}, None
    if not os.path.exists(path):
        return started, finished, ["NoOutput", "the child interpreter wrote nothing"]
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break  # a half-written line from a dying child
            record = json.loads(line)
            if "setup_error" in record:
                setup_error = record["setup_error"]
            elif "start" in record:
                started.add(record["start"])
            else:
                finished[record["id"]] = record["result"]
    return started, finished, setup_error


# --------------------------------------------------------------------------
# the child interpreter
# --------------------------------------------------------------------------


def _child_main(job_path: str) -> None:
    import faulthandler
    import traceback

    with open(job_path) as f:
        job = json.load(f)
    out = open(job["out"], "w")

    def emit(record: Dict[str, Any]) -> None:
        out.write(json.dumps(record) + "\n")
        out.flush()

    namespace: Dict[str, Any] = {"__name__": "__corpus__"}
    try:
        exec(job["import"], namespace)
        import numpy
        namespace["np"] = numpy
        api = namespace["api"]
        for name, path in job["libs"].items():
            namespace[name] = api.load_module(path)
        if job["setup"]:
            exec(compile(textwrap.dedent(job["setup"]), "<setup>", "exec"), namespace)
    except BaseException as error:  # noqa: BLE001 - reported, not swallowed
        emit({"setup_error": [type(error).__name__, _first_line(str(error)),
                              traceback.format_exc()]})
        return
    introspect = namespace.get(job["introspect"]) if job["introspect"] else None
    np = namespace["np"]
    for case_id, source in job["cases"]:
        emit({"start": case_id})
        faulthandler.dump_traceback_later(job["case_timeout"], exit=True)
        result = _run_case(source, dict(namespace), api, introspect, np)
        faulthandler.cancel_dump_traceback_later()
        try:
            line = json.dumps({"id": case_id, "result": result})
        except (TypeError, ValueError) as error:
            line = json.dumps({"id": case_id, "result": ["unserializable", str(error)]})
        out.write(line + "\n")
        out.flush()
    out.close()


def _run_case(source: str, scope: Dict[str, Any], api: Any, introspect: Any, np: Any) -> Any:
    source = textwrap.dedent(source).strip()
    try:
        try:
            code = compile(source, "<case>", "eval")
        except SyntaxError:
            code = None
        if code is not None:
            value = eval(code, scope)
        else:
            exec(compile(source, "<case>", "exec"), scope)
            if "result" not in scope:
                return ["harness-error", "the case assigned no `result`"]
            value = scope["result"]
    except BaseException as error:  # noqa: BLE001 - the error is the result
        return exception_summary(error)
    try:
        return normalize(value, api, introspect, np)
    except BaseException as error:  # noqa: BLE001
        return ["normalize-error", type(error).__name__, _first_line(str(error))]


if __name__ == "__main__":
    _child_main(sys.argv[1])
