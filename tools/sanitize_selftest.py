"""The driver of ``tools/sanitize.sh --self-test``: plants sanitizer reports in processes the way
tests start them, then checks that each reached the run's log directory.

Run by the job in its environment (libasan and libubsan preloaded, the log paths set) with the
planted library (tools/sanitize_selftest.c, instrumented) and the log directory. Cases:

* a child process (``subprocess``) hits a heap-use-after-free: ``asan.<its pid>`` holds it;
* a grandchild made by ``os.fork`` in a child hits a signed overflow: ``ubsan.<its pid>``;
* ``tvm-ffi-check`` calls the use-after-free kernel in its sandbox (a worker process and the
  worker's forked child): a log of a process this driver did not start holds it;
* a child whose environment lost the sanitizer options prints its report to stderr, which
  this driver shows as a failing test would: the job must count it as a stray report.

Prints one line per case; exit status 0 when every report was found where it should be. The
job then runs its usual report over the logs, which must fail.
"""

from __future__ import annotations

import os
import subprocess
import sys


def run(args, env=None, timeout=600):
    """``args`` run to the end: (its pid, exit status, stdout, stderr)."""
    with subprocess.Popen(args, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        out, err = process.communicate(timeout=timeout)
    return process.pid, process.returncode, out, err

CALL = """
import ctypes, sys
kernel = getattr(ctypes.CDLL(sys.argv[1]), "__tvm_ffi_" + sys.argv[2])
kernel.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]
result = ctypes.create_string_buffer(16)
print(kernel(None, None, 0, result))
"""

FORK = """
import os, sys
pid = os.fork()
if pid == 0:
    exec(sys.argv[3])
    os._exit(0)
os.waitpid(pid, 0)
print("grandchild", pid)
"""


def log_holds(logs: str, name: str, text: str) -> bool:
    path = os.path.join(logs, name)
    return os.path.exists(path) and text in open(path, errors="replace").read()


def main(argv=None) -> int:
    library, logs = (argv or sys.argv[1:])[:2]
    python = sys.executable
    found = {}

    pid, status, _, _ = run([python, "-c", CALL, library, "planted_use_after_free"])
    found["child process: heap-use-after-free"] = (
        status != 0 and log_holds(logs, f"asan.{pid}", "heap-use-after-free"))

    _, _, out, _ = run([python, "-c", FORK, library, "planted_overflow", CALL])
    grandchild = out.split()[-1] if "grandchild" in out else "?"
    found["forked grandchild: signed integer overflow"] = log_holds(
        logs, f"ubsan.{grandchild}", "signed integer overflow")

    before = set(os.listdir(logs))
    _, status, _, _ = run([python, "-m", "tvm_ffi_check", library, "--functions",
                           "planted_use_after_free", "--examples", "3", "--no-progress"])
    new = [name for name in set(os.listdir(logs)) - before if name.startswith("asan.")]
    found["tvm-ffi-check's sandbox: heap-use-after-free"] = (
        status != 0 and any(log_holds(logs, name, "planted_use_after_free") for name in new))

    env = {k: v for k, v in os.environ.items()
           if k not in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "SANITIZE_UBSAN_LOG")}
    env["ASAN_OPTIONS"] = "detect_leaks=0"  # (CPython's own leaks at exit are not the point)
    _, _, _, err = run([python, "-c", CALL, library, "planted_overflow"], env=env)
    print("--- stderr of the child that lost the sanitizer options (as a failing test shows it)")
    print(err.strip())
    found["options lost: report in the output"] = "runtime error" in err

    for case, ok in found.items():
        print(f"self-test: {case}: {'found' if ok else 'MISSING'}")
    return 0 if all(found.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
