"""``dataclass_transform`` on every supported Python (``typing`` has it from 3.11)."""

from __future__ import annotations

import typing
from typing import Any, Callable


def dataclass_transform(*, eq_default: bool = True, order_default: bool = False,
                        kw_only_default: bool = False, frozen_default: bool = False,
                        field_specifiers: tuple = (), **kwargs: Any) -> Callable:
    """Marks a decorator as creating dataclass-like classes (PEP 681), for type checkers.

    The decorated function gets ``__dataclass_transform__``, the dict of these options.
    """
    native = getattr(typing, "dataclass_transform", None)
    if native is not None:
        if frozen_default:  # only Python 3.12+ knows the option
            kwargs["frozen_default"] = frozen_default
        return native(eq_default=eq_default, order_default=order_default,
                      kw_only_default=kw_only_default, field_specifiers=field_specifiers,
                      **kwargs)

    def decorate(function: Callable) -> Callable:
        function.__dataclass_transform__ = {
            "eq_default": eq_default, "order_default": order_default,
            "kw_only_default": kw_only_default, "frozen_default": frozen_default,
            "field_specifiers": field_specifiers, "kwargs": kwargs}
        return function

    return decorate
