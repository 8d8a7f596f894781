"""Ctrl-C during a long kernel call raises KeyboardInterrupt, under every front end."""

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
