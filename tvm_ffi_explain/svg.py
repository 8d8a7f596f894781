"""SVG drawings: layouts of the ABI's structs and objects, and explanations.

Two kinds of picture, both plain SVG 1.1 with no script and no external
resources, and both deterministic (the same input always gives the same
bytes, so the spec's diagrams can be regenerated and compared by a test):

* :func:`layout_svg` draws a memory layout as a grid of 8-byte rows, one
  column per byte, each field a box spanning its bytes (the way network
  RFCs draw packets). Members of a union share one box; nested structs keep
  their name. The spec's diagrams come from here, fed by the ctypes mirror
  (``tvm_ffi_explain.spec_tables``).
* :func:`render_explanation` draws what ``tvm-ffi-explain`` found: each
  region a box with one row per field (offset, bytes, name, type, meaning),
  and an arrow from every pointer field to the region it leads to.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple
from xml.sax.saxutils import escape

from .model import AddressBook, Explanation, Field, Region

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
_FIELD_FILLS = ["#fde9b6", "#d3ecd0", "#e6d8f2", "#cfe3f5"]


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
    return _document(width, y + 8, body, layout.title)


# ---------------------------------------------------------- explanations

ROW = 18
BYTE_W = 22
INDENT = 84
LANE_GAP = 4
COLUMNS = {"offset": 8, "bytes": 62, "name": 62 + 8 * BYTE_W + 10}


@dataclass
class _Placed:
    region: Region
    x: float
    y: float
    width: float
    height: float
    field_rows: Dict[int, float]  # id(field) -> y of the row's middle


def _field_row_count(f: Field) -> int:
    return max((len(f.raw) + 7) // 8, 1)


def _region_height(region: Region) -> float:
    rows = 1 + (1 if region.summary else 0) + (1 if region.code else 0)
    for section in region.sections:
        if section.elided:
            rows += 1
            continue
        if section.title or (section.struct and section.struct != region.kind):
            rows += 1
        rows += sum(_field_row_count(f) for f in section.fields)
    return rows * ROW + 10


class _ExplanationDrawing:
    def __init__(self, explanation: Explanation):
        self.explanation = explanation
        self.book = explanation.book or AddressBook()
        fields = [f for root in explanation.roots for f in _all_fields(root)]
        self.name_w = min(max([len(f.name) for f in fields] + [6]), 30) * CHAR + 12
        self.type_w = min(max([len(f.ctype) for f in fields] + [6]), 16) * CHAR + 12
        longest = max([len(self.meaning_of(f)) for f in fields] + [20])
        self.meaning_w = min(longest, 100) * CHAR + 16
        self.width = COLUMNS["name"] + self.name_w + self.type_w + self.meaning_w
        self.placed: List[_Placed] = []
        self.body: List[str] = []
        self.arrows: List[str] = []

    def draw(self) -> str:
        top = 16
        y = top
        for i, source in enumerate(self.explanation.sources):
            line = source
            value = self.explanation.values[i] if i < len(self.explanation.values) else ""
            if value:
                line += f"  = {value}"
            self.body.append(_text(16, y + 12, _fit(line, 1400), 14, weight="bold"))
            y += ROW + 2
            if i < len(self.explanation.setters):
                self.body.append(_text(28, y + 12, f"encoded by {self.explanation.setters[i]}",
                                       12, fill="#444"))
                y += ROW
            if i < len(self.explanation.returns) and self.explanation.returns[i]:
                self.body.append(_text(28, y + 12, "comes back from a kernel that returns it "
                                       f"as {self.explanation.returns[i]}", 12, fill="#444"))
                y += ROW
        if self.explanation.error:
            self.body.append(_text(16, y + 24, f"cannot be passed: {self.explanation.error}",
                                   13, fill="#b00"))
            return _document(max(900, 16 + CHAR * 1.1 * len(self.explanation.error) + 160),
                             y + 48, self.body, "tvm-ffi-explain")
        y += 12
        x0 = 16 + 4 * LANE_GAP + 70
        for root in self.explanation.roots:
            y = self.place(root, x0, y) + 16
        right = max(p.x + p.width for p in self.placed) + 24
        return _document(right, y, self.body + self.arrows, "tvm-ffi-explain: "
                         + ", ".join(self.explanation.sources))

    def place(self, region: Region, x: float, y: float) -> float:
        """Draws ``region`` at (x, y), then its children below; returns the next free y."""
        height = _region_height(region)
        placed = _Placed(region, x, y, self.width, height, {})
        self.placed.append(placed)
        self.draw_region(placed)
        next_y = y + height + 14
        lane = 0
        for f in region.fields():
            if f.target is None:
                continue
            child_y = next_y
            next_y = self.place(f.target, x + INDENT, child_y)
            self.arrow(placed, placed.field_rows[id(f)], lane, x + INDENT, child_y + ROW / 2 + 2)
            lane += 1
        return next_y

    def arrow(self, parent: _Placed, from_y: float, lane: int, to_x: float, to_y: float) -> None:
        lane_x = parent.x - 10 - LANE_GAP * min(lane, 15)
        self.arrows.append(
            f'<path d="M {_num(parent.x)} {_num(from_y)} H {_num(lane_x)} V {_num(to_y)} '
            f'H {_num(to_x - 1)}" fill="none" stroke="#36c" stroke-width="1.3" '
            f'marker-end="url(#arrow)"/>')

    def draw_region(self, placed: _Placed) -> None:
        region, x, y = placed.region, placed.x, placed.y
        book = self.book
        self.body.append(_rect(x, y, placed.width, placed.height, "#fcfcfc", "#888", rx=4))
        where = "" if book.stable or not region.address else f" at 0x{region.address:x}"
        title = f"{region.label}  {region.kind}, {_bytes(region.size)}{where}"
        row = y + 4
        self.body.append(_text(x + 8, row + 13, title, 13, weight="bold"))
        row += ROW
        for line in (region.summary, f"[{region.code}]" if region.code else ""):
            if line:
                self.body.append(_text(x + 8, row + 13, _fit(line, placed.width - 16), 11,
                                       fill="#555"))
                row += ROW
        for section in region.sections:
            if section.elided:
                self.body.append(_text(x + 24, row + 13, section.note, 11, fill="#777",
                                       style="italic"))
                row += ROW
                continue
            if section.title or (section.struct and section.struct != region.kind):
                heading = ": ".join(p for p in (section.title, section.struct) if p)
                if section.note:
                    heading += f"  ({section.note})"
                self.body.append(_text(x + 8, row + 13, _fit(heading, placed.width - 16), 12,
                                       fill="#2a5d8f", weight="bold"))
                row += ROW
            for k, f in enumerate(section.fields):
                placed.field_rows[id(f)] = row + ROW / 2
                row = self.draw_field(f, x, row, _FIELD_FILLS[k % len(_FIELD_FILLS)])

    def meaning_of(self, f: Field) -> str:
        """What a field's row says: its meaning, and where its pointer goes."""
        meaning = f.meaning
        if f.is_pointer and (f.pointer or not meaning):
            meaning = (meaning + " → " if meaning else "→ ") + self.book.pointer(f.pointer)
            if f.see_also is not None:
                meaning += " (drawn above)"
        return meaning

    def draw_field(self, f: Field, x: float, row: float, fill: str) -> float:
        book = self.book
        chunks = [f.raw[i:i + 8] for i in range(0, len(f.raw), 8)] or [b""]
        meaning = self.meaning_of(f)
        masked = f.is_pointer and book.stable and bool(f.pointer)
        for n, chunk in enumerate(chunks):
            baseline = row + 13
            self.body.append(_text(x + COLUMNS["bytes"] - 8, baseline, f"+{f.offset + 8 * n}",
                                   11, "end", fill="#666"))
            for i, b in enumerate(chunk):
                bx = x + COLUMNS["bytes"] + i * BYTE_W
                self.body.append(_rect(bx, row + 1, BYTE_W - 1, ROW - 2, fill, "#bbb"))
                self.body.append(_text(bx + (BYTE_W - 1) / 2, baseline, "··" if masked else
                                       f"{b:02x}", 11, "middle"))
            if n == 0:
                nx = x + COLUMNS["name"]
                self.body.append(_text(nx, baseline, _fit(f.name, self.name_w - 8), 12,
                                       weight="bold"))
                self.body.append(_text(nx + self.name_w, baseline,
                                       _fit(f.ctype, self.type_w - 8, 11), 11, fill="#555"))
                self.body.append(_text(nx + self.name_w + self.type_w, baseline,
                                       _fit(meaning, self.meaning_w), 12))
            row += ROW
        return row


def _all_fields(region: Region) -> List[Field]:
    fields = list(region.fields())
    for child in region.children():
        fields += _all_fields(child)
    return fields


def render_explanation(explanation: Explanation) -> str:
    """An explanation as an SVG document (see the module docstring)."""
    return _ExplanationDrawing(explanation).draw()


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


def _bytes(count: int) -> str:
    return f"{count} byte" if count == 1 else f"{count} bytes"
