"""Runs real libraries that link libtvm_ffi.so's C++ symbols on ours and on upstream's.

    python compat/run_real_libraries.py                 # all three libraries, fast and ref
    python compat/run_real_libraries.py --impl fast --only tvm
    python compat/run_real_libraries.py --work /tmp/real --json results.json

Opt-in, not part of CI: it downloads about 1 GB (apache-tvm, tilelang, tvm-ffi-orcjit and
the CPU build of torch 2.13.0, which tilelang imports) into two virtual environments in a
work folder outside the tree (``--work``, default under the system temp dir, reused by later
runs):

* ``ours``: this package (``pip install`` of the tree), the three libraries installed with
  ``--no-deps`` and their other dependencies, and NO ``apache-tvm-ffi``: ``tvm_ffi`` is
  served by ours through ``TVM_FFI_IMPL`` (fast or ref);
* ``upstream``: ``apache-tvm-ffi`` at the pinned version and the same libraries.

Each script of ``compat/real_libraries/`` then runs in its own process under upstream, fast
and ref; the report shows each one's last output line and whether its output equals
upstream's. The exit status is 0 when every run under ours printed what upstream printed.

tilelang 0.1.15 pins ``apache-tvm-ffi<0.1.13``: its C++ registers enum variants in the
older ``__ffi_enum_entries__`` / ``__ffi_enum_attrs__`` columns, and its import fails under
the pinned upstream too (earlier, re-registering ``ffi.Tensor``), so that row differs in
the error text only.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRIPTS = os.path.join(HERE, "real_libraries")
PINNED = "0.1.15.post2"
LIBRARIES = {  # name -> (script, the package it needs)
    "tvm": ("tvm_vector_add.py", "apache-tvm==0.27.0.post1"),
    "tilelang": ("tilelang_import.py", "tilelang==0.1.15"),
    "orcjit": ("orcjit_call.py", "apache-tvm-ffi-orcjit==0.1.3"),
}
#: The libraries' dependencies other than apache-tvm-ffi (from their wheels' metadata).
DEPENDENCIES = ["numpy", "ml_dtypes", "typing_extensions", "cloudpickle", "psutil", "tqdm",
                "z3-solver>=4.13.0,<4.15.5", "cffi"]
TORCH = "torch==2.13.0"


def _run(cmd: List[str], **kwargs) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.check_call(cmd, **kwargs)


def _install_ours(python: str) -> None:
    """Installs this tree (not editable: as a user gets it) into the environment of ``python``.

    setuptools stages a wheel's files in build/lib* and never deletes one there, so a module
    since moved or deleted would be installed again: the staging directories go first."""
    for staging in glob.glob(os.path.join(ROOT, "build", "lib.*")):
        shutil.rmtree(staging)
    _run([python, "-m", "pip", "install", "-q", "--force-reinstall", "--no-build-isolation",
          "--no-deps", ROOT])


def _venv(work: str, name: str, ours: bool) -> str:
    """The python of venv ``name`` under ``work``, made and filled on first use."""
    path = os.path.join(work, name)
    python = os.path.join(path, "bin", "python")
    marker = os.path.join(path, "ready")
    if os.path.exists(marker):
        if ours:
            _install_ours(python)  # the tree may have changed since the last run
        return python
    _run([sys.executable, "-m", "venv", path])
    pip = [python, "-m", "pip", "install", "-q"]
    _run(pip + ["setuptools", "wheel", TORCH])
    _run(pip + DEPENDENCIES)
    _run(pip + ["--no-deps"] + [package for _, package in LIBRARIES.values()])
    if ours:
        _install_ours(python)
    else:
        _run(pip + [f"apache-tvm-ffi=={PINNED}"])
    with open(marker, "w") as f:
        f.write("ok\n")
    return python


def run_one(python: str, script: str, impl: str, timeout: float) -> Dict[str, object]:
    """Runs ``script`` with ``python`` (``TVM_FFI_IMPL=impl`` unless upstream)."""
    env = dict(os.environ)
    env.pop("TVM_FFI_IMPL", None)
    if impl != "upstream":
        env["TVM_FFI_IMPL"] = impl
    try:
        done = subprocess.run([python, os.path.join(SCRIPTS, script)], capture_output=True,
                              text=True, env=env, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "stdout": "", "error": f"no result in {timeout}s"}
    lines = (done.stderr.strip().splitlines() or [""]) if done.returncode else [""]
    return {"status": "ok" if done.returncode == 0 else f"exit {done.returncode}",
            "stdout": done.stdout, "error": lines[-1]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(),
                                                        "tvm-ffi-real-libraries"))
    parser.add_argument("--impl", default="fast,ref", help="ours to run: fast, ref or both")
    parser.add_argument("--only", default=",".join(LIBRARIES), help="libraries to run")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--ours-python", help="an environment set up as 'ours' to use instead")
    parser.add_argument("--upstream-python", help="an environment set up as 'upstream' instead")
    args = parser.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    pythons = {"upstream": args.upstream_python or _venv(args.work, "upstream", ours=False)}
    ours = args.ours_python or _venv(args.work, "ours", ours=True)
    impls = [i for i in args.impl.split(",") if i]
    results: Dict[str, Dict[str, Dict[str, object]]] = {}
    all_equal = True
    for name in [n for n in args.only.split(",") if n]:
        script, _ = LIBRARIES[name]
        runs = {"upstream": run_one(pythons["upstream"], script, "upstream", args.timeout)}
        for impl in impls:
            runs[impl] = run_one(ours, script, impl, args.timeout)
        results[name] = runs
        for impl, run in runs.items():
            keys = ("status", "stdout", "error")
            same = all(run[key] == runs["upstream"][key] for key in keys)
            all_equal &= same or impl == "upstream"
            last = run["stdout"].strip().splitlines()[-1:] or [run["error"]]
            mark = "" if impl == "upstream" else ("  (= upstream)" if same else "  (DIFFERS)")
            print(f"{name:9} {impl:9} {run['status']:8} {last[0][:100]}{mark}")
            if run["status"] != "ok":
                print(f"{'':19}error: {run['error'][:200]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if all_equal else 1


if __name__ == "__main__":
    sys.exit(main())
