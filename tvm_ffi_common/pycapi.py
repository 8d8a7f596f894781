"""The few CPython C API calls our Python code makes, each through a prototype of its own.

``ctypes.pythonapi`` is one object for the whole process: a library that
re-types ``ctypes.pythonapi.PyCapsule_New`` (JAX's FFI helpers set its
``argtypes``) changes it for everybody, and a library that relies on its
default prototype breaks when we re-type it. So nothing here touches the
shared attributes: each function is bound afresh from the interpreter's
symbol (``PYFUNCTYPE(...)((name, ctypes.pythonapi))``), with the prototype it
needs, held by this module. ``PYFUNCTYPE`` keeps the GIL across the call and
raises a Python exception the call left set.

Two flavours of the capsule calls: on a ``py_object`` (a live capsule we hold)
and on a raw ``PyObject*`` address (a capsule being destroyed, which must not
be referenced anew, as a capsule destructor receives it).
"""

from __future__ import annotations

import ctypes
from ctypes import c_char_p, c_int, c_void_p, py_object


def _bind(name: str, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


#: ``int PyCapsule_IsValid(PyObject* capsule, const char* name)``
capsule_is_valid = _bind("PyCapsule_IsValid", c_int, py_object, c_char_p)
#: ``void* PyCapsule_GetPointer(PyObject* capsule, const char* name)``
capsule_get_pointer = _bind("PyCapsule_GetPointer", c_void_p, py_object, c_char_p)
#: ``int PyCapsule_SetName(PyObject* capsule, const char* name)``; the name must outlive it.
capsule_set_name = _bind("PyCapsule_SetName", c_int, py_object, c_void_p)
#: ``int PyCapsule_SetDestructor(PyObject* capsule, PyCapsule_Destructor destructor)``
capsule_set_destructor = _bind("PyCapsule_SetDestructor", c_int, py_object, c_void_p)
#: ``PyObject* PyCapsule_New(void* pointer, const char* name, PyCapsule_Destructor destructor)``
capsule_new = _bind("PyCapsule_New", py_object, c_void_p, c_void_p, c_void_p)

#: The two reads on a raw ``PyObject*`` (a capsule destructor's argument).
raw_capsule_is_valid = _bind("PyCapsule_IsValid", c_int, c_void_p, c_char_p)
raw_capsule_get_pointer = _bind("PyCapsule_GetPointer", c_void_p, c_void_p, c_char_p)

#: ``void Py_IncRef(PyObject*)`` / ``void Py_DecRef(PyObject*)`` on a raw address (a
#: reference handed over through C).
py_incref = _bind("Py_IncRef", None, c_void_p)
py_decref = _bind("Py_DecRef", None, c_void_p)

#: ``PyObject* PyErr_Occurred(void)``: raises the pending exception (PYFUNCTYPE checks).
err_occurred = _bind("PyErr_Occurred", c_void_p)


def static_name(text: bytes) -> int:
    """The address of a NUL-terminated copy of ``text`` kept for the life of the process.

    A capsule keeps a pointer to its name and compares it as a C string for as
    long as it lives, so the names we give capsules must never move or die.
    """
    buffer = ctypes.create_string_buffer(text)
    _KEPT_NAMES.append(buffer)
    return ctypes.addressof(buffer)


_KEPT_NAMES = []


def object_from_new_reference(address: int):
    """The Python object at ``address``, taking over the reference a C function handed us."""
    value = ctypes.cast(address, py_object).value  # a reference of our own
    py_decref(address)  # the one handed over
    return value
