"""Runtime state: the type registry and dtype strings, through the C API and the Python API.

* ``test_type_registration``: a generated sequence of
  ``TVMFFITypeGetOrAllocIndex`` registrations (parents, child slots,
  overflow, repeated keys) allocates the same indices in the same order
  (relative to the first one: see ``child.op_register_types``), and
  ``TVMFFITypeKeyToIndex`` and the ``TVMFFITypeInfo`` records (index, depth,
  key, ``type_key_hash``, ancestors, fields, methods, metadata) agree.
* ``test_builtin_type_infos``: the records of the static types and of the
  dynamic types registered at load (128..137) agree.
* ``test_dtype_strings``: for strings from upstream's dtype grammar and near
  misses, ``api.dtype(s)`` (its str, type code, bits, lanes) and the C API
  round trip ``TVMFFIDataTypeFromString``/``TVMFFIDataTypeToString`` give
  the same values, or the same error kind and message.
* ``test_dtype_grammar_exhaustive``: the same for every base name with every
  common bit width and lane suffix.
* ``test_dtype_triples``: ``TVMFFIDataTypeToString`` of arbitrary
  ``(code, bits, lanes)`` and ``api.dtype`` of the printed name agree.
"""

from __future__ import annotations

import itertools

from hypothesis import assume, example, given
from hypothesis import strategies as st

from . import config
from . import strategies as S
from .compare import assert_agree
from .known import hits_known_divergence
from .profiles import conformance

_cases = itertools.count()


@conformance(examples=150)
@given(S.type_registrations())
@example([("T0", -1, 3, False), ("T1", 0, 0, False), ("T2", 0, 1, True), ("T3", 2, 0, True),
          ("T0", -1, 0, True), ("T5", -1, 2, True), ("T6", 5, 4, True), ("T7", 5, 0, False)])
def test_type_registration(pool, registrations):
    job = {"prefix": f"conformance.case{next(_cases)}.", "registrations": registrations}
    assert_agree(pool.run("register_types", job), registrations, "type registration differs")


def test_builtin_type_infos(pool):
    indices = list(range(0, 14)) + list(range(64, 79)) + list(range(128, 138))
    indices = [i for i in indices if not hits_known_divergence(("type-info", i))]
    assert_agree(pool.run("type_infos", indices), indices, "type info records differ")


def test_exhausted_child_slots(pool):
    """A parent whose child slots run out and may not overflow: upstream aborts the process
    (no defined behaviour); ours must raise a clear error naming the parent, never crash."""
    job = {"prefix": "conformance.exhausted.",
           "registrations": [("P", -1, 0, False), ("C", 0, 0, False)]}
    upstream = pool.isolated("upstream").request("register_types", job)
    assert upstream[0] == "crash", upstream  # if upstream ever defines this, compare instead
    for frontend in config.FRONTENDS:
        ours = pool.workers[frontend].request("register_types", job)
        assert ours["registered"][1] == [
            "C", -1, ["InternalError", "Check failed: (parent->child_slots_can_overflow) is false: "
                      "Reach maximum number of sub-classes for conformance.exhausted.P"]]


@conformance(examples=300)
@given(st.lists(S.dtype_texts, min_size=1, max_size=10))
@example(["int8", "float32x4", "bfloat16", "float8_e4m3fn", "bool", "handle", "void", "",
          "int", "int32x", "int99999", "float32x70000", "custom[foo]32", "nope"])
def test_dtype_strings(pool, texts):
    texts = [t for t in texts if not hits_known_divergence(("dtype-text", t))]
    assume(texts)
    assert_agree(pool.run("dtype_strings", texts), texts, "dtype strings differ")


def test_dtype_grammar_exhaustive(pool):
    """Every base name with every common bit width and lane suffix, in one batch."""
    texts = [base + bits + lanes for base in S.DTYPE_BASES
             for bits in ("", "1", "4", "6", "8", "16", "32", "64", "128")
             for lanes in ("", "x1", "x2", "x4", "x16", "xvscalex4")]
    texts = [t for t in texts if not hits_known_divergence(("dtype-text", t))]
    assert_agree(pool.run("dtype_strings", texts), texts, "dtype strings differ")


@conformance(examples=200)
@given(st.lists(S.dtype_triples, min_size=1, max_size=10))
def test_dtype_triples(pool, triples):
    triples = [t for t in triples if not hits_known_divergence(("dtype-triple",) + tuple(t))]
    assume(triples)
    assert_agree(pool.run("dtype_triples", triples), triples, "dtype printing differs")
