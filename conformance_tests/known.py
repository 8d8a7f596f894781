"""Known disagreements between our front ends and upstream: bugs, each with a repro.

Every entry here is a bug in a front end (upstream is the specification).
The properties leave inputs that hit one out, so that they keep checking
everything else; ``test_known_divergences.py`` runs each entry's minimal
reproduction and requires it to still differ, so fixing the bug turns that
test red until the entry is deleted from here (and the properties cover the input again).

A recipe node is matched in a *context*: ``"arg"`` (the value is passed to a
kernel, or built) or ``"convert"`` (the value goes through ``api.convert``:
the top of a ``test_convert`` case, or the inside of a ``("converted", x)``
recipe). A container operation (``test_containers``) is matched as a node in
the context ``"op:<container kind>"`` (``"op:Array"``, ``"op:Dict"``, ...).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, NamedTuple, Tuple


class Divergence(NamedTuple):
    id: str
    summary: str
    matches: Callable[[Any, str], bool]  # (recipe node, context) -> does it hit the bug?
    repro: str  # Python for the API as ``api`` (and ``np``); its value differs from upstream's


def walk(recipe: Any, context: str = "arg") -> Iterator[Tuple[Any, str]]:
    """Every ``(recipe node, context)`` inside ``recipe``."""
    if isinstance(recipe, tuple) and recipe and isinstance(recipe[0], str):
        yield recipe, context
        if recipe[0] == "converted":
            yield from walk(recipe[1], "convert")
            return
    if isinstance(recipe, (list, tuple)):
        for item in recipe:
            if isinstance(item, (list, tuple)):
                yield from walk(item, "arg")


#: Found by ``test_surface_edges`` and ``test_structural_visitors_and_mutators`` (their
#: generation steps around them, see there); none is a one-line fix (the Error class is
#: shared by every front end; the cffi core copies long text on purpose). Earlier: a Tensor,
#: Function, Error or opaque object was an ``Object`` in ours; CObject is their base now.
#: Earlier: ref losing NumPy's RuntimeError for a float8/bfloat16 Tensor went with the C
#: deferred deleter of tvm_ffi_common/_pycapi.c that ref's DLPack exports now carry.
KNOWN: List[Divergence] = [
    Divergence(
        "extra-public-attributes",
        "Ours has public names upstream's API lacks: Error.append_backtrace, Object.type_key "
        "and Object.type_index, and list_global_func_names at the package's top (upstream has "
        "it in tvm_ffi.registry only), abi, abi_version, runtime_name and __impl_version__; "
        "code written against ours fails on upstream.",
        lambda node, context: False,  # test_surface_edges generates no use of them
        "error = (getattr(api, 'Error', None) or api.core.Error)('ValueError', 'm', '')\n"
        "a = api.Array([])\n"
        "result = [hasattr(error, 'append_backtrace'), hasattr(a, 'type_key'), "
        "hasattr(a, 'type_index'), hasattr(api, 'list_global_func_names'), hasattr(api, 'abi'), "
        "hasattr(api, 'abi_version'), hasattr(api, 'runtime_name'), "
        "hasattr(api, '__impl_version__')]"),
    Divergence(
        "cffi-long-text-identity",
        "fast-cffi: a String or Bytes object longer than 7 bytes that reaches Python (a "
        "structural_mutate callback's value, returned as is) comes back as a new object, since "
        "the cffi core copies such text and releases the object (object.py, wrap_owned, for "
        "PyPy's sake): structural_mutate then rebuilds every parent, result.same_as(root) "
        "is False where upstream's (and the compiled core's) is True, and the callbacks are "
        "called for other values.",
        # test_structural_visitors_and_mutators leaves out the one read (_holds_long_text)
        lambda node, context: False,
        "v = api.Array(['x' * 30])\n"
        "result = api.structural_mutate(v, [(object, lambda x, m: m.default_mutate(x))])"
        ".same_as(v)"),
]


def container_op_divergent(kind: str, op: Any) -> bool:
    """Whether a container operation on a container of ``kind`` hits a known divergence."""
    return any(d.matches(op, "op:" + kind) for d in KNOWN) or any(
        hits_known_divergence(item) for item in op[1:] if isinstance(item, tuple))


def hits_known_divergence(recipe: Any, context: str = "arg") -> bool:
    return any(d.matches(node, ctx) for node, ctx in walk(recipe, context) for d in KNOWN)


def without_known_divergences(recipes: List[Any], context: str = "arg") -> List[Any]:
    """The recipes that hit no known divergence (the others are covered by their repro)."""
    return [r for r in recipes if not hits_known_divergence(r, context)]
