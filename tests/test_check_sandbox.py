"""tvm-ffi-check's worker runs a library under limits, says which, and leaves the cwd clean.

A kernel of the test library copies ``/proc/self/limits`` and its network
namespace into a file the test names: what the kernel itself sees is what
the sandbox did. A second kernel spins, to meet the CPU-time limit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tvm_ffi_check import sandbox


def run_check(*args, timeout=300, env=None, cwd=None):
    """``python -m tvm_ffi_check`` run from ``cwd``; the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "tvm_ffi_check", "--no-progress", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=dict(os.environ, **(env or {})))

#: report_limits() appends /proc/self/limits and /proc/self/ns/net's target to $SANDBOX_OUT.
SANDBOXED = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_abi/export.h>

TVM_FFI_DLL_EXPORT int __tvm_ffi_report_limits(void* s, const TVMFFIAny* a, int32_t n,
                                               TVMFFIAny* r) {
  const char* path = getenv("SANDBOX_OUT");
  char buffer[8192], net[256];
  size_t size;
  ssize_t length;
  FILE *in, *out;
  (void)s, (void)a, (void)n;
  if (path != NULL && (out = fopen(path, "w")) != NULL) {
    if ((in = fopen("/proc/self/limits", "r")) != NULL) {
      size = fread(buffer, 1, sizeof(buffer), in);
      fwrite(buffer, 1, size, out);
      fclose(in);
    }
    length = readlink("/proc/self/ns/net", net, sizeof(net) - 1);
    net[length < 0 ? 0 : length] = '\0';
    fprintf(out, "net %s\n", net);
    fclose(out);
  }
  r->type_index = kTVMFFINone, r->zero_padding = 0, r->v_int64 = 0;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_spin(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  volatile unsigned long i = 0;
  (void)s, (void)a, (void)n;
  for (;;) ++i; /* only a signal ends it */
  r->type_index = kTVMFFINone;
  return 0;
}

TVM_FFI_ABI_EXPORT_SCHEMA(report_limits, "None");
TVM_FFI_ABI_EXPORT_SCHEMA(spin, "None");
"""


@pytest.fixture(scope="module")
def library(kernels):
    return kernels.build("sandboxed", SANDBOXED, language="c", extra_flags=["-D_GNU_SOURCE"])


def _limits(text: str):
    """``{"Max cpu time": "100", ...}``: the soft limits of /proc/self/limits."""
    found = {}
    for line in text.splitlines():
        match = re.match(r"(Max [a-z ]+?)\s{2,}(\S+)", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def _run(library, tmp_path, *options):
    out = tmp_path / "seen.txt"
    work = tmp_path / "cwd"
    work.mkdir()
    done = run_check(library, "--functions", "report_limits", "--examples", "1", "--json",
                     "-", *options, env={"SANDBOX_OUT": str(out)}, cwd=str(work))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), out.read_text(), work


def test_the_kernel_runs_under_the_limits_the_report_names(library, tmp_path):
    report, seen, work = _run(library, tmp_path, "--limit-memory", "24G", "--limit-cpu", "100",
                              "--limit-file-size", "1G")
    limits = _limits(seen)
    applied = report["sandbox"]
    with open("/proc/self/maps") as f:
        under_asan = "libasan" in f.read()
    if under_asan:  # tools/sanitize.sh: an address-space cap would kill ASan; the report says so
        assert limits["Max address space"] == "unlimited"
        assert applied[0] == ("address space not applied: AddressSanitizer reserves terabytes "
                              "of shadow memory")
    else:
        assert limits["Max address space"] == str(24 << 30)
        assert applied[0] == "address space 24 GiB"
    assert limits["Max cpu time"] == "100"
    assert limits["Max file size"] == str(1 << 30)
    assert limits["Max core file size"] == "0"
    assert applied[1:4] == ["CPU 100 s per function", "files up to 1 GiB", "no core dumps"]
    ours = os.readlink("/proc/self/ns/net")
    if applied[4] == "no network (own network namespace)":
        assert seen.splitlines()[-1] != f"net {ours}"
    else:  # a machine that allows no namespace: the report says so and why
        assert applied[4].startswith("network not isolated (unshare")
        assert seen.splitlines()[-1] == f"net {ours}"
    assert report["options"]["sandbox"]["memory"] == 24 << 30
    assert os.listdir(work) == []  # no .hypothesis/ or anything else in the current folder


def test_no_sandbox_lifts_every_limit(library, tmp_path):
    report, seen, _ = _run(library, tmp_path, "--no-sandbox")
    limits = _limits(seen)
    assert limits["Max address space"] == "unlimited" and limits["Max cpu time"] == "unlimited"
    assert seen.splitlines()[-1] == f"net {os.readlink('/proc/self/ns/net')}"
    assert report["sandbox"] == ["network allowed"]


def test_one_limit_can_be_lifted_alone(library, tmp_path):
    report, seen, _ = _run(library, tmp_path, "--limit-memory", "none", "--allow-network")
    limits = _limits(seen)
    assert limits["Max address space"] == "unlimited" and limits["Max cpu time"] == "300"
    assert not any(item.startswith("address space") for item in report["sandbox"])
    assert report["sandbox"][-1] == "network allowed"


def test_the_text_and_junit_reports_say_which_limits_applied(library, tmp_path):
    junit = tmp_path / "report.xml"
    done = run_check(library, "--functions", "report_limits", "--examples", "1",
                     "--limit-cpu", "50", "--junit-xml", str(junit))
    header = [line for line in done.stdout.splitlines() if line.startswith("sandbox: ")]
    assert header and "CPU 50 s per function" in header[0] and "no core dumps" in header[0]
    assert 'name="sandbox"' in junit.read_text() and "CPU 50 s per function" in junit.read_text()


def test_a_kernel_past_the_cpu_limit_is_stopped_and_the_limit_named(library):
    done = run_check(library, "--functions", "spin", "--examples", "1", "--limit-cpu", "1",
                     "--timeout", "60", "--json", "-", timeout=200)
    (function,) = json.loads(done.stdout)["functions"]
    messages = " ".join(f["message"] for f in function["findings"])
    assert "SIGXCPU" in messages and "--limit-cpu" in messages, function


def test_sizes_parse_and_print():
    assert sandbox.parse_size("16G") == 16 << 30 and sandbox.parse_size("512m") == 512 << 20
    assert sandbox.parse_size("1.5GiB") == 3 << 29 and sandbox.parse_size("none") is None
    with pytest.raises(ValueError, match="expected a size"):
        sandbox.parse_size("lots")
    assert sandbox.format_size(24 << 30) == "24 GiB" and sandbox.format_size(3 << 29) == "1.5 GiB"


def test_a_user_without_privileges_gets_its_own_network_namespace_too():
    # Not root: the namespace needs a user namespace of its own, with our ids mapped in it.
    # Run as nobody from a copy of the module (it imports nothing of the project).
    import shutil

    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to become an unprivileged user")
    import tempfile

    folder = tempfile.mkdtemp()  # directly under /tmp: pytest's folders are root's alone
    os.chmod(folder, 0o755)
    shutil.copy(sandbox.__file__, os.path.join(folder, "sandbox_copy.py"))
    code = ("import os, sys; sys.path.insert(0, sys.argv[1]); import sandbox_copy as s; "
            "before = os.readlink('/proc/self/ns/net'); problem = s.isolate_network(); "
            "print(problem, before != os.readlink('/proc/self/ns/net'), os.getuid(), "
            "os.getgid())")
    try:
        done = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                               sys.executable, "-c", code, folder],
                              capture_output=True, text=True, timeout=60)
    finally:
        shutil.rmtree(folder)
    if done.returncode != 0 and "Permission denied" in done.stderr:
        pytest.skip(f"nobody cannot run this interpreter: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    problem, moved, uid, gid = done.stdout.rsplit(maxsplit=3)
    if problem != "None":  # fine only where util-linux's unshare cannot do it either
        probe = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                                "unshare", "--user", "--net", "true"], capture_output=True)
        if probe.returncode != 0:
            pytest.skip(f"unprivileged user namespaces are not allowed here: {problem}")
        raise AssertionError(f"unshare --user --net works as nobody, ours did not: {problem}")
    assert (moved, uid, gid) == ("True", "65534", "65534")
