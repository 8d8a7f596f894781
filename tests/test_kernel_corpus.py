"""The kernel corpus under upstream and under our front ends.

Two claims per case of ``corpus_cases.ALL_CASES``:

* ``test_upstream_matches_expectation``: upstream's ``tvm_ffi`` gives exactly
  the result written in the corpus (so every case pins down a fact, and a
  change of upstream behaviour is noticed);
* ``test_frontend_matches_upstream``: each front end in
  ``frontend_harness.FRONTENDS_UNDER_TEST`` gives exactly upstream's result
  (``CORPUS_FRONTENDS=pypy-ref,pypy-fast`` with ``$TVM_FFI_PYPY`` holds the PyPy front
  ends to upstream on CPython: .ci/run's PyPy job).

``test_upstream_is_deterministic`` runs upstream a second time: a case whose
result varied between runs (an address, an ordering by hash of a pointer)
would make every front-end comparison flaky.

The whole corpus runs once per front end, in one interpreter each (see
``frontend_harness.run_frontend``), the runs in parallel.

``CORPUS_UPSTREAM_RESULTS=file`` keeps upstream's two runs in ``file`` for a later session of
the same tree: .ci/run's PyPy job compares its front ends with the runs its CPython job made
(upstream runs on CPython in both), instead of running upstream twice more.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Dict

import pytest

from corpus_cases import ALL_CASES, SETUP, _describe
from frontend_harness import FRONTENDS_UNDER_TEST, build_corpus_kernels, run_frontend

CASE_IDS = [case.id for case in ALL_CASES]


@pytest.fixture(scope="session")
def corpus_libs(kernels):
    """Every corpus kernel, compiled once per session: name -> library path."""
    return build_corpus_kernels(kernels)


@pytest.fixture(scope="session")
def corpus_results(corpus_libs):
    """run name -> case id -> normalized result.

    Runs: "upstream", "upstream again" (a second, independent upstream run) and
    each front end under test.
    """
    cases = [(case.id, case.code) for case in ALL_CASES]
    kept = _kept_upstream_runs(cases, corpus_libs)
    runs = {} if kept else {"upstream": "upstream", "upstream again": "upstream"}
    runs.update({frontend: frontend for frontend in FRONTENDS_UNDER_TEST if frontend != "upstream"})

    def run(frontend):
        return run_frontend(frontend, cases, setup=SETUP, libs=corpus_libs, introspect="introspect")

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(runs, pool.map(run, runs.values())))
    if kept:
        results.update(kept)
    else:
        _keep_upstream_runs(cases, corpus_libs, results)
    return results


def _corpus_key(cases, libs) -> str:
    """What upstream's results depend on: the cases, the setup, the kernels (their paths name
    their sources' digests), the harness that runs and normalizes, and the interpreter."""
    with open(os.path.join(os.path.dirname(__file__), "frontend_harness.py"), "rb") as f:
        harness = f.read()
    text = json.dumps([cases, SETUP, sorted(libs.items()), sys.executable], sort_keys=True)
    return hashlib.sha1(text.encode() + harness).hexdigest()


def _kept_upstream_runs(cases, libs):
    """Upstream's two runs kept by an earlier session for exactly this corpus, or None."""
    path = os.environ.get("CORPUS_UPSTREAM_RESULTS")
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        kept = json.load(f)
    if kept.get("key") != _corpus_key(cases, libs):
        return None
    return {"upstream": kept["upstream"], "upstream again": kept["upstream again"]}


def _keep_upstream_runs(cases, libs, results) -> None:
    path = os.environ.get("CORPUS_UPSTREAM_RESULTS")
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"key": _corpus_key(cases, libs), "upstream": results["upstream"],
                       "upstream again": results["upstream again"]}, f)
        os.replace(path + ".tmp", path)


def test_case_ids_are_unique():
    assert len(set(CASE_IDS)) == len(CASE_IDS)


def test_upstream_is_deterministic(corpus_results):
    first, second = corpus_results["upstream"], corpus_results["upstream again"]
    differing = [case_id for case_id in CASE_IDS if first[case_id] != second[case_id]]
    assert not differing, f"upstream gave different results on a second run: {differing}"


@pytest.mark.parametrize("case", ALL_CASES, ids=CASE_IDS)
def test_upstream_matches_expectation(corpus_results, case):
    got = corpus_results["upstream"][case.id]
    assert got == case.expect, f"{case.id}: {case.proves}\ncode: {case.code}"


#: Cases whose result is NumPy's, not ours, and whose NumPy differs under PyPy (PyPy 3.9 gets
#: NumPy 2.0 at most, upstream's CPython a newer one): case id -> the result under NumPy 2.0.
#: NumPy 2.0 exports an empty array without strides (so a kernel sees compact ones); 2.1+
#: exports its (0, 0).
NUMPY_2_0_RESULTS = {"tensor.empty": _describe(2, (0, 3), (3, 1), "float64", True)}


#: Cases the PyPy front ends still get wrong (none today), each with what is known: a strict
#: xfail, so the PyPy job reports them as expected failures and fails as soon as one passes
#: (then delete it).
PYPY_GAPS: Dict[str, str] = {}


@pytest.mark.parametrize("case", ALL_CASES, ids=CASE_IDS)
@pytest.mark.parametrize("frontend", FRONTENDS_UNDER_TEST)
def test_frontend_matches_upstream(corpus_results, frontend, case, request):
    if frontend.startswith("pypy-") and case.id in PYPY_GAPS:
        request.node.add_marker(pytest.mark.xfail(reason=PYPY_GAPS[case.id], strict=True))
    got = corpus_results[frontend][case.id]
    want = corpus_results["upstream"][case.id]
    if frontend.startswith("pypy-") and case.id in NUMPY_2_0_RESULTS:
        want = NUMPY_2_0_RESULTS[case.id]
    assert got == want, f"{frontend} differs from upstream on {case.id}: {case.proves}\ncode: {case.code}"
