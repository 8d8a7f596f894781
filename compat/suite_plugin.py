"""A pytest plugin the suite runner loads into every run of upstream's tests.

It writes one JSON line per event to the file named by ``SUITE_PROGRESS``,
flushed at once, so that the runner knows which test was running when a
process died: ``{"start": nodeid}`` before a test, ``{"nodeid", "when",
"outcome", "message"}`` after each phase, ``{"collect_error": ...}`` for a
module that failed to import. With ``SUITE_TEST_TIMEOUT`` set, a test still
running after that many seconds ends the process (faulthandler dumps the
stacks and exits), which the runner records as a timeout.
"""

from __future__ import annotations

import faulthandler
import json
import os

import pytest

_PROGRESS = os.environ.get("SUITE_PROGRESS")
_TIMEOUT = float(os.environ.get("SUITE_TEST_TIMEOUT", "0") or 0)
_stream = open(_PROGRESS, "a", buffering=1) if _PROGRESS else None  # noqa: SIM115


def _write(record) -> None:
    if _stream is not None:
        _stream.write(json.dumps(record) + "\n")
        _stream.flush()
        os.fsync(_stream.fileno())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    _write({"start": nodeid})
    if _TIMEOUT > 0:
        faulthandler.dump_traceback_later(_TIMEOUT, exit=True)


def pytest_runtest_logfinish(nodeid, location):
    if _TIMEOUT > 0:
        faulthandler.cancel_dump_traceback_later()


def pytest_runtest_logreport(report):
    message = ""
    if report.failed:
        message = report.longreprtext.strip().splitlines()[-1][:500] if report.longreprtext else ""
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    _write({"nodeid": report.nodeid, "when": report.when, "outcome": outcome,
            "message": message})


def pytest_collectreport(report):
    if report.failed:
        text = report.longreprtext.strip().splitlines()
        _write({"collect_error": report.nodeid, "message": text[-1][:500] if text else ""})
