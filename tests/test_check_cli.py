"""tvm-ffi-check's command line: options, reports for CI, bad input, a kernel that misbehaves
around the checker (printing, exiting, crashing in its metadata or at load)."""

from __future__ import annotations

import io
import json
import os
import time
import xml.etree.ElementTree as ET

import pytest

from test_check import BROKEN, _rules, run_check, source


@pytest.fixture(scope="module")
def broken_library(kernels):
    return kernels.build("broken_kernels", source("broken_kernels.c"), language="c")


def _json(done):
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


# ----------------------------------------------------------------- options


def test_functions_selects_by_name_and_glob(broken_library):
    done = run_check(broken_library, "--json", "-", "--examples", "5",
                     "--functions", "good_add", "--functions", "good_e*,good_greet")
    assert done.returncode == 0, done.stderr
    report = _json(done)
    assert [f["name"] for f in report["functions"]] == ["good_add", "good_echo", "good_greet"]
    assert "bad_crash" in report["unselected"]


def test_functions_that_match_nothing_is_an_error(broken_library):
    done = run_check(broken_library, "--functions", "no_such_function")
    assert done.returncode == 2
    assert "no_such_function" in done.stderr and "good_add" in done.stderr


def test_examples_sets_how_many_calls_hypothesis_makes(broken_library):
    done = run_check(broken_library, "--json", "-", "--examples", "7",
                     "--functions", "good_add,good_greet")
    report = _json(done)
    assert [f["examples"] for f in report["functions"]] == [7, 7]
    assert report["options"]["examples"] == 7


def test_the_same_seed_makes_the_same_calls(broken_library):
    def findings(seed):
        done = run_check(broken_library, "--json", "-", "--examples", "20", "--seed", seed,
                         "--functions", "bad_crash,bad_status,good_greet")
        return [(f["name"], f["examples"], f["outcomes"],
                 [(x["rule"], x["call"]) for x in f["findings"]])
                for f in _json(done)["functions"]]

    first = findings("7")
    assert first == findings("7")
    assert dict((name, calls) for name, _, _, calls in first)["bad_crash"] == \
        [("crash", "bad_crash(1000)")]


def test_timeout_is_the_limit_of_one_call(broken_library):
    started = time.monotonic()
    done = run_check(broken_library, "--json", "-", "--timeout", "0.5",
                     "--functions", "bad_timeout")
    elapsed = time.monotonic() - started
    (function,) = _json(done)["functions"]
    (finding,) = function["findings"]
    assert finding["rule"] == "timeout"
    assert "within 0.5 s" in finding["message"]
    assert elapsed < 20


def test_junit_xml_has_a_case_per_function_and_a_failure_per_rule(broken_library, tmp_path):
    path = tmp_path / "check.xml"
    done = run_check(broken_library, "--junit-xml", str(path), "--examples", "10",
                     "--functions", "good_add,bad_status,bad_result_padding")
    assert done.returncode == 1
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["good_add"].find("failure") is None
    assert cases["bad_status"].find("failure").get("type") == "status"
    failure = cases["bad_result_padding"].find("failure")
    assert failure.get("type") == "result-padding"
    assert "bad_result_padding(0)" in failure.text


def test_json_to_stdout_moves_the_table_to_stderr(broken_library):
    done = run_check(broken_library, "--json", "-", "--examples", "3", "--functions", "good_add")
    report = _json(done)
    assert report["tool"] == "tvm-ffi-check" and report["passed"] is True
    assert set(report["rules"]) == {r for v in BROKEN.values() for r in _rules(v)}
    assert "good_add" in done.stderr and "1 function(s) checked" in done.stderr


def test_the_shipped_broken_example(tmp_path):
    done = run_check("--example", "broken", "--json", "-", "--timeout", "1", "--examples", "10",
                     "--functions", "bad_status,good_add", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 1, done.stderr
    assert "libtvm_ffi_broken_kernels" in _json(done)["library"]


def test_the_console_script_is_declared():
    import importlib.metadata

    scripts = {e.name: e.value for e in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts.get("tvm-ffi-check") == "tvm_ffi_check:main"


def test_the_progress_bar_draws_on_a_terminal_only():
    from tvm_ffi_check.report import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        bar = ProgressBar(stream)
        bar(0, 2, "add", 0, 10)
        bar(1, 2, "scale", 10, 10)
        bar.close()
    assert "2/2 scale: example 10/10" in terminal.getvalue()
    assert pipe.getvalue() == ""


# --------------------------------------------------------------- bad input


def test_a_missing_path(tmp_path):
    path = str(tmp_path / "libnothing.so")
    done = run_check(path)
    assert done.returncode == 2
    assert path in done.stderr and "no such file" in done.stderr


def test_a_file_that_is_not_a_library(tmp_path):
    path = tmp_path / "notes.so"
    path.write_text("not a shared library\n")
    done = run_check(str(path))
    assert done.returncode == 2
    assert str(path) in done.stderr and "not a loadable shared library" in done.stderr


def test_a_directory(tmp_path):
    done = run_check(str(tmp_path))
    assert done.returncode == 2 and str(tmp_path) in done.stderr


def test_a_library_without_tvm_ffi_symbols(kernels):
    path = kernels.build("plain_c", "int plain_function(void) { return 1; }\n", language="c")
    done = run_check(path)
    assert done.returncode == 2
    assert path in done.stderr and "no TVM FFI symbols" in done.stderr


def test_a_library_that_offers_nothing_once_loaded(kernels):
    # It uses the C API (so it might register functions when it loads) but does not.
    path = kernels.build("offers_nothing", """
    #include <tvm/ffi/c_api.h>
    int helper(TVMFFIAny* out) { return TVMFFIAnyViewToOwnedAny(out, out); }
    """, language="c")
    done = run_check(path)
    assert done.returncode == 2
    assert "has no TVM FFI functions" in done.stderr
    assert "registers no global functions or object types" in done.stderr


def test_a_library_that_cannot_be_loaded(kernels):
    path = kernels.build("unloadable", """
    #include <tvm/ffi/c_api.h>
    extern int a_function_nobody_defines(void);
    TVM_FFI_DLL_EXPORT int __tvm_ffi_f(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
      (void)s, (void)a, (void)n, (void)r;
      return a_function_nobody_defines();
    }
    """, language="c")
    done = run_check(path)
    assert done.returncode == 2
    assert path in done.stderr and "a_function_nobody_defines" in done.stderr


def test_a_library_that_crashes_while_loading(kernels):
    path = kernels.build("crash_on_load", """
    #include <signal.h>
    #include <tvm/ffi/c_api.h>
    __attribute__((constructor)) static void boom(void) { raise(SIGSEGV); }
    TVM_FFI_DLL_EXPORT int __tvm_ffi_f(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
      (void)s, (void)a, (void)n, (void)r;
      return 0;
    }
    """, language="c")
    done = run_check(path)
    assert done.returncode == 2
    assert path in done.stderr and "crashed the process loading it" in done.stderr


# ------------------------------------------- kernels misbehaving around us

ODD_KERNELS = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#define KERNEL(name) TVM_FFI_DLL_EXPORT int __tvm_ffi_##name(void* self, const TVMFFIAny* args, \
                                                             int32_t n, TVMFFIAny* result)
static int str_result(const char* text, TVMFFIAny* result) {
  TVMFFIByteArray bytes;
  bytes.data = text;
  bytes.size = strlen(text);
  return TVMFFIStringFromByteArray(&bytes, result);
}
/* prints to stdout and stderr on every call: must not disturb the checker */
KERNEL(noisy) {
  (void)self, (void)args;
  printf("noisy was called with %d argument(s)\n");
  fprintf(stderr, "noisy says hello on stderr\n");
  fflush(stdout);
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = n;
  return 0;
}
/* its metadata function crashes */
KERNEL(metadata_crashes) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_metadata_crashes(void* s, const TVMFFIAny* a,
                                                            int32_t n, TVMFFIAny* r) {
  (void)s, (void)a, (void)n, (void)r;
  raise(SIGSEGV);
  return 0;
}
/* its metadata is not JSON: the checker sweeps instead */
KERNEL(metadata_garbage) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_metadata_garbage(void* s, const TVMFFIAny* a,
                                                            int32_t n, TVMFFIAny* r) {
  (void)s, (void)a, (void)n;
  return str_result("{not json", r);
}
/* calls exit(): the process ends, a crash for the checker */
KERNEL(exits) {
  (void)self, (void)args, (void)result;
  fprintf(stderr, "exits: goodbye\n");
  if (n >= 1) exit(3);
  return 0;
}
"""


@pytest.fixture(scope="module")
def odd_report(kernels):
    path = kernels.build("odd_kernels", ODD_KERNELS.replace(
        'called with %d argument(s)\\n");', 'called with %d argument(s)\\n", (int)n);'),
        language="c")
    done = run_check(path, "--json", "-", "--examples", "20")
    return {f["name"]: f for f in _json(done)["functions"]}, done


def test_a_kernel_printing_to_stdout_does_not_disturb_the_checker(odd_report):
    functions, _ = odd_report
    assert functions["noisy"]["passed"], functions["noisy"]
    assert functions["noisy"]["outcomes"] == {"returned": 20}


def test_a_crashing_metadata_function_is_a_crash_finding(odd_report):
    functions, done = odd_report
    findings = functions["metadata_crashes"]["findings"]
    assert [f["rule"] for f in findings] == ["crash"]
    assert "__tvm_ffi__metadata_metadata_crashes" in findings[0]["message"]
    assert functions["metadata_crashes"]["schema"] == "sweep"
    assert functions["noisy"]["passed"]  # the others are still checked


def test_metadata_that_is_not_json_is_noted_and_swept(odd_report):
    functions, _ = odd_report
    function = functions["metadata_garbage"]
    assert function["passed"] and function["schema"] == "sweep"
    assert any("not JSON" in note for note in function["notes"])


def test_a_kernel_calling_exit_is_a_crash_with_its_output(odd_report):
    functions, _ = odd_report
    (finding,) = functions["exits"]["findings"]
    assert finding["rule"] == "crash"
    assert "exited with status 3" in finding["message"]
    assert "exits: goodbye" in finding["output"]
    assert finding["call"].startswith("exits(") and finding["call"] != "exits()"


# ------------------------------------------------ registered functions, coverage


def test_no_globals_checks_only_the_exported_functions(broken_library):
    done = run_check(broken_library, "--json", "-", "--examples", "3", "--no-globals",
                     "--functions", "good_*")
    names = [f["name"] for f in _json(done)["functions"]]
    assert names and not any(n.startswith("broken.") for n in names)
    done = run_check(broken_library, "--json", "-", "--examples", "3", "--functions",
                     "broken.*,good_add")
    assert [f["name"] for f in _json(done)["functions"]] == [
        "good_add", "broken.bad_global_status", "broken.good_global_add"]


def test_skip_never_calls_a_function(broken_library):
    done = run_check(broken_library, "--json", "-", "--examples", "3", "--functions",
                     "bad_crash,bad_timeout,good_add", "--skip", "bad_c*", "--skip",
                     "bad_timeout")
    report = _json(done)
    assert done.returncode == 0, done.stderr
    assert [f["name"] for f in report["functions"]] == ["good_add"]
    assert {s["name"] for s in report["skipped"]} == {"bad_crash", "bad_timeout"}
    assert "skipped bad_crash: --skip" in done.stderr


REFUSES_EVERYTHING = r"""
#include <tvm/ffi/c_api.h>
/* Accepts no call the checker can guess: nothing ever reaches past its check. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_picky(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)s, (void)a, (void)n, (void)r;
  TVMFFIErrorSetRaisedFromCStr("TypeError", "picky wants a secret handshake");
  return -1;
}
/* data, not a function: never called */
TVM_FFI_DLL_EXPORT const char __tvm_ffi_version_text[] = "1.0";
"""


def test_a_function_no_call_reaches_is_unverified_and_fails_unless_allowed(kernels):
    path = kernels.build("picky", REFUSES_EVERYTHING, language="c")
    done = run_check(path, "--json", "-", "--examples", "5")
    report = _json(done)
    assert done.returncode == 3  # nothing broken, but nothing checked either
    (function,) = report["functions"]
    assert function["status"] == "unverified" and function["passed"]
    # refused calls earn more rounds (other seeds) before the function is given up
    assert (function["tried"], function["accepted"]) == (function["refused"], 0)
    assert function["tried"] == 15
    assert "secret handshake" in function["unverified"]
    # a C library: the fix is the C export macro, not a define only C++ reads
    assert "TVM_FFI_ABI_EXPORT_SCHEMA" in function["unverified"]
    assert "TVM_FFI_DLL_EXPORT_INCLUDE_METADATA" not in function["unverified"]
    assert report["summary"]["unverified"] == 1 and report["summary"]["reached"] == 0
    assert "1 unverified" in done.stderr and "picky: no call reached its body" in done.stderr
    assert "not checked: 1 function(s) (picky)" in done.stderr
    assert "TVM_FFI_ABI_EXPORT_SCHEMA" in done.stderr.split("not checked:")[1]
    # the data symbol is named, never called
    assert report["skipped"] == [{"name": "__tvm_ffi_version_text",
                                  "why": "a data symbol, not a function"}]
    allowed = run_check(path, "--examples", "5", "--allow-unverified")
    assert allowed.returncode == 0
    assert "unverified" in allowed.stdout and "(allowed)" in allowed.stdout
    strict = run_check(path, "--examples", "5", "--strict")  # the default, spelled out
    assert strict.returncode == 3
    assert "UNVERIFIED" in strict.stdout and "(they fail the run)" in strict.stdout


# ------------------------------------------------ small things that went wrong


def test_an_empty_library_path_is_an_error_not_the_example():
    done = run_check("")
    assert done.returncode == 2 and "empty" in done.stderr
    assert "example_kernels" not in done.stdout + done.stderr


@pytest.mark.parametrize("option", ["--json", "--junit-xml"])
def test_a_report_path_that_cannot_be_written_fails_before_the_run(broken_library, tmp_path,
                                                                   option):
    started = time.monotonic()
    target = tmp_path / "missing-dir" / "report.out"
    done = run_check(broken_library, option, str(target), "--functions", "bad_timeout")
    assert done.returncode == 2, done.stdout + done.stderr
    assert str(target) in done.stderr and "Traceback" not in done.stderr
    assert "function(s) checked" not in done.stdout  # nothing was run
    assert time.monotonic() - started < 20
    done = run_check(broken_library, option, str(tmp_path), "--functions", "good_add")
    assert done.returncode == 2 and "is a directory" in done.stderr


def test_the_library_line_prints_before_the_check_runs(broken_library):
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "tvm_ffi_check", "--no-progress",
                                broken_library, "--functions", "bad_timeout", "--timeout",
                                "3"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    try:
        first = process.stdout.readline()
        still_running = process.poll() is None
    finally:
        process.kill()
        process.wait()
    assert first.startswith("tvm-ffi-check ") and broken_library in first
    assert still_running  # the hang of bad_timeout was still to come


def test_a_missing_cpp_symbol_is_named_readably(kernels):
    path = kernels.build("missing_cpp_symbol", """
    #include <tvm/ffi/c_api.h>
    namespace nowhere { int helper(int); }
    extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_f(void*, const TVMFFIAny*, int32_t n,
                                                   TVMFFIAny*) {
      return nowhere::helper(n);
    }
    """)
    done = run_check(path)
    assert done.returncode == 2
    assert "the missing symbol is nowhere::helper(int) (_ZN7nowhere6helperEi)" in done.stderr


def test_a_c_library_calling_a_cxx_only_header_helper_is_told_so(kernels):
    # The first_kernel.c: TVMFFITensorGetDLTensorPtr is inline C++ in c_api.h, so C
    # code compiled to a call of an undefined symbol; the checker guessed "a C API function
    # newer than the headers".
    path = kernels.build("calls_cxx_helper", """
    #include <tvm/ffi/c_api.h>
    extern DLTensor* TVMFFITensorGetDLTensorPtr(TVMFFIObjectHandle obj);
    TVM_FFI_DLL_EXPORT int __tvm_ffi_f(void* s, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
      (void)s, (void)n, (void)r;
      return (int)TVMFFITensorGetDLTensorPtr(a[0].v_obj)->ndim;
    }
    """, language="c")
    done = run_check(path)
    assert done.returncode == 2
    assert "TVMFFITensorGetDLTensorPtr: an inline C++ helper of tvm/ffi/c_api.h" in done.stderr
    assert "tvm_ffi_abi/object_cells.h" in done.stderr and "newer than" not in done.stderr
