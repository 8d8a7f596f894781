"""The practical pages of spec/ hold together: the first kernel is all shown, every rule is taught.

* ``spec/15-first-kernel.md`` shows every line of ``examples/kernels/first_kernel.c``
  in order (its excerpts, joined, are the file) and the whole C++ version;
* ``spec/17-debugging.md`` has a generated block and a finding block for every
  rule ``tvm-ffi-check`` knows, each quoting the broken function named for it.

That the pages' examples run, their excerpts are verbatim and their generated
blocks fresh is ``tests/test_spec_pages.py``'s job; that the findings are
what the checker prints is ``tests/test_check.py``'s.
"""

from __future__ import annotations

import os
import re

import pytest

from tvm_ffi_explain import spec_blocks, spec_debugging
from tvm_ffi_ref.rules import RULES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXCERPT = re.compile(r"<!-- excerpt: (?P<path>[\w/.-]+) -->\n```\w*\n(?P<body>.*?)^```$",
                      re.M | re.S)


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def excerpts(page: str, path: str):
    return [m.group("body") for m in _EXCERPT.finditer(page) if m.group("path") == path]


def test_the_first_kernel_page_shows_the_whole_c_file_in_order():
    page = read("spec", "15-first-kernel.md")
    shown = excerpts(page, "examples/kernels/first_kernel.c")
    assert len(shown) >= 6
    assert "\n".join(shown) == read("examples", "kernels", "first_kernel.c")


def test_the_first_kernel_page_shows_the_whole_cpp_file():
    page = read("spec", "15-first-kernel.md")
    assert excerpts(page, "examples/kernels/first_kernel.cc") == [
        read("examples", "kernels", "first_kernel.cc")]


def test_every_rule_has_a_symptom_a_kernel_and_a_page():
    assert set(spec_debugging.SYMPTOMS) == set(RULES)
    source = read(*spec_debugging.BROKEN_SOURCE.split("/"))
    for rule, (symptom, page) in spec_debugging.SYMPTOMS.items():
        assert symptom and os.path.exists(os.path.join(ROOT, "spec", page)), rule
        kernel = spec_debugging.kernel_source(source, spec_debugging.kernel_name(rule))
        assert kernel.endswith("}\n") and f"KERNEL({spec_debugging.kernel_name(rule)})" in kernel


def test_the_debugging_page_has_a_block_and_a_finding_per_rule():
    page = read("spec", "17-debugging.md")
    blocks = spec_blocks.names(page)
    assert [b.split(":", 1)[1] for b in blocks if b.startswith("check-rule:")] == list(RULES)
    assert "check-rules" in blocks
    findings = spec_debugging.page_findings(page)
    for rule in RULES:
        name = spec_debugging.kernel_name(rule)
        assert findings[name].startswith(f"{name}  [{rule}] "), rule
        # the finding follows the rule's own section
        section = page.split(f"\n### {rule}\n", 1)[1].split("\n### ", 1)[0]
        assert f"<!-- finding: {name} -->" in section


def test_a_rule_the_tables_do_not_know_fails_the_generation():
    with pytest.raises(KeyError, match="no entry"):
        spec_debugging.rule_block("no-such-rule", "")
    with pytest.raises(KeyError, match="defines no KERNEL"):
        spec_debugging.kernel_source("KERNEL(other) {\n}\n", "bad_status")
    with pytest.raises(KeyError, match="no generated block"):
        spec_blocks.refresh("<!-- generated: nothing -->\n<!-- /generated -->")


def test_masked_hides_addresses_only():
    assert spec_debugging.masked("ffi.String at 0x55b9c5d84f10 (strong 2)") == \
        "ffi.String at ... (strong 2)"
    assert spec_debugging.masked("status 0x7") == "status 0x7"


def test_every_page_names_the_upstream_concept_it_teaches():
    for name in sorted(os.listdir(os.path.join(ROOT, "spec"))):
        if name.endswith(".md") and name[:2].isdigit():
            assert "**Upstream's names:**" in read("spec", name), name


def test_the_finding_blocks_hold_nothing_that_changes_between_runs():
    findings = spec_debugging.page_findings(read("spec", "17-debugging.md"))
    for name, block in findings.items():
        assert spec_debugging.masked(block) == block, name
    assert spec_debugging.masked("returned 10, then returned 11") == \
        "returned ..., then returned ..."


_NUMBERS = {word: n for n, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


def test_the_modules_page_counts_the_example_librarys_functions_right():
    # Page 11 said "six functions and three C API functions" above a listing of 7 and 4.
    from tvm_ffi_explain.demo import example_library_path
    from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

    page = read("spec", "11-modules.md")
    said = re.search(r"exports (\w+) functions and uses (\w+) C API\s+functions", page)
    assert said, "page 11 no longer says how many functions the example exports"
    source = read("examples", "kernels", "example_kernels.c")
    defined = set(re.findall(r"\bint __tvm_ffi_([a-z]\w*)\s*\(", source))
    called = set(re.findall(r"\b(TVMFFI\w+)\s*\(", source))
    symbols = read_dynamic_symbols(example_library_path())
    imported = {n for n in symbols.undefined if n.startswith("TVMFFI")}
    assert set(symbols.tvm_ffi_functions()) == defined
    assert called <= imported
    assert (_NUMBERS[said.group(1)], _NUMBERS[said.group(2)]) == (len(defined), len(imported))


def _before_you_start(page: str) -> str:
    return page.split("\n## Before you start\n", 1)[1].split("\n## ", 1)[0]


def test_the_first_kernel_page_says_what_to_install_and_where_to_run():
    import subprocess
    import sys

    page = read("spec", "15-first-kernel.md")
    box = _before_you_start(page)
    assert "from the clone's root" in box
    install = re.search(r"```sh\n(.*?)\n```", box, re.S).group(1)
    assert install in read("README.md"), "the page's install is not the README's"
    # Every module the page imports is the standard library's, this project's, or one the
    # box names (NumPy, torch, upstream's tvm_ffi as apache-tvm-ffi).
    named = {"numpy": "NumPy", "torch": "`torch`", "tvm_ffi": "`apache-tvm-ffi`"}
    ours = {"tvm_ffi_ref", "tvm_ffi_fast", "tvm_ffi_common", "tvm_ffi_check", "tvm_ffi_explain"}
    imported = set()
    for line in re.findall(r"^(?:>>>|\.\.\.) (.*)$", page, re.M):
        for match in re.finditer(r"\bimport ([\w., ]+)|\bfrom (\w+)[\w.]* import", line):
            names = match.group(1) or match.group(2)
            imported |= {n.split(" as ")[0].strip().split(".")[0] for n in names.split(",")}
    # (sys.stdlib_module_names is 3.10+; on 3.9 the few this page uses)
    stdlib = getattr(sys, "stdlib_module_names", {"ctypes", "os", "subprocess", "sys", "tempfile"})
    for module in sorted(imported - ours):
        if module in named:
            assert named[module] in box, f"the page imports {module}; the box does not say so"
        else:
            assert module in stdlib, f"the page imports {module}"
    # Every file the page's commands use is in a fresh clone: tracked by git.
    used = set(re.findall(r'"((?:examples|spec|tests|c_api)/[\w/.-]+)"', page))
    assert "examples/kernels/first_kernel.c" in used and "examples/host/call_kernel.c" in used
    # (under tools/sanitize.sh ROOT is a copy; git is asked in the tree it copied)
    tree = os.environ.get("SANITIZE_TREE") or ROOT
    tracked = subprocess.run(["git", "ls-files", *sorted(used)], cwd=tree, capture_output=True,
                             text=True, check=True).stdout.split()
    assert sorted(used) == sorted(tracked), "used but not committed"
