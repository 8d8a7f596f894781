"""The libraries' own test suites under upstream, fast and ref (``run_real_libraries.py --suites``).

Each suite comes from the library's sdist on PyPI (fetched with pip into the work folder and
unpacked there, outside this tree; the sdists keep their packages under ``python/``, so the
installed library is what the tests import) and runs with pytest in its own process per front
end, ``TVM_FFI_IMPL`` set for ours. The comparison is per test: the set of
``(outcome, test id)`` pairs pytest reports (``-rA``) and the exit status must equal
upstream's. Tests that need what this machine lacks (a GPU, a model download) are skipped or
fail alike under all three, and count as identical when they do.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import tarfile
from typing import Dict, List, Tuple

#: suite -> (the sdist to fetch, the tests folder inside it)
SUITES = {
    "jax-tvm-ffi": ("jax-tvm-ffi==0.1.3", "tests"),
    "xgrammar": ("xgrammar==0.2.9", "tests/python"),
}
_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)")


def fetch_tests(python: str, requirement: str, inner: str, work: str) -> str:
    """The tests folder of ``requirement``'s sdist, unpacked under ``work/sdists`` (the
    tests read files of the sdist beside them, e.g. xgrammar's ``scripts/``)."""
    sdists = os.path.join(work, "sdists")
    stem = requirement.replace("-", "_").replace("==", "-")
    found = glob.glob(os.path.join(sdists, stem, "*", inner))
    if found:
        return found[0]
    subprocess.check_call([python, "-m", "pip", "download", "-q", "--no-deps",
                           "--no-build-isolation", "--no-binary", ":all:", requirement,
                           "-d", sdists])
    archive = (glob.glob(os.path.join(sdists, f"{stem}.tar.gz")) +
               glob.glob(os.path.join(sdists, f"{stem.replace('_', '-')}.tar.gz")))[0]
    unpacked = os.path.join(work, "sdists", stem)
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked)
    return glob.glob(os.path.join(unpacked, "*", inner))[0]


def run_suite(python: str, tests: str, impl: str, timeout: float) -> Tuple[int, Dict[str, str],
                                                                           str]:
    """(exit status, {test id: outcome}, pytest's summary line) under ``impl``."""
    # one hash seed for all: xgrammar parametrizes some tests from the order of a set of str
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("TVM_FFI_IMPL", None)
    if impl != "upstream":
        env["TVM_FFI_IMPL"] = impl
    try:
        done = subprocess.run([python, "-m", "pytest", "-q", "-rA", "--tb=no", "-p",
                               "no:cacheprovider", "."], cwd=tests, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, {}, f"no result in {timeout}s"
    outcomes = {}
    for line in done.stdout.splitlines():
        match = _OUTCOME.match(line)
        if match:
            outcomes[match.group(2)] = match.group(1)
    summary = (done.stdout.strip().splitlines() or [""])[-1]
    return done.returncode, outcomes, re.sub(r" in [\d.]+s.*", "", summary)


def run_suites(python: str, impls: List[str], work: str, timeout: float) -> bool:
    """Runs every suite under upstream and ``impls``; prints a line each; True if all equal."""
    all_same = True
    for name, (requirement, inner) in SUITES.items():
        tests = fetch_tests(python, requirement, inner, work)
        upstream = run_suite(python, tests, "upstream", timeout)
        print(f"suite {name:12} upstream  exit {upstream[0]:3} {upstream[2]}")
        for impl in impls:
            ours = run_suite(python, tests, impl, timeout)
            same = ours[0] == upstream[0] and ours[1] == upstream[1]
            all_same &= same
            print(f"suite {name:12} {impl:9} exit {ours[0]:3} {ours[2]}  "
                  f"{'identical' if same else 'DIFFERS'}")
            for test in sorted(set(ours[1]) | set(upstream[1])):
                if ours[1].get(test) != upstream[1].get(test):
                    print(f"{'':20}{test}: ours {ours[1].get(test)} upstream "
                          f"{upstream[1].get(test)}")
    return all_same
