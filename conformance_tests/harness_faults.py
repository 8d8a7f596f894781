"""Faults of the suite's own worker code: never a front end's result.

An unknown recipe, a register named outside a call program, an unknown step:
such a fault is the same in every worker, so if it were recorded like a front
end's exception the replies would agree and the case would pass having tested
nothing. A fault is therefore both raised as :class:`HarnessFault` (a
``BaseException``, which the result handlers' ``except Exception`` cannot
record) and noted here: a fault swallowed on its way (a callback's exception
becomes a front end's error) is still noted, and the worker's main loop
replies ``harness-error`` for the whole request (``child.main``), which the
parent raises as ``workers.HarnessError``.
"""

from __future__ import annotations

from typing import List

#: The faults noted since the last :func:`take` (in the worker process).
FAULTS: List[str] = []


class HarnessFault(BaseException):
    """The worker's own code cannot carry out the case as described."""


def fault(message: str) -> HarnessFault:
    """Notes ``message`` and returns the exception to raise."""
    FAULTS.append(message)
    return HarnessFault(message)


def take() -> List[str]:
    """The faults noted since the last call (and forgets them)."""
    noted = list(FAULTS)
    FAULTS.clear()
    return noted
