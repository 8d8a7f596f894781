"""SVG drawings of what ``tvm-ffi-explain`` found: readable at the size they are drawn.

The drawing is at most :data:`WIDTH` pixels wide, whatever the values: each
region of memory (a ``TVMFFIAny``, an object, a buffer) is one block, and
blocks are stacked one under the other in drawing order, so nesting never
widens the picture; an arrow runs in the left margin from each pointer field
to the block it points to. Inside a block each field is a row: its offset,
its bytes (one box per byte, coloured by the part of the region it belongs
to), its C name and type, and what it means, with every text wrapped to its
column instead of cut. A legend says what the colours and marks mean. The
text is 12 pixels or more. Values are drawn one after the other, each with
its own lines on top, as the text renderer prints them.

Deterministic: the same explanation always gives the same bytes (the spec's
drawings are regenerated and compared by a test).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from .model import AddressBook, Explanation, Field, Region, Section

#: The widest a drawing gets, in pixels.
WIDTH = 900
CHAR = 7.3  # width of one character at 12px in a monospace font (an estimate)
LINE = 16  # height of a line of 12px text
LANES_X = 12  # where the arrows' lanes start, left of the blocks
BLOCK_X = 44  # where blocks start
BLOCK_W = WIDTH - BLOCK_X - 12
BYTE_W = 23
#: Columns inside a block, from its left edge.
OFFSET_END, BYTES_X = 44, 52
NAME_X = BYTES_X + 8 * BYTE_W + 10
TYPE_X = NAME_X + 158
MEANING_X = TYPE_X + 116

#: Fill of each part a field can belong to, and what the legend calls it.
ROLES: Dict[str, Tuple[str, str]] = {
    "any": ("#fff1bf", "TVMFFIAny: type index, then the payload"),
    "header": ("#e4e4e4", "object header (TVMFFIObject)"),
    "cell": ("#d6e6f7", "the cell after the header"),
    "payload": ("#dcf0d3", "payload: the object's own data"),
    "element": ("#fbe7c6", "container elements and entries"),
    "runtime": ("#f4d9d9", "the runtime's own fields (not ABI)"),
    "struct": ("#e6ddf3", "a struct the object points to"),
}


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _cut(word: str, room: int) -> int:
    """Where to cut a word too long for ``room`` characters: after a ``.`` or ``_`` if any."""
    best = max(word.rfind(".", 0, room), word.rfind("_", 0, room), word.rfind("/", 0, room))
    return best + 1 if best >= room // 3 else room


def wrap(text: str, width: float, size: int = 12) -> List[str]:
    """``text`` broken into lines that fit ``width`` pixels: at spaces, else inside a word."""
    limit = max(int(width / (CHAR * size / 12)), 4)
    lines: List[str] = []
    line = ""
    for word in text.split(" "):
        while len(word) > limit:  # a word longer than a line: cut it, at a . or _ if possible
            if line:
                lines.append(line)
                line = ""
            cut = _cut(word, limit)
            lines.append(word[:cut])
            word = word[cut:]
        if line and len(line) + 1 + len(word) > limit:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line or not lines else lines


def role_of(region: Region, section: Section) -> str:
    """Which part of a region a section is, for its colour."""
    title = section.title.split("[")[0].split(":")[0].strip()
    if region.kind == "TVMFFIAny":
        return "any"
    if title == "header":
        return "header"
    if title in ("cell", "dl_tensor"):
        return "cell"
    if title in ("slot", "pair", "item", "entry", "element", "elements", "block", "metadata",
                 "field"):
        return "element"
    if title in ("runtime", "closure"):
        return "runtime"
    if title in ("payload", "") and region.kind.endswith(" object"):
        return "payload"
    return "struct" if not region.kind.endswith(" object") else "payload"


@dataclass
class _Text:
    x: float
    y: float
    text: str
    size: int = 12
    fill: str = "#222"
    weight: str = ""
    anchor: str = "start"

    def svg(self) -> str:
        extra = f' font-weight="{self.weight}"' if self.weight else ""
        return (f'<text x="{_num(self.x)}" y="{_num(self.y)}" font-size="{self.size}" '
                f'text-anchor="{self.anchor}" fill="{self.fill}"{extra}>{_esc(self.text)}</text>')


def _rect(x: float, y: float, w: float, h: float, fill: str, stroke: str = "#999",
          rx: float = 0) -> str:
    corner = f' rx="{_num(rx)}"' if rx else ""
    return (f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" '
            f'fill="{fill}" stroke="{stroke}"{corner}/>')


@dataclass
class _Drawing:
    book: AddressBook
    body: List[str] = field(default_factory=list)
    arrows: List[str] = field(default_factory=list)
    rows: Dict[int, float] = field(default_factory=dict)  # id(field) -> y of its first line
    tops: Dict[int, float] = field(default_factory=dict)  # id(region) -> y of its title
    roles: List[str] = field(default_factory=list)  # roles used, in order of first use
    pending: List[Tuple[Field, Region]] = field(default_factory=list)

    def text(self, x: float, y: float, text: str, **style) -> None:
        self.body.append(_Text(x, y, text, **style).svg())

    def lines(self, x: float, y: float, text: str, width: float, **style) -> float:
        """``text`` wrapped to ``width`` from (x, y); returns the y after it."""
        for line in wrap(text, width, style.get("size", 12)):
            self.text(x, y + 12, line, **style)
            y += LINE
        return y

    # ------------------------------------------------------------ regions

    def meaning_of(self, f: Field) -> str:
        meaning = f.meaning
        if f.is_pointer and (f.pointer or not meaning):
            meaning = (meaning + " → " if meaning else "→ ") + self.book.pointer(f.pointer)
            if f.see_also is not None:
                meaning += " (drawn above)"
        return meaning

    def region(self, region: Region, y: float) -> float:
        """Draws ``region`` as a block at ``y``, then the blocks it points to; the next free y."""
        x = BLOCK_X
        start = y
        body_start = len(self.body)
        self.tops[id(region)] = y
        y += 4
        where = "" if self.book.stable or not region.address else f" at 0x{region.address:x}"
        y = self.lines(x + 8, y, f"{region.label}  {region.kind}, {_size(region.size)}{where}",
                       BLOCK_W - 16, size=14, weight="bold")
        for line in (region.summary, f"[{region.code}]" if region.code else ""):
            if line:
                y = self.lines(x + 8, y, line, BLOCK_W - 16, fill="#555")
        for section in region.sections:
            if section.elided:
                y = self.lines(x + BYTES_X, y, section.note, BLOCK_W - BYTES_X - 8, fill="#777")
                continue
            role = role_of(region, section)
            if role not in self.roles:
                self.roles.append(role)
            if section.title or (section.struct and section.struct != region.kind):
                heading = ": ".join(p for p in (section.title, section.struct) if p)
                if section.note:
                    heading += f"  ({section.note})"
                y = self.lines(x + 8, y + 2, heading, BLOCK_W - 16, fill="#1f4f80", weight="bold")
            for f in section.fields:
                y = self.field_row(f, x, y, ROLES[role][0])
        y += 6
        self.body.insert(body_start, _rect(x, start, BLOCK_W, y - start, "#fcfcfc", "#888", 4))
        y += 14
        for f in region.fields():
            if f.target is not None:
                target_y = y
                y = self.region(f.target, y)
                self.arrow(self.rows[id(f)], target_y)
        return y

    def field_row(self, f: Field, x: float, y: float, fill: str) -> float:
        self.rows[id(f)] = y
        chunks = [f.raw[i:i + 8] for i in range(0, len(f.raw), 8)] or [b""]
        masked = f.is_pointer and self.book.stable and bool(f.pointer)
        names = wrap(f.name, TYPE_X - NAME_X - 10)
        types = wrap(f.ctype, MEANING_X - TYPE_X - 10)
        meanings = wrap(self.meaning_of(f), BLOCK_W - MEANING_X - 10) if f.meaning or \
            f.is_pointer else []
        height = max(len(chunks), len(names), len(types), len(meanings), 1) * LINE + 4
        for n, chunk in enumerate(chunks):
            top = y + 2 + n * LINE
            self.text(x + OFFSET_END, top + 12, f"+{f.offset + 8 * n}", fill="#555",
                      anchor="end")
            for i, b in enumerate(chunk):
                bx = x + BYTES_X + i * BYTE_W
                self.body.append(_rect(bx, top, BYTE_W - 2, LINE - 1, fill, "#aaa"))
                self.text(bx + (BYTE_W - 2) / 2, top + 12, "··" if masked else f"{b:02x}",
                          anchor="middle")
        for column, texts, style in ((NAME_X, names, {"weight": "bold"}),
                                     (TYPE_X, types, {"fill": "#555"}),
                                     (MEANING_X, meanings, {})):
            for n, line in enumerate(texts):
                self.text(x + column, y + 14 + n * LINE, line, **style)
        return y + height

    def arrow(self, from_y: float, to_y: float) -> None:
        lane = LANES_X + 6 * (len(self.arrows) % 4)
        self.arrows.append(
            f'<path d="M {_num(BLOCK_X)} {_num(from_y + 10)} H {_num(lane)} V {_num(to_y + 12)} '
            f'H {_num(BLOCK_X - 2)}" fill="none" stroke="#36c" stroke-width="1.4" '
            f'marker-end="url(#arrow)"/>')

    # ------------------------------------------------------------ legend

    def legend(self, y: float) -> float:
        """The legend: the colours used, the arrows and the masked bytes."""
        y = self.lines(16, y, "Legend", WIDTH - 32, weight="bold")
        items = [(ROLES[role][0], ROLES[role][1]) for role in self.roles]
        items += [("arrow", "a pointer: the arrow leads to the block it points to"),
                  ("mask", "·· an address byte, hidden so that the drawing is the same "
                           "on every run") if self.book.stable else ("", "")]
        column, row_end = 0, y
        for swatch, label in items:
            if not label:
                continue
            x = 16 + column * (WIDTH - 32) / 2
            if swatch == "arrow":
                self.body.append(f'<path d="M {_num(x)} {_num(y + 8)} H {_num(x + 22)}" '
                                 'stroke="#36c" stroke-width="1.4" marker-end="url(#arrow)"/>')
            elif swatch != "mask":
                self.body.append(_rect(x, y + 1, 22, 13, swatch, "#aaa"))
            row_end = max(row_end, self.lines(x + 30, y, label, (WIDTH - 32) / 2 - 34))
            column = 1 - column
            if column == 0:
                y = row_end + 2
        return max(y, row_end) + 10


def _size(count: int) -> str:
    return f"{count} byte" if count == 1 else f"{count} bytes"


def document(height: float, body: Sequence[str], title: str) -> str:
    """An SVG document :data:`WIDTH` wide holding ``body``."""
    from .svg import FONT

    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{_num(height)}" '
            f'viewBox="0 0 {WIDTH} {_num(height)}" font-family="{_esc(FONT)}">')
    defs = ('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
            'fill="#36c"/></marker></defs>')
    return "\n".join([head, f"<title>{_esc(title)}</title>", defs,
                      _rect(0, 0, WIDTH, height, "#ffffff", "none")] + list(body)
                     + ["</svg>", ""])


def header_lines(explanation: Explanation, i: int) -> List[Tuple[str, Dict]]:
    """The lines drawn above value ``i``'s blocks, with their style."""
    value = explanation.values[i] if i < len(explanation.values) else ""
    lines = [(explanation.sources[i] + (f"  = {value}" if value else ""),
              {"size": 14, "weight": "bold"})]
    if i < len(explanation.setters):
        lines.append((f"encoded by {explanation.setters[i]}", {"fill": "#444"}))
    if i < len(explanation.returns) and explanation.returns[i]:
        lines.append((f"comes back from a kernel that returns it as {explanation.returns[i]}",
                      {"fill": "#444"}))
    return lines


def render_explanation(explanation: Explanation) -> str:
    """An explanation as SVG: each value's lines, then its blocks; the legend at the end."""
    drawing = _Drawing(explanation.book or AddressBook())
    y = 12.0
    for i in range(max(len(explanation.sources), len(explanation.roots))):
        if i < len(explanation.sources):
            for text, style in header_lines(explanation, i):
                y = drawing.lines(16, y, text, WIDTH - 32, **style)
            y += 8
        if i < len(explanation.roots) and not explanation.error:
            y = drawing.region(explanation.roots[i], y)
    if explanation.error:
        y = drawing.lines(16, y + 8, f"cannot be passed: {explanation.error}", WIDTH - 32,
                          fill="#b00", size=13) + 8
    else:
        y = drawing.legend(y)
    return document(y, drawing.body + drawing.arrows,
                    "tvm-ffi-explain: " + ", ".join(explanation.sources))


def render_regions(title_lines: Sequence[Tuple[str, List[Region]]], book: AddressBook,
                   title: str) -> str:
    """Blocks grouped under headings (``--trace --svg``: before the call, after it)."""
    drawing = _Drawing(book)
    y = 12.0
    for heading, regions in title_lines:
        y = drawing.lines(16, y, heading, WIDTH - 32, size=14, weight="bold") + 6
        for region in regions:
            y = drawing.region(region, y)
    y = drawing.legend(y)
    return document(y, drawing.body + drawing.arrows, title)


def widest_text(svg: str) -> Optional[float]:
    """The right end of the longest ``<text>`` line, estimated (for tests)."""
    import re

    best = None
    for match in re.finditer(r'<text x="([\d.]+)"[^>]*font-size="(\d+)" text-anchor="start"[^>]*>'
                             r'([^<]*)</text>', svg):
        text = match.group(3).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        end = float(match.group(1)) + len(text) * CHAR * int(match.group(2)) / 12
        best = end if best is None else max(best, end)
    return best
