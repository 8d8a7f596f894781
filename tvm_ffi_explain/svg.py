"""SVG drawings: layouts of the ABI's structs and objects, and explanations.

Two kinds of picture, both plain SVG 1.1 with no script and no external
resources, and both deterministic (the same input always gives the same
bytes, so the spec's diagrams can be regenerated and compared by a test):

* :func:`layout_svg` draws a memory layout as a grid of 8-byte rows, one
  column per byte, each field a box spanning its bytes (the way network
  RFCs draw packets). Members of a union share one box; nested structs keep
  their name. The spec's diagrams come from here, fed by the ctypes mirror
  (``tvm_ffi_explain.spec_tables``).
* :func:`render_explanation` draws what ``tvm-ffi-explain`` found
  (:mod:`.svg_explain`): each region a block with one row per field
  (offset, bytes, name, type, meaning), an arrow from every pointer field to
  the block it leads to, and a legend.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple
from xml.sax.saxutils import escape

from .model import Explanation

FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
CHAR = 7.2  # width of one character at 12px in a monospace font (an estimate)

#: Fill colours of the parts of an object, by role.
PART_FILLS = {
    "header": "#e8e8e8",
    "cell": "#dbe9f7",
    "payload": "#e3f2dc",
    "element": "#fbefd5",
    "runtime": "#f6dede",
    "struct": "#dbe9f7",
}


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _text(x: float, y: float, text: str, size: int = 12, anchor: str = "start",
          weight: str = "normal", fill: str = "#222", style: str = "") -> str:
    extra = f' font-weight="{weight}"' if weight != "normal" else ""
    extra += f' font-style="{style}"' if style else ""
    return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}"{extra}>{escape(text)}</text>')


def _rect(x: float, y: float, w: float, h: float, fill: str, stroke: str = "#555",
          dashed: bool = False, rx: float = 0) -> str:
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    corner = f' rx="{_num(rx)}"' if rx else ""
    return (f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" '
            f'fill="{fill}" stroke="{stroke}"{dash}{corner}/>')


def _document(width: float, height: float, body: List[str], title: str) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
            f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
            f'font-family="{escape(FONT)}">')
    defs = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
            'fill="#36c"/></marker></defs>')
    return "\n".join([head, f"<title>{escape(title)}</title>", defs,
                      _rect(0, 0, width, height, "#ffffff", "none")] + body + ["</svg>", ""])


def _fit(text: str, width: float, size: int = 12) -> str:
    """``text`` cut to what fits in ``width`` pixels at ``size``."""
    limit = max(int(width / (CHAR * size / 12)), 1)
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _wrap(text: str, limit: int) -> List[str]:
    """``text`` broken at spaces into lines of at most ``limit`` characters."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > limit:
            lines.append(line)
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line else lines


# ------------------------------------------------------------- layout grids


@dataclass
class Box:
    """One field (or union of fields, or run of elements) in a layout grid."""

    offset: int
    size: int
    label: str  # the field name(s)
    ctype: str  # the C type(s)
    role: str = "struct"  # a key of PART_FILLS
    dashed: bool = False  # a run of variable length


@dataclass
class Layout:
    """A memory layout to draw: boxes by offset, the parts they belong to, and notes."""

    title: str
    boxes: List[Box] = field(default_factory=list)
    parts: List[Tuple[str, int, int, str]] = field(default_factory=list)  # (name, start, end, role)
    notes: List[str] = field(default_factory=list)
    size_text: str = ""
    #: A table under the grid: a heading row, then rows (``TVMFFIAny``: the payload by type index).
    table: List[Tuple[str, ...]] = field(default_factory=list)


def merge_unions(boxes: Sequence[Box]) -> List[Box]:
    """Boxes at the same offset (members of a union) merged into one box."""
    merged: List[Box] = []
    for box in boxes:
        if merged and merged[-1].offset == box.offset:
            last = merged[-1]
            last.label += " | " + box.label
            last.ctype += " | " + box.ctype
            last.size = max(last.size, box.size)
        elif merged and box.offset < merged[-1].offset + merged[-1].size:
            continue  # a member nested inside the previous union box
        else:
            merged.append(Box(box.offset, box.size, box.label, box.ctype, box.role,
                              box.dashed))
    return merged


def layout_svg(layout: Layout, row_bytes: int = 8, cell: int = 76, row_height: int = 42) -> str:
    """A packet-style grid: ``row_bytes`` bytes a row, each box spanning its bytes."""
    left, top = 64, 56
    width = left + row_bytes * cell + 24
    if layout.table:  # room for the table's text, within the width every drawing keeps to
        width = 900
    end = max([b.offset + b.size for b in layout.boxes] + [row_bytes])
    rows = (end + row_bytes - 1) // row_bytes
    body = [_text(left, 24, layout.title, 15, weight="bold")]
    if layout.size_text:
        body.append(_text(left, 42, layout.size_text, 11, fill="#555"))
    for i in range(row_bytes):
        body.append(_text(left + i * cell + cell / 2, top - 4, f"+{i}", 10, "middle", fill="#888"))
    for r in range(rows):
        body.append(_text(left - 8, top + r * row_height + row_height / 2 + 4,
                          str(r * row_bytes), 11, "end", fill="#555"))
    for box in layout.boxes:
        fill = PART_FILLS.get(box.role, PART_FILLS["struct"])
        start, stop = box.offset, box.offset + box.size
        first_piece = True
        while start < stop:
            row, col = divmod(start, row_bytes)
            span = min(stop - start, row_bytes - col)
            x, y = left + col * cell, top + row * row_height
            w = span * cell
            body.append(_rect(x, y, w, row_height, fill, dashed=box.dashed))
            if first_piece:
                label, ctype = box.label, box.ctype
                members = label.split(" | ")
                if len(members) > 1 and len(label) * CHAR > w - 6:
                    label = f"{members[0]} | ... ({len(members)} members, see below)"
                    ctype = "a union"
                body.append(_text(x + w / 2, y + 17, _fit(label, w - 6), 12, "middle",
                                  weight="bold"))
                body.append(_text(x + w / 2, y + 33, _fit(ctype, w - 6, 10), 10, "middle",
                                  fill="#444"))
            else:
                body.append(_text(x + w / 2, y + 25, "(continued)", 10, "middle", fill="#777",
                                  style="italic"))
            first_piece = False
            start += span
    y = top + rows * row_height + 18
    for name, start, stop, role in layout.parts:
        body.append(_rect(left, y - 10, 12, 12, PART_FILLS.get(role, "#fff")))
        where = f"bytes {start} to {stop - 1}" if stop > start else f"from byte {start} on"
        body.append(_text(left + 18, y, f"{name}: {where}", 11))
        y += 18
    limit = int((width - left - 8) / (CHAR * 11 / 12))
    for note in layout.notes:
        for line in _wrap(note, limit):
            body.append(_text(left, y, line, 11, fill="#333"))
            y += 16
    if layout.table:
        y = _table(body, layout.table, left, y + 8, width - left - 16)
    return _document(width, y + 8, body, layout.title)


def _table(body: List[str], rows: Sequence[Tuple[str, ...]], left: float, y: float,
           width: float) -> float:
    """Draws ``rows`` (the first one the heading) as a table; returns the y below it.

    The columns but the last are as wide as their longest cell; the last one
    takes the rest, its text wrapped (never cut).
    """
    from .svg_explain import wrap

    columns = len(rows[0])
    widths = [max(len(row[c]) for row in rows) * CHAR + 16 for c in range(columns - 1)]
    widths.append(width - sum(widths))
    for n, row in enumerate(rows):
        last = wrap(row[-1], widths[-1] - 16)
        height = 6 + 16 * len(last)
        fill = "#e8e8e8" if n == 0 else ("#ffffff" if n % 2 else "#f6f6f6")
        body.append(_rect(left, y, width, height, fill, "#ccc"))
        x = left
        for c, cell in enumerate(row):
            for k, line in enumerate(last if c == columns - 1 else [cell]):
                body.append(_text(x + 8, y + 15 + 16 * k, line, 12,
                                  weight="bold" if n == 0 else "normal"))
            x += widths[c]
        y += height
    return y + 8


# ---------------------------------------------------------- explanations


def render_explanation(explanation: Explanation) -> str:
    """An explanation as an SVG document (drawn by :mod:`.svg_explain`)."""
    from .svg_explain import render_explanation as draw

    return draw(explanation)


def render_trace_svg(trace) -> str:
    """A ``--trace`` as SVG: the argument blocks before the call, the result's after it."""
    from .svg_explain import render_regions

    groups = [("before the call: " + trace.source, trace.args)]
    if trace.result is not None:
        groups.append(("after the call: the result (status 0)", [trace.result]))
    return render_regions(groups, trace.book, "tvm-ffi-explain --trace: " + trace.source)


def struct_boxes(struct: type, base: int = 0, role: str = "struct",
                 names: Optional[Sequence[str]] = None) -> List[Box]:
    """The boxes of a ctypes struct's C-visible fields (``abi.c_fields``), unions merged."""
    from tvm_ffi_common import abi

    from .spec_tables import c_spelling

    boxes = []
    for layout in abi.c_fields(struct):
        if names is not None and layout.name not in names:
            continue
        spelling = (abi.FIELD_C_TYPES.get((struct.__name__, layout.name))
                    or c_spelling(layout.ctype))
        boxes.append(Box(base + layout.offset, layout.size, layout.name, spelling, role))
    return merge_unions(boxes)


def sizeof(struct: type) -> int:
    """``ctypes.sizeof``, for callers that import only this module."""
    return ctypes.sizeof(struct)
