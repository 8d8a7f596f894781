"""Programs for the dataclass property: a generated ``@py_class`` and steps on its instances.

A program is ``{"spec": ..., "steps": [...]}`` (see ``dataclass_child.py``,
which runs it in each worker). Field values are drawn from the suite's
value recipes, mostly of a type near the field's annotation so that
construction usually succeeds, sometimes of any type so that the converter's
errors are compared too.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from . import strategies as S
from .dataclass_child import ANNOTATIONS

#: Recipes of values that fit (or nearly fit) each annotation.
_FITTING = {
    "int": st.one_of(S.ints, S.bools), "float": st.one_of(S.floats, S.ints),
    "bool": S.bools, "str": S.strs, "bytes": S.bytes_values,
    "Any": S.plain_values, "Optional[int]": st.one_of(S.nones, S.ints),
    "Optional[str]": st.one_of(S.nones, S.strs),
    "List[int]": st.lists(S.ints, max_size=3).map(lambda xs: ("list", xs)),
    "Dict[str, int]": st.lists(st.tuples(S.strs, S.ints), max_size=3).map(
        lambda kvs: ("dict", kvs)),
    "Tuple[int, str]": st.tuples(S.ints, S.strs).map(lambda p: ("tuple", list(p))),
    "Union[int, str]": st.one_of(S.ints, S.strs),
    "List[Optional[float]]": st.lists(st.one_of(S.nones, S.floats), max_size=3).map(
        lambda xs: ("list", xs)),
}

#: A fresh type key per generated class (workers see the same sequence).
_KEYS = itertools.count()


def _value_for(annotation: str):
    return st.one_of(_FITTING[annotation], _FITTING[annotation], _FITTING[annotation],
                     S.plain_values)


@st.composite
def programs(draw):
    """A class spec and up to eight steps on its instances."""
    annotations = draw(st.lists(st.sampled_from(ANNOTATIONS), max_size=4))
    fields = []
    for i, annotation in enumerate(annotations):
        default = draw(st.one_of(st.none(), _FITTING[annotation]))
        fields.append((f"f{i}", annotation, default, draw(st.booleans())))
    eq = draw(st.booleans())
    options = {"eq": eq, "order": eq and draw(st.booleans()),
               "unsafe_hash": draw(st.booleans()), "frozen": draw(st.booleans()),
               "kw_only": draw(st.booleans())}
    names = [f[0] for f in fields]
    if annotations:
        positional = st.lists(st.sampled_from(annotations), max_size=2).flatmap(
            lambda anns: st.tuples(*[_value_for(a) for a in anns])).map(list)
        keywords = st.lists(st.sampled_from(list(zip(names, annotations))), max_size=3,
                            unique_by=lambda p: p[0]).flatmap(
            lambda pairs: st.tuples(*[st.tuples(st.just(n), _value_for(a))
                                      for n, a in pairs])).map(list)
    else:
        positional = keywords = st.just([])
    construct = st.tuples(positional, keywords).map(lambda ak: ["construct", ak[0], ak[1]])
    index = st.integers(0, 3)
    other_steps = [st.tuples(st.just("repr"), index), st.tuples(st.just("copy"), index),
                   st.tuples(st.just("eq"), index, index), st.tuples(st.just("lt"), index, index),
                   st.tuples(st.just("hash"), index, index)]
    if fields:
        field = st.sampled_from(fields)
        other_steps.append(st.tuples(st.just("read"), index, field.map(lambda f: f[0])))
        other_steps.append(field.flatmap(lambda f: st.tuples(
            st.just("write"), index, st.just(f[0]), _value_for(f[1]))))
    steps = draw(st.lists(st.one_of(construct, *[s.map(list) for s in other_steps]),
                          min_size=1, max_size=8))
    spec = {"key": f"conformance.dc.Generated{next(_KEYS)}", "options": options,
            "fields": fields}
    return {"spec": spec, "steps": steps}
