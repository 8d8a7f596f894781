"""The Rust target of ``tvm-ffi-stubgen``: bindings for the ``tvm_ffi`` crate (:class:`RustGenerator`)."""

from __future__ import annotations

from .generator import RustGenerator

__all__ = ["RustGenerator"]
