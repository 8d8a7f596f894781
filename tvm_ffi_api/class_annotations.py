"""The annotations a class body declares itself (not those it inherits)."""

from __future__ import annotations

import inspect
import sys
from typing import Any, Dict


def own_annotations(cls: type) -> Dict[str, Any]:
    """A fresh dict of the annotations declared directly on ``cls`` (strings left unevaluated).

    ``cls.__annotations__`` is not that: before Python 3.10 it may be a base
    class's, and from 3.14 it is computed lazily; :func:`inspect.get_annotations`
    is the same on every version that has it.
    """
    if sys.version_info >= (3, 10):
        if sys.version_info >= (3, 14):
            import annotationlib

            return dict(annotationlib.get_annotations(cls, format=annotationlib.Format.FORWARDREF))
        return dict(inspect.get_annotations(cls))
    return dict(cls.__dict__.get("__annotations__", {}))
