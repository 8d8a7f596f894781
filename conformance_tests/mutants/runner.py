"""Running the conformance suite's CI profile against a scratch copy, and judging the run.

One run is one mutant under one hypothesis seed. It has two phases, both
``pytest -x`` (stop at the first failure) in the copy with ``PYTHONPATH``
pointing at it:

1. the guard (``test_frontends``: every front end was loaded from the copy)
   and the mutant's *hint* tests, the properties expected to catch it;
2. only if those passed: the whole conformance suite (but the mutation
   tests themselves), so a mutant is killed by whatever catches it.

Verdicts: ``killed`` (a test failed because a front end differs from
upstream or its worker crashed), ``survived`` (everything passed),
``error`` (the guard failed, or a test failed for another reason, e.g. a
harness error: such a run says nothing about the mutant). The example
database is off, so a seed's run never replays another run's failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import Dict, List, Optional

GUARD = "conformance_tests/test_frontends.py::test_every_listed_frontend_is_running"
SUITE = "conformance_tests"
#: Never run inside a mutant run: the mutation tests (they would start mutant runs of their own).
EXCLUDED = ["conformance_tests/test_mutation.py"]
#: What a failure message says when the suite caught a front end.
KILL_MARKERS = ("differs from upstream", "worker crashed")
#: One pytest phase may not take longer than this (a hang is an error, not a kill).
PHASE_TIMEOUT = 1800


@dataclass
class Outcome:
    """The verdict of one run: ``killed`` / ``survived`` / ``error``, by which test, how long."""

    seed: int
    verdict: str
    test: str = ""
    detail: str = ""
    seconds: float = 0.0


def environment(root: str, kernel_dir: str, generated_only: bool = False) -> Dict[str, str]:
    """The environment a run of the suite in the copy at ``root`` gets."""
    os.makedirs(kernel_dir, exist_ok=True)  # compiled once, reused by every later run
    env = dict(os.environ)
    env.pop("TVM_FFI_IMPL", None)  # the workers import each front end by its own name
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    env["CONFORMANCE_SCRATCH_ROOT"] = root
    env["CONFORMANCE_KERNEL_DIR"] = kernel_dir
    env["CONFORMANCE_NO_DATABASE"] = "1"
    env.pop("CONFORMANCE_REF_PATH", None)
    env.pop("CONFORMANCE_FRONTENDS", None)  # mutants are judged on CPython's ref, fast and fast-cffi
    if generated_only:
        env["CONFORMANCE_GENERATED_ONLY"] = "1"
    else:
        env.pop("CONFORMANCE_GENERATED_ONLY", None)
    return env


def _results(report: str) -> List[tuple]:
    """``(test id, outcome, message)`` in run order, from a JUnit XML report."""
    if not os.path.exists(report):
        return []
    out = []
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        test = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        bad = [c for c in case if c.tag in ("failure", "error")]
        message = "".join((c.get("message") or "") + (c.text or "") for c in bad)
        out.append((test, bad[0].tag if bad else "passed", message))
    return out


def run_pytest(root: str, env: Dict[str, str], seed: int, targets: List[str], report: str,
               timeout: float = PHASE_TIMEOUT) -> subprocess.CompletedProcess:
    # -n 0: one process, so that -x stops at the first failure and the guard runs first
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
               f"--hypothesis-seed={seed}", f"--junitxml={report}"]
    command += [f"--deselect={path}" for path in EXCLUDED] + targets
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)


def judge(results: List[tuple], done: subprocess.CompletedProcess, seed: int) -> Optional[Outcome]:
    """The verdict of a phase that stopped at a failure, or None when everything passed."""
    failed = [(test, message) for test, outcome, message in results if outcome != "passed"]
    if not failed and done.returncode == 0:
        return None
    if not failed:
        tail = (done.stdout[-1500:] + done.stderr[-1500:]).strip()
        return Outcome(seed, "error", "", f"pytest exited {done.returncode}: {tail}")
    test, message = failed[0]
    if test.endswith(GUARD.split("::")[1]):
        return Outcome(seed, "error", test, "the guard failed: " + message[:1500])
    if any(marker in message for marker in KILL_MARKERS):
        return Outcome(seed, "killed", test, message[:1500])
    return Outcome(seed, "error", test, "failed for another reason: " + message[:1500])


def run_seed(root: str, hints: List[str], seed: int, kernel_dir: str, work: str,
             generated_only: bool = False, hints_only: bool = False) -> Outcome:
    """One mutant (already planted in ``root``) under one seed (``hints_only``: phase 1 only,
    a quick screening whose ``survived`` means only "not by its hints")."""
    env = environment(root, kernel_dir, generated_only)
    start = time.monotonic()
    phases = [[GUARD] + list(hints)] + ([] if hints_only else [[SUITE]])
    for phase, targets in enumerate(phases):
        report = os.path.join(work, f"seed{seed}-phase{phase}.xml")
        try:
            done = run_pytest(root, env, seed, targets, report)
        except subprocess.TimeoutExpired:
            return Outcome(seed, "error", "", f"phase {phase} timed out",
                           time.monotonic() - start)
        results = _results(report)
        if phase == 0 and not any(t.endswith(GUARD.split("::")[1]) and o == "passed"
                                  for t, o, _ in results):
            tail = (done.stdout[-2000:] + done.stderr[-1500:]).strip()
            return Outcome(seed, "error", "", "the guard did not pass:\n" + tail,
                           time.monotonic() - start)
        verdict = judge(results, done, seed)
        if verdict is not None:
            verdict.seconds = time.monotonic() - start
            return verdict
    return Outcome(seed, "survived", "", "", time.monotonic() - start)
