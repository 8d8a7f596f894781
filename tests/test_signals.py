"""Signals during a kernel call: Ctrl-C raises KeyboardInterrupt, and a program's own handler
that raises fails the call with its exception, under every front end."""

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST
from subprocess_utils import run_python

SPIN_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <tvm/ffi/extra/c_env_api.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
/* Spins until the environment reports a pending signal, as a long kernel should. The
   process sends itself SIGINT once the kernel is spinning: a timer started by the caller
   could fire before the call began on a loaded machine, and test nothing. A kernel that
   stops on it fails with EnvErrorAlreadySet; one that does not returns the iteration. */
static int spin(int stop, TVMFFIAny* result) {
  struct timespec pause = {0, 1000000};
  int i;
  for (i = 0; i < 20000; ++i) {
    if (TVMFFIEnvCheckSignals() != 0) {
      if (!stop) break;
      TVMFFIErrorSetRaisedFromCStr("EnvErrorAlreadySet", "a signal is pending in the caller");
      return -1;
    }
    if (i == 2) kill(getpid(), SIGINT); /* Ctrl-C, while the kernel runs */
    nanosleep(&pause, 0);
  }
  result->type_index = kTVMFFIInt;
  result->v_int64 = i;
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_spin(void* self, const TVMFFIAny* args, int32_t n,
                                      TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  return spin(1, result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_spin_then_return(void* self, const TVMFFIAny* args,
                                                  int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  return spin(0, result);
}
"""

IMPORTS = {"upstream": "import tvm_ffi as api", "ref": "import tvm_ffi_ref as api",
           "fast": "import tvm_ffi_fast as api"}


@pytest.mark.parametrize("frontend", ["upstream"] + [f for f in FRONTENDS_UNDER_TEST
                                                     if f in IMPORTS])
def test_ctrl_c_interrupts_a_kernel_that_checks_signals(kernels, frontend):
    path = kernels.build("spin", SPIN_C, language="c")
    out = run_python(f"""
    import signal, time
    # Python's own Ctrl-C handler, whatever this process inherited: a process started in
    # the background by a shell without job control inherits SIGINT ignored, and Python
    # then installs no handler (the test would see the kernel finish)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    {IMPORTS[frontend]}
    spin = api.load_module({path!r}).spin
    start = time.time()
    try:
        spin()
        print("finished")
    except KeyboardInterrupt:
        print("KeyboardInterrupt", time.time() - start < 10)
    print(spin.__class__.__name__ and "alive")
    """)
    assert out.splitlines() == ["KeyboardInterrupt True", "alive"]


@pytest.mark.parametrize("frontend", ["upstream"] + [f for f in FRONTENDS_UNDER_TEST
                                                     if f in IMPORTS])
def test_ctrl_c_supersedes_calls_whose_arguments_made_something(kernels, frontend):
    """The interrupt wins over a call whose arguments the front end made or imported.

    Such a call's scope (an Array made from a list, a String, an imported NumPy array or torch
    tensor, the torch stream and allocator set around the call) is closed with the
    KeyboardInterrupt pending: what it made is dropped and the interrupt raised, not the
    kernel's error. The same array twice: first met through the general encoding, then
    through the remembered tensor type. In the fast front end the interrupt also wins over the
    result of a kernel that saw it and returned anyway (upstream returns that result with the
    exception set, a SystemError; the reference's ctypes call returns the result).
    """
    path = kernels.build("spin", SPIN_C, language="c")
    out = run_python(f"""
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy, torch
    {IMPORTS[frontend]}
    module = api.load_module({path!r})
    array, tensor = numpy.zeros(3, "float32"), torch.zeros(3)
    # called as written (not kernel(*args): CPython 3.11 does not check that path's result
    # against a pending exception)
    calls = [lambda k: k([1, 2], "a longer string than seven bytes"), lambda k: k(array),
             lambda k: k(array, 1.5), lambda k: k(tensor), lambda k: k(tensor, 2)]
    kernels = [module.spin] + ([module.spin_then_return] if {frontend == "fast"} else [])
    for kernel in kernels:
        for call in calls:
            try:
                print("returned", call(kernel))
            except KeyboardInterrupt:
                print("KeyboardInterrupt")
    print("alive")
    """)
    assert out.splitlines() == ["KeyboardInterrupt"] * (10 if frontend == "fast" else 5) + ["alive"]

def test_interrupts_inside_runtime_callbacks_are_deferred_not_lost():
    """Where Ctrl-C lands decides whether it is raised now or kept for the caller."""
    import sys

    from tvm_ffi_ref.runtime import interrupts

    def user_code():
        return sys._getframe()

    @interrupts.callback_entry
    def runtime_callback(then=None):
        return then() if then else sys._getframe()

    @interrupts.user_callback_entry
    def front_end_callback(then=None):
        return then() if then else sys._getframe()

    must_defer = interrupts._must_defer
    assert not must_defer(user_code())                       # plain Python: raise now
    assert must_defer(runtime_callback())                    # inside a runtime callback
    assert must_defer(runtime_callback(user_code))           # below it, whatever runs
    assert must_defer(front_end_callback())                  # at a user callback's entry
    assert not must_defer(front_end_callback(user_code))     # in user code: its try converts
    assert must_defer(front_end_callback(lambda: runtime_callback()))


RAISE_THEN_CHECK_C = r"""
#include <tvm/ffi/extra/c_env_api.h>
#include <signal.h>
/* Raises SIGUSR1 to its own process, then checks for signals at once: the handler's first
   chance to run under a runtime written in Python is the entry of its check. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_raise_then_check(void* self, const TVMFFIAny* args, int32_t n,
                                                  TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  raise(SIGUSR1);
  if (TVMFFIEnvCheckSignals() != 0) {
    TVMFFIErrorSetRaisedFromCStr("EnvErrorAlreadySet", "a signal is pending in the caller");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->v_int64 = 0;
  return 0;
}
"""


HANDLER_PROGRAM = """
import signal, sys
{imports}
# an exception lost in a C callback would be reported here (ctypes' "Exception ignored")
sys.unraisablehook = lambda unraisable: print("lost", unraisable.exc_type.__name__)
def handler(signo, frame):
    raise ValueError("from the handler")
signal.signal(signal.SIGUSR1, handler)
lib = api.load_module({path!r})
for _ in range(2):
    try:
        print("returned", lib.{call})
    except Exception as error:
        print(type(error).__name__, error)
"""


def _under_a_raising_handler(imports: str, path: str, call: str) -> list:
    """The lines two calls ``lib.<call>`` print, in a fresh interpreter whose SIGUSR1 handler
    raises ValueError: each call's result or exception, and any exception lost on the way."""
    return run_python(HANDLER_PROGRAM.format(imports=imports, path=path, call=call)).splitlines()


@pytest.mark.parametrize("frontend", ["upstream"] + [f for f in FRONTENDS_UNDER_TEST
                                                     if f in IMPORTS])
def test_a_raising_signal_handler_fails_the_kernel_call_with_its_exception(kernels, frontend):
    path = kernels.build("raise_then_check", RAISE_THEN_CHECK_C, language="c")
    assert _under_a_raising_handler(IMPORTS[frontend], path, "raise_then_check()") == [
        "ValueError from the handler"] * 2


RAISE_THEN_CALL_C = r"""
#include <tvm/ffi/c_api.h>
#include <signal.h>
/* Raises SIGUSR1 to its own process, then calls its Python callable: the handler's first
   chance to run is the entry of the callback. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_raise_then_call(void* self, const TVMFFIAny* args, int32_t n,
                                                 TVMFFIAny* result) {
  TVMFFIAny none;
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "raise_then_call(f: Function)");
    return -1;
  }
  raise(SIGUSR1);
  none.type_index = kTVMFFINone;
  none.zero_padding = 0;
  none.v_int64 = 0;
  return TVMFFIFunctionCall(args[0].v_obj, &none, 1, result);
}
"""

#: ``IMPORTS``, with the fast package on the core PyPy runs.
CALLBACK_IMPORTS = dict(IMPORTS, **{
    "fast-cffi": "import os\nos.environ['TVM_FFI_FAST_CORE'] = 'cffi'\nimport tvm_ffi_fast as api"})


@pytest.mark.parametrize("frontend", ["upstream", "fast-cffi"] + [
    f for f in FRONTENDS_UNDER_TEST if f in IMPORTS])
def test_a_raising_signal_handler_fails_the_python_callback_it_lands_in(kernels, frontend):
    path = kernels.build("raise_then_call", RAISE_THEN_CALL_C, language="c")
    assert _under_a_raising_handler(CALLBACK_IMPORTS[frontend], path,
                                    "raise_then_call(lambda x: x)") == [
        "ValueError from the handler"] * 2


def test_entry_guard_hands_what_escapes_a_callback_to_its_recovery():
    from tvm_ffi_common import pycapi

    def callback(a, b=0):
        if a < 0:
            raise KeyError(a)
        return a + b

    escaped = []

    def recover(error):
        escaped.append(error)
        return "recovered"

    guarded = pycapi.entry_guard(callback, recover)
    assert guarded(1, b=2) == 3 and escaped == []
    assert guarded(-1) == "recovered"
    [error] = escaped
    assert type(error) is KeyError and error.args == (-1,)
    assert error.__traceback__ is not None  # where it was raised, for a report
    with pytest.raises(TypeError, match="two callables"):
        pycapi.entry_guard(callback, None)
    broken = pycapi.entry_guard(callback, lambda error: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # a failing recovery is the caller's to see
        broken(-1)
