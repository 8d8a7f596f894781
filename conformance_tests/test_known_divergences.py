"""The known divergences (``known.py``), each as a minimal reproduction, strict xfail.

Each entry is a bug in one of our front ends that the properties step
around. Its reproduction runs under upstream and under every front end in
``config.FRONTENDS`` and must give upstream's result; while the bug lives
that assertion fails (xfail). Once it is fixed the test passes, which a
strict xfail reports as a failure: delete the entry from ``known.py`` so the
properties cover those inputs again.
"""

from __future__ import annotations

import pytest

from . import config
from .compare import assert_agree
from .known import KNOWN


@pytest.mark.parametrize(
    "divergence",
    [pytest.param(d, id=d.id, marks=pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"known bug {d.id} (conformance_tests/known.py)"))
     for d in KNOWN])
def test_known_divergence_reproduces(pool, divergence):
    replies = pool.run("snippet", [divergence.repro])
    assert_agree(replies, divergence.repro, f"known divergence {divergence.id}: {divergence.summary}")


def test_known_divergences_are_documented():
    ids = [d.id for d in KNOWN]
    assert len(ids) == len(set(ids))
    for d in KNOWN:
        assert d.summary and "result" in d.repro, d.id
