"""The worker side of the structural properties: graphs built and reported.

``child.py`` imports :func:`handlers` and serves ``op_structural``: for each
case (see ``structural_graphs``) it builds the shared subgraphs, then the two
sides, and reports every structural operation on them as plain data, errors
included: equality and the first mismatch (with and without mapping free
variables), hashes (numbers where they do not depend on addresses), the
StructuralKey of each side, the JSON graph text and its round trip, a deep
copy, a post-order walk with definition regions, and a structural map. ``visitors`` runs
``structural_visit`` and ``structural_mutate`` on a case's graph (:func:`visitors_report`).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List


class _Builder:
    """Builds one case's graphs in one front end (``build`` makes the scalar leaves)."""

    def __init__(self, env: Any, build: Callable[[Any, Any], Any], free_vars: int):
        self.api = env.api
        self.free_vars = free_vars
        self.env = env
        self.build_leaf = build
        self.make = env.api.get_global_func("ffi.MakeObjectFromPackedArgs")
        self.common = [self.var("common") for _ in range(free_vars)]
        self.shared: List[Any] = []
        self.free: List[Any] = []

    def obj(self, type_key: str, **fields: Any) -> Any:
        args: List[Any] = [type_key]
        for name, value in fields.items():
            args += [name, value]
        return self.make(*args)

    def var(self, name: str) -> Any:
        return self.obj("stk.Var", name=name)

    def side(self, recipe: Any) -> Any:
        """One side of the case: its own free variables."""
        self.free = [self.var(f"free{i}") for i in range(self.free_vars)]
        return self.graph(recipe, [])

    def graph(self, recipe: Any, scope: List[Any]) -> Any:
        api, tag = self.api, recipe[0]
        sub = lambda r: self.graph(r, scope)  # noqa: E731
        if tag in ("Array", "List"):
            return getattr(api, tag)([sub(item) for item in recipe[1]])
        if tag in ("Map", "Dict"):
            return getattr(api, tag)({sub(k): sub(v) for k, v in recipe[1]})
        if tag == "use":
            return scope[recipe[1] % len(scope)] if scope else self.free[recipe[1] % self.free_vars]
        if tag == "free":
            return self.free[recipe[1]]
        if tag == "common":
            return self.common[recipe[1]]
        if tag == "shared":
            return self.shared[recipe[1]]
        if tag == "node":
            return self.obj("stk.Node", a=sub(recipe[1]), b=sub(recipe[2]))
        if tag == "dag":
            return self.obj("stk.Dag", a=sub(recipe[1]), b=sub(recipe[2]))
        if tag == "const":
            return self.obj("stk.Const", tag="c", payload=sub(recipe[1]))
        if tag == "unique":
            return self.obj("stk.Unique", x=recipe[1])
        if tag == "custom":
            return self.obj("stk.Custom", key=sub(recipe[1]),
                            defs=api.Array([sub(d) for d in recipe[2]]), label="l")
        if tag == "func":
            params = [self.var(f"p{i}") for i in range(recipe[1])]
            return self.obj("stk.Func", params=api.Array(params),
                            body=self.graph(recipe[2], scope + params), comment="c")
        if tag == "let":
            bound = self.var("v")
            return self.obj("stk.Let", var=bound, value=sub(recipe[1]),
                            body=self.graph(recipe[2], scope + [bound]))
        if tag == "typed":
            typed = self.obj("stk.TypedVar", name="t", ty=sub(recipe[2]))
            return self.obj("stk.Let", var=typed, value=recipe[1], body=api.Array([typed]))
        return self.build_leaf(self.env, recipe)


def _paths(found: Any) -> Any:
    return None if found is None else [repr(path) for path in found]


def report(env: Any, case: Dict[str, Any], build: Callable, attempt: Callable) -> Dict[str, Any]:
    """Every structural operation on one case, as plain data."""
    api = env.api
    builder = _Builder(env, build, case["free_vars"])
    for recipe in case["shared"]:
        builder.shared.append(builder.side(recipe))
    lhs, rhs = builder.side(case["lhs"]), builder.side(case["rhs"])
    eq, shash = api.structural_equal, api.structural_hash
    mismatch = api.get_first_structural_mismatch
    to_json, from_json = api.serialization.to_json_graph_str, api.serialization.from_json_graph_str
    repr_print = api.get_global_func("ffi.ReprPrint")
    deep_copy = api.get_global_func("ffi.DeepCopy")

    def round_trip():
        text = to_json(lhs)
        back = from_json(text)
        return [text, eq(back, lhs, map_free_vars=True), to_json(back) == text]

    def copied():
        copy = deep_copy(lhs)
        return [repr_print(copy), eq(copy, lhs, map_free_vars=True)]

    def walked():
        seen: List[Any] = []
        api.structural_walk(lhs, with_def_region_kind=(
            object, lambda v, kind: seen.append([repr_print(v), int(kind)])))
        return seen

    def keys():
        a, b = api.StructuralKey(lhs), api.StructuralKey(rhs)
        return [a == b, hash(a) == hash(b)]

    return {
        "equal": [attempt(env, lambda: eq(lhs, rhs)),
                  attempt(env, lambda: eq(lhs, rhs, map_free_vars=True))],
        "mismatch": [attempt(env, lambda: _paths(mismatch(lhs, rhs))),
                     attempt(env, lambda: _paths(mismatch(lhs, rhs, map_free_vars=True)))],
        "hash": attempt(env, lambda: None if case["by_address"] else
                        [shash(lhs, map_free_vars=True), shash(rhs, map_free_vars=True)]),
        "same_hash": attempt(env, lambda: shash(lhs) == shash(rhs)),
        "key": attempt(env, keys),
        "json": attempt(env, round_trip),
        "copy": attempt(env, copied),
        "walk": attempt(env, walked),
        "map": attempt(env, lambda: repr_print(api.structural_map(lhs, (int, lambda v: v + 1)))),
    }


def visitors_report(env: Any, case: Dict[str, Any], build: Callable,
                    attempt: Callable) -> Dict[str, Any]:
    """``structural_visit`` and ``structural_mutate`` on one case's ``lhs``, with callbacks that
    use the visitor's and mutator's methods as ``case["visit"]`` and ``case["remap"]`` say."""
    api = env.api
    builder = _Builder(env, build, case["free_vars"])
    for recipe in case["shared"]:
        builder.shared.append(builder.side(recipe))
    lhs = builder.side(case["lhs"])
    free = list(builder.free)
    repr_print = api.get_global_func("ffi.ReprPrint")
    mode, stop_at, region = case["visit"]
    # One kind, or kinds taken in turn by the nested with_def_region_kind calls (so a Pattern
    # region, 1, meets another kind asked for inside it: Pattern must stay in force).
    regions = region if isinstance(region, list) else [region]
    entered = [0]

    def next_region() -> int:
        entered[0] += 1
        return regions[(entered[0] - 1) % len(regions)]
    seen: List[Any] = []

    def on_value(value, visitor):
        seen.append([repr_print(value), int(visitor.def_region_kind())])
        if len(seen) == stop_at:
            return api.VisitInterrupt([len(seen), repr_print(value)])
        if mode == "prune":
            return None
        if mode == "region":
            return visitor.with_def_region_kind(next_region(), lambda: [
                seen.append(["inside", int(visitor.def_region_kind())]),
                visitor.default_visit(value)][1])
        if mode == "children" and isinstance(value, (api.Array, api.List)):
            for item in value:
                stopped = visitor.visit(item)
                if stopped is not None:
                    return stopped
            return None
        return visitor.default_visit(value)

    def on_int(value, visitor):
        seen.append(["int", value])
        return None

    def visited():
        entered[0] = 0
        stopped = api.structural_visit(lhs, [(int, on_int), (object, on_value)])
        return [seen, None if stopped is None else
                [type(stopped).__name__, stopped.value]]

    modes: List[Any] = []

    def on_mutate(value, mutator, inplace_mode):
        modes.append([repr_print(value), int(inplace_mode), int(mutator.def_region_kind())])
        if value.same_as(lhs) if isinstance(value, api.Object) else False:
            for index, replacement in case["remap"]:
                var = free[index % len(free)]
                mutator.var_remap_set(var, replacement if replacement is not None
                                      else builder.var("fresh"))
            modes.append([repr_print(mutator.var_remap_get(v)) if mutator.var_remap_get(v)
                          is not None else None for v in free])
            return mutator.with_def_region_kind(next_region(), lambda: mutator.default_mutate(value))
        if mode == "region" and len(regions) > 1:  # nested regions below the root as well
            return mutator.with_def_region_kind(next_region(), lambda: [
                modes.append(["inside", int(mutator.def_region_kind())]),
                mutator.default_mutate(value)][1])
        return mutator.default_mutate(value)

    def mutated():
        entered[0] = 0
        result = api.structural_mutate(lhs, [(int, lambda v, m: v * 2), (object, on_mutate)])
        if not case["identity"]:  # long text: which values the callbacks see is the cffi
            return [repr_print(result)]  # core's own (known.py, "cffi-long-text-identity")
        return [repr_print(result), modes, result.same_as(lhs)
                if isinstance(result, api.Object) else None]

    return {"visit": attempt(env, visited), "mutate": attempt(env, mutated),
            "kinds": [int(k) for k in api.DefRegionKind], "interrupt": attempt(
                env, lambda: [api.VisitInterrupt().value, api.VisitInterrupt(-0.0).value])}


def handlers(build: Callable, attempt: Callable) -> Dict[str, Callable]:
    """The worker operations this module adds (``child.OPS``)."""

    def each_case(reporter: Callable) -> Callable:
        def op(env: Any, cases: List[Dict[str, Any]]) -> List[Any]:
            out = []
            for case in cases:
                try:
                    out.append(reporter(env, case, build, attempt))
                except Exception as error:  # noqa: BLE001 - a refused build is a result
                    out.append(["build-raises", type(error).__name__,
                                str(error).split("\n")[0]])
            return out
        op.__doc__ = f"For each case: :func:`{reporter.__name__}`, or the error building it raised."
        return op

    return {"structural": each_case(report), "visitors": each_case(visitors_report)}
