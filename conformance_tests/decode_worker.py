"""Worker operations on the front end's result decoder: forged results and snippets.

Loaded by ``child.py`` (by file path) into its table of operations:
``decode`` feeds forged results (``probe.cc``'s ``forge``) to the decoder,
``decode_isolated`` does so in a forked child (upstream has no defined
behaviour for invalid results: a crash costs a fork, not the worker), and
``snippet`` runs a minimal reproduction (``known.py``).
"""

from __future__ import annotations

import ctypes
import os
import pickle
import struct
from types import SimpleNamespace
from typing import Any, Callable, Dict, List

#: The worker's helpers (``child_recipes.build``, ``raised``, ``normalize``, ``attempt``,
#: ``type_info_record``; ``harness_faults.fault`` and ``take``), set by :func:`handlers`.
W = SimpleNamespace()


def op_decode(env: Any, cases: List[Any]) -> Any:
    """Feeds forged results to the front end's result decoder (see ``probe.cc`` forge).

    Each case is ``(raw 16 bytes, object recipe or None, status)``. The result
    is the normalized decoded value or the exception raised, plus, for our
    front ends, the ABI rule named by an ``ABIViolation``.
    """
    forge = env.probe.forge
    out = []
    for raw, obj_recipe, status in cases:
        try:
            obj = W.build(env, obj_recipe) if obj_recipe is not None else None
        except Exception as error:  # noqa: BLE001
            out.append(["build-raises"] + W.raised(error)[1:])
            continue
        try:
            value = forge(bytes(raw), obj, status)
        except Exception as error:  # noqa: BLE001
            record = W.raised(error)
            rule = getattr(error, "rule", None)
            if rule is not None:
                record.append(rule)
            out.append(record)
            continue
        try:
            out.append(["value", W.normalize(env, value)])
        except Exception as error:  # noqa: BLE001
            out.append(["normalize-raises"] + W.raised(error)[1:])
        del value
    return out


def op_snippet(env: Any, sources: List[str]) -> List[Any]:
    """Runs Python snippets (minimal reproductions); each assigns ``result``.

    Names: ``api``, ``np``, ``probe``, ``calls``, ``kernels`` (name -> Module),
    ``TYPE_INFO(index)`` (a type
    info record), ``FORGE(type_index, padding, payload, obj=None, status=0)``
    (a forged result, decoded by the front end).
    """
    def forge(type_index, padding, payload, obj=None, status=0):
        raw = struct.pack("<iIQ", type_index, padding, payload & ((1 << 64) - 1))
        return env.probe.forge(raw, obj, status)

    out = []
    for source in sources:
        scope = {"api": env.api, "np": env.np, "probe": env.probe, "calls": env.calls,
                 "kernels": env.kernels,
                 "TYPE_INFO": lambda index: W.type_info_record(env, index), "FORGE": forge}
        def run():
            exec(compile(source, "<snippet>", "exec"), scope)
            return scope["result"]
        out.append(W.attempt(env, run))
    return out


def _quiet_crashes() -> None:
    """In a forked child: die at once on a crash (no symbolized backtrace first)."""
    libc = ctypes.CDLL(None)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
    for sig in (11, 6, 7):  # SIGSEGV, SIGABRT, SIGBUS: the default action
        libc.signal(sig, None)
    os.environ["TVM_TRACEBACK_LIMIT"] = "0"


def _decode_in_fork(env: Any, cases: List[Any]) -> List[Any]:
    """``op_decode(cases)`` in a forked child: its reply, or ``["crash", ...]`` if it died."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: decode, report, and leave without cleanup
        os.close(read_fd)
        _quiet_crashes()
        try:
            data = pickle.dumps(op_decode(env, cases))
        except BaseException as error:  # noqa: BLE001
            data = pickle.dumps(["harness-raises"] + W.raised(error)[1:])
        if W.take_faults():
            data = pickle.dumps(["harness-fault"])
        with os.fdopen(write_fd, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return ["crash", f"signal {os.WTERMSIG(status)}"]
    if os.WEXITSTATUS(status) != 0 or not data:
        return ["crash", f"exit status {os.WEXITSTATUS(status)}"]
    reply = pickle.loads(data)
    if reply == ["harness-fault"]:
        raise W.fault(f"the suite's own code failed on the isolated cases {cases!r}")
    return reply


def op_decode_isolated(env: Any, cases: List[Any]) -> Any:
    """``op_decode`` in a forked child of this worker, so a case that crashes the front end
    costs a fork, not the worker: ``["crash", "signal N"]`` or ``["crash", "exit status N"]``
    for such a case. The batch runs in one fork; only when that one dies does each case
    get a fork of its own (forking a worker that imported torch is what costs)."""
    together = _decode_in_fork(env, cases)
    if together[:1] != ["crash"] and len(together) == len(cases):
        return together
    return [one[0] if one[:1] != ["crash"] else one
            for one in (_decode_in_fork(env, [case]) for case in cases)]


def handlers(**helpers: Callable) -> Dict[str, Callable]:
    """The worker operations this module adds (``child.OPS``)."""
    W.__dict__.update(helpers)
    return {"decode": op_decode, "decode_isolated": op_decode_isolated, "snippet": op_snippet}
