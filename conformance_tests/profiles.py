"""Hypothesis settings profiles of the conformance suite.

Two profiles are registered: ``conformance-ci`` (the default: the whole suite
stays within a few minutes on two cores) and ``conformance-thorough``
(``pytest --thorough``: 50 times the examples). Each property states its own
CI budget with :func:`conformance`; the active profile scales it.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

from . import config

#: ``CONFORMANCE_GENERATED_ONLY=1`` keeps only the generate phase: no explicit
#: ``@example`` cases, so a failure must come from generated data, and no
#: shrinking (the mutation test uses it to show quickly that the strategies,
#: not hand-picked cases, catch a broken front end).
_PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
if os.environ.get("CONFORMANCE_GENERATED_ONLY"):
    _PHASES = [Phase.generate]

_COMMON = dict(
    deadline=None,  # workers answer over pipes; timing varies with machine load
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
    print_blob=True,
    phases=_PHASES,
    # The example database replays earlier failures first (keep it for local
    # work); CONFORMANCE_NO_DATABASE=1 turns it off (the mutation test does).
    **({"database": None} if os.environ.get("CONFORMANCE_NO_DATABASE") else {}),
)

settings.register_profile("conformance-ci", max_examples=100, **_COMMON)
settings.register_profile("conformance-thorough", max_examples=100 * config.THOROUGH_FACTOR,
                          **_COMMON)


def profile_name() -> str:
    return "conformance-thorough" if config.THOROUGH else "conformance-ci"


def conformance(examples: int):
    """Settings for one property: ``examples`` under CI (scaled by ``CONFORMANCE_EXAMPLE_SCALE``),
    50 times that under ``--thorough``."""
    factor = config.THOROUGH_FACTOR if config.THOROUGH else config.EXAMPLE_SCALE
    return settings(settings.get_profile(profile_name()),
                    max_examples=max(1, round(examples * factor)))
