"""The checker's worker: where kernel code runs, so its crash is only a report.

Started by the checker (:class:`tvm_ffi_check.worker_client.Worker`) with the
library's path. It installs the reference runtime, snapshots the global
function table and the type registry, loads the library (whose static
initializers register its globals and types), and says hello with what the
load added (:mod:`.targets`). Then it serves requests from its stdin,
answering on its stdout. It never calls a kernel function itself: for that it
forks a *child* (cheap: the runtime and library are already loaded) and
relays the request. When the child dies (a signal, an exit) or does not
answer within the request's time limit (it is then killed), the answer says
so, with the phase the child had reached, and the next request gets a fresh
child. A ``reset`` request also starts a fresh child, so that one function's
damage cannot blame another.

Before each kernel call the child reports where that call's guarded tensors
and argument array lie (:mod:`.guard`); when the child dies of a fault the
fault reporter recorded, the answer names what the kernel touched.

Messages are pickled dicts, each preceded by its length (4 bytes, big
endian). The protocol uses copies of the original stdin/stdout; file
descriptors 0 and 1 are pointed at /dev/null and stderr, so that whatever a
kernel prints cannot corrupt it.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import pickle
import select
import signal
import struct
import sys
import time
import traceback
from typing import Any, Dict, List, Optional

_HEADER = struct.Struct(">I")


def write_message(fd: int, message: Dict[str, Any]) -> None:
    """Writes one framed message to ``fd``."""
    data = pickle.dumps(message, protocol=4)
    payload = _HEADER.pack(len(data)) + data
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, size: int, deadline: Optional[float]) -> Optional[bytes]:
    chunks = []
    while size:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int, deadline: Optional[float] = None) -> Optional[Dict[str, Any]]:
    """Reads one framed message; None at end of file; TimeoutError past ``deadline``."""
    header = _read_exact(fd, _HEADER.size, deadline)
    if header is None:
        return None
    data = _read_exact(fd, _HEADER.unpack(header)[0], deadline)
    if data is None:
        return None
    return pickle.loads(data)


# ------------------------------------------------------------------ child


class _ChildState:
    """What a child keeps between requests."""

    def __init__(self, module) -> None:
        from . import targets

        self.module = module
        self.functions: Dict[Any, Any] = {}
        targets.LOADED[0] = module  # pooled arguments are made by calling exports too

    def function(self, ref):
        from .targets import resolve

        ref = tuple(ref)
        func = self.functions.get(ref)
        if func is None:
            func = self.functions[ref] = resolve(self.module, ref)
        return func


def _serve_child(module, read_fd: int, write_fd: int) -> None:
    import threading

    from . import probe, values

    state = _ChildState(module)
    lock = threading.Lock()
    current = ["start"]

    def phase(text: str) -> None:
        current[0] = text
        with lock:
            write_message(write_fd, {"phase": text})

    def tick(packed) -> None:
        # Before every kernel call: the supervisor restarts its clock and learns
        # where the call's guarded tensors are, to name one a fault lands next to.
        message = {"phase": current[0], "forms": packed.forms()}
        if packed.regions:
            message["regions"] = packed.regions
        with lock:
            write_message(write_fd, message)

    probe.BEFORE_CALL[:] = [tick]
    outer = []

    def making(started: bool) -> None:
        if started:
            outer.append(current[0])
            phase("make")
        else:
            phase(outer.pop())

    values.MAKING[:] = [making]

    while True:
        request = read_message(read_fd)
        if request is None:
            return
        from .objects import ArgumentNotMade

        try:
            answer = _handle(state, request, phase)
        except ArgumentNotMade as exc:  # an argument of the library's own type: not its fault
            answer = {"unmade": str(exc)}
        except Exception:  # noqa: BLE001 - the checker's own failure, reported as such
            answer = {"internal_error": traceback.format_exc()}
        answer["done"] = True
        write_message(write_fd, answer)


def _handle(state: _ChildState, request: Dict[str, Any], phase) -> Dict[str, Any]:
    from . import deadline, probe, repeat

    op = request["op"]
    if request.get("timeout"):  # long calls are interrupted well inside the hard limit
        deadline.LIMIT[0] = min(1.0, request["timeout"] / 4)
    if op == "list":
        functions = []
        for name in request["names"]:
            entry: Dict[str, Any] = {"name": name, "metadata": None, "doc": None, "error": None}
            if name not in request.get("skip_metadata", ()):
                phase(f"metadata:{name}")
                try:
                    entry["metadata"] = _module_text(state.module,
                                                     "ffi.ModuleGetFunctionMetadata", name)
                    entry["doc"] = _module_text(state.module, "ffi.ModuleGetFunctionDoc", name)
                except Exception as exc:  # noqa: BLE001 - a metadata function that failed
                    entry["error"] = f"{type(exc).__name__}: {exc}"
            functions.append(entry)
        return {"functions": functions}
    func = state.function(request["target"])
    values = request["args"] if "args" in request else None
    if op == "probe":  # one plain call, for what its error says about the signature
        phase("call")
        return {"outcome": repeat.plain_outcome(func, values)}
    if op == "check":
        phase("call")
        answer = probe.checked_call(func, values, request.get("returns"))
        count = request.get("repeat", 0)
        if count and not answer["violations"] and answer["outcome"] != ("interrupted",):
            phase("repeat")
            answer["violations"] = repeat.repeat_calls(func, values, count)
            answer["repeat_done"] = True
            if request.get("leaks") and answer["kept"] and not answer["violations"]:
                answer["violations"] = repeat.kept_growth(func, values, count)
        return answer
    if op == "threads":
        phase("threads")
        return repeat.consistency(func, request["arglists"], request["threads"],
                                  request["rounds"])
    raise ValueError(f"unknown request {op!r}")


def _module_text(module, global_name: str, name: str) -> Optional[str]:
    import tvm_ffi_ref as api

    text = api.get_global_func(global_name)(module, name, False)
    return None if text is None else str(text)


# ------------------------------------------------------------- supervisor


class _Supervisor:
    def __init__(self, module, in_fd: int, out_fd: int, record, sandbox=None) -> None:
        self.module = module
        self.sandbox = sandbox  # its CPU limit is set in each child: CPU time counts per process
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.record = record  # where the fault reporter writes (guard.SharedFaultRecord)
        self.regions: List[Dict[str, Any]] = []  # the child's guarded tensors, oldest first
        self.pid: Optional[int] = None
        self.to_child: Optional[int] = None
        self.from_child: Optional[int] = None

    def _fork(self) -> None:
        self.record.clear()
        self.regions = []
        request_read, request_write = os.pipe()
        answer_read, answer_write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: serve until the supervisor closes the pipe
            code = 0
            try:
                os.close(request_write)
                os.close(answer_read)
                os.close(self.in_fd)
                os.close(self.out_fd)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                if self.sandbox is not None:
                    from .sandbox import apply_cpu_limit

                    apply_cpu_limit(self.sandbox)
                _serve_child(self.module, request_read, answer_write)
            except BaseException:  # noqa: BLE001 - report and leave without cleanup
                traceback.print_exc()
                code = 70
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(request_read)
        os.close(answer_write)
        self.pid, self.to_child, self.from_child = pid, request_write, answer_read

    def _stop_child(self, kill: bool) -> Optional[int]:
        if self.pid is None:
            return None
        for fd in (self.to_child, self.from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(self.pid, 0)
        self.pid = self.to_child = self.from_child = None
        return status

    def handle(self, request: Dict[str, Any]) -> Dict[str, Any]:
        if request["op"] == "reset":
            self._stop_child(kill=True)
            return {"done": True}
        if self.pid is None:
            self._fork()
        timeout = request.get("timeout")
        deadline = None if timeout is None else time.monotonic() + timeout
        last_phase = "start"
        forms = None  # the ABI forms of the arguments of the kernel call under way
        started = time.monotonic()
        try:
            write_message(self.to_child, request)
            while True:
                message = read_message(self.from_child, deadline)
                if message is None:
                    break
                if message.get("done"):
                    message["elapsed"] = time.monotonic() - started
                    return message
                last_phase = message.get("phase", last_phase)
                forms = message.get("forms", forms)
                if message.get("regions"):
                    self.regions.extend(message["regions"])
                    del self.regions[:-_KEPT_REGIONS]
                if timeout is not None:  # a kernel call starts: the limit is per call
                    deadline = time.monotonic() + timeout
        except TimeoutError:
            self._stop_child(kill=True)
            return {"done": True, "timeout": timeout, "phase": last_phase}
        except BrokenPipeError:
            pass
        status = self._stop_child(kill=True)
        answer = {"done": True, "crash": _describe_status(status), "phase": last_phase,
                  "forms": forms}
        fault = self.record.read()
        if fault is not None:
            from .guard import describe_fault

            answer["fault"] = fault
            answer["out_of_bounds"] = describe_fault(fault, self.regions)
        return answer

    def close(self) -> None:
        self._stop_child(kill=True)


#: Guarded tensor regions the supervisor remembers (the newest win an address).
_KEPT_REGIONS = 512


def _describe_status(status: Optional[int]) -> str:
    if status is None:
        return "the worker vanished"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        from .sandbox import LIMIT_SIGNALS

        limit = LIMIT_SIGNALS.get(name)
        return f"killed by {name}" + (f": it reached {limit}" if limit else "")
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)} (a kernel called exit?)"
    return f"stopped (wait status {status})"


def main(argv=None) -> int:
    """Runs the worker for the library named on the command line."""
    argv = sys.argv[1:] if argv is None else argv
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # kernel output goes to stderr, which the checker collects
    sys.stdout = sys.stderr
    path = argv[0]
    # The limits first, while the process has one thread (see sandbox.isolate_network).
    from .sandbox import Sandbox, apply_process_limits

    settings = json.loads(argv[1]) if len(argv) > 1 else {}
    sandbox = Sandbox(**settings.get("sandbox", Sandbox.off().to_json()))
    limits = apply_process_limits(sandbox, settings.get("memory_exemption"))
    try:
        # Everything a child needs, imported once here rather than in every child
        # (NumPy alone takes half a second: every tensor and argument array uses it).
        import numpy  # noqa: F401

        from . import deadline, guard, objects, probe, repeat, targets, values  # noqa: F401

        probe.install_tracking()
        import tvm_ffi_ref as api

        if not api.runtime.installed():
            raise RuntimeError(f"the reference runtime could not be installed (another runtime, "
                               f"{api.runtime_name()!r}, serves this process)")
        deadline.install()
        record = guard.SharedFaultRecord()
        reporter = guard.install_reporter(record)
        before = targets.snapshot()
        # Resolve every symbol now: a library that cannot be would otherwise fail
        # only when a kernel first calls the missing function. Its static
        # initializers run here: that is when it registers globals and types.
        ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        module = api.load_module(path)
        registered = targets.registered_since(before)
    except BaseException as exc:  # noqa: BLE001 - reported to the checker
        write_message(out_fd, {"done": True, "ok": False, "error": f"{exc}"})
        return 1
    gc.freeze()  # what is loaded stays: each full collection need not walk it again
    write_message(out_fd, {"done": True, "ok": True, "runtime": api.runtime_name(),
                           "pid": os.getpid(), "registered": registered,
                           "fault_reporter": reporter, "sandbox": limits})
    supervisor = _Supervisor(module, in_fd, out_fd, record, sandbox)
    try:
        while True:
            request = read_message(in_fd)
            if request is None or request.get("op") == "exit":
                break
            write_message(out_fd, supervisor.handle(request))
    finally:
        supervisor.close()
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: the library's destructors are not our business


if __name__ == "__main__":
    sys.exit(main())
