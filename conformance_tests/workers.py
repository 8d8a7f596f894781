"""Long-lived worker subprocesses, one per front end, fed the same cases.

:class:`Worker` owns one ``child.py`` process. :meth:`Pool.run` sends one
request to every worker before reading any reply (so the front ends work in
parallel), then returns ``{front end: reply}``. A worker that dies (or hangs
past its timeout) while serving a request yields ``["crash", status, stderr
tail]`` for that request and is restarted for the next one, so an upstream
crash on an input it has no defined behaviour for costs one case, not the run.
A worker that cannot even start (its front end does not import) raises
:class:`FrontEndUnavailable`: the suite fails loudly instead of skipping.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

from . import config
from .framing import read_message, write_message

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")

#: Seconds one request may take before its worker is declared hung.
REQUEST_TIMEOUT = 120.0


class FrontEndUnavailable(RuntimeError):
    """A front end listed for comparison could not be imported or set up."""


class HarnessError(RuntimeError):
    """The worker's own code failed (a bug in the suite, not a front-end result)."""


class Worker:
    """One front end in one long-lived interpreter."""

    def __init__(self, frontend: str, kernels: Dict[str, str], workdir: str,
                 name: Optional[str] = None):
        self.frontend = frontend
        self.name = name or frontend
        self.kernels = kernels
        self.workdir = workdir
        self.config_path = os.path.join(workdir, f"{self.name}-config.json")
        with open(self.config_path, "w") as f:
            json.dump({"kernels": kernels}, f)
        self.process: Optional[subprocess.Popen] = None
        self.stderr_path = os.path.join(workdir, f"{self.name}-stderr.txt")
        self.hello: Dict[str, Any] = {}
        self.restarts = 0

    # -- process management -----------------------------------------------------

    def start(self) -> None:
        self.stderr_file = open(self.stderr_path, "ab")
        self.stderr_offset = self.stderr_file.tell()
        self.process = subprocess.Popen(
            [config.interpreter(self.frontend), CHILD, self.frontend, self.config_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr_file, bufsize=0,
            cwd=self.workdir)
        status, payload = self._read(timeout=REQUEST_TIMEOUT) or ("crash", None)
        if status != "ok":
            detail = payload if isinstance(payload, str) else self.stderr_tail()
            self.stop()
            raise FrontEndUnavailable(
                f"front end {self.frontend!r} could not be set up in its worker:\n{detail}")
        self.hello = payload

    def stop(self) -> None:
        if self.process is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process.stdout.close()
            self.process = None
        if getattr(self, "stderr_file", None) is not None:
            self.stderr_file.close()
            self.stderr_file = None

    def stderr_tail(self, lines: int = 15) -> str:
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(self.stderr_offset)
                text = f.read().decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    # -- requests -----------------------------------------------------------------

    def send(self, op: str, payload: Any) -> bool:
        """Sends a request; False if the worker is gone (the reply will be a crash)."""
        if self.process is None or self.process.poll() is not None:
            return False
        try:
            write_message(self.process.stdin, (op, payload))
            return True
        except (BrokenPipeError, OSError):
            return False

    def _read(self, timeout: float):
        stream = self.process.stdout
        deadline = time.monotonic() + timeout
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            self.process.kill()
            self.process.wait()
            return ("hang", None)
        try:
            return read_message(stream)
        except Exception:  # noqa: BLE001 - a torn message is a crash
            return None

    def receive(self, sent: bool, timeout: float = REQUEST_TIMEOUT) -> Any:
        """The reply to the last request, or a ``["crash", ...]`` record (then restarts)."""
        reply = self._read(timeout) if sent else None
        if reply is not None and reply[0] == "ok":
            return reply[1]
        if reply is not None and reply[0] == "harness-error":
            raise HarnessError(f"worker {self.name} failed in the suite's own code:\n{reply[1]}")
        # The process died (or hung): collect what it said and start a new one.
        if self.process is not None:
            self.process.kill()
            status = self.process.wait()
        else:
            status = None
        kind = "hang" if reply is not None and reply[0] == "hang" else "crash"
        record = [kind, f"exit status {status}", self.stderr_tail()]
        self.stop()
        self.restarts += 1
        self.start()
        return record

    def request(self, op: str, payload: Any, timeout: float = REQUEST_TIMEOUT) -> Any:
        return self.receive(self.send(op, payload), timeout)


class Pool:
    """One worker per front end; every request goes to all of them."""

    def __init__(self, frontends: List[str], kernels: Dict[str, str]):
        self.workdir = tempfile.mkdtemp(prefix="conformance-workers-")
        self.kernels = kernels
        self.workers: Dict[str, Worker] = {}
        try:
            for frontend in frontends:
                worker = Worker(frontend, kernels, self.workdir)
                worker.start()
                self.workers[frontend] = worker
        except BaseException:
            self.close()
            raise

    def run(self, op: str, payload: Any, only: Optional[List[str]] = None) -> Dict[str, Any]:
        """``{front end: reply}`` for one request sent to every (or ``only`` the named) worker."""
        names = only or list(self.workers)
        sent = {name: self.workers[name].send(op, payload) for name in names}
        replies: Dict[str, Any] = {}
        fault: Optional[HarnessError] = None
        for name in names:  # every reply is read, so that none is left for the next request
            try:
                replies[name] = self.workers[name].receive(sent[name])
            except HarnessError as error:
                fault = fault or error
        if fault is not None:
            raise fault
        return replies

    def isolated(self, frontend: str) -> Worker:
        """A second worker for ``frontend`` that serves cases which may crash it."""
        key = frontend + "-isolated"
        if key not in self.workers:
            worker = Worker(frontend, self.kernels, self.workdir, name=key)
            worker.start()
            self.workers[key] = worker
        return self.workers[key]

    def close(self) -> None:
        for worker in self.workers.values():
            worker.stop()
        self.workers.clear()
