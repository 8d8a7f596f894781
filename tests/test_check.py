"""tvm-ffi-check names every broken rule on the right function, and nothing on good ones.

The libraries: ``examples/kernels/broken_kernels.c`` (one ``bad_<rule>``
function per rule, plus ``good_*`` ones), the shipped example library, and
``examples/kernels/typed_kernels.cc``, a C++ library compiled against
upstream's headers with ``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` and metadata.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tvm_ffi_ref import rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "kernels")
#: Scales the checker's per-call limits and the tests' time bounds (default 1). The sanitizer
#: job sets it (tools/sanitize.sh): there every call runs several times slower, and a crash's
#: report is symbolized before the child dies, which can outlast a 1-2 s limit under load and
#: turn the crash into a timeout.
TIME_FACTOR = float(os.environ.get("TVM_FFI_TEST_TIME_FACTOR") or 1)

#: The rule each broken function must be reported for (and nothing else).
BROKEN = {
    "bad_status": "status",
    "bad_error_raised": "error-raised",
    "bad_error_content": "error-content",
    "bad_result_type": "result-type",
    "bad_result_schema": "result-schema",
    # the issue's `-> int` that never sets the type index: a None with a payload
    "bad_result_unset": ("result-padding", "result-schema"),
    "bad_crash_small_str": "crash",
    "bad_object_header": "object-header",
    "bad_result_padding": "result-padding",
    "bad_result_owned": "result-owned",
    "bad_result_owned_bytes": "result-owned",
    "bad_small_str_length": "small-str-length",
    "bad_result_live": "result-live",
    "bad_result_reference": "result-reference",
    "bad_result_reference_shared": "result-reference",
    "bad_arg_refcount": "arg-refcount",
    "bad_args_written": "args-written",
    "bad_memory_read": "memory-safety",
    "bad_memory_write": "memory-safety",
    "bad_leak": "leak",
    "bad_leak_result": "leak",
    "bad_determinism": "determinism",
    "bad_thread_safety": "thread-safety",
    "bad_crash": "crash",
    "bad_timeout": "timeout",
    # a typed function without metadata: only its discovered signature reaches the body
    "bad_untyped": "error-content",
    # a global function the library registers when it loads
    "broken.bad_global_status": "status",
}
GOOD = ["good_add", "good_cached", "good_echo", "good_greet", "good_raise", "good_registry",
        "broken.good_global_add",
        # keeps a reference to its argument on every call: a note here, a leak under --leaks
        "bad_leak_kept_arg"]


def _rules(expected):
    return list(expected) if isinstance(expected, tuple) else [expected]


def run_check(*args, timeout=300, env=None):
    """Runs ``python -m tvm_ffi_check`` and returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "tvm_ffi_check", "--no-progress", *args],
                          capture_output=True, text=True, timeout=timeout * TIME_FACTOR,
                          env=dict(os.environ, **(env or {})))


def source(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return f.read()


@pytest.fixture(scope="module")
def broken_library(kernels):
    return kernels.build("broken_kernels", source("broken_kernels.c"), language="c")


@pytest.fixture(scope="module")
def broken_report(broken_library, tmp_path_factory):
    """The checker's JSON report on the broken library, its exit status and wall time."""
    path = tmp_path_factory.mktemp("report") / "broken.json"
    started = time.monotonic()
    done = run_check(broken_library, "--json", str(path), "--timeout", f"{2 * TIME_FACTOR:g}")
    elapsed = time.monotonic() - started
    assert path.exists(), done.stderr
    with open(path) as f:
        return json.load(f), done, elapsed


def test_every_rule_has_a_broken_function():
    assert {r for expected in BROKEN.values() for r in _rules(expected)} == set(rules.RULES)


def test_the_broken_library_fails_with_every_rule_named_on_its_function(broken_report):
    report, done, elapsed = broken_report
    assert done.returncode == 1, done.stderr
    found = {f["name"]: f["rules_broken"] for f in report["functions"]}
    assert set(found) == set(BROKEN) | set(GOOD)
    for name, rule in BROKEN.items():
        assert found[name] == _rules(rule), (name, report["functions"])
    for name in GOOD:
        function = next(f for f in report["functions"] if f["name"] == name)
        assert found[name] == [] and function["status"] == "pass", (name, function)
    assert elapsed < 60 * TIME_FACTOR, f"the broken library took {elapsed:.1f} s"


def test_findings_carry_a_minimal_failing_call(broken_report):
    report, _, _ = broken_report
    by_name = {f["name"]: f for f in report["functions"]}

    def finding(name):
        (only,) = by_name[name]["findings"]
        return only

    # hypothesis shrinks each failure to the boundary of the kernel's bug
    assert finding("bad_crash")["call"] == "bad_crash(1000)"
    assert finding("bad_crash")["shrunk"]
    assert "SIGSEGV" in finding("bad_crash")["message"]
    assert finding("bad_status")["call"] == "bad_status(101)"
    assert finding("bad_error_raised")["call"] == "bad_error_raised(-1)"
    assert finding("bad_arg_refcount")["call"] == "bad_arg_refcount([])"
    # a String object only: the minimal str is more than 7 UTF-8 bytes long
    call = finding("bad_result_reference")["call"]
    assert len(eval(call[len("bad_result_reference("):-1]).encode()) == 8
    assert finding("bad_leak")["api_calls"] == ["TVMFFIStringFromByteArray"]
    assert "8 ffi.String" in finding("bad_leak")["message"]
    assert f"within {2 * TIME_FACTOR:g} s" in finding("bad_timeout")["message"]
    assert finding("bad_thread_safety")["call"].startswith("bad_thread_safety(")
    # a guard page stops an access one past a tensor's end: the argument and offset named
    import platform

    read, write = finding("bad_memory_read")["message"], finding("bad_memory_write")["message"]
    for message, access in ((read, "read"), (write, "write")):
        assert "passed as args[0]" in message and "0 byte(s) past its end" in message
        if platform.machine() == "x86_64":  # elsewhere the access is not told apart
            assert message.startswith(f"out-of-bounds {access} of tensor(")
    # results that differ between serial calls are non-determinism, never a race
    assert "two identical calls one after the other" in finding("bad_determinism")["message"]
    assert "whenever called alone" in finding("bad_thread_safety")["message"]
    # reached only through the signature its TypeError names
    untyped = by_name["bad_untyped"]
    assert untyped["schema"] == "error text"
    assert finding("bad_untyped")["call"] == "bad_untyped(0, 0, 0, 0)"
    assert by_name["broken.bad_global_status"]["kind"] == "global"
    assert by_name["broken.bad_global_status"]["schema"] == "registry"
    for function in report["functions"]:
        for item in function["findings"]:
            assert item["meaning"] == rules.RULES[item["rule"]]
            assert item["message"]


def test_a_kept_argument_is_a_note_and_growth_under_leaks_a_finding(broken_report,
                                                                     broken_library):
    report, _, _ = broken_report
    by_name = {f["name"]: f for f in report["functions"]}
    for name in ("bad_leak_kept_arg", "good_registry"):
        assert any("keeps references to borrowed arguments" in note and "ffi.Array (1 "
                   in note for note in by_name[name]["notes"]), by_name[name]["notes"]
    done = run_check(broken_library, "--json", "-", "--leaks", "--examples", "10",
                     "--functions", "bad_leak_kept_arg,good_registry")
    leaks = {f["name"]: f for f in json.loads(done.stdout)["functions"]}
    assert done.returncode == 1, done.stderr
    (finding,) = leaks["bad_leak_kept_arg"]["findings"]
    assert finding["rule"] == "leak" and "(1 after 1 call, 8 after 8)" in finding["message"]
    assert leaks["good_registry"]["status"] == "pass"  # it replaces what it keeps


def test_results_are_held_to_the_declared_return_type(broken_report):
    report, _, _ = broken_report
    by_name = {f["name"]: f for f in report["functions"]}
    (schema,) = by_name["bad_result_schema"]["findings"]
    assert "says it returns int, but the result is ffi.SmallStr (type index 11)" in \
        schema["message"]
    padding, unset = by_name["bad_result_unset"]["findings"]
    assert "is None (type index 0) but its payload is 0x2a" in padding["message"]
    assert "the result is None (type index 0)" in unset["message"]


def test_a_crash_names_each_arguments_abi_form_and_the_rules_page(broken_report):
    report, _, _ = broken_report
    by_name = {f["name"]: f for f in report["functions"]}
    (finding,) = by_name["bad_crash_small_str"]["findings"]
    assert finding["call"] == "bad_crash_small_str('')"
    # a short str arrives inline, not as an object: the key to this crash
    assert "args[0] ffi.SmallStr (type index 11, inline)" in finding["message"]
    assert finding["forms"] == [[11, "ffi.SmallStr", "inline"]]
    assert finding["link"] == "spec/17-debugging.md#crash"
    with open(os.path.join(ROOT, "spec", "17-debugging.md"), encoding="utf-8") as f:
        headings = {line[4:].strip() for line in f if line.startswith("### ")}
    for function in report["functions"]:
        for item in function["findings"]:
            assert item["link"].split("#")[1] in headings, item["link"]


def test_findings_are_counted_by_root_cause(broken_report):
    report, done, _ = broken_report
    causes = {tuple(f["name"] for f in cause["functions"]): cause
              for cause in report["root_causes"]}
    # one status bug, two functions: one root cause with each function's minimal call
    status = causes[("bad_status", "broken.bad_global_status")]
    assert [f["call"] for f in status["functions"]] == ["bad_status(101)",
                                                        "broken.bad_global_status(-1)"]
    failed = sum(1 for f in report["functions"] if f["findings"])
    assert report["summary"]["root_causes"] == len(report["root_causes"]) < failed + 1
    assert f"{len(report['root_causes'])} root cause(s) in {failed} function(s)" in done.stdout


def test_the_table_has_a_row_per_function_and_each_finding(broken_library):
    done = run_check(broken_library, "--timeout", f"{TIME_FACTOR:g}", "--examples", "20",
                     "--functions", "good_add,bad_status,bad_crash")
    assert done.returncode == 1, done.stderr
    table = done.stdout.split("\nFindings: ")[0]
    rows = {line.split()[0]: line for line in table.splitlines()
            if line.startswith(("good_", "bad_"))}
    assert rows["good_add"].endswith("pass")
    # what was tried, how many calls reached the body, how many of those raised
    assert "tried  accepted  raised  result" in table
    assert rows["good_add"].split()[-4:-1] == ["20", "20", "0"]
    assert rows["bad_status"].endswith("FAIL status")
    assert rows["bad_crash"].endswith("FAIL crash")
    assert "minimal failing call: bad_crash(1000)" in done.stdout
    assert "minimal failing call: bad_status(101)" in done.stdout
    assert "3 function(s) checked" in done.stdout


def test_the_shipped_example_library_passes(tmp_path):
    done = run_check(env={"XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "libtvm_ffi_example_kernels" in done.stdout
    assert "0 failed" in done.stdout


def test_the_example_functions_export_type_schemas(tmp_path):
    done = run_check("--json", "-", "--examples", "5", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    signatures = {f["name"]: f["signature"] for f in report["functions"]}
    assert signatures["add_int"] == "(int, int) -> int"
    assert signatures["sum_float32"] == "(DLTensor*) -> float"
    assert all(f["schema"] == "metadata" for f in report["functions"])


@pytest.fixture(scope="module")
def typed_library(kernels):
    return kernels.build("typed_kernels", source("typed_kernels.cc"), language="c++",
                         extra_flags=("-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1",))


def test_a_cpp_library_built_on_upstream_headers_passes(typed_library):
    done = run_check(typed_library, "--json", "-")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    functions = {f["name"]: f for f in report["functions"]}
    assert len(functions) == 16
    for name, function in functions.items():
        assert function["schema"] == "metadata", name
        assert function["passed"], function
    # the generated calls are real calls, not a stream of refused arguments
    assert functions["lookup"]["signature"] == \
        "(ffi.Map[ffi.String, float], ffi.String) -> Optional[float]"
    for name in ("add", "concat", "lookup", "reversed", "sum_array", "describe", "numel"):
        assert functions[name]["outcomes"].get("returned", 0) >= 20, functions[name]
    assert functions["always_throws"]["outcomes"] == {"raised ValueError": 50}


def test_the_debugging_page_shows_what_the_checker_reports(broken_report):
    """spec/17-debugging.md's finding blocks are what this run of the checker printed."""
    import doctest
    import platform

    from tvm_ffi_explain import spec_debugging

    report, _, _ = broken_report
    with open(os.path.join(ROOT, "spec", "17-debugging.md"), encoding="utf-8") as f:
        shown = spec_debugging.page_findings(f.read())
    assert set(shown) == {spec_debugging.kernel_name(rule) for rule in rules.RULES}
    found = spec_debugging.findings_from_report(report)
    checker = doctest.OutputChecker()
    for name, block in shown.items():
        if name == "bad_memory_read" and platform.machine() != "x86_64":
            continue  # elsewhere the access is not told apart (see above)
        got = "\n".join(found[name]) + "\n"
        # the page shows a run with --timeout 2, which TIME_FACTOR scaled here
        block = block.replace("within 2 s", f"within {2 * TIME_FACTOR:g} s")
        assert checker.check_output(block, got, doctest.ELLIPSIS), f"{name}:\n{block}---\n{got}"
