"""Scratch copies of the project: one per mutant, never the working tree itself.

:func:`make_copy` copies the project (sources and the built libraries the
editable install left in place: ``tvm_ffi_common/lib``, ``tvm_ffi_fast/_core*``)
into a temporary directory; :func:`apply` plants one mutant there (its
pattern must match exactly once, so a mutant that no longer fits the code
fails loudly instead of testing nothing); :func:`prepare` does both and, for
a C mutant, relinks the copy's ``tvm_ffi_fast._core`` (:mod:`.cbuild`).

A copy is run with ``PYTHONPATH`` set to it: its packages then shadow the
editable install (whose finder comes after the path entries), and the
conformance suite's guard checks that every front end was loaded from it.
"""

from __future__ import annotations

import os
import re
import shutil

from . import cbuild
from .catalog import Mutant

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: Not copied: history, build trees, caches, and what the tests write.
_IGNORED = shutil.ignore_patterns(".git", "build", "dist", "__pycache__", "*.egg-info",
                                  ".hypothesis", ".pytest_cache", "*.o", "*.pyc")


def make_copy(destination: str) -> str:
    """A copy of the project at ``destination`` (which must not exist yet)."""
    shutil.copytree(ROOT, destination, ignore=_IGNORED, symlinks=True)
    return destination


class MutantDoesNotApply(RuntimeError):
    """The mutant's pattern is not found exactly once in its file (the code moved on)."""


def apply(root: str, mutant: Mutant) -> None:
    """Rewrites the one place ``mutant`` names inside the copy at ``root``."""
    path = os.path.join(root, mutant.path)
    with open(path) as f:
        source = f.read()
    found = len(re.findall(mutant.pattern, source, flags=re.M))
    if found != 1:
        raise MutantDoesNotApply(f"{mutant.name}: {mutant.pattern!r} matches {found} times "
                                 f"in {mutant.path}")
    mutated = re.sub(mutant.pattern, lambda _: mutant.replacement, source, flags=re.M)
    with open(path, "w") as f:
        f.write(mutated)


def prepare(destination: str, mutant: Mutant, object_cache: str) -> str:
    """A scratch copy with ``mutant`` planted and, for C, the extension rebuilt."""
    make_copy(destination)
    apply(destination, mutant)
    if mutant.needs_c_build:
        cbuild.build_core(destination, object_cache)
    return destination
