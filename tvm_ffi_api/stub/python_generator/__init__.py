"""The Python target of ``tvm-ffi-stubgen``: ``.py``/``.pyi`` stubs (:class:`PythonGenerator`)."""

from __future__ import annotations

from .generator import PythonGenerator

__all__ = ["PythonGenerator"]
