"""Instructions per call for the benchmarks' rows (``--instructions`` of bench_calls.py and
bench_limits.py): counts are steadier than time on a shared, noisy machine.

Two counter sources, the first one the machine has:

- ``perf``: the CPU's instruction counter, opened by the worker on itself with
  ``perf_event_open`` (what ``perf stat -e instructions:u`` reads), user space only;
- ``callgrind``: valgrind's callgrind, the worker run under ``valgrind --tool=callgrind`` with
  instrumentation off until the rows start (imports run uninstrumented) and collection
  switched on only around the counted loops, through the client requests of
  ``callgrind_toggle.c`` (compiled once, as bench_limits compiles its modules). Counts are
  exact and deterministic; Python runs about 50x slower, so the loops are short.

A row is counted in the worker with the same timing loop that times it
(``timed(body, n, clock)``), its clock being the counter: after ``n`` warm-up calls (one-time
costs: imports, first-call caches, the interpreter's specialisation) the loop runs ``n`` and
then ``2n`` times, and the difference divided by ``n`` is what one iteration costs: the
constant costs of a loop (entering it, the counter's own calls) cancel. An iteration is the
loop's own step and the call of the row's body (a lambda) plus the body's work; the loop with
an empty body (``lambda: None``) is counted the same way once per process, and a row's count
is net of it: the instructions the body's call itself takes. The time columns include that
loop cost, so it is printed in the header.

The driver (:func:`choose`, :func:`count_process`) starts one counting process per runner,
after the timed rounds; the worker finds what to do in the environment variable
``TVM_FFI_BENCH_COUNTER`` (:func:`worker_counter`), so the scripts' worker arguments stay
as they are.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import platform
import resource
import shutil
import struct
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOGGLE_SOURCE = os.path.join(HERE, "callgrind_toggle.c")
ENV = "TVM_FFI_BENCH_COUNTER"
PERF, CALLGRIND = "perf", "callgrind"
#: Iterations per counted loop under callgrind (at most; a row with fewer timed iterations,
#: a heavy one, keeps its own count): counts are exact, so a few hundred suffice.
CALLGRIND_ITERATIONS = 200
#: Iterations of the empty body's loop (the loop's own cost), before the cap above.
BASELINE_ITERATIONS = 20000
#: Counted loops of each length on hardware counters (the fewest instructions is kept: an
#: interrupt or a page fault only adds).
PERF_REPEAT = 3

#: perf_event_open's system call number per machine (from Linux's unistd headers).
_PERF_SYSCALL = {"x86_64": 298, "aarch64": 241, "riscv64": 241, "ppc64le": 319,
                 "s390x": 331}


# ------------------------------------------------------------------ hardware counters


def _open_instruction_counter() -> int:
    """A file descriptor counting this thread's user-space instructions, from now on; raises
    OSError (with the reason) where the machine has no such counter."""
    number = _PERF_SYSCALL.get(platform.machine())
    if number is None:
        raise OSError(f"perf_event_open's system call number is not known for "
                      f"{platform.machine()}")
    # struct perf_event_attr, its first version (64 bytes): type, size, config, then the
    # flag bits at offset 40: exclude_kernel (bit 5) and exclude_hv (bit 6).
    attr = bytearray(64)
    struct.pack_into("IIQ", attr, 0, 0, len(attr), 1)  # PERF_TYPE_HARDWARE, _HW_INSTRUCTIONS
    struct.pack_into("Q", attr, 40, (1 << 5) | (1 << 6))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    buffer = (ctypes.c_char * len(attr)).from_buffer(attr)
    fd = libc.syscall(ctypes.c_long(number), buffer, ctypes.c_int(0), ctypes.c_int(-1),
                      ctypes.c_int(-1), ctypes.c_ulong(0))
    if fd < 0:
        errno = ctypes.get_errno()
        meaning = {2: "the kernel exposes no instruction counter (as in many VMs)",
                   95: "the kernel exposes no instruction counter (as in many VMs)",
                   1: "not permitted (see /proc/sys/kernel/perf_event_paranoid)",
                   13: "not permitted (see /proc/sys/kernel/perf_event_paranoid)"}
        raise OSError(errno, f"perf_event_open(instructions:u): {os.strerror(errno)}: "
                             f"{meaning.get(errno, 'failed')}")
    return int(fd)


class _PerfClock:
    """The instructions this thread has run so far, read from the hardware counter."""

    def __init__(self) -> None:
        self._fd = _open_instruction_counter()

    def __call__(self) -> int:
        return struct.unpack("q", os.read(self._fd, 8))[0]


def perf_problem() -> Optional[str]:
    """Why this machine cannot count instructions in hardware, or None when it can."""
    try:
        os.close(_open_instruction_counter())
    except OSError as error:
        return error.strerror or str(error)
    return None


# ------------------------------------------------------------------ callgrind


def valgrind_version() -> Optional[str]:
    """valgrind's version string, or None when it is not installed."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
    return done.stdout.strip() or None


def build_toggle(cache: str) -> str:
    """``callgrind_toggle.c`` as a shared library in ``cache`` (once per source); returns its
    path. Raises CalledProcessError when it does not compile (no callgrind header)."""
    with open(TOGGLE_SOURCE, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()[:12]
    target = os.path.join(cache, f"callgrind_toggle-{digest}.so")
    if not os.path.exists(target):
        os.makedirs(cache, exist_ok=True)
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", TOGGLE_SOURCE,
                        "-o", target + ".tmp"], check=True, capture_output=True)
        os.replace(target + ".tmp", target)
    return target


def _dump_total(path: str) -> int:
    """The instructions a callgrind dump file counted (its ``totals:`` line)."""
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"{path} has no totals line: not a callgrind dump")


class _CallgrindClock:
    """A clock for ``timed``: its first call opens a counted region and reads 0, the next
    closes it and reads the instructions run in between (from the dump file callgrind wrote
    for it), and so on in turn."""

    def __init__(self, helper: str, out_base: str) -> None:
        lib = ctypes.CDLL(helper)
        if not lib.tvm_ffi_bench_on_valgrind():
            raise RuntimeError(f"{ENV} asks for callgrind counts, but this process does not "
                               "run under valgrind")
        lib.tvm_ffi_bench_end.argtypes = [ctypes.c_char_p]
        self._begin, self._end = lib.tvm_ffi_bench_begin, lib.tvm_ffi_bench_end
        self._prefix = f"{out_base}.{os.getpid()}"
        self._dumps, self._open = 0, False
        lib.tvm_ffi_bench_instrument()

    def __call__(self) -> int:
        if not self._open:
            self._open = True
            self._begin()
            return 0
        self._end(b"counted loop")
        self._open = False
        self._dumps += 1
        path = f"{self._prefix}.{self._dumps}"
        total = _dump_total(path)
        os.remove(path)
        return total


# ------------------------------------------------------------------ worker side

#: timed(body, iterations, clock) -> clock units for the loop (bench_calls._timing_loop's).
Loop = Callable[[Callable[[], Any], int, Callable[[], float]], float]


class RowCounter:
    """In a worker process: instructions per call of each row's body (:meth:`count`), net of
    the counting loop's own cost per iteration (:attr:`loop_per_iteration`)."""

    def __init__(self, spec: Dict[str, Any]) -> None:
        self.kind = spec["kind"]
        self._clock: Callable[[], float] = (
            _PerfClock() if self.kind == PERF else _CallgrindClock(spec["helper"], spec["out"]))
        self._repeat = PERF_REPEAT if self.kind == PERF else 1
        self.loop_per_iteration: Optional[float] = None

    def iterations(self, timed_iterations: int) -> int:
        """How many iterations a counted loop of a row timed with ``timed_iterations`` runs."""
        if self.kind == CALLGRIND:
            return max(1, min(timed_iterations, CALLGRIND_ITERATIONS))
        return max(1, timed_iterations)

    def per_iteration(self, timed: Loop, body: Callable[[], Any], n: int) -> float:
        """Instructions per iteration of ``timed``'s loop over ``body``: after ``n`` warm-up
        iterations, (the loop of ``2n`` - the loop of ``n``) / ``n``."""
        timed(body, n, self._clock)
        once = min(timed(body, n, self._clock) for _ in range(self._repeat))
        twice = min(timed(body, 2 * n, self._clock) for _ in range(self._repeat))
        return (twice - once) / n

    def count(self, make_loop: Callable[[str], Loop], name: str, body: Callable[[], Any],
              timed_iterations: int) -> float:
        """Instructions per call of ``body`` (the row ``name``, timed with
        ``timed_iterations``), net of the loop's own; ``make_loop(name)`` gives a fresh
        timing loop, as the row's timing uses."""
        n = self.iterations(timed_iterations)
        if self.loop_per_iteration is None:
            self.loop_per_iteration = self.per_iteration(
                make_loop("empty body"), lambda: None, self.iterations(BASELINE_ITERATIONS))
        return self.per_iteration(make_loop(name), body, n) - self.loop_per_iteration


def worker_counter() -> Optional[RowCounter]:
    """The counter the driver asked this worker for (``TVM_FFI_BENCH_COUNTER``), or None
    when it asked for times."""
    spec = os.environ.get(ENV)
    return RowCounter(json.loads(spec)) if spec else None


# ------------------------------------------------------------------ driver side


def choose(wanted: str) -> Tuple[Optional[str], str]:
    """The counter source to use: ``wanted`` is "auto" (hardware counters, else callgrind),
    "perf" or "callgrind". Returns (kind, a description for the table's header), or
    (None, why neither can count here)."""
    reasons = []
    if wanted in ("auto", PERF):
        problem = perf_problem()
        if problem is None:
            return PERF, "hardware counter (perf_event_open, instructions:u)"
        reasons.append(f"no hardware counter: {problem}")
    if wanted in ("auto", CALLGRIND):
        version = valgrind_version()
        if version is not None:
            return CALLGRIND, f"callgrind ({version})" + "".join(f"; {r}" for r in reasons)
        reasons.append("valgrind is not installed (apt-get install valgrind)")
    return None, "; ".join(reasons)


def count_process(kind: str, command: List[str], cache: str) -> Dict[str, Any]:
    """Runs a worker ``command`` whose counter is ``kind`` (under valgrind for callgrind);
    returns its last line of output (JSON) with "seconds" and "cpu_seconds" (the process's
    wall and CPU time) added, or {"skip": reason} when it failed."""
    spec: Dict[str, Any] = {"kind": kind}
    out_dir = None
    if kind == CALLGRIND:
        try:
            spec["helper"] = build_toggle(cache)
        except subprocess.CalledProcessError as error:
            return {"skip": f"compiling callgrind_toggle.c failed (callgrind's header comes with "
                            f"valgrind's package): {error.stderr.decode()[-300:]}"}
        out_dir = tempfile.mkdtemp(prefix="tvm_ffi_bench_callgrind-")
        spec["out"] = os.path.join(out_dir, "cg")
        command = ["valgrind", "-q", "--tool=callgrind", "--instr-atstart=no",
                   "--collect-atstart=no", "--dump-line=no",
                   f"--callgrind-out-file={spec['out']}.%p", *command]
    start, cpu = time.monotonic(), _children_cpu()
    try:
        # a fixed hash seed: str hashes, and so dict probes, are then the same in every run
        done = subprocess.run(command, capture_output=True, text=True,
                              env={**os.environ, ENV: json.dumps(spec), "PYTHONHASHSEED": "0"})
    finally:
        if out_dir is not None:
            shutil.rmtree(out_dir, ignore_errors=True)
    if done.returncode != 0:
        return {"skip": f"the counting process failed: {done.stderr.strip()[-500:]}"}
    got = json.loads(done.stdout.strip().splitlines()[-1])
    got["seconds"], got["cpu_seconds"] = time.monotonic() - start, _children_cpu() - cpu
    return got


def _children_cpu() -> float:
    """CPU seconds of this process's finished children so far (a loaded machine stretches
    wall time, not this)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def add_ratios(rows: List[Dict[str, Any]], summary: Dict[str, float],
               pairs: List[Tuple[str, str]]) -> None:
    """Adds "A/B_instr" to each row that counted both, and its geometric mean and maximum to
    ``summary``, for every (A, B) of ``pairs``."""
    for top, bottom in pairs:
        key = f"{top}/{bottom}_instr"
        for row in rows:
            a, b = row.get(f"{top}_instr"), row.get(f"{bottom}_instr")
            if a is not None and b is not None and a > 0 and b > 0:
                row[key] = a / b
        ratios = [r[key] for r in rows if key in r]
        if ratios:
            summary[f"{key} geomean"] = _geomean(ratios)
            summary[f"{key} max"] = max(ratios)


def _geomean(values: List[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def header_lines(info: Dict[str, Any]) -> List[str]:
    """What the table's header says about the instruction columns: the source, the loop's own
    cost, each counting process's run time, and the runners that were not counted."""
    if info.get("kind") is None:
        return [f"instructions per call: n/a ({info['source']})"]
    lines = [f"instructions per call (*_instr): {info['source']}; each row net of the counting "
             "loop's own cost per iteration (an empty body), which the times include: "
             + ", ".join(f"{r} {v:.0f}" for r, v in info["loop_per_iteration"].items())]
    lines.append("counting processes took (wall, CPU) " + ", ".join(
        f"{r} {s:.1f} s, {info['cpu_seconds'][r]:.1f} s" for r, s in info["seconds"].items()))
    for runner, reason in {**info["skipped"], **info.get("rows_not_counted", {})}.items():
        lines.append(f"instructions n/a for {runner}: {reason}")
    return lines


def count_runners(choice: Tuple[Optional[str], str], commands: Dict[str, Any],
                  cache: str) -> Tuple[Dict[str, Dict[str, float]], Dict[str, Any]]:
    """Counts every runner of ``commands`` (runner -> its worker command, a list, or the
    reason it cannot be counted, a str) with the source ``choice`` (what :func:`choose`
    returned), one process per runner. Returns (runner -> shape -> instructions per call, the
    report's "instructions" entry: the source, the loop's own cost, run times, runners and
    rows not counted)."""
    kind, source = choice
    info: Dict[str, Any] = {"kind": kind, "source": source, "loop_per_iteration": {},
                            "seconds": {}, "cpu_seconds": {}, "skipped": {},
                            "rows_not_counted": {}}
    counts: Dict[str, Dict[str, float]] = {}
    if kind is None:
        return counts, info
    for runner, command in commands.items():
        got = {"skip": command} if isinstance(command, str) else \
            count_process(kind, command, cache)
        if "skip" in got:
            info["skipped"][runner] = got["skip"]
            continue
        counts[runner] = got["instr"]
        info["seconds"][runner] = got["seconds"]
        info["cpu_seconds"][runner] = got["cpu_seconds"]
        for name, reason in got.get("not_counted", {}).items():
            info["rows_not_counted"][f"{runner}: {name}"] = reason
        if got["loop"] is not None:
            info["loop_per_iteration"][runner] = got["loop"]
    return counts, info
