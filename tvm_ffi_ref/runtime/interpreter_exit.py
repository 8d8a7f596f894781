"""At interpreter exit the reference runtime stops calling into Python, for good.

One decision, made in one place: :func:`at_interpreter_exit`, the ``atexit``
hook :func:`slots.install` registers, tells ``libtvm_ffi.so`` that the host is
finalizing (``tvm_ffi_runtime_host_exit``) and then gives the C API back to its
built-ins. Every way C code reaches this runtime's Python passes the one gate
that call shuts (``c_api/src/host_callbacks.c``): the deleter of objects with a
Python ``destroy`` hook, the deleters of DLPack tensors this runtime exported,
the structural traversals' vtable entries, and callback Functions
(``checked_callback.c``).

What arrives after that is **dropped**, never deferred: a release calls
nothing and frees nothing (the object or managed tensor, and what it owns, are
left to the process's end), a callback call fails with an error. It arrives from
the interpreter's last garbage collection, which frees what a framework still
held (a torch tensor imported from one of our exports) in a half torn-down
interpreter, and from C++ static destructors, which run after Python has
finalized (calling a ctypes callback then crashes in ``PyGILState_Ensure``). No
Python code runs again to take a deferred release, so there is nothing to defer
to. ``atexit`` runs before both; hooks registered after this runtime was
installed run before this one and may still use it.
"""

from __future__ import annotations

from tvm_ffi_common.capi import LIB


def at_interpreter_exit() -> None:
    """Shuts the gate (from now on, releases are dropped) and uninstalls the runtime."""
    from . import slots

    LIB.tvm_ffi_runtime_host_exit()
    slots.uninstall()
