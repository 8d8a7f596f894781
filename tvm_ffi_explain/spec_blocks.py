"""Generated blocks in the prose pages, from tables in the code.

A page marks each with ``<!-- generated: NAME -->`` ... ``<!-- /generated -->``;
``python -m tvm_ffi_explain.spec_tables`` refills them (next to the layout
blocks) and the test suite checks that they are fresh. The names:

* ``c-api-index``, ``c-api-flagged``, ``c-api-reference`` (``spec/16-c-api.md``):
  every ``TVMFFI*`` function, its signature from the headers and its
  ownership from :mod:`.c_api_entries` (see :mod:`.c_api_reference`);
* ``check-rules`` and ``check-rule:RULE`` (``spec/17-debugging.md``): the
  rules ``tvm-ffi-check`` knows, from :data:`tvm_ffi_ref.rules.RULES` and
  ``examples/kernels/broken_kernels.c`` (see :mod:`.spec_debugging`).
"""

from __future__ import annotations

import os
import re
from typing import Callable, Dict, List

from . import c_api_reference, spec_debugging

#: The project root: the sources the blocks quote live under it.
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w.:-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)",
                    re.S)


def _include_dir() -> str:
    from tvm_ffi_common import libinfo

    return libinfo.include_paths()[0]


def _anchor(name: str) -> str:
    return "#" + name.lower()


def c_api_index() -> List[str]:
    """A table of every function: its group, and whether something about it is flagged."""
    flagged = dict(c_api_reference.flagged())
    lines = ["| function | group | ⚑ |", "|---|---|:-:|"]
    for title, _, items in c_api_reference.SECTIONS:
        for entry in items:
            mark = "⚑" if entry.name in flagged else ""
            lines.append(f"| [`{entry.name}`]({_anchor(entry.name)}) | {title} | {mark} |")
    return lines


def c_api_flagged() -> List[str]:
    """One bullet per flagged function: what breaks the usual pattern."""
    return [f"* [`{name}`]({_anchor(name)}): {text}." for name, text in c_api_reference.flagged()]


def _generator(name: str) -> Callable[[], List[str]]:
    fixed: Dict[str, Callable[[], List[str]]] = {
        "c-api-index": c_api_index,
        "c-api-flagged": c_api_flagged,
        "c-api-reference": lambda: c_api_reference.render(_include_dir()),
        "check-rules": lambda: spec_debugging.render_index(PROJECT_ROOT),
    }
    if name in fixed:
        return fixed[name]
    if name.startswith("check-rule:"):
        return lambda: spec_debugging.render_rule(PROJECT_ROOT, name.split(":", 1)[1])
    raise KeyError(f"no generated block named {name!r}")


def refresh(text: str) -> str:
    """``text`` with every generated block refilled."""
    def fill(match):
        body = "\n".join(_generator(match.group("name"))())
        return f"{match.group(1)}{body}\n{match.group(4)}"

    return _BLOCK.sub(fill, text)


def names(text: str) -> List[str]:
    """The names of the generated blocks a page holds."""
    return [m.group("name") for m in _BLOCK.finditer(text)]
