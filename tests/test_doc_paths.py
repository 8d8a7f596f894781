"""Every path a document or comment writes in backticks names a file or folder that exists.

Docs (``docs/``, ``spec/``'s prose, every ``README.md``) and source comments
cite files of this tree as `` `tvm_ffi_fast/src/maps.c` `` or, inside a folder, by
a shorter tail (`` `frontend/rules.c` ``, `` `fields.c` ``). A rename leaves such
a citation pointing nowhere; this test finds it. A path counts as ours when it
starts with one of the tree's top-level names: it must exist from the root (or,
for the build's outputs, after ``pip install -e .``). A shorter name of a C or
Python file must be the tail of some file of the tree, of upstream's installed
package, or a path of upstream's source tree (``src/ffi/...``), which documents
cite as facts. Generated spec tables are checked by ``test_spec_tables.py``.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
from importlib import metadata

import pytest

from upstream_headers import DISTRIBUTION

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: Written in backticks: `<dir>/<file>.c` (Markdown) or ``<dir>/<file>.c`` (reStructuredText).
TICKED = re.compile(r"``?([A-Za-z0-9_.][A-Za-z0-9_./-]*)``?")
#: Written plainly (C comments have no backticks): a file path under a folder of the tree.
PLAIN = re.compile(r"(?<![\w./-])([A-Za-z_][\w.-]*/[\w./-]*\.(?:py|pyi|c|h|cc|md|sh))\b(?![\w(/])")
SUFFIXES = (".py", ".pyi", ".c", ".h", ".cc", ".md", ".sh", ".toml", ".cdef", ".json")
#: Files of the tree the test reads: documents, and sources for their comments.
DOC_SUFFIXES = (".md",)
SOURCE_SUFFIXES = (".py", ".c", ".h", ".cc", ".sh")
#: Names that look like paths of the tree and are not: each with what it is.
NOT_OURS = {
    "cuda_fp16.h": "CUDA's half-precision header, included by a user's CUDA source",
    "Cargo.toml": "a Rust crate's manifest, which the stub generator looks for",
    "a/b/": "the folder form of a module prefix, in an example",
    "first_kernel/_built_with.py": "written when spec/15's example package is built",
    ".tvm_ffi_build.json": "the record a cpp build writes into its build folder",
    "tvm_ffi_common/include/tvm/ffi/c_api.h": "a path inside the wheel (headers ship there)",
    "tvm_ffi_common/include/tvm_ffi_abi/export.h": "a path inside the wheel (headers ship there)",
    "tvm_ffi_common/src/dispatch.c": "a path inside the wheel (libtvm_ffi.so's sources ship there)",
}
#: Prefixes of what a build or a tool writes: these exist only after it ran.
GENERATED = ("build/",)


def _tracked():
    # (under tools/sanitize.sh ROOT is a copy of the tree, which git is asked about)
    tree = os.environ.get("SANITIZE_TREE") or ROOT
    out = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout (a source distribution): the tree's file list is git's")
    return [line for line in out.stdout.splitlines() if (ROOT / line).exists()]


def _top_level(tracked):
    return {path.split("/", 1)[0] for path in tracked} - {"README.md"}


def _upstream_files():
    try:
        entries = metadata.distribution(DISTRIBUTION).files or ()
        return {str(entry).replace("\\", "/") for entry in entries}
    except metadata.PackageNotFoundError:
        return set()


def _candidates(text, top):
    plain = (m.group(1) for m in PLAIN.finditer(text))
    for token in [m.group(1).rstrip(".") for m in TICKED.finditer(text)] + [
            t for t in plain if t.split("/", 1)[0] in top]:
        if any(ch in token for ch in "*<>{}") or token in NOT_OURS or token.startswith(GENERATED):
            continue  # a pattern, a name of something else, or a build's output
        if token.startswith(".") and "/" not in token:
            continue  # an extension (`.c`) or a hidden file a tool writes
        if token.endswith(SUFFIXES) or (token.endswith("/") and "/" in token[:-1]):
            yield token


def _checked_files(tracked):
    for path in tracked:
        if path.startswith(("compat/", "benchmarks/results")):
            continue  # compat/ quotes upstream's suite and libraries
        if path.endswith(DOC_SUFFIXES) or path.endswith(SOURCE_SUFFIXES):
            yield path


def test_paths_in_docs_and_comments_exist():
    tracked = _tracked()
    top = _top_level(tracked)
    tails = set()
    for path in tracked:
        parts = path.split("/")
        tails.update("/".join(parts[i:]) for i in range(len(parts)))
        tails.update("/".join(parts[i:j]) + "/"
                     for i in range(len(parts)) for j in range(i + 1, len(parts)))
    upstream = _upstream_files()
    upstream_tails = set()
    for path in upstream:
        parts = path.split("/")
        upstream_tails.update("/".join(parts[i:]) for i in range(len(parts)))
    missing = []
    for path in _checked_files(tracked):
        text = (ROOT / path).read_text(errors="replace")
        here = (ROOT / path).parent
        for token in _candidates(text, top):
            first = token.split("/", 1)[0]
            if first in top and "/" in token:
                ok = (ROOT / token).exists()
            else:
                ok = (token in tails or (here / token).exists() or token in upstream_tails
                      or token.startswith(("src/ffi/", "include/tvm/", "tvm/ffi/", "tvm_ffi/")))
            if not ok:
                missing.append(f"{path}: {token}")
    assert not missing, "paths that do not exist:\n" + "\n".join(sorted(set(missing)))


def test_tests_readme_lists_every_test_file():
    listed = set(re.findall(r"`(test_\w+\.py)`", (ROOT / "tests" / "README.md").read_text()))
    on_disk = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert sorted(on_disk - listed) == [], "test files tests/README.md does not list"
