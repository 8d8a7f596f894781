"""The two runtimes side by side: file for file, and global for global.

``tvm_ffi_fast/src/<name>.c`` and ``tvm_ffi_ref/runtime/<name>.py`` hold one concept
each; ``docs/runtimes.md``'s table "The runtimes file by file" pairs them and
lists the files without a twin, each with its reason. These tests hold that
table to the tree (every file of both folders is in it, every file it names
exists, each pair's files name each other near their top), and the two runtimes
to one registration order of their ``ffi.*`` globals.
"""

from __future__ import annotations

import pathlib
import re

from runtime_client import run_all

ROOT = pathlib.Path(__file__).resolve().parents[1]
C_DIR = ROOT / "tvm_ffi_fast" / "src"
PY_DIR = ROOT / "tvm_ffi_ref" / "runtime"
DOC = ROOT / "docs" / "runtimes.md"
#: How many lines from its top a file names its twin in.
TWIN_LINES = 12


def _table_rows():
    """The table's rows: (C files, Python files, note), files as written in backticks."""
    text = DOC.read_text()
    start = text.index("## The runtimes file by file")
    end = text.find("\n## ", start + 1)
    rows = []
    for line in text[start:end if end > 0 else None].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 3 or set(cells[0]) == {"-"}:
            continue
        c_files = re.findall(r"`([^`]+\.[ch])`", cells[0])
        py_files = re.findall(r"`([^`]+\.py)`", cells[1])
        if c_files or py_files:
            rows.append((c_files, py_files, cells[2]))
    return rows


def test_every_runtime_file_is_in_the_table_once():
    rows = _table_rows()
    named_c = [name for c_files, _, _ in rows for name in c_files]
    named_py = [name for _, py_files, _ in rows for name in py_files]
    assert len(named_c) == len(set(named_c)), "a C file is in two rows"
    assert len(named_py) == len(set(named_py)), "a Python file is in two rows"
    on_disk_c = {p.name for p in C_DIR.iterdir() if p.suffix in (".c", ".h")}
    on_disk_py = {p.name for p in PY_DIR.iterdir() if p.suffix == ".py"}
    assert sorted(on_disk_c - set(named_c)) == [], "C files the table does not list"
    assert sorted(on_disk_py - set(named_py)) == [], "Python files the table does not list"
    assert sorted(set(named_c) - on_disk_c) == [], "the table names C files that do not exist"
    assert sorted(set(named_py) - on_disk_py) == [], "the table names modules that do not exist"


def test_a_file_without_a_twin_says_why():
    for c_files, py_files, note in _table_rows():
        if not (c_files and py_files):
            assert len(note) > 20, f"{c_files or py_files}: an unpaired file needs its reason"


def test_paired_files_have_one_name_and_name_their_twin():
    for c_files, py_files, note in _table_rows():
        c_main = [name for name in c_files if name.endswith(".c")]
        if not (c_main and py_files):
            continue
        c_stems = {name[:-2] for name in c_main}
        py_stems = {name[:-3] for name in py_files}
        if "name differs" not in note:
            assert c_stems & py_stems, f"{c_main} and {py_files} pair under different names"
        for c_name in c_main:
            head = "\n".join((C_DIR / c_name).read_text().splitlines()[:TWIN_LINES])
            assert any(f"runtime/{py}" in head for py in py_files), \
                f"{c_name} does not name its twin in its first {TWIN_LINES} lines"
        for py_name in py_files:
            head = "\n".join((PY_DIR / py_name).read_text().splitlines()[:TWIN_LINES])
            assert any(f"src/{c}" in head for c in c_main), \
                f"{py_name} does not name its twin in its first {TWIN_LINES} lines"


ORDER = r"""
functor = call("ffi.FunctionListGlobalNamesFunctor")
for i in range(callf(functor, -1)):
    print("global: %s" % show(callf(functor, i)))
"""


def test_both_runtimes_register_the_same_globals_in_the_same_order():
    outputs = run_all(ORDER, runtimes=["fast", "ref"])
    listed = {runtime: [line[len("global: "):] for line in out.splitlines()
                        if line.startswith("global: ")] for runtime, out in outputs.items()}
    assert len(listed["fast"]) >= 100
    assert listed["ref"] == listed["fast"]
