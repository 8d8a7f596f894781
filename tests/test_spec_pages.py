"""The spec pages run as written, point at code that exists, and hold fresh generated parts.

* Every ``pycon`` block of a page is a doctest; a page's blocks share one
  namespace and run top to bottom, as a reader would type them.
* Every ``console`` block runs its ``$ command`` lines in a shell (with this
  interpreter's scripts first on PATH) and compares the output.
* Every code pointer resolves: a backticked ``tvm_ffi_ref.x.y`` imports, a
  backticked repository path exists, a relative link's target exists.
* Every generated file (tables, diagrams, the layout blocks in the pages) is
  what ``python -m tvm_ffi_explain.spec_tables`` writes now.
"""

from __future__ import annotations

import doctest
import importlib
import os
import re
import subprocess
import sys

import pytest

from tvm_ffi_explain import spec_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.path.join(ROOT, "spec")
PAGES = sorted(name for name in os.listdir(SPEC) if name.endswith(".md"))
TAUGHT = [name for name in PAGES if name != "abi_tables.md"]
#: Pages about something without a layout of its own.
PAGES_WITHOUT_LAYOUT = {"README.md", "11-modules.md", "12-env.md", "14-structural.md",
                        "15-first-kernel.md", "16-c-api.md", "17-debugging.md", "19-ship-it.md"}

_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$", re.M | re.S)
_SYMBOL = re.compile(r"`(tvm_ffi_ref(?:\.\w+)+)(?:\(\))?`")
_PATH = re.compile(r"`((?:tvm_ffi_ref|tvm_ffi_common|c_api|tests|examples|spec|docs)/[\w/.-]+)`")
_LINK = re.compile(r"\]\((?!https?:|#|mailto:)(?P<target>[^)\s#]+)(?:#[^)]*)?\)")


def read(name: str) -> str:
    with open(os.path.join(SPEC, name), encoding="utf-8") as f:
        return f.read()


def blocks(text: str, lang: str):
    """``(first line number, body)`` of each fenced block in language ``lang``."""
    for match in _FENCE.finditer(text):
        if match.group("lang") == lang:
            yield text.count("\n", 0, match.start("body")), match.group("body")


def doctest_text(text: str) -> str:
    """The page with everything but its pycon blocks blanked, so line numbers stay true."""
    lines = [""] * (text.count("\n") + 1)
    for first, body in blocks(text, "pycon"):
        for i, line in enumerate(body.splitlines()):
            lines[first + i] = line
    return "\n".join(lines)


#: What only a run under the sanitizer job (tools/sanitize.sh) adds to a page's output: the two
#: runtimes its compiler makes every library it links NEED, and this project in a fresh venv's
#: `pip list` (every process inherits the PYTHONPATH to the job's copy, and building the wheel
#: leaves the project's egg-info there). A page shows a user's run, without them.
_SANITIZE_JOB_EXTRAS = re.compile(r"'\[lib(?:asan|ubsan)\.so\.\d+\]', |'tvm-ffi-abi', ")


class _SanitizeJobChecker(doctest.OutputChecker):
    """Compares a page's output with a run under the sanitizer job, its extras left out."""

    def check_output(self, want, got, optionflags):
        return super().check_output(want, _SANITIZE_JOB_EXTRAS.sub("", got), optionflags)


def run_page_doctest(name: str) -> "tuple[int, int, str]":
    """Runs a page's pycon blocks here: ``(failures, examples, report)``."""
    path = os.path.join(SPEC, name)
    test = doctest.DocTestParser().get_doctest(doctest_text(read(name)), {"__name__": "spec"},
                                               name, path, 0)
    checker = _SanitizeJobChecker() if os.environ.get("SANITIZE_SRC") else None
    runner = doctest.DocTestRunner(checker=checker, optionflags=doctest.ELLIPSIS)
    report = []
    runner.run(test, out=report.append)
    return runner.failures, len(test.examples), "".join(report)


@pytest.mark.parametrize("name", TAUGHT)
def test_page_examples_run(name, cpp_cache_dir):
    # A fresh interpreter per page: what a reader gets who starts Python and
    # types the page in, whatever other tests did to this process's registry.
    # tvm_ffi.cpp builds go to the session's cache: each is compiled once.
    env = dict(os.environ, TVM_FFI_CACHE_DIR=cpp_cache_dir)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--doctest", name],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "examples: 0" not in done.stdout, f"{name} has no pycon examples"


def console_commands(text: str):
    """``(line, command, expected output)`` of every ``$`` line in the page's console blocks."""
    for first, body in blocks(text, "console"):
        command, expected, line = None, [], first
        for i, row in enumerate(body.splitlines()):
            if row.startswith("$ "):
                if command is not None:
                    yield line, command, "\n".join(expected) + "\n"
                command, expected, line = row[2:], [], first + i + 1
            elif command is not None:
                expected.append(row)
        if command is not None:
            yield line, command, "\n".join(expected) + "\n"


def run_command(command: str) -> str:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["NO_COLOR"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    done = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    return done.stdout


CONSOLE = [(name, line, command, expected) for name in TAUGHT
           for line, command, expected in console_commands(read(name))]


@pytest.mark.parametrize("name,line,command,expected", CONSOLE,
                         ids=[f"{c[0]}:{c[1]}" for c in CONSOLE])
def test_console_examples_print_what_the_page_shows(name, line, command, expected):
    got = run_command(command)
    checker = doctest.OutputChecker()
    assert checker.check_output(expected, got, doctest.ELLIPSIS), (
        f"{name}:{line}: $ {command}\n--- expected\n{expected}--- got\n{got}")


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                value = getattr(value, attribute)
        except AttributeError:
            return False
        return True
    return False


@pytest.mark.parametrize("name", TAUGHT)
def test_code_pointers_exist(name):
    text = read(name)
    symbols = set(_SYMBOL.findall(text))
    paths = set(_PATH.findall(text))
    links = {m.group("target") for m in _LINK.finditer(text)}
    assert symbols or paths, f"{name} points at no code"
    missing = [s for s in sorted(symbols) if not _resolves(s)]
    missing += [p for p in sorted(paths) if not os.path.exists(os.path.join(ROOT, p))]
    missing += [t for t in sorted(links) if not os.path.exists(os.path.join(SPEC, t))]
    assert not missing, f"{name}: these do not exist: {missing}"


def test_every_page_with_a_layout_draws_it():
    used = set()
    for name in TAUGHT:
        layouts = spec_tables.page_layouts(read(name))
        if name not in PAGES_WITHOUT_LAYOUT:
            assert layouts, f"{name} has no generated layout block"
        used.update(layouts)
    drawn = set(spec_tables.diagram_names())
    assert used <= drawn
    structs = {s.__name__ for s in spec_tables.DRAWN_STRUCTS}
    examples = set(spec_tables.EXPLAIN_EXAMPLES)
    assert drawn - used <= structs | examples, (
        f"object layouts no page shows: {sorted(drawn - used - structs - examples)}")
    pages = "".join(read(name) for name in TAUGHT)
    for name in examples:
        assert f"(diagrams/{name}.svg)" in pages, f"no page shows diagrams/{name}.svg"


_EXCERPT = re.compile(r"<!-- excerpt: (?P<path>[\w/.-]+) -->\n```\w*\n(?P<body>.*?)^```$",
                      re.M | re.S)


@pytest.mark.parametrize("name", TAUGHT)
def test_excerpts_are_verbatim(name):
    for match in _EXCERPT.finditer(read(name)):
        with open(os.path.join(ROOT, match.group("path")), encoding="utf-8") as f:
            source = f.read()
        assert match.group("body") in source, (
            f"{name}: this excerpt is not in {match.group('path')}:\n{match.group('body')}")


def test_generated_tables_diagrams_and_blocks_are_fresh():
    stale = spec_tables.stale_files(ROOT)
    assert not stale, f"stale: {stale}; run python -m tvm_ffi_explain.spec_tables"


def test_diagrams_are_well_formed_svg():
    import xml.etree.ElementTree as ET

    for name in spec_tables.diagram_names():
        root = ET.fromstring(spec_tables.diagram_svg(name))
        assert root.tag == "{http://www.w3.org/2000/svg}svg", name


def test_check_mode_sees_a_stale_page_block(tmp_path):
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "page.md").write_text("# x\n\n<!-- layout: TVMFFIAny -->\nold\n<!-- /layout -->\n")
    assert spec_tables.main(["--root", str(tmp_path), "--check"]) == 1
    assert spec_tables.main(["--root", str(tmp_path)]) == 0
    assert spec_tables.main(["--root", str(tmp_path), "--check"]) == 0
    page = (spec / "page.md").read_text()
    assert "![`TVMFFIAny`: 16 bytes, aligned to 8](diagrams/TVMFFIAny.svg)" in page
    assert "| 8 | 8 | `double` | `v_float64` |" in page
    assert (spec / "diagrams" / "TVMFFIAny.svg").exists()


def test_readme_lists_every_page():
    readme = read("README.md")
    for name in PAGES:
        if name != "README.md":
            assert f"]({name})" in readme, f"spec/README.md does not link {name}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--doctest":
        failures, count, report = run_page_doctest(sys.argv[2])
        print(report, end="")
        print(f"examples: {count}, failures: {failures}")
        sys.exit(1 if failures else 0)
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
