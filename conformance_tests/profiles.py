"""Hypothesis settings profiles of the conformance suite.

Two profiles are registered: ``conformance-ci`` (the default: the whole suite
stays within a few minutes on two cores) and ``conformance-thorough``
(``pytest --thorough``: 50 times the examples). Each property states its own
CI budget with :func:`conformance`; the active profile scales it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings

from . import config

_COMMON = dict(
    deadline=None,  # workers answer over pipes; timing varies with machine load
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
    print_blob=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)

settings.register_profile("conformance-ci", max_examples=100, **_COMMON)
settings.register_profile("conformance-thorough", max_examples=100 * config.THOROUGH_FACTOR,
                          **_COMMON)


def profile_name() -> str:
    return "conformance-thorough" if config.THOROUGH else "conformance-ci"


def conformance(examples: int):
    """Settings for one property: ``examples`` under CI, 50 times that under ``--thorough``."""
    factor = config.THOROUGH_FACTOR if config.THOROUGH else 1
    return settings(settings.get_profile(profile_name()), max_examples=examples * factor)
