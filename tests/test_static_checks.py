"""Lint, import order and types over the six packages: ruff and mypy, clean.

Their configurations are in pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``),
which say what each checks and at which strictness; both are pinned in the
``[test]`` extra. Each runs as ``python -m`` of this interpreter, from the
repository's root, the way a developer runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise")
    assert done.returncode == 0, (
        "ruff check: fix these (`ruff check --fix` sorts imports):\n" + done.stdout + done.stderr)


def test_mypy_finds_nothing():
    done = _run("mypy")  # its cache (.mypy_cache, ignored by git) makes a re-run quick
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "no issues found" in done.stdout, done.stdout
