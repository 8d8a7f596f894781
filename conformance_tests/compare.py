"""Comparing what the workers reply: every front end under test must equal upstream.

A mismatch fails with the path of the first difference inside the reply,
both sides at that path, and the case that produced it, so a hypothesis
failure reads like a bug report.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

from . import config

_LIMIT = 600


def short(value: Any) -> str:
    text = json.dumps(value, default=repr, ensure_ascii=False)
    return text if len(text) <= _LIMIT else text[:_LIMIT] + f"... ({len(text)} chars)"


def first_difference(a: Any, b: Any, path: str = "") -> Optional[Tuple[str, Any, Any]]:
    """``(path, a at path, b at path)`` of the first place ``a`` and ``b`` differ, or None."""
    if type(a) != type(b):
        return (path or "/", a, b)
    if isinstance(a, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return (f"{path}/{key}", a.get(key, "<absent>"), b.get(key, "<absent>"))
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}/{i}")
            if found:
                return found
        if len(a) != len(b):
            return (f"{path}/len", len(a), len(b))
        return None
    return None if a == b else (path or "/", a, b)


def is_crash(reply: Any) -> bool:
    return isinstance(reply, list) and len(reply) == 3 and reply[0] in ("crash", "hang") \
        and isinstance(reply[1], str) and reply[1].startswith("exit status")


def assert_agree(replies: Dict[str, Any], case: Any, what: str = "") -> Any:
    """Asserts each front end in ``config.FRONTENDS`` replied exactly as upstream; returns upstream's reply."""
    expected = replies[config.ORACLE]
    problems: List[str] = []
    for name, reply in replies.items():
        if is_crash(reply):
            problems.append(f"{name} worker crashed: {reply[1]}\n{reply[2]}")
    for frontend in config.FRONTENDS:
        got = replies[frontend]
        if got != expected:
            path, theirs, ours = first_difference(expected, got) or ("/", expected, got)
            problems.append(f"{frontend} differs from upstream at {path}:\n"
                            f"  upstream: {short(theirs)}\n  {frontend}: {short(ours)}")
            # For a batch, the whole entry of the first differing case too.
            if isinstance(case, list) and isinstance(expected, list) and isinstance(got, list) \
                    and len(case) == len(expected) == len(got):
                index = next(i for i, (x, y) in enumerate(zip(expected, got)) if x != y)
                problems.append(f"  the case: {short(case[index])}\n"
                                f"  upstream's whole reply: {short(expected[index])}\n"
                                f"  {frontend}'s whole reply: {short(got[index])}")
    if problems:
        raise AssertionError(f"{what}\ncase: {short(case)}\n" + "\n".join(problems))
    return expected
