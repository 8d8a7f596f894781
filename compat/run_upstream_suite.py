"""Runs upstream's own Python test suite against upstream, tvm_ffi_fast and tvm_ffi_ref.

The measure of the drop-in: the ``tests/python/`` of the pinned
``apache-tvm-ffi`` sdist, unmodified, with ``tvm_ffi`` resolved to ours
(``TVM_FFI_IMPL=fast`` or ``ref``, see ``tvm_ffi_common/dropin.py``).

    python compat/run_upstream_suite.py                      # the whole suite, all three
    python compat/run_upstream_suite.py --subset ci          # the short CI subset
    python compat/run_upstream_suite.py test_container.py test_string.py --impl fast
    python compat/run_upstream_suite.py --json results.json

The sdist is fetched with pip into a work folder outside the tree (never
committed; ``--work``, default under the system temp dir, reused by later
runs) and only its ``tests/python`` is extracted. Each test file runs in its
own pytest process per implementation, with a per-test timeout; a process
that crashes or hangs is restarted without the tests already done, the
culprit recorded as ``crashed`` or ``timeout``. The report prints, per file
and in total, what passed, failed, errored and crashed under each; then,
against ``compat/upstream_failures.txt`` (every test that passes upstream and
still fails under ours, with its reason), what is new and what is stale.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Iterable, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
PINNED = "0.1.15.post2"
IMPLS = ("upstream", "fast", "ref")
FAILURES_FILE = os.path.join(HERE, "upstream_failures.txt")

#: The short subset CI runs: quick files spread over the surface this project owns.
CI_SUBSET = ("test_string.py", "test_device.py", "test_dtype.py", "test_error.py",
             "test_container.py", "test_access_path.py", "test_libinfo.py",
             "utils/test_kwargs_wrapper.py", "test_function.py", "test_object.py",
             "test_structural.py", "test_serialization.py", "test_dataclass_c_class.py",
             "test_dataclass_copy.py", "test_tensor.py", "test_container_dlpack_conversion.py",
             "test_stub_layout.py")

#: Which part of the work each test file measures (the issue that owns it).
AREAS = {
    "structural/serialization (issue 12)": ("test_structural.py", "test_structural_py_class.py",
                                            "test_serialization.py", "test_access_path.py"),
    "dataclasses/type converter (issue 13)": ("test_dataclass_*.py", "test_type_converter.py",
                                              "test_metadata.py", "test_object.py",
                                              "test_typed_method.py",
                                              "utils/test_unpack_dataclass.py"),
    "cpp/stub/build (issue 15)": ("test_load_inline.py", "test_build_inline.py", "test_build.py",
                                  "test_stl.py", "test_stream.py", "test_big_int.py",
                                  "test_function.py", "test_stubgen*.py", "test_stub_layout.py",
                                  "test_examples.py", "test_rust_static_init.py",
                                  "test_cubin_launcher.py", "utils/test_embed_cubin.py"),
    "torch/DLPack (issue 10)": ("test_container_dlpack_conversion.py",
                                "test_dlpack_exchange_api.py", "test_tensor.py",
                                "test_optional_torch_c_dlpack.py",
                                "test_current_work_stream_gpu.py"),
}
DROP_IN_AREA = "module surface/drop-in (issue 11)"

#: Final outcomes, in the order the report counts them.
OUTCOMES = ("passed", "failed", "error", "crashed", "timeout", "skipped", "xfailed", "xpassed")
GOOD = {"passed", "skipped", "xfailed", "xpassed"}


def area_of(path: str) -> str:
    """The area (owning issue) of a test file given relative to ``tests/python``."""
    for area, patterns in AREAS.items():
        if any(fnmatch.fnmatch(path, p) for p in patterns):
            return area
    return DROP_IN_AREA


# ------------------------------------------------------------------ fetching


def fetch_suite(work: str) -> str:
    """Downloads the pinned sdist with pip (once) and extracts its tests/python; returns it."""
    os.makedirs(work, exist_ok=True)
    suite = os.path.join(work, "suite")
    done = os.path.join(work, f"extracted-{PINNED}")
    if os.path.exists(done):
        return suite
    sdists = [f for f in os.listdir(work) if f.startswith("apache_tvm_ffi-") and
              f.endswith(".tar.gz") and PINNED in f]
    if not sdists:
        subprocess.check_call([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                               "--no-binary", "apache-tvm-ffi", f"apache-tvm-ffi=={PINNED}",
                               "-d", work])
        sdists = [f for f in os.listdir(work) if f.endswith(".tar.gz") and PINNED in f]
    shutil.rmtree(suite, ignore_errors=True)
    with tarfile.open(os.path.join(work, sdists[0])) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/", 3)
            if len(parts) == 4 and parts[1:3] == ["tests", "python"] and member.isfile():
                target = os.path.join(suite, parts[3])
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.extractfile(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    # An ini file above the suite stops pytest from finding any other configuration.
    with open(os.path.join(work, "pytest.ini"), "w") as f:
        f.write("[pytest]\n")
    open(done, "w").close()
    return suite


def test_files(suite: str, selection: Iterable[str] = ()) -> List[str]:
    """The suite's test files relative to it, filtered by names or globs in ``selection``."""
    found = []
    for directory, _, names in os.walk(suite):
        for name in names:
            if name.startswith("test_") and name.endswith(".py"):
                found.append(os.path.relpath(os.path.join(directory, name), suite))
    selection = list(selection)
    if selection:
        found = [f for f in found
                 if any(fnmatch.fnmatch(f, s) or os.path.basename(f) == s for s in selection)]
    return sorted(found)


# ------------------------------------------------------------------ running


def _final_outcome(phases: Dict[str, Tuple[str, str]]) -> Tuple[str, str]:
    for when in ("setup", "call", "teardown"):
        outcome, message = phases.get(when, ("", ""))
        if outcome == "failed":
            return ("failed" if when == "call" else "error"), message
        if outcome in ("skipped", "xfailed", "xpassed"):
            return outcome, message
    return ("passed", "") if "call" in phases else ("error", "no call phase")


def run_file(impl: str, path: str, suite: str, work: str, test_timeout: float,
             file_timeout: float) -> Dict[str, Tuple[str, str]]:
    """Every test of ``path`` under ``impl``: nodeid -> (outcome, message)."""
    results: Dict[str, Tuple[str, str]] = {}
    deselect: List[str] = []
    env = dict(os.environ, SUITE_TEST_TIMEOUT=str(test_timeout), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([HERE] + [p for p in os.environ.get("PYTHONPATH", "")
                                                    .split(os.pathsep) if p]))
    env.pop("TVM_FFI_IMPL", None)
    if impl != "upstream":
        env["TVM_FFI_IMPL"] = impl
    for _attempt in range(200):
        handle, progress = tempfile.mkstemp(prefix="suite-", suffix=".jsonl", dir=work)
        os.close(handle)
        env["SUITE_PROGRESS"] = progress
        command = [sys.executable, "-m", "pytest", path, "--rootdir", suite, "-p", "suite_plugin",
                   "-p", "no:cacheprovider", "-q", "--no-header", "-rN"]
        for nodeid in deselect:
            command += ["--deselect", nodeid]
        try:
            done = subprocess.run(command, cwd=suite, env=env, capture_output=True, text=True,
                                  timeout=file_timeout)
            returncode, stderr, stdout = done.returncode, done.stderr, done.stdout
        except subprocess.TimeoutExpired as expired:
            returncode, stdout = None, ""
            stderr = expired.stderr if isinstance(expired.stderr, str) else ""
        phases: Dict[str, Dict[str, Tuple[str, str]]] = {}
        started: List[str] = []
        collect_errors: List[Tuple[str, str]] = []
        with open(progress) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut short by the process dying
                if "start" in record:
                    started.append(record["start"])
                elif "collect_error" in record:
                    collect_errors.append((record["collect_error"], record["message"]))
                else:
                    phases.setdefault(record["nodeid"], {})[record["when"]] = (
                        record["outcome"], record["message"])
        os.unlink(progress)
        for nodeid, per_phase in phases.items():
            if "teardown" in per_phase or nodeid not in started:
                results[nodeid] = _final_outcome(per_phase)
        for nodeid, message in collect_errors:
            results[f"{nodeid}::<collection>"] = ("error", message)
        unfinished = [n for n in started if n not in results]
        if not unfinished:
            if returncode not in (0, 1, 2, 5) and not results:
                results[f"{path}::<process>"] = ("crashed", _tail(stderr or stdout))
            return results
        culprit = unfinished[-1]
        timed_out = returncode is None or "Timeout (" in (stderr or "")
        results[culprit] = ("timeout" if timed_out else "crashed",
                            f"exit status {returncode}: {_tail(stderr)}")
        deselect = sorted(set(deselect) | set(results))
    return results


def _tail(text: str, lines: int = 3) -> str:
    kept = [line for line in (text or "").strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:])[:500]


# ------------------------------------------------------------------ the list of known failures


def read_failures(path: str = FAILURES_FILE) -> List[Tuple[str, str, str]]:
    """``(impl, nodeid pattern, reason)`` entries of the known-failures file.

    The file: a line ``[reason]`` starts a group; each following line is a
    nodeid glob, optionally prefixed by ``fast `` or ``ref `` to limit it to
    one front end; ``#`` starts a comment.
    """
    entries = []
    reason = ""
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                reason = line[1:-1]
                continue
            impl, _, pattern = line.partition(" ")
            if impl not in ("fast", "ref") or not pattern:
                impl, pattern = "*", line
            entries.append((impl, pattern.strip(), reason))
    return entries


def listed_reason(entries, impl: str, nodeid: str) -> Optional[str]:
    """The reason the known-failures file gives for ``nodeid`` failing under ``impl``."""
    for entry_impl, pattern, reason in entries:
        if entry_impl in ("*", impl) and fnmatch.fnmatchcase(nodeid, pattern):
            return reason
    return None


# ------------------------------------------------------------------ the report


def summarize(results: Dict[str, Dict[str, Dict[str, Tuple[str, str]]]], files: List[str],
              impls: List[str]) -> Dict:
    """Counts per file, per area and in total; ``results[impl][file][nodeid]``."""

    def counts(impl: str, chosen: Iterable[str]) -> Dict[str, int]:
        total = {o: 0 for o in OUTCOMES}
        for path in chosen:
            mine = results[impl].get(path, {})
            compared = impl != "upstream" and "upstream" in results
            for nodeid, (outcome, _) in mine.items():
                if not (compared and nodeid.endswith("::<collection>")):
                    total[outcome] += 1
            if compared:
                # tests upstream ran that never ran here (a collection error) count as errors
                missing = set(results["upstream"].get(path, {})) - set(mine)
                total["error"] += len([n for n in missing if "<" not in n])
        return total

    summary = {"files": {}, "areas": {}, "total": {}}
    for path in files:
        summary["files"][path] = {impl: counts(impl, [path]) for impl in impls}
    for area in list(AREAS) + [DROP_IN_AREA]:
        chosen = [p for p in files if area_of(p) == area]
        if chosen:
            summary["areas"][area] = {impl: counts(impl, chosen) for impl in impls}
    summary["total"] = {impl: counts(impl, files) for impl in impls}
    return summary


def _cell(count: Dict[str, int], impl: str) -> str:
    bad = count["failed"] + count["error"]
    dead = count["crashed"] + count["timeout"]
    if impl == "upstream":
        return f"{count['passed']:5d}"
    return f"{count['passed']:5d} {count['failed']:4d} {count['error']:4d} {dead:3d}" + \
        (" " if bad + dead == 0 else "*")


def print_report(summary: Dict, impls: List[str], out=sys.stdout) -> None:
    """The per-file and total table."""
    width = max([len(p) for p in summary["files"]] + [44])
    head = f"{'file':<{width}}"
    sub = " " * width
    for impl in impls:
        if impl == "upstream":
            head += f" {'upstream':>5}"
            sub += f" {'pass':>5}"
        else:
            head += f" | {impl:^20}"
            sub += f" | {'pass':>5} {'fail':>4} {'err':>4} {'die':>3} "
    print(head, file=out)
    print(sub, file=out)
    rows = list(summary["files"].items()) + [("", None)] + \
        [(f"[{a}]", c) for a, c in summary["areas"].items()] + [("TOTAL", summary["total"])]
    for name, per_impl in rows:
        if per_impl is None:
            print("-" * len(sub), file=out)
            continue
        line = f"{name:<{width}}"
        for impl in impls:
            line += (" " if impl == "upstream" else " | ") + _cell(per_impl[impl], impl)
        print(line, file=out)
    print("(pass/fail/err/die: passed, failed, errors incl. collection, crashed or timed out; "
          "* marks a row with any of the last three)", file=out)


def check_failures(results, files: List[str], impls: List[str], entries) -> Tuple[list, list]:
    """Tests failing under ours that upstream passes, unlisted; and listed ones that pass."""
    unlisted, stale = [], []
    for impl in impls:
        if impl == "upstream":
            continue
        for path in files:
            upstream = results.get("upstream", {}).get(path, {})
            mine = results[impl].get(path, {})
            for nodeid in sorted(set(mine) | {n for n, (o, _) in upstream.items() if o in GOOD}):
                up = upstream.get(nodeid, ("passed", ""))[0] if upstream else "passed"
                outcome, message = mine.get(nodeid, ("error", "did not run (collection)"))
                reason = listed_reason(entries, impl, nodeid)
                if outcome not in GOOD and up in GOOD and reason is None and "<" not in nodeid:
                    unlisted.append((impl, nodeid, outcome, message))
                if outcome == "passed" and reason is not None:
                    stale.append((impl, nodeid, reason))
    return unlisted, stale


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="test files or globs (default: all)")
    parser.add_argument("--impl", default=",".join(IMPLS),
                        help="comma-separated: upstream, fast, ref (default: all three)")
    parser.add_argument("--subset", choices=["ci"], help="run the short CI subset")
    parser.add_argument("--work", default=os.path.join(tempfile.gettempdir(),
                                                       f"tvm-ffi-upstream-suite-{PINNED}"),
                        help="where the sdist and the extracted suite live (outside the tree)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per test")
    parser.add_argument("--file-timeout", type=float, default=1800, help="seconds per process")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="write the results and the summary to this file")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a test fails under ours that upstream passes and "
                             "upstream_failures.txt does not list, or a listed one passes")
    parser.add_argument("--list-failures", action="store_true",
                        help="print every failure under ours with its message")
    args = parser.parse_args(argv)

    impls = [i.strip() for i in args.impl.split(",") if i.strip()]
    unknown = [i for i in impls if i not in IMPLS]
    if unknown:
        parser.error(f"--impl: unknown {unknown}; choose from {list(IMPLS)}")
    work = os.path.abspath(args.work)
    suite = fetch_suite(work)
    selection = list(args.files) + (list(CI_SUBSET) if args.subset == "ci" else [])
    files = test_files(suite, selection)
    if not files:
        parser.error(f"no test file of {suite} matches {selection}")

    started = time.time()
    results: Dict[str, Dict[str, Dict[str, Tuple[str, str]]]] = {impl: {} for impl in impls}
    jobs = [(impl, path) for path in files for impl in impls]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {job: pool.submit(run_file, job[0], job[1], suite, work, args.timeout,
                                    args.file_timeout) for job in jobs}
        for (impl, path), future in futures.items():
            results[impl][path] = future.result()
            print(f"  {impl:8} {path}: {len(results[impl][path])} tests", file=sys.stderr)

    summary = summarize(results, files, impls)
    print_report(summary, impls)
    print(f"({len(files)} files, {time.time() - started:.0f} s)")
    entries = read_failures()
    unlisted, stale = check_failures(results, files, impls, entries)
    if args.list_failures:
        for impl in impls:
            for path in files:
                for nodeid, (outcome, message) in sorted(results[impl].get(path, {}).items()):
                    if outcome not in GOOD:
                        print(f"{impl} {outcome:8} {nodeid}  {message}")
    if unlisted:
        print(f"\n{len(unlisted)} failures under ours not listed in {FAILURES_FILE}:")
        for impl, nodeid, outcome, message in unlisted:
            print(f"  {impl} {outcome} {nodeid}  {message[:200]}")
    if stale:
        print(f"\n{len(stale)} listed failures that now pass (remove them from the list):")
        for impl, nodeid, reason in stale:
            print(f"  {impl} {nodeid}  [{reason}]")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pinned": PINNED, "impls": impls, "files": files, "summary": summary,
                       "results": {impl: {path: {n: list(r) for n, r in tests.items()}
                                          for path, tests in per.items()}
                                   for impl, per in results.items()},
                       "unlisted": unlisted, "stale": stale}, f, indent=1)
    return 1 if args.check and (unlisted or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
