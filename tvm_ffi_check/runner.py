"""Driving a check of a whole library: what to check, and each function in turn.

:func:`check_library` is the whole job: validate the path, start a
:class:`~tvm_ffi_check.worker_client.Worker` (the library is loaded there,
never here), gather the targets (:mod:`.targets`: exported functions, then
the globals and object-type methods the library registered while loading),
their type schemas, and check each with a
:class:`~tvm_ffi_check.function_check.FunctionCheck`.

The names below are this module's interface of old (the report, the command
line and the tests import them from here).
"""

from __future__ import annotations

import fnmatch
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

from . import schema as schemas
from .function_check import FunctionCheck
from .pool import Pool, missing_types, takes_objects
from .results import (  # noqa: F401 - re-exported
    RULES,
    CheckError,
    Finding,
    FunctionReport,
    LibraryReport,
    Options,
)
from .sandbox import keep_hypothesis_out_of_cwd
from .targets import EXPORT, Target, targets_of, type_catalog
from .worker_client import Worker

_NO_SYMBOLS = ("has no TVM FFI symbols: it exports no __tvm_ffi_<name> functions and uses "
               "no TVM FFI C API function")


def validate_library(path: str) -> Tuple[List[str], List[str]]:
    """The library's exported TVM FFI function names, and its ``__tvm_ffi_`` data symbols.

    Raises :class:`CheckError` when it cannot be checked (no file, not ELF,
    no trace of TVM FFI). A library that exports nothing may still register
    functions when it loads: only loading it tells.
    """
    if not path:
        raise CheckError("the library path is empty")
    if not os.path.exists(path):
        raise CheckError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CheckError(f"{path}: is a directory, not a shared library")
    try:
        symbols = read_dynamic_symbols(path)
    except (OSError, ValueError, IndexError, Exception) as exc:  # noqa: BLE001 - any bad file
        reason = str(exc) if isinstance(exc, (OSError, ValueError)) else "unreadable ELF"
        raise CheckError(f"{path}: not a loadable shared library ({reason})") from None
    if not symbols.uses_tvm_ffi():
        raise CheckError(f"{path}: {_NO_SYMBOLS}")
    return symbols.tvm_ffi_functions(), symbols.tvm_ffi_data()


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def select_functions(names: Sequence[str], patterns: Sequence[str]) -> List[str]:
    """The names matching any of ``patterns`` (globs); all names without patterns."""
    if not patterns:
        return list(names)
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(n, pattern) for n in names):
            raise CheckError(f"--functions: no function matches {pattern!r} (the library "
                             f"has: {', '.join(names)})")
    return [n for n in names if _matches(n, patterns)]


def list_functions(worker: Worker, names: Sequence[str], timeout: float):
    """``{name: entry}`` with metadata text (or an error) per exported function, and the
    findings of metadata functions that crashed or hung (those functions are then swept)."""
    skip: List[str] = []
    crashes: Dict[str, Finding] = {}
    while True:
        answer = worker.request({"op": "list", "names": list(names), "skip_metadata": skip},
                                timeout)
        phase = answer.get("phase", "")
        if ("crash" in answer or "timeout" in answer) and phase.startswith("metadata:"):
            name = phase.split(":", 1)[1]
            skip.append(name)
            if "crash" in answer:
                crashes[name] = Finding("crash", f"reading __tvm_ffi__metadata_{name}: the "
                                                 f"worker process was {answer['crash']}")
            else:
                crashes[name] = Finding("timeout", f"__tvm_ffi__metadata_{name} did not return "
                                                   f"within {answer['timeout']:g} s")
            continue
        if "functions" not in answer:
            raise CheckError(f"{worker.library}: listing its functions failed: "
                             f"{answer.get('crash') or answer.get('internal_error') or answer}")
        return {entry["name"]: entry for entry in answer["functions"]}, crashes


def _signature(metadata: Optional[str], source: str, notes: List[str]):
    """The signature in a function's metadata text (None, with a note, when unusable)."""
    if not metadata:
        return None
    try:
        signature = schemas.parse_metadata(metadata)
    except schemas.SchemaError as exc:
        notes.append("its schema lists no parameters (a packed function)" if
                     schemas.PACKED in str(exc) else f"its metadata was not used ({exc})")
        return None
    if signature is not None:
        signature.source = source
    return signature


def _gather(path: str, options: Options, worker: Worker, exports: List[str],
            report: LibraryReport) -> List[Tuple[Target, str]]:
    registered = worker.registered if options.globals else {}
    found = targets_of(exports, registered)
    if not found:
        registers = (" and registers no global functions or object types when it loads"
                     if options.globals else " (--no-globals: registered ones were not looked at)")
        raise CheckError(f"{path}: has no TVM FFI functions: it exports no __tvm_ffi_<name> "
                         f"functions{registers}")
    names = [target.name for target, _ in found]
    selected = set(select_functions(names, options.functions))
    report.unselected = [n for n in names if n not in selected]
    chosen = []
    for target, metadata in found:
        if target.name not in selected:
            continue
        if _matches(target.name, options.skip):
            report.skipped.append((target.name, "--skip"))
        else:
            chosen.append((target, metadata))
    return chosen


def check_library(path: str, options: Optional[Options] = None,
                  progress: Optional[Callable[..., None]] = None,
                  announce: Optional[Callable[[LibraryReport, int], None]] = None
                  ) -> LibraryReport:
    """Checks every (selected) function of the library at ``path``.

    ``announce(report, count)`` is called once the functions to check are
    known, before any is checked; ``progress(index, total, name,
    examples_done, examples_total)`` as the check goes. Raises
    :class:`CheckError` when the library cannot be checked at all.
    """
    options = options or Options()
    keep_hypothesis_out_of_cwd()
    started = time.monotonic()
    exports, data_symbols = validate_library(path)
    report = LibraryReport(os.path.abspath(path), options)
    report.skipped += [(f"__tvm_ffi_{name}", "a data symbol, not a function")
                       for name in data_symbols]
    worker = Worker(os.path.abspath(path), sandbox=options.sandbox)
    report.sandbox = worker.limits
    report.language = worker.language
    try:
        chosen = _gather(path, options, worker, exports, report)
        if not worker.fault_reporter:
            report.notes.append("the fault reporter (libtvm_ffi_check_fault.so) is not built: "
                                "an access past a tensor shows as a crash without its address; "
                                "reinstall with pip install .")
        if announce is not None:
            announce(report, len(chosen))
        _check_each(worker, chosen, options, report, progress)
    finally:
        worker.close()
    report.duration = time.monotonic() - started
    return report


def _check_each(worker: Worker, chosen, options: Options, report: LibraryReport,
                progress) -> None:
    """Checks each function; one needing a library type nothing can make yet waits until
    the functions that may return one were checked (the pool, :mod:`.pool`)."""
    exports = [t.symbol for t, _ in chosen if t.kind == EXPORT]
    entries, crashes = list_functions(worker, exports, max(options.timeout, 10.0))
    catalog = type_catalog(worker.registered)
    context = schemas.Context(catalog, pool=Pool(catalog))
    prepared = []
    for target, metadata in chosen:
        notes: List[str] = []
        entry: Dict[str, Any] = entries.get(target.symbol, {}) if target.kind == EXPORT else {}
        if target.kind == EXPORT:
            signature = _signature(entry.get("metadata"), "metadata", notes)
            if entry.get("error"):
                notes.append(f"reading its metadata failed ({entry['error']})")
        else:
            signature = _signature(metadata, "registry", notes)
        prepared.append((target, signature, entry, notes))

    def needs(item) -> set:
        signature = item[1]
        return missing_types(signature.params, catalog, context.pool) if signature else set()

    def rank(i: int) -> Tuple[int, int]:
        # Producers first: functions taking no library object (they fill the pool), then
        # those taking objects the pool or a constructor can make, then the rest.
        signature = prepared[i][1]
        if needs(prepared[i]):
            return (2, i)
        takes = signature is not None and any(takes_objects(p, catalog)
                                              for p in signature.params)
        return (1 if takes else 0, i)

    done: Dict[int, FunctionReport] = {}
    waiting = list(range(len(prepared)))
    while waiting:
        i = min(waiting, key=rank)
        waiting.remove(i)
        done[i] = _check_one(worker, prepared[i], options, context, crashes, len(done),
                             len(prepared), progress, needs(prepared[i]))
    report.functions.extend(done[i] for i in range(len(prepared)))


def _check_one(worker: Worker, item, options: Options, context: schemas.Context, crashes,
               index: int, total: int, progress, missing) -> FunctionReport:
    target, signature, entry, notes = item
    if progress is not None:
        progress(index, total, target.name, 0, options.examples)

    def tick(done, index=index, name=target.name):
        if progress is not None:
            progress(index, total, name, done, options.examples)

    check = FunctionCheck(worker, target, signature, options, tick, context)
    check.missing = set(missing)
    function_report = check.run()
    function_report.doc = entry.get("doc")
    function_report.notes[:0] = notes
    if target.kind == EXPORT and target.symbol in crashes:
        function_report.findings.insert(0, crashes[target.symbol])
    return function_report
