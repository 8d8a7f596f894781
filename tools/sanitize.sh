#!/usr/bin/env bash
# The sanitizer job: builds libtvm_ffi.so, the fast runtime and its compiled core, the testing
# and example kernel libraries with AddressSanitizer and UndefinedBehaviorSanitizer in a copy of
# the tree (build/sanitize/, the normal build is left alone), runs tests there with every
# process's reports written to log files, and fails on any report whose top frame is in this
# project's code (tools/sanitize_report.py; reports elsewhere are suppressed by name in
# tools/sanitize_suppressions.txt, or fail too).
#
#   tools/sanitize.sh             the whole suite (tests/ and conformance_tests/; the PyPy runs skip)
#   tools/sanitize.sh --ci        the CI subset (SUBSET below; a few minutes on two cores)
#   tools/sanitize.sh PATHS...    those tests (pytest arguments)
#   tools/sanitize.sh --self-test proves the job catches reports in any process it starts: faults
#                                 planted in a child, a forked grandchild and tvm-ffi-check's
#                                 sandbox (tools/sanitize_selftest.*) must fail the report; exit
#                                 status 0 when they all do
#
# Python itself is not instrumented, so libasan is preloaded into every process the tests start
# (the environment carries LD_PRELOAD, the options and PYTHONPATH to the copy into subprocesses).
# SANITIZE_DIR moves the build, SANITIZE_NICE (default 10) sets its priority; SANITIZE_RUN=NAME
# keeps this run's logs, pytest output and summary in build/sanitize/runs/NAME (by default a run
# replaces the last one's). The whole suite takes over an hour on a busy two-core machine; it
# can be run in chunks, one after another, each a list of test files with its own SANITIZE_RUN (and
# TVM_FFI_ABI_WHEEL_TESTS=1 for the chunk with tests/test_wheel.py, as the whole-suite default
# sets it); the chunks cover the suite when every file of tests/ and conformance_tests/ is in
# one, and each chunk's summary.json counts its reports. Stop a chunk with SIGINT to its pytest
# process (not to this script): pytest ends the session and the report is still written.
# The job also sets TVM_FFI_TEST_TIME_FACTOR (default 5; tests that give tvm-ffi-check per-call
# limits of a second or two scale them) and runs NVIDIA's nvcc without the preload (below).
set -uo pipefail
SELF_TEST=0
if [ "${1:-}" = "--self-test" ]; then
    SELF_TEST=1 SANITIZE_RUN=self-test
    shift
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${SANITIZE_DIR:-$ROOT/build/sanitize}"
SRC="$OUT/src"
RUN="$OUT${SANITIZE_RUN:+/runs/$SANITIZE_RUN}"
LOGS="$RUN/logs"
PYTHON="${PYTHON:-python}"
FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g"

# What CI runs (a few minutes on two cores, most of it the build): a C++ kernel growing Lists
# of both runtimes, the dataclass and structural walks over C++-defined types, and a deep chain
# released under both runtimes.
SUBSET=(tests/test_list_buffer_ownership.py tests/test_dataclass_ops.py tests/test_structural.py
        tests/test_deep_structures.py::test_py_class_chain_is_released)

if [ "${1:-}" = "--ci" ]; then
    shift
    set -- "${SUBSET[@]}" "$@"
elif [ $# = 0 ]; then
    set -- tests conformance_tests
    # The whole suite includes the wheel tests (as CI's run does; =0 leaves them out).
    export TVM_FFI_ABI_WHEEL_TESTS="${TVM_FFI_ABI_WHEEL_TESTS:-1}"
fi

# 1. A copy of the tree as it is (tracked and untracked files, build products excluded);
#    copied times let setup.py rebuild only what changed since the last run.
mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -z -co --exclude-standard) |
    (cd "$ROOT" && tar --null -T - -cf -) | (cd "$SRC" && tar -xpf -) || exit 2

# 2. Every C library of the build, instrumented: CC and CXX name compilers that add the flags
#    (one program each, as the tests that compile kernels at test time take them).
mkdir -p "$OUT/bin"
for pair in cc:gcc c++:g++; do
    # (the compiler itself runs without the preloaded runtime: it is not what is tested)
    printf '#!/bin/sh\nunset LD_PRELOAD\nexec %s %s "$@"\n' "${pair#*:}" "$FLAGS" \
        >"$OUT/bin/${pair%%:*}"
    chmod +x "$OUT/bin/${pair%%:*}"
done
export CC="$OUT/bin/cc" CXX="$OUT/bin/c++" LDSHARED="$OUT/bin/cc -shared"
# The preloaded helper that sends libubsan's reports to the log directory (its source says why).
mkdir -p "$OUT/lib"
gcc -shared -fPIC -O2 "$ROOT/tools/sanitize_ubsan_log.c" -o "$OUT/lib/libsanitize_ubsan_log.so" \
    -ldl || { echo "sanitize: could not build the UBSan log helper"; exit 2; }
(cd "$SRC" && nice -n "${SANITIZE_NICE:-10}" "$PYTHON" setup.py -q build_ext --inplace \
    >"$OUT/build.log" 2>&1) || { tail -40 "$OUT/build.log"; echo "sanitize: build failed"; exit 2; }

# NVIDIA's nvcc dies (SIGSEGV in its cicc) with libasan preloaded. The compiler is not this
# project's code, and what it builds is never run here (no GPU; the tests only load it), so not
# sanitizing it is right: CUDA_HOME names a mirror of the toolkit the tests would otherwise use
# (links to its parts; bin/nvcc runs the real one without the preload). No nvcc: no mirror.
CUDA_REAL="$("$PYTHON" - "$SRC/tvm_ffi_api/cpp/toolchain.py" <<'PY'
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("toolchain", sys.argv[1])
toolchain = importlib.util.module_from_spec(spec)
spec.loader.exec_module(toolchain)  # the stdlib only: the build's own toolkit discovery
explicit = any(os.environ.get(var) for var in ("CUDA_HOME", "CUDA_PATH"))
try:  # as tests/test_cuda_kernel.py picks it: named, else NVIDIA's wheel, else the machine's
    home = (None if explicit else toolchain._nvcc_wheel_home()) or toolchain.cuda_home()
except RuntimeError:
    home = None
if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
    print(os.path.realpath(home))
PY
)"
if [ -n "$CUDA_REAL" ]; then
    rm -rf "$OUT/cuda" && mkdir -p "$OUT/cuda/bin"
    for entry in "$CUDA_REAL"/* "$CUDA_REAL"/bin/*; do
        case "$entry" in "$CUDA_REAL/bin" | "$CUDA_REAL/bin/nvcc") continue ;; esac
        ln -s "$entry" "$OUT/cuda/${entry#"$CUDA_REAL"/}"
    done
    printf '#!/bin/sh\nunset LD_PRELOAD\nexec "%s" "$@"\n' "$CUDA_REAL/bin/nvcc" >"$OUT/cuda/bin/nvcc"
    chmod +x "$OUT/cuda/bin/nvcc"
    export CUDA_HOME="$OUT/cuda"
fi

# 3. The tests, in the copy, every process under the sanitizers.
rm -rf "$LOGS" && mkdir -p "$LOGS"
export PYTHONPATH="$SRC${PYTHONPATH:+:$PYTHONPATH}" SANITIZE_SRC="$SRC"
# The copy is no git checkout: tests that ask git which files the tree tracks ask it here.
export SANITIZE_TREE="$ROOT"
# libstdc++ too: Python does not link it, and ASan resolves the C++ runtime it intercepts
# (__cxa_throw) when it starts, so a library that throws and was loaded later would abort it.
# libubsan and the helper after libasan (which must come first): every process that inherits this
# environment, however deep, writes its reports to $LOGS as asan.<pid> and ubsan.<pid>.
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so):$(g++ -print-file-name=libstdc++.so.6):$OUT/lib/libsanitize_ubsan_log.so${LD_PRELOAD:+:$LD_PRELOAD}"
# Leaks: off (CPython keeps much of what it allocates until the process ends). ODR: off (the
# oracle's processes load upstream's libtvm_ffi.so, which defines the same C++ symbols as ours).
# Allocation failures: NULL, as glibc's malloc gives for an impossible size (a MemoryError in a
# normal run), not an abort: the conformance oracle's forked children decode forged small strings
# of absurd length on purpose, which upstream fails on (conformance_tests/test_decoding.py).
export ASAN_OPTIONS="detect_leaks=0:log_path=$LOGS/asan:detect_odr_violation=0:allocator_may_return_null=1:${ASAN_EXTRA:-}"
# UBSAN_OPTIONS' log_path is ASan's own: libasan reads UBSAN_OPTIONS too, and libubsan's start-up
# hands its log_path to libasan's report file; libubsan's own file is SANITIZE_UBSAN_LOG.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=0:log_path=$LOGS/asan"
export SANITIZE_UBSAN_LOG="$LOGS/ubsan"
# Test kernels compiled at test time are instrumented too, and cached apart from the normal ones.
export TVM_FFI_KERNEL_DIR="$OUT/test-kernels" CONFORMANCE_KERNEL_DIR="$OUT/conformance-kernels"
unset CORPUS_UPSTREAM_RESULTS
# Calls run several times slower here, and a crash is symbolized before its process dies: tests
# that give tvm-ffi-check a per-call limit of a second or two scale it, and their time bounds, by
# this factor (tests/test_check.py; unset it is 1).
export TVM_FFI_TEST_TIME_FACTOR="${TVM_FFI_TEST_TIME_FACTOR:-5}"
# PyPy's own runs (test_pypy_support's, with $TVM_FFI_PYPY) are left to the PyPy job: its cffi
# core's C is what CPython runs here too (TVM_FFI_FAST_CORE=cffi), and PyPy under the
# preloaded runtime was never tried.
unset TVM_FFI_PYPY
if [ "$SELF_TEST" = 1 ]; then
    PLANTED="$OUT/self-test/libsanitize_planted.so"
    mkdir -p "$OUT/self-test"
    "$CC" -shared -fPIC -I"$SRC/c_api/include" "$SRC/tools/sanitize_selftest.c" -o "$PLANTED" ||
        exit 2
    (cd "$SRC" && "$PYTHON" "$ROOT/tools/sanitize_selftest.py" "$PLANTED" "$LOGS" 2>&1 |
        tee "$RUN/pytest.log")
else
    (cd "$SRC" && nice -n "${SANITIZE_NICE:-10}" "$PYTHON" -m pytest -p no:cacheprovider "$@" \
        2>&1 | tee "$RUN/pytest.log")
fi
tests_status=${PIPESTATUS[0]}
unset LD_PRELOAD

# 4. The reports, by kind and by where their top frame is.
"$PYTHON" "$ROOT/tools/sanitize_report.py" "$LOGS" --project "$OUT" \
    --suppressions "$ROOT/tools/sanitize_suppressions.txt" --json "$RUN/summary.json" \
    --stray "$RUN/pytest.log"
report_status=$?
echo "sanitize: pytest exit status $tests_status; reports: $([ $report_status = 0 ] && echo clean || echo FAILED)"
if [ "$SELF_TEST" = 1 ]; then
    # Passes only when every planted report was found and counted, and the run failed on them.
    "$PYTHON" - "$RUN/summary.json" "$tests_status" "$report_status" <<'CHECK'
import json, sys
summary = json.load(open(sys.argv[1]))
counts = {}
for kind, func, _, n in summary["reports"]["project"]:
    key = (kind.split(" (")[0], func)
    counts[key] = counts.get(key, 0) + n
need = {"child and checker: heap-use-after-free":
            counts.get(("heap-use-after-free", "__tvm_ffi_planted_use_after_free"), 0) >= 2,
        "grandchild: signed integer overflow":
            sum(n for (kind, func), n in counts.items()
                if "signed integer overflow" in kind and func == "__tvm_ffi_planted_overflow") >= 1,
        "options lost: a stray report": len(summary["stray"]) >= 1,
        "the driver found each in its log": sys.argv[2] == "0",
        "the run failed": sys.argv[3] != "0"}
for what, ok in need.items():
    print(f"sanitize self-test: {what}: {'yes' if ok else 'NO'}")
print("sanitize self-test:", "PASSED" if all(need.values()) else "FAILED")
sys.exit(0 if all(need.values()) else 1)
CHECK
    exit
fi
[ "$report_status" = 0 ] && [ "${SANITIZE_TESTS_MUST_PASS:-0}" = 0 -o "$tests_status" = 0 ]
