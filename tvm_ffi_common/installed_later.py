"""Stand-ins for functions a higher module installs into a lower one when it loads.

The shared API is layered: a module imports only modules below it, at its top,
never one above it (not even inside a function; ``tests/test_import_layers.py``
checks it). Where a lower module must call something a higher one defines, the
lower module names a slot holding :func:`installed_later`'s stand-in, and the
higher module assigns its function to that slot at its import. The stand-in
only runs if the slot is called before that, which is a bug in the import
order: it says which module should have filled it.
"""

from __future__ import annotations

from typing import Any, Callable


def installed_later(name: str, by: str) -> Callable[..., Any]:
    """A function raising ``RuntimeError`` that names the slot and the module that fills it."""

    def not_installed(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} is installed by {by} when that module loads, "
                           "and it has not loaded yet")

    not_installed.__qualname__ = not_installed.__name__ = f"{name} (not installed yet)"
    return not_installed
