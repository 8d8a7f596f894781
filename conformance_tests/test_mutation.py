"""The suite catches a broken front end: mutants of ``tvm_ffi_ref`` must fail it.

Each mutant is a copy of the ``tvm_ffi_ref`` package in a temporary
directory with one ABI fact changed. A focused subset of this suite runs
against it in a subprocess (``CONFORMANCE_REF_PATH`` makes the "ref" worker
import the copy, and ``test_frontends`` proves it did), under the CI
profile with the explicit ``@example`` cases switched off
(``CONFORMANCE_GENERATED_ONLY``) so that the failure has to come from the
strategies, and with ``-x`` so it stops at the first counterexample:

* ``small-str-8``: ``SMALL_STR_MAX = 8`` in ``runtime/strings.py`` (an 8-byte
  str would travel inline). ``test_string_encoding`` must fail.
* ``map-hash``: a different multiplier in ``runtime/hashing.py`` (string keys
  longer than one 8-byte word hash differently, so dense maps lay out
  differently and C++ lookups into them miss). ``test_container_program``
  must fail.

A run that fails for any other reason (an error, a crash of the harness)
does not count.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MUTANTS = {
    "small-str-8": ("runtime/strings.py", r"^SMALL_STR_MAX = 7$", "SMALL_STR_MAX = 8",
                    "conformance_tests/test_values.py::test_string_encoding"),
    "map-hash": ("runtime/hashing.py", r"^_STABLE_MULTIPLIER = 1099511628211$",
                 "_STABLE_MULTIPLIER = 1099511628213",
                 "conformance_tests/test_containers.py::test_container_program"),
}
GUARD = "conformance_tests/test_frontends.py::test_every_listed_frontend_is_running"


def make_mutant(directory: str, relative: str, pattern: str, replacement: str) -> str:
    """A copy of tvm_ffi_ref under ``directory`` with one line of ``relative`` replaced."""
    target = os.path.join(directory, "tvm_ffi_ref")
    shutil.copytree(os.path.join(ROOT, "tvm_ffi_ref"), target,
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = os.path.join(target, relative)
    with open(path) as f:
        source = f.read()
    mutated, count = re.subn(pattern, replacement, source, flags=re.M)
    assert count == 1, f"the mutation of {relative} no longer applies: {pattern!r} not found once"
    with open(path, "w") as f:
        f.write(mutated)
    return directory


def run_suite_against(mutant_dir: str, test_id: str, kernel_dir: str, report: str):
    env = dict(os.environ, CONFORMANCE_REF_PATH=mutant_dir, CONFORMANCE_KERNEL_DIR=kernel_dir,
               CONFORMANCE_GENERATED_ONLY="1", CONFORMANCE_NO_DATABASE="1",
               CONFORMANCE_FRONTENDS="ref,fast")  # the mutant is CPython's "ref" worker
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               f"--junitxml={report}", GUARD, test_id]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def outcomes(report: str):
    """test name -> "passed" / "failed" / "error" / "skipped", from a JUnit XML report."""
    result = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = case.get("name")
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        result[name] = {"failure": "failed"}.get(kinds[0], kinds[0]) if kinds else "passed"
        if kinds and kinds[0] == "failure":
            result[name + ":message"] = "".join(child.text or "" for child in case
                                                if child.tag == "failure")
    return result


def test_mutants_fail_the_suite(tmp_path, conformance_kernels):
    kernel_dir = os.path.dirname(next(iter(conformance_kernels.values())))
    jobs = {}
    for name, (relative, pattern, replacement, test_id) in MUTANTS.items():
        directory = make_mutant(str(tmp_path / name), relative, pattern, replacement)
        jobs[name] = (directory, test_id, str(tmp_path / f"{name}.xml"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(zip(jobs, pool.map(lambda job: run_suite_against(job[0], job[1], kernel_dir,
                                                                     job[2]), jobs.values())))
    for name, done in runs.items():
        _, test_id, report = jobs[name]
        log = done.stdout[-4000:] + done.stderr[-2000:]
        print(f"mutant {name}: {done.stdout.strip().splitlines()[-1]}")
        assert done.returncode == 1, f"mutant {name}: pytest exited {done.returncode}\n{log}"
        results = outcomes(report)
        assert results.get(GUARD.split("::")[1]) == "passed", f"mutant {name}: guard\n{log}"
        test_name = test_id.split("::")[1]
        assert results.get(test_name) == "failed", f"mutant {name} was not caught\n{log}"
        assert "differs from upstream" in results[test_name + ":message"], (
            f"mutant {name} failed for another reason\n{log}")
