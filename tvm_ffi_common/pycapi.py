"""The few Python C API calls our Python code makes: capsules, references handed to C, signals.

They go through a small extension module of our own (``_pycapi.c``), because
that is the one way that works on both interpreters: ``ctypes.pythonapi`` does
not exist on PyPy, and there a ctypes ``py_object`` is no ``PyObject*`` (PyPy's
C API emulation makes a ``PyObject*`` only for an object that crosses an
extension module). It also keeps us off the process-wide
``ctypes.pythonapi`` attributes, which other libraries re-type.

Addresses are Python ints. A capsule keeps a pointer to its name for as long
as it lives, so names given to capsules come from :func:`static_name`.
"""

from __future__ import annotations

import ctypes
from typing import Any, List, Optional

from . import _pycapi

#: ``PyCapsule_New(pointer, name, destructor)``: addresses (``name``: one from
#: :func:`static_name`; ``destructor``: a C function's, or None).
capsule_new = _pycapi.capsule_new
#: ``PyCapsule_IsValid(capsule, name)`` as a bool (``name``: bytes, or None).
capsule_is_valid = _pycapi.capsule_is_valid
#: ``PyCapsule_GetPointer(capsule, name)`` as an address (``ValueError`` for another name).
capsule_get_pointer = _pycapi.capsule_get_pointer
#: ``PyCapsule_SetName(capsule, name)``; ``name`` is an address from :func:`static_name`.
capsule_set_name = _pycapi.capsule_set_name
#: ``PyCapsule_SetDestructor(capsule, destructor)`` (an address, or None for none).
capsule_set_destructor = _pycapi.capsule_set_destructor
#: ``capsule_pointer(capsule, name)``: the pointer of a live capsule named ``name`` (bytes),
#: or None (``PyCapsule_IsValid`` and ``PyCapsule_GetPointer`` in one call: on PyPy each call
#: into the C API emulation costs more than a kernel call).
capsule_pointer = _pycapi.capsule_pointer
#: ``capsule_mark_used(capsule, name)``: a DLPack consumer took the capsule's tensor: no
#: destructor, renamed ``name`` (an address from :func:`static_name`).
capsule_mark_used = _pycapi.capsule_mark_used
#: ``ndarray_managed_tensor(array, null_contiguous_strides)``: the address of the
#: ``DLManagedTensor`` (the caller owns it; it holds the array) that a NumPy array's
#: ``__dlpack__()`` would give, read from the array's header in one call; None where
#: ``__dlpack__`` would describe the array otherwise or refuse it (read-only, another byte
#: order, a dtype DLPack lacks, strides no multiple of the item size, 0-d), and for anything
#: but an exact ``numpy.ndarray``. ``null_contiguous_strides``: this NumPy's convention, from
#: :func:`ndarray_tensor_convention` (which also proves the header is read right).
ndarray_managed_tensor = _pycapi.ndarray_managed_tensor

#: The C destructor of the DLPack capsules we export: a capsule no consumer took (still
#: named ``dltensor_versioned`` or ``dltensor``) calls its managed tensor's deleter.
DLPACK_CAPSULE_DESTRUCTOR: int = _pycapi.DLPACK_CAPSULE_DESTRUCTOR

#: ``new_reference(value)``: the ``PyObject*`` of ``value`` with one more reference, which C
#: now owns (and drops through :data:`RELEASE_REFERENCE`, or :func:`py_decref`).
new_reference = _pycapi.new_reference
#: ``object_at(address)``: the object at a ``PyObject*`` C holds (the reference stays C's).
object_at = _pycapi.object_at
#: ``object_from_new_reference(address)``: the object at a ``PyObject*`` whose reference C
#: hands over to us.
object_from_new_reference = _pycapi.take_reference
#: ``Py_IncRef`` / ``Py_DecRef`` on a ``PyObject*`` address.
py_incref = _pycapi.incref
py_decref = _pycapi.decref
#: A C deleter (``void(void*)``, callable from any thread) dropping a reference
#: :func:`new_reference` gave C: the deleter of opaque objects and keep-alive handles.
RELEASE_REFERENCE: int = _pycapi.RELEASE_REFERENCE

#: A C deleter (``void(void*)``) that only queues its argument, for :func:`take_deferred`: what
#: a runtime written in Python hands out where PyPy may call it from inside a C API object's
#: dealloc, which cannot call back into Python (a NumPy array freeing a DLPack tensor).
DEFERRED_DELETER: int = _pycapi.DEFERRED_DELETER
#: ``take_deferred()``: the pointers :data:`DEFERRED_DELETER` queued (the queue is emptied).
take_deferred = _pycapi.take_deferred

#: ``PyErr_Occurred()``: raises the exception pending in the interpreter, if any.
err_occurred = _pycapi.err_occurred
#: ``PyErr_CheckSignals()``: runs pending signal handlers, raising what one raises.
check_signals = _pycapi.check_signals
#: ``entry_guard(function, on_escape)``: a callable (for a ctypes callback) that calls
#: ``function(*args)`` and returns ``on_escape(exception)`` when an exception escapes it. Python
#: runs pending signal handlers at the first bytecode of a function C calls, before any
#: ``try`` of its own: only this caller, in C, catches what a handler raises there.
entry_guard = _pycapi.entry_guard


def ndarray_tensor_convention(numpy: Any) -> Optional[bool]:
    """The ``null_contiguous_strides`` under which :func:`ndarray_managed_tensor` describes this
    NumPy's arrays (``numpy``: the module) field for field as their ``__dlpack__()`` does,
    checked on a few layouts; None if under neither (then ask ``__dlpack__`` every time).

    NumPy versions differ in what their exports leave NULL: 2.0 the strides of a C-contiguous
    array, 2.4 nothing.
    """
    from .abi import DLManagedTensor

    def fields(managed: int) -> tuple:
        t = DLManagedTensor.from_address(managed).dl_tensor
        return (t.data, t.device.device_type, t.device.device_id, t.ndim, t.byte_offset,
                t.dtype.code, t.dtype.bits, t.dtype.lanes, bool(t.shape), bool(t.strides),
                t.shape[:t.ndim] if t.shape else None, t.strides[:t.ndim] if t.strides else None)

    def agrees(array: Any, null_contiguous_strides: bool) -> bool:
        managed = ndarray_managed_tensor(array, null_contiguous_strides)
        if managed is None:
            return False
        tensor = DLManagedTensor.from_address(managed)
        try:
            capsule = array.__dlpack__()
            return fields(managed) == fields(capsule_pointer(capsule, b"dltensor"))
        finally:
            tensor.deleter(ctypes.pointer(tensor))

    grid = numpy.arange(24, dtype="float32").reshape(2, 3, 4)
    odd = numpy.lib.stride_tricks.as_strided(grid, shape=(1, 3), strides=(28, 4))
    probes = (grid, grid[:, ::2, ::-1], grid[0].T, grid[:1, :1], grid[:0], grid.ravel(), odd,
              numpy.ones(3, dtype="bool"), numpy.ones(3, dtype="complex128"))
    for convention in (False, True):
        if all(agrees(array, convention) for array in probes):
            return convention
    return None


def interpreter_function(name: str) -> int:
    """The address of ``PyErr_CheckSignals``, ``PyGILState_Ensure`` or ``PyGILState_Release``
    (what ``TVMFFIEnvRegisterCAPI`` is given, so that kernels can check for Ctrl-C)."""
    if name not in ("PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release"):
        raise ValueError(f"interpreter_function: no such function {name!r}")
    return getattr(_pycapi, name)


def static_name(text: bytes) -> int:
    """The address of a NUL-terminated copy of ``text`` kept for the life of the process.

    A capsule keeps a pointer to its name and compares it as a C string for as
    long as it lives, so the names we give capsules must never move or die.
    """
    buffer = ctypes.create_string_buffer(text)
    _KEPT_NAMES.append(buffer)
    return ctypes.addressof(buffer)


_KEPT_NAMES: List[Any] = []

