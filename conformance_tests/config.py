"""What the conformance suite compares, and how hard it looks.

``FRONTENDS`` is the one place that lists the front ends held to upstream.
A listed front end that cannot be imported makes every test fail (never skip).

Example budgets: each property names its CI budget (``examples=``); the
``--thorough`` pytest option multiplies every budget by ``THOROUGH_FACTOR``.
"""

from __future__ import annotations

from typing import List

#: Front ends compared with upstream, bit for bit.
FRONTENDS: List[str] = ["ref", "fast"]

#: The oracle, always run (in its own worker processes).
ORACLE = "upstream"

#: How many times more examples ``--thorough`` runs.
THOROUGH_FACTOR = 50

#: Set by ``conftest.pytest_configure`` from the command line.
THOROUGH = False
