"""The worker side of ``test_surface_edges``: the API's less travelled rows, as plain data.

``child.py`` serves each as an op: FFI enums (generated definitions, their lookups, copies,
per-variant attributes and state), dataclass ``Field`` records and helpers (``fields``,
``asdict``, ``astuple``, ``replace``, ``is_dataclass``, ``KW_ONLY``, ``MISSING``),
``@c_class``/``register_object``/``gen_abi_cpp``, modules (the loaded kernels: kinds,
lookups, metadata, imports, properties, sources and writing), the global registry
(registering, overriding, looking up, listing, removing, ``init_ffi_api``, ``convert_func``,
``register_error``), Error objects (backtraces, ``py_error``, pickling), objects' identity,
hashes and pickles, dtype constants and enums of constants, and the helper classes
(``ObjectConvertible``, ``ObjectRValueRef``, ``OpaquePyObject``). The C API entries are
``capi_surface_worker.py``'s.
"""

from __future__ import annotations

import copy
import os
import pickle
import sys
import tempfile
import types
import typing
from typing import Any, Callable, Dict, List


def _module(name: str, **names: Any) -> types.ModuleType:
    """A module of its own for generated classes, so that annotations resolve in it."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    module.__dict__.update(names, Any=typing.Any, Optional=typing.Optional,
                           List=typing.List, Dict=typing.Dict)
    return module


def _define(module: types.ModuleType, lines: List[str]) -> None:
    exec(compile("\n".join(lines), module.__name__, "exec", dont_inherit=True),  # noqa: S102
         module.__dict__)


#: The package's enums of constants (``AccessKind`` is ``access_path``'s).
_ENUMS = ("DLDeviceType", "WalkOrder", "WalkResult", "DefRegionKind", "InplaceMode", "AccessKind")


def _name(variant: Any) -> Any:
    """A variant's canonical string index, or None where its class gives it no ``name``."""
    return getattr(variant, "name", None)


def _value(cls: type, variant: Any) -> Any:
    """A variant's ``value``; a variant itself (an entry named ``value`` shadows the alias of a
    plain Enum) by its name, since its type index is the runtime's own."""
    value = getattr(variant, "value", None)
    return ["variant", _name(value)] if isinstance(value, cls) else value


def _error_class(api: Any) -> type:
    """The FFI Error class: a name of the package here, of ``core`` upstream."""
    return getattr(api, "Error", None) or api.core.Error


def handlers(build: Callable, attempt: Callable, raised: Callable) -> Dict[str, Callable]:

    def op_enums(env, cases: List[Any]) -> List[Any]:
        """Each case: an enum class made from data (base, declared fields, entries), then its
        entries, lookups by index (present and missing), copies, equality, an extensible
        attribute's map and the shared state, each step's result or exception."""
        api, out = env.api, []
        D = api.dataclasses
        for key, base, declared, entries, lookups, attrs in cases:
            module = _module("conformance_enum_" + key.replace(".", "_"), D=D)
            lines = [f"class Generated(D.{base}, type_key={key!r}):"]
            lines += [f"    {name}: {annotation}" for name, annotation in declared]
            for name, spec in entries:
                if spec is None:
                    lines.append(f"    {name} = D.auto()")
                else:
                    args = ", ".join(f"{k}={v!r}" for k, v in spec)
                    lines.append(f"    {name} = D.entry({args})")
            if not declared and not entries:
                lines.append("    pass")
            try:
                _define(module, lines)
            except Exception as error:  # noqa: BLE001 - a refused definition is a result
                out.append(["define-raises"] + raised(error)[1:])
                continue
            cls = module.Generated
            variants = list(cls)
            record = [attempt(env, lambda: [[_name(e), _value(cls, e)]
                                            for e in cls.all_entries()]),
                      len(cls), [_name(v) for v in variants]]
            for index in lookups:
                record.append([attempt(env, lambda: _name(cls.get(index))),
                               attempt(env, lambda: _name(cls(index))),
                               [v == index for v in variants]])
            for v in variants:
                record.append([copy.copy(v) is v, copy.deepcopy(v) is v,
                               copy.deepcopy([v, v])[0] is v, v == v,
                               attempt(env, lambda: str(v)), attempt(env, lambda: repr(v))])
            for name, default, writes, reads in attrs:
                def view():
                    return (cls.def_attr(name) if default == "missing"
                            else cls.def_attr(name, default=default))
                try:
                    amap = view()
                except Exception as error:  # noqa: BLE001
                    record.append(raised(error))
                    continue
                steps = [attempt(env, lambda: amap.name)]
                for at, value in writes:
                    if variants:
                        steps.append(attempt(env, lambda: amap.__setitem__(
                            variants[at % len(variants)], value)))
                steps.append(attempt(env, lambda: amap.__setitem__("not a variant", 1)))
                for at in reads:
                    if variants:
                        v = variants[at % len(variants)]
                        steps.append([attempt(env, lambda: amap[v]), v in amap,
                                      attempt(env, lambda: amap.get(v)),
                                      attempt(env, lambda: amap.get(v, "fallback"))])
                steps.append(attempt(env, lambda: view()[variants[0]] if variants else None))
                record.append(steps)
            record.append(attempt(env, lambda: {str(k): {str(_name(v)): val for v, val in
                                                         col.items()}
                                                for k, col in cls.attr_dict.items()}))
            state = getattr(cls, "__ffi_enum__", None)
            record.append(None if state is None else [
                type(state).__name__, [_name(e) for e in state.entries],
                sorted(repr(k) for k in state.indexes.keys()),
                sorted(str(k) for k in state.attrs.keys()),
                copy.copy(state).same_as(state), copy.deepcopy(state).same_as(state)])
            out.append(record)
        return out

    def op_field_records(env, cases: List[Any]) -> List[Any]:
        """Each case: a ``@py_class`` whose fields carry options (default, init, repr, compare,
        hash, kw_only, doc, metadata, a ``KW_ONLY`` marker; maybe an ``@api.method`` and an
        ``init_property``), then its ``Field`` records and the helpers on an instance: ``asdict``, ``astuple``, ``replace``, ``is_dataclass``."""
        api, out = env.api, []
        D = api.dataclasses
        for key, fields, init_args, changes, extras in cases:
            module = _module("conformance_fields_" + key.replace(".", "_"), D=D, api=api)
            lines = [f"@D.py_class({key!r})", "class Generated(D.Object):"]
            if extras:  # a reflected method and a field computed at __init__
                lines += ["    @api.method", "    def twice(self, k: int) -> int:",
                          "        return 2 * k", "    @D.init_property",
                          "    def computed(self) -> int:", "        return 7"]
            for i, (annotation, options) in enumerate(fields):
                if annotation == "KW_ONLY":
                    lines.append(f"    _kw{i}: D.KW_ONLY")
                    continue
                opts = ", ".join(f"{k}={v!r}" for k, v in options)
                lines.append(f"    f{i}: {annotation} = D.field({opts})")
            if not fields:
                lines.append("    pass")
            try:
                _define(module, lines)
            except Exception as error:  # noqa: BLE001
                out.append(["define-raises"] + raised(error)[1:])
                continue
            cls = module.Generated
            record = []
            try:
                records = D.fields(cls)
            except Exception as error:  # noqa: BLE001
                out.append(["fields-raises"] + raised(error)[1:])
                continue
            for f in records:
                def attrs():
                    return [f.name, str(f.type), f.default is D.MISSING,
                            None if f.default is D.MISSING else f.default,
                            f.default_factory is D.MISSING, f.init, f.repr, f.compare, f.hash,
                            f.kw_only, f.doc, dict(f.metadata or {}), f.frozen,
                            f.structural_eq, f.converter is None,
                            dict(f.extra_kwargs or {})]
                twin = copy.copy(f)
                record.append([attempt(env, attrs), twin is f,
                               attempt(env, lambda: [twin.name, twin.default == f.default
                                                     if twin.default is not D.MISSING else None])])
            kwargs = {f"f{i}": v for i, v in init_args}
            try:
                obj = cls(**kwargs)
            except Exception as error:  # noqa: BLE001
                record.append(raised(error))
                out.append(record)
                continue
            record.append(attempt(env, lambda: D.asdict(obj)))
            record.append(attempt(env, lambda: D.astuple(obj)))
            record.append(attempt(env, lambda: D.asdict(D.replace(
                obj, **{f"f{i}": v for i, v in changes}))))
            record.append([D.is_dataclass(obj), D.is_dataclass(cls), D.is_dataclass(3),
                           D.is_dataclass(api.Array([])), repr(D.MISSING) != ""])
            if extras:
                record.append([attempt(env, lambda: obj.twice(3)),
                               attempt(env, lambda: obj.computed),
                               attempt(env, lambda: sorted(m.name for m in
                                                           cls.__tvm_ffi_type_info__.methods))])
            out.append(record)
        return out

    def op_modules(env, programs: List[Any]) -> List[Any]:
        """Each program: fresh loads of the suite's kernel libraries, then steps on them:
        kind, function lookups (also through imports), metadata and docs, the property mask
        and its flags, write formats, sources, imports added and cleared, writing to a file."""
        api, out = env.api, []
        names = sorted(env.kernel_paths)
        for steps in programs:
            modules = [api.load_module(env.kernel_paths[n]) for n in names]
            record = []
            for kind, at, arg in steps:
                m = modules[at % len(modules)]
                if kind == "kind":
                    record.append(attempt(env, lambda: m.kind))
                elif kind == "implements":
                    name, through = arg
                    record.append([attempt(env, lambda: m.implements_function(name, through)),
                                   attempt(env, lambda: m.get_function(
                                       name, query_imports=through) is not None)])
                elif kind == "metadata":
                    name, through = arg
                    record.append([attempt(env, lambda: m.get_function_metadata(name, through)),
                                   attempt(env, lambda: m.get_function_doc(name, through))])
                elif kind == "properties":
                    record.append([attempt(env, m.get_property_mask),
                                   attempt(env, m.is_binary_serializable),
                                   attempt(env, m.is_runnable),
                                   attempt(env, m.is_compilation_exportable),
                                   attempt(env, lambda: list(m.get_write_formats()))])
                elif kind == "source":
                    record.append(attempt(env, lambda: m.inspect_source(arg)))
                elif kind == "import":
                    other = modules[arg % len(modules)]
                    record.append(attempt(env, lambda: m.import_module(other)))
                elif kind == "imports":
                    record.append([attempt(env, lambda: [i.kind for i in m.imports]),
                                   attempt(env, lambda: len(m.imports_))])
                elif kind == "clear":
                    record.append(attempt(env, m.clear_imports))
                elif kind == "call":
                    record.append(attempt(env, lambda: m(*arg)))
                elif kind == "write":
                    with tempfile.TemporaryDirectory() as where:
                        target = os.path.join(where, "out.bin")
                        record.append([attempt(env, lambda: m.write_to_file(target, arg)),
                                       os.path.exists(target)])
                else:
                    raise ValueError(f"unknown module step {kind!r}")
            out.append(record)
        return out

    def op_registry(env, programs: List[Any]) -> List[Any]:
        """Each program: steps on the global registry under a fresh prefix (and a few fixed
        names): register (with and without override, as a decorator), look up (allowing a
        miss or not) and call, list, remove, read metadata, ``convert_func``, ``init_ffi_api``
        into a fresh module, and ``register_error`` seen through ``Error.py_error``."""
        api, out = env.api, []
        for prefix, steps in programs:
            names = [prefix + ".a", prefix + ".b", prefix + ".a.b", prefix, "ffi.String",
                     "no.such.function", ""]
            record = []
            for kind, at, arg in steps:
                name = names[at % len(names)]

                def make(k=arg):
                    return lambda *args: [k] + list(args)
                if name == "ffi.String" and (kind == "remove" or (kind == "register"
                                                                   and arg[0])):
                    # A builtin others use stays (removed or replaced, every later property
                    # in the worker would see it): only refused registrations and reads.
                    record.append("builtin kept")
                    continue
                if kind == "register":
                    override, k = arg
                    record.append(attempt(env, lambda: api.register_global_func(
                        name, make(k), override=override) is not None))
                elif kind == "decorate":
                    record.append(attempt(env, lambda: api.register_global_func(name)(
                        make(arg)) is not None))
                elif kind == "get":
                    def call():
                        f = api.get_global_func(name, allow_missing=arg)
                        if f is None:
                            return None
                        default = f.release_gil  # upstream's per-function GIL switch
                        f.release_gil = not default  # the call answers the same either way
                        return [default, f.release_gil,
                                f(3, "x") if name.startswith(prefix) else "builtin"]
                    record.append(attempt(env, call))
                elif kind == "listed":
                    # The registry module's: upstream's package does not export this name.
                    record.append(attempt(env, lambda: name in
                                          api.registry.list_global_func_names()))
                elif kind == "remove":
                    record.append(attempt(env, lambda: api.remove_global_func(name)))
                elif kind == "metadata":
                    record.append(attempt(env, lambda: api.get_global_func_metadata(name)
                                          if name.startswith(prefix) else
                                          sorted(api.get_global_func_metadata(name))))
                elif kind == "convert":
                    record.append(attempt(env, lambda: api.convert_func(make(arg))(arg, None)))
                elif kind == "init_api":
                    target = _module("conformance_init_" + name.replace(".", "_") + str(arg))

                    def populated():
                        api.init_ffi_api(name, target.__name__)
                        return sorted(n for n in vars(target) if not n.startswith("__")
                                      and n not in ("Any", "Optional", "List", "Dict"))
                    record.append(attempt(env, populated))
                elif kind == "error_kind":
                    kind_name = (prefix + "Error" + str(arg)).replace(".", "_")
                    Error = _error_class(api)

                    def registered():
                        cls = type(kind_name, (Exception,), {})
                        api.register_error(kind_name, cls)
                        made = Error(kind_name, "why", "").py_error()
                        return [type(made).__name__, type(made) is cls, str(made)]
                    record.append(attempt(env, registered))
                else:
                    raise ValueError(f"unknown registry step {kind!r}")
            out.append(record)
        return out

    def op_errors(env, cases: List[Any]) -> List[Any]:
        """Each case: an Error made from a kind, message and backtrace, then steps: read it,
        update or append to its backtrace, its Python exception, a pickle round trip."""
        api, out = env.api, []
        Error = _error_class(api)
        for kind, message, backtrace, steps in cases:
            try:
                error = Error(kind, message, backtrace)
            except Exception as failure:  # noqa: BLE001
                out.append(["make-raises"] + raised(failure)[1:])
                continue
            record = []
            for step, text in steps:
                if step == "read":
                    record.append(attempt(env, lambda: [error.kind, error.message,
                                                        error.backtrace]))
                elif step == "update":
                    record.append(attempt(env, lambda: error.update_backtrace(text)))
                elif step == "append":
                    record.append(attempt(env, lambda: error.append_backtrace(text)))
                elif step == "context":
                    record.append(attempt(env, lambda: error.extra_context))
                elif step == "py_error":
                    def converted():
                        made = error.py_error()
                        return [type(made).__name__, str(made),
                                isinstance(made, Exception), made.__traceback__ is None]
                    record.append(attempt(env, converted))
                elif step == "pickle":
                    record.append(attempt(env, lambda: (lambda e: [type(e).__name__, e.kind,
                                                                   e.message, e.backtrace])(
                        pickle.loads(pickle.dumps(error)))))
                else:
                    raise ValueError(f"unknown error step {step!r}")
            out.append(record)
        return out

    def op_identity(env, cases: List[Any]) -> List[Any]:
        """Each recipe: a value built twice; whether it is an ``Object`` and a ``CObject``,
        ``is_``/``id_``/``same_as`` against itself and its twin, hashes against itself and its
        twin, a pickle round trip, and ``Tensor.size`` of every dimension."""
        api, out = env.api, []
        for recipe in cases:
            try:
                a, b = build(env, recipe), build(env, recipe)
            except Exception as error:  # noqa: BLE001
                out.append(["build-raises"] + raised(error)[1:])
                continue
            tensor = isinstance(a, api.Tensor)
            # ``type_key``/``type_index`` are ours only (known.py, "extra-public-attributes"):
            # identity methods are compared, not those.
            record = [isinstance(a, api.Object), isinstance(a, api.core.CObject)]
            if hasattr(a, "same_as"):
                record.append(attempt(env, lambda: [a.is_(a), a.is_(b), a.id_ == a.id_,
                                                    a.id_ == b.id_, a.same_as(a), a.same_as(b)]))
            # Whether two equal NaNs hash alike is the interpreter's rule, not the runtime's
            # (CPython hashes a NaN by identity, PyPy by value): not compared for NaNs.
            nan = isinstance(a, float) and a != a
            record.append(attempt(env, lambda: [hash(a) == hash(a),
                                                None if nan else hash(a) == hash(b)]))
            record.append(attempt(env, lambda: pickle.loads(pickle.dumps(a))))
            if tensor:
                record.append([attempt(env, lambda: a.size(d)) for d in range(-a.ndim - 1,
                                                                            a.ndim + 1)])
            out.append(record)
        return out

    def op_c_classes(env, cases: List[Any]) -> List[Any]:
        """Each ``(values, writes, patterns)``: ``@c_class("stk.All")`` (a C++ type of every inline
        field kind, declared once per worker) made with generated field values, written, read,
        its ``Field`` records, ``asdict``; ``register_object("stk.Plain")`` seen on objects made
        in C++; and ``gen_abi_cpp`` for keys and patterns."""
        api, out = env.api, []
        D = api.dataclasses
        classes = env.__dict__.get("_c_classes")
        if classes is None:
            module = _module("conformance_c_classes", D=D, api=api)
            try:
                _define(module, [
                    "@D.c_class('stk.All')", "class All(D.Object):", "    v_bool: bool",
                    "    v_int: int", "    v_float: float", "    v_dtype: Any", "    v_device: Any",
                    "    v_str: str", "    v_any: Any", "    v_array: Any", "    v_map: Any",
                    "@api.register_object('stk.Plain')", "class Plain(api.Object):", "    pass"])
                classes = [module.All, module.Plain, None]
            except Exception as error:  # noqa: BLE001 - a refused declaration is a result
                classes = [None, None, raised(error)]
            env.__dict__["_c_classes"] = classes
        All, Plain, refused = classes
        make = api.get_global_func("ffi.MakeObjectFromPackedArgs")
        for values, writes, patterns in cases:
            if refused is not None:
                out.append(refused)
                continue
            record = []
            try:
                kwargs = {name: build(env, recipe) for name, recipe in values}
                obj = All(**kwargs)
            except Exception as error:  # noqa: BLE001
                record.append(raised(error))
                obj = None
            if obj is not None:
                for name, recipe in writes:
                    record.append(attempt(env, lambda: setattr(obj, name, build(env, recipe))))
                record.append(attempt(env, lambda: D.asdict(obj)))
                record.append(attempt(env, lambda: [type(obj).__name__, isinstance(obj, All),
                                                    D.is_dataclass(obj)]))
            record.append(attempt(env, lambda: [[f.name, str(f.type), f.init, f.frozen]
                                                for f in D.fields(All)]))
            record.append(attempt(env, lambda: (lambda p: [type(p).__name__, isinstance(p, Plain),
                                                           p.x])(make("stk.Plain", "x", 4))))
            for pattern in patterns:
                record.append(attempt(env, lambda: D.gen_abi_cpp(pattern)))
            out.append(record)
        return out

    def op_constants(env, cases: List[Any]) -> List[Any]:
        """Each ``(name, lanes)``: the package's dtype constant ``name``: its text, class,
        equality with the dtype of that text, ``with_lanes``, and its trip through a kernel;
        or an enum of constants: its members and the member of value ``lanes``."""
        api, out = env.api, []
        for name, lanes in cases:
            if name in _ENUMS:  # an enum of constants: its members, and a lookup by value
                cls = api.access_path.AccessKind if name == "AccessKind" else getattr(api, name)
                out.append([[m.name, int(m)] for m in cls] + [attempt(env, lambda: cls(
                    lanes).name), attempt(env, lambda: int(cls(lanes)) == lanes)])
                continue
            try:
                value = getattr(api, name)
            except AttributeError as error:
                out.append(raised(error))
                continue
            out.append([str(value), type(value) is type(api.dtype("int8")),
                        attempt(env, lambda: value == api.dtype(str(value))),
                        attempt(env, lambda: str(value.with_lanes(lanes))),
                        attempt(env, lambda: env.calls.echo(value))])
        return out

    def op_helper_objects(env, cases: List[Any]) -> List[Any]:
        """Each ``(kind, recipe)``: the helper classes a user meets: ``ObjectConvertible``
        (``asobject`` called when passed), ``ObjectRValueRef`` (``_move()``, its ``obj``, a
        typed parameter refusing it), ``OpaquePyObject`` (``pyobject()`` after a kernel trip)."""
        api, out = env.api, []
        for kind, recipe in cases:
            try:
                value = build(env, recipe)
            except Exception as error:  # noqa: BLE001
                out.append(["build-raises"] + raised(error)[1:])
                continue
            if kind == "convertible" and isinstance(value, api.Object):
                # Objects only: upstream's worker crashes when ``asobject`` returns a non-object.
                class Convertible(api.ObjectConvertible):
                    def asobject(self):
                        return value
                out.append([attempt(env, lambda: env.calls.echo(Convertible())),
                            attempt(env, lambda: api.convert(Convertible()))])
            elif kind == "move" and isinstance(value, api.Object):
                # Only where upstream has a rule: passing a moved reference as ``Any`` crashes
                # upstream's worker, a typed parameter refuses it.
                ref = value._move()
                size = api.get_global_func("ffi.ArraySize")
                out.append([type(ref).__name__, ref.obj is value, ref.obj.same_as(value),
                            attempt(env, lambda: size(ref)), value.__chandle__() == 0])
            elif kind == "opaque":
                class Payload:
                    def __init__(self, inner):
                        self.inner = inner
                payload = Payload(value)

                def opaque():
                    wrapped = api.convert(payload)
                    back = env.calls.echo(payload)
                    return [type(wrapped).__name__, wrapped.pyobject() is payload,
                            back is payload, getattr(back, "inner", None) is value]
                out.append(attempt(env, opaque))
            else:
                out.append(None)
        return out

    return {name[3:]: fn for name, fn in locals().items() if name.startswith("op_")}
