"""The suite catches a broken front end: the CI subset of the mutation harness (``mutants/``).

The whole harness (``python -m conformance_tests.mutants``: every mutant of
``mutants/catalog.py`` under three seeds, with its score table) runs on
demand. CI runs two of its mutants, each planted in a scratch copy of the
project under a fixed seed, against the property expected to catch it, with
the explicit ``@example`` cases switched off (``CONFORMANCE_GENERATED_ONLY``)
so that the failure has to come from the strategies:

* ``ref-small-str-8``: ``SMALL_STR_MAX = 8`` in the reference runtime (an
  8-byte str would travel inline): no rebuild, the copy's Python is the mutant;
* ``front-small-str-8``: the same bug in the fast front end's encoder (C): the
  copy's ``tvm_ffi_fast._core`` is relinked with the one mutated object file.

Each run must pass its guard (every front end and the library were loaded
from the copy) and fail because a front end differs from upstream; a run that
fails for another reason does not count.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

from .mutants import runner, scratch
from .mutants.__main__ import default_cache
from .mutants.catalog import BY_NAME, CI_SUBSET, MUTANTS

SEED = 20260101


def test_ci_mutants_are_killed(tmp_path, conformance_kernels):
    kernel_dir = os.path.dirname(next(iter(conformance_kernels.values())))
    cache = os.path.join(default_cache(), "objects")

    def run(name):
        mutant = BY_NAME[name]
        root = scratch.prepare(str(tmp_path / name / "root"), mutant, cache)
        return runner.run_seed(root, mutant.hints, SEED, kernel_dir, str(tmp_path / name),
                               generated_only=True, hints_only=True)

    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = dict(zip(CI_SUBSET, pool.map(run, CI_SUBSET)))
    for name, outcome in outcomes.items():
        print(f"mutant {name}: {outcome.verdict} by {outcome.test} in {outcome.seconds:.0f} s")
        assert outcome.verdict == "killed", f"mutant {name}: {outcome.verdict}\n{outcome.detail}"
        assert outcome.test.endswith(BY_NAME[name].hints[0].split("::")[1]), outcome


def test_every_mutant_still_applies():
    """Each mutant's pattern matches exactly once in today's code (a drifted one fails here,
    not silently in the on-demand run), and changes the file."""
    import re

    for mutant in MUTANTS:
        with open(os.path.join(scratch.ROOT, mutant.path)) as f:
            source = f.read()
        found = re.findall(mutant.pattern, source, flags=re.M)
        assert len(found) == 1, f"{mutant.name}: {len(found)} matches in {mutant.path}"
        assert found[0] != mutant.replacement, mutant.name
        assert mutant.hints, f"{mutant.name} names no test expected to catch it"


def test_a_run_is_judged_by_why_it_failed():
    """Only a difference from upstream (or a crashed worker) kills; a harness error does not."""
    done = subprocess.CompletedProcess([], 1, "", "")
    guard = runner.GUARD.split("::")[1]
    ok = [("test_frontends::" + guard, "passed", "")]
    killed = runner.judge(ok + [("t::test_x", "failure", "fast differs from upstream at /0")],
                          done, 1)
    assert (killed.verdict, killed.test) == ("killed", "t::test_x")
    crashed = runner.judge(ok + [("t::test_y", "failure", "ref worker crashed: exit 11")], done, 1)
    assert crashed.verdict == "killed"
    harness = runner.judge(ok + [("t::test_z", "error", "HarnessError: unknown recipe")], done, 1)
    assert harness.verdict == "error"
    assert runner.judge(ok, subprocess.CompletedProcess([], 0, "", ""), 1) is None
