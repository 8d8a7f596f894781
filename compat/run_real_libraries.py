"""Runs real libraries built for upstream's TVM FFI on ours and on upstream's, and compares.

    python compat/run_real_libraries.py                 # the seven libraries, fast and ref
    python compat/run_real_libraries.py --impl fast --only tvm,xgrammar
    python compat/run_real_libraries.py --work /tmp/real --json results.json
    python compat/run_real_libraries.py --python /path/to/env/bin/python   # an env set up below

Opt-in, not part of CI: it downloads about 2.5 GB (the libraries, JAX, transformers and the
CPU build of torch 2.13.0) into one virtual environment in a work folder outside the tree
(``--work``, default under the system temp dir, reused by later runs) holding, as production
does, the libraries, upstream's ``apache-tvm-ffi`` at the pinned version and this package
(installed from the tree on every run). Each script of ``compat/real_libraries/`` runs in its
own process three times: under upstream (no ``TVM_FFI_IMPL``), then with ``TVM_FFI_IMPL=fast``
and ``=ref``, where ``tvm_ffi`` is ours; a guard then fails the run if any file of upstream's
package was imported or its ``libtvm_ffi.so`` loaded (only its C++ headers may be read). The
report says per library and front end whether the output (stdout, exit status, last error
line) is identical to upstream's; the exit status is 0 when all are.

The libraries and what each script makes them do:

* ``tvm`` (apache-tvm 0.27): a vector add compiled with llvm and run, its ``Device`` subclass
  printed, a Relax function legalized (LegalizeOps), compiled and run on its VM;
* ``tirx`` (apache-tvm-tirx 0.1.0a4): a TVMScript function compiled with llvm and run;
* ``flashinfer`` (flashinfer-python 0.7.2): its JIT writes the build.ninja of one of its own
  C++ modules (spdlog), compiles it with the include paths ``tvm_ffi.libinfo`` reports, and
  loads and calls it. There is no GPU and no CUDA toolkit here: compile of C++ only, the
  CUDA version is told instead of asked of nvcc, and the link leaves out the CUDA libraries;
* ``xgrammar`` (0.2.9): the built-in JSON grammar and a JSON schema compiled, strings
  matched, a token bitmask filled;
* ``jax`` (jax-tvm-ffi 0.1.3): a C++ function built with ``tvm_ffi.cpp.load_inline``
  registered as an XLA FFI target and called from JAX, eagerly and under jit;
* ``orcjit`` (apache-tvm-ffi-orcjit 0.1.3): a C object file JIT-loaded and called;
* ``fftvm`` (0.1.0): its build as far as it can run here (its setup.py clones FastFlow from
  GitHub, which is not reachable): the include directories its setup.py derives from
  ``tvm_ffi`` and a compile of the TVM FFI headers its source includes; then the same compile
  with ``tvm_ffi.libinfo.include_paths()``.

fftvm's two rows differ, and are meant to until the library changes (:data:`EXPLAINED`):
its setup.py asks no API for headers; it takes ``<dirname(tvm_ffi.__file__)>/include``
(or ``../include``), i.e. assumes the module ``tvm_ffi`` is upstream's package folder,
with upstream's C++ headers inside it. Under the drop-in ``tvm_ffi`` is this package
(``tvm_ffi_fast`` or ``tvm_ffi_ref``), whose folder has no ``include/``: it does not ship
upstream's C++ headers (they are not ours to copy) and finds them, in the installed
``apache-tvm-ffi``, only when asked (``libinfo``, ``config --cxxflags``). The ways to make
that path resolve are all dishonest: copying upstream's headers into our package, making
our ``__file__`` name upstream's folder, or creating files inside our installed package at
import time (symlinks into another distribution, in a folder that may be read-only). So
the measure is the next line: the same headers compile under ours exactly as under
upstream with the directories ``tvm_ffi.libinfo.include_paths()`` reports. What a user
does: a default ``pip install fftvm`` builds in an isolated environment holding only its
declared build requirement, upstream's ``apache-tvm-ffi``, where ``import tvm_ffi`` is
upstream's and the path resolves (the module then loads under either); a build with
``--no-build-isolation`` under ``TVM_FFI_IMPL`` passes the directories itself
(``CPLUS_INCLUDE_PATH`` from ``tvm_ffi.libinfo.include_paths()``) or builds without
``TVM_FFI_IMPL`` set, since a build only reads headers.

``--suites`` also runs the test suites of xgrammar and jax-tvm-ffi (from their sdists, run
from outside the tree) with pytest under each and compares the summary lines.

``tilelang`` (0.1.15, not run by default: ``--only tilelang``) pins ``apache-tvm-ffi<0.1.13``
and bundles its own TVM; its import fails under the pinned upstream too.
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
    "fftvm": ("fftvm_build.py", None),  # an sdist: the script fetches and builds it
    "orcjit": ("orcjit_call.py", "apache-tvm-ffi-orcjit==0.1.3"),
    "xgrammar": ("xgrammar_json.py", "xgrammar==0.2.9"),
    "jax": ("jax_handler.py", "jax-tvm-ffi==0.1.3"),
    "tvm": ("tvm_vector_add.py", "apache-tvm==0.27.0.post1"),
    "tirx": ("tirx_compile.py", "apache-tvm-tirx==0.1.0a4"),
    "flashinfer": ("flashinfer_jit.py", "flashinfer-python==0.7.2"),
    "tilelang": ("tilelang_import.py", "tilelang==0.1.15"),
}
DEFAULT = [name for name in LIBRARIES if name != "tilelang"]
#: Libraries whose rows differ for a reason that is the library's, printed under the rows.
EXPLAINED = {
    "fftvm": "its setup.py compiles against <dirname(tvm_ffi.__file__)>/include, upstream's "
             "package folder; ours has no include/ there (upstream's C++ headers are not ours "
             "to ship, nor our __file__ theirs to claim): with tvm_ffi.libinfo."
             "include_paths() the same headers compile as under upstream (the last line; see "
             "this file's docstring)",
}
#: The libraries' dependencies other than apache-tvm-ffi and CUDA (from their wheels' metadata;
#: the libraries themselves go in with --no-deps, so that no CUDA build of torch is pulled).
DEPENDENCIES = ["numpy", "ml_dtypes", "typing_extensions", "cloudpickle", "psutil", "tqdm",
                "z3-solver>=4.13.0,<4.15.5", "cffi", "packaging", "pydantic", "transformers",
                "jax", "click", "einops", "ninja", "requests", "tabulate", "nvidia-ml-py",
                "pytest", "scikit-build-core", "setuptools_scm"]  # the last two: sdist metadata
TORCH = "torch==2.13.0"
#: Run before a script under ours: at exit, fails the run if anything of upstream's package was
#: imported or its libtvm_ffi.so loaded (its headers are the only files of it ours may read).
GUARD = """
import atexit, importlib.machinery, os, runpy, sys
spec = importlib.machinery.PathFinder.find_spec("tvm_ffi")
upstream = list(spec.submodule_search_locations or []) if spec else []
def check():
    seen = [m.__file__ for m in list(sys.modules.values())
            if any(str(getattr(m, "__file__", None) or "").startswith(u + os.sep)
                   for u in upstream)]
    with open("/proc/self/maps") as f:
        seen += sorted({line.split()[-1] for line in f if "libtvm_ffi" in line and
                        any(u + os.sep in line for u in upstream)})
    if seen:
        sys.stderr.write("upstream's package was loaded: " + ", ".join(seen[:3]) + "\\n")
        sys.stderr.flush()
        os._exit(97)
atexit.register(check)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


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


def _venv(work: str, names: List[str]) -> str:
    """The python of the ``libraries`` venv under ``work``, made and filled on first use."""
    path = os.path.join(work, "libraries")
    python = os.path.join(path, "bin", "python")
    marker = os.path.join(path, "ready")
    if not os.path.exists(marker):
        _run([sys.executable, "-m", "venv", path])
        pip = [python, "-m", "pip", "install", "-q"]
        _run(pip + ["setuptools", "wheel", TORCH])  # first, alone: pip takes its CPU build
        _run(pip + DEPENDENCIES + [f"apache-tvm-ffi=={PINNED}", TORCH])
        with open(marker, "w") as f:
            f.write("ok\n")
    packages = [LIBRARIES[name][1] for name in names if LIBRARIES[name][1]]
    missing = [p for p in packages if subprocess.run(
        [python, "-m", "pip", "show", "-q", p.split("==")[0]], capture_output=True).returncode]
    if missing:
        _run([python, "-m", "pip", "install", "-q", "--no-deps"] + missing)
    _install_ours(python)  # the tree may have changed since the last run
    return python


def run_one(python: str, script: str, impl: str, timeout: float, work: str) -> Dict[str, object]:
    """Runs ``script`` with ``python`` (``TVM_FFI_IMPL=impl`` and the guard unless upstream)."""
    env = dict(os.environ)
    env.pop("TVM_FFI_IMPL", None)
    env["TVM_FFI_CACHE_DIR"] = os.path.join(work, f"cache-{impl}")  # builds are not shared
    command = [python, os.path.join(SCRIPTS, script)]
    if impl != "upstream":
        env["TVM_FFI_IMPL"] = impl
        command[1:1] = ["-c", GUARD]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env,
                              timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "stdout": "", "error": f"no result in {timeout}s"}
    lines = (done.stderr.strip().splitlines() or [""]) if done.returncode else [""]
    return {"status": "ok" if done.returncode == 0 else f"exit {done.returncode}",
            "stdout": done.stdout, "error": lines[-1]}


def compare(name: str, runs: Dict[str, Dict[str, object]]) -> bool:
    """Prints one line per front end; whether every one of ours printed what upstream did."""
    all_same = True
    for impl, run in runs.items():
        same = all(run[key] == runs["upstream"][key] for key in ("status", "stdout", "error"))
        all_same &= same or impl == "upstream"
        last = run["stdout"].strip().splitlines()[-1:] or [run["error"]]
        mark = "" if impl == "upstream" else ("identical" if same else "DIFFERS")
        print(f"{name:10} {impl:9} {run['status']:8} {mark:9} {last[0][:90]}")
        if run["status"] != "ok":
            print(f"{'':29}error: {run['error'][:200]}")
        if impl != "upstream" and not same and run["stdout"] != runs["upstream"]["stdout"]:
            ours, theirs = run["stdout"].splitlines(), runs["upstream"]["stdout"].splitlines()
            for i, (a, b) in enumerate(zip(ours + [""] * len(theirs), theirs + [""] * len(ours))):
                if a != b:
                    print(f"{'':29}line {i + 1}: ours {a[:80]!r} upstream {b[:80]!r}")
                    break
    if not all_same and name in EXPLAINED:
        print(f"{'':29}why: {EXPLAINED[name]}")
    return all_same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(),
                                                        "tvm-ffi-real-libraries"))
    parser.add_argument("--impl", default="fast,ref", help="ours to run: fast, ref or both")
    parser.add_argument("--only", default=",".join(DEFAULT), help="libraries to run")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--python", help="an environment set up as the one made here, to use "
                                         "instead (this tree is installed into it)")
    parser.add_argument("--suites", action="store_true",
                        help="also run the test suites of xgrammar and jax-tvm-ffi")
    args = parser.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in LIBRARIES]
    if unknown:
        parser.error(f"unknown libraries {unknown}; known: {', '.join(LIBRARIES)}")
    if args.python:
        python = args.python
        _install_ours(python)
    else:
        python = _venv(args.work, names)
    impls = [i for i in args.impl.split(",") if i]
    results: Dict[str, Dict[str, Dict[str, object]]] = {}
    identical = []
    for name in names:
        script, _ = LIBRARIES[name]
        runs = {"upstream": run_one(python, script, "upstream", args.timeout, args.work)}
        for impl in impls:
            runs[impl] = run_one(python, script, impl, args.timeout, args.work)
        results[name] = runs
        compare(name, runs)
        identical += [impl for impl in impls if all(
            runs[impl][k] == runs["upstream"][k] for k in ("status", "stdout", "error"))]
    suites_same = True
    if args.suites:
        from suite_runs import run_suites  # (compat/suite_runs.py: the libraries' own tests)

        suites_same = run_suites(python, impls, args.work, args.timeout)
    print(f"identical to upstream: {len(identical)} of {len(names) * len(impls)} runs")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if len(identical) == len(names) * len(impls) and suites_same else 1


if __name__ == "__main__":
    sys.exit(main())
