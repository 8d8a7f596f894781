"""Lists what a header set declares, from the C preprocessor's output.

Used to prove the ctypes mirror covers every struct, enum, enum value and
exported function of c_api.h, c_env_api.h and dlpack.h, ours and upstream's.
Preprocessing (as C) resolves the headers' C/C++ branches, so the text is
plain ``typedef struct {...} Name;`` and ``typedef enum {...} Name;``.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Set


@dataclass
class HeaderDeclarations:
    """What one header set declares."""

    structs: Set[str] = field(default_factory=set)
    enums: Dict[str, List[str]] = field(default_factory=dict)
    functions: Set[str] = field(default_factory=set)


def preprocess(include_dir: str, headers: List[str]) -> str:
    """The headers after ``cc -E`` in C11 mode, with the system headers' text dropped."""
    source = "".join(f"#include <{h}>\n" for h in headers)
    done = subprocess.run(
        [os.environ.get("CC", "cc"), "-std=c11", "-E", f"-I{include_dir}", "-x", "c", "-"],
        input=source, capture_output=True, text=True, check=True,
    )
    keep, lines = False, []
    for line in done.stdout.splitlines():
        if line.startswith("# "):  # a line marker: which file the next lines come from
            path = line.split('"')[1] if '"' in line else ""
            keep = path.startswith(include_dir)
            continue
        if keep:
            lines.append(line)
    return "\n".join(lines)


def _matching_brace(text: str, open_index: int) -> int:
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced braces")


def scan(include_dir: str, headers: List[str]) -> HeaderDeclarations:
    """Structs, enums (with their members) and exported functions of a header set."""
    text = preprocess(include_dir, headers)
    found = HeaderDeclarations()
    for match in re.finditer(r"\btypedef\s+(struct|enum)\b[^{;]*\{", text):
        close = _matching_brace(text, match.end() - 1)
        name = re.match(r"\s*(\w+)\s*;", text[close + 1 :]).group(1)
        body = text[match.end() : close]
        if match.group(1) == "struct":
            found.structs.add(name)
        else:
            found.enums[name] = re.findall(r"(\w+)\s*(?:=[^,]*)?(?:,|$)", body.strip())
    exported = r'visibility\("default"\)\)\)\s*(?:__attribute__\(\(__pure__\)\)\s*)?[^;(]*?\b(\w+)\s*\('
    found.functions = set(re.findall(exported, text))
    return found
