"""Runs a build plan in its directory, redoing only what changed.

A step is up to date when its output exists, its command is the one
recorded when the output was made, and no file it read (its inputs, and for
a compile every header its dependency file lists) is newer than the output.
The record is ``.tvm_ffi_build.json`` in the build directory. So an unchanged
build costs a few ``stat`` calls, and editing a header, a flag or a source
redoes exactly the steps that see it.

Each step writes to a temporary file that replaces the output only on
success: a library another process has loaded is never overwritten in place,
and a failed build leaves no half-written output. Compiles run in parallel
(``$MAX_JOBS`` at once, default: the number of CPUs). While anything runs, a
line per step on stderr says what is being built; a failure raises
``RuntimeError`` with the command and the compiler's own output.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional

from . import headers
from .build_plan import Plan, Step

RECORD_FILE = ".tvm_ffi_build.json"

logger = logging.getLogger(__name__)


def _mtime(path: str) -> Optional[int]:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def read_depfile(path: str) -> List[str]:
    """The prerequisites a make-style dependency file lists (``out: dep dep \\``)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    deps: List[str] = []
    for rule in text.replace("\\\n", " ").splitlines():
        _, colon, prerequisites = rule.partition(": ")
        if colon:
            # A backslash escapes a space inside a file name.
            deps += [p.replace("\0", " ") for p in prerequisites.replace("\\ ", "\0").split()]
    return deps


class Builder:
    """Brings one build directory's target up to date."""

    def __init__(self, directory: str, what: str):
        self.directory = directory
        self.what = what
        self._record_path = os.path.join(directory, RECORD_FILE)
        self.record: Dict[str, dict] = self._load_record()

    def _load_record(self) -> Dict[str, dict]:
        try:
            with open(self._record_path, encoding="utf-8") as f:
                record = json.load(f)
            return record if isinstance(record, dict) else {}
        except (OSError, ValueError):
            return {}

    def _save_record(self) -> None:
        temporary = f"{self._record_path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(self.record, f, indent=1, sort_keys=True)
        os.replace(temporary, self._record_path)

    def _path(self, name: str) -> str:
        return name if os.path.isabs(name) else os.path.join(self.directory, name)

    def is_up_to_date(self, step: Step) -> bool:
        """Whether ``step``'s output exists, was made by this command, and is newer than what it read."""
        made = _mtime(self._path(step.output))
        entry = self.record.get(step.output)
        if made is None or entry is None or entry.get("command") != step.command:
            return False
        for dep in [*step.inputs, *entry.get("deps", [])]:
            seen = _mtime(self._path(dep))
            if seen is None or seen > made:
                return False
        return True

    def run(self, plan: Plan) -> str:
        """Runs every step that is not up to date; returns the target's absolute path."""
        pending = [step for step in plan.steps if not self.is_up_to_date(step)]
        # A step whose input is redone must be redone too.
        redone = {step.output for step in pending}
        for step in plan.steps:
            if step not in pending and any(i in redone for i in step.inputs):
                pending.append(step)
                redone.add(step.output)
        pending.sort(key=plan.steps.index)
        if pending:
            self._run_steps(pending)
        return self._path(plan.target)

    def _run_steps(self, steps: List[Step]) -> None:
        started = time.monotonic()
        _say(f"tvm_ffi.cpp: building {self.what} in {self.directory} ({len(steps)} step"
             f"{'s' if len(steps) > 1 else ''})")
        compiles = [s for s in steps if s.verb == "compile"]
        rest = [s for s in steps if s.verb != "compile"]
        done = 0
        jobs = _max_jobs()
        try:
            with ThreadPoolExecutor(max_workers=min(jobs, max(1, len(compiles)))) as pool:
                for step, seconds in pool.map(self._timed, compiles):
                    done += 1
                    self._report(done, len(steps), step, seconds)
            for step in rest:
                step, seconds = self._timed(step)
                done += 1
                self._report(done, len(steps), step, seconds)
        finally:
            self._save_record()
        _say(f"tvm_ffi.cpp: built {self.what} in {time.monotonic() - started:.1f} s")

    @staticmethod
    def _report(done: int, total: int, step: Step, seconds: float) -> None:
        _say(f"tvm_ffi.cpp: [{done}/{total}] {step.verb} {step.output} ({seconds:.1f} s)")

    def _timed(self, step: Step):
        started = time.monotonic()
        self._run_step(step)
        return step, time.monotonic() - started

    def _run_step(self, step: Step) -> None:
        final = self._path(step.output)
        temporary = os.path.join(self.directory, f".{step.output}.{os.getpid()}.tmp")
        self.record.pop(step.output, None)
        try:
            if step.verb == "copy":
                shutil.copyfile(self._path(step.inputs[0]), temporary)
            else:
                self._execute(step, [temporary if a == "{out}" else a for a in step.command])
            os.replace(temporary, final)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        deps = read_depfile(self._path(step.depfile)) if step.depfile else []
        self.record[step.output] = {"command": step.command, "deps": deps}

    def _execute(self, step: Step, command: List[str]) -> None:
        try:
            done = subprocess.run(command, cwd=self.directory, capture_output=True, check=False)
        except OSError as error:
            raise RuntimeError(f"building {self.what} failed: cannot run {command[0]!r} to "
                               f"{step.verb} {step.output}: {error}") from error
        out = done.stdout.decode("utf-8", "replace")
        err = done.stderr.decode("utf-8", "replace")
        log = os.environ.get("TVM_FFI_CPP_EXTENSION_LOG_BUILD", "0")
        if log in ("1", "stdout") and out:
            logger.info("%s %s stdout:\n%s", step.verb, step.output, out)
        if log in ("1", "stderr") and err:
            logger.info("%s %s stderr:\n%s", step.verb, step.output, err)
        if done.returncode == 0:
            return
        text = [f"building {self.what} failed: {step.verb} {step.output} exited with status "
                f"{done.returncode}", f"command: {shlex.join(command)}"]
        if out.strip():
            text.append(f"stdout:\n{out.rstrip()}")
        if err.strip():
            text.append(f"stderr:\n{err.rstrip()}")
        if headers.mentions_missing_tvm_header(out + err):
            text.append(headers.missing_cxx_api_message("this source"))
        raise RuntimeError("\n".join(text))


def _max_jobs() -> int:
    """``$MAX_JOBS`` if it is a positive integer, else the number of CPUs."""
    value = os.environ.get("MAX_JOBS", "")
    return int(value) if value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
