"""Conformance tests: hypothesis properties proving ref == fast == upstream (see README.md).

Run ``python -m pytest conformance_tests`` (CI profile, about a minute on two
cores) or ``python -m pytest conformance_tests --thorough`` (50 times the
examples). The front ends under test are listed in ``config.FRONTENDS``.
"""
