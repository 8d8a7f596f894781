"""One callable binding the leading arguments of a function, chosen per interpreter.

``functools.partial`` is compiled on CPython (the cheapest binding there); on PyPy it is
Python code that builds a dict on every call, where the JIT inlines a plain closure. The
Python cores bind their per-field accessors with it.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable


def bind(function: Callable[..., Any], *leading: Any) -> Callable[[Any], Any]:
    """``function`` with ``leading`` bound, taking the one remaining argument."""
    if sys.implementation.name == "cpython":
        return functools.partial(function, *leading)
    return lambda last: function(*leading, last)
