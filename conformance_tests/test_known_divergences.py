"""The known divergences (``known.py``), each as a minimal reproduction.

Each entry is a bug in one of our front ends that the properties step
around. Its reproduction runs under upstream and under every front end in
``config.FRONTENDS`` and must still differ from upstream's result: once the
bug is fixed the test fails until the entry is deleted from ``known.py``, so
that the properties cover those inputs again.
"""

from __future__ import annotations

from . import config
from .compare import assert_agree
from .known import KNOWN


def test_each_known_divergence_still_reproduces(pool):
    """Every entry still differs from upstream; a fixed one must leave ``known.py``.

    (One test over the whole list rather than a parametrized strict xfail, so
    that an empty list is a passing test, not an "empty parameter set" skip.)
    """
    fixed = []
    for divergence in KNOWN:
        replies = pool.run("snippet", [divergence.repro])
        try:
            assert_agree(replies, divergence.repro, divergence.id)
        except AssertionError:
            continue  # still reproduces, as the entry says
        fixed.append(divergence.id)
    assert not fixed, f"fixed, delete from conformance_tests/known.py: {fixed}"


def test_known_divergences_are_documented():
    ids = [d.id for d in KNOWN]
    assert len(ids) == len(set(ids))
    for d in KNOWN:
        assert d.summary and "result" in d.repro, d.id
