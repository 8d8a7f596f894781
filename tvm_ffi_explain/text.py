"""Draws an :class:`~.model.Explanation` for a terminal.

Each region is a block: a title line (label, kind, size, address), one line
saying what it is and which function of the reference implementation makes
it, then its sections, one field per line::

    +8   c0 29 34 3e e1 55 00 00  v_obj  TVMFFIObject*  the object ... -> #1

(offset from the region's start, the bytes as they lie in memory, little
end first, the C field, its C type, and what the bytes mean). A region a
pointer leads to follows its parent, indented one step, introduced by
``└─▶ #1``. Fields longer than 8 bytes continue on the next lines, 8 bytes a
line.
"""

from __future__ import annotations

from typing import List, Optional

from .model import AddressBook, Explanation, Field, Region

_UNICODE = {"branch": "└─▶ ", "mask": "··", "arrow": "→", "bar": "│"}
_ASCII = {"branch": "`-> ", "mask": "..", "arrow": "->", "bar": "|"}

_RESET = "\033[0m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_CYAN = "\033[36m"
_FIELD_COLORS = ["\033[33m", "\033[32m", "\033[35m", "\033[34m"]


class TextRenderer:
    """Renders explanations as text; ``ascii`` avoids box-drawing glyphs, ``color`` adds ANSI."""

    def __init__(self, ascii: bool = False, color: bool = False):
        self.glyph = _ASCII if ascii else _UNICODE
        self.color = color

    def paint(self, text: str, style: str) -> str:
        return f"{style}{text}{_RESET}" if self.color and text else text

    # ----------------------------------------------------------------- top

    def render(self, explanation: Explanation, header: bool = True) -> str:
        """Each value in turn: what it is and how it was encoded, then its block."""
        book = explanation.book or AddressBook()
        lines: List[str] = []
        count = max(len(explanation.sources) if header else 0, len(explanation.roots))
        for i in range(count):
            if header and i < len(explanation.sources):
                if lines:
                    lines.append("")
                lines += self.value_header(explanation, i)
            if i < len(explanation.roots) and not explanation.error:
                if lines:
                    lines.append("")
                self.region(explanation.roots[i], book, 0, lines, branch=False)
        if explanation.error:
            lines.append("")
            lines.append(f"cannot be passed: {explanation.error}")
        return "\n".join(lines) + "\n"

    def value_header(self, explanation: Explanation, i: int) -> List[str]:
        """The lines about value ``i``: its source and value, its setter, what it comes back as."""
        value = explanation.values[i] if i < len(explanation.values) else ""
        lines = [self.paint(explanation.sources[i], _BOLD) + (f"  = {value}" if value else "")]
        if i < len(explanation.setters):
            lines.append(f"  encoded by {explanation.setters[i]}")
        if i < len(explanation.returns) and explanation.returns[i]:
            lines.append(f"  comes back from a kernel that returns it as {explanation.returns[i]}")
        return lines

    # -------------------------------------------------------------- regions

    def region(self, region: Region, book: AddressBook, indent: int, lines: List[str],
               branch: bool) -> None:
        pad = " " * indent
        lead = pad + (self.glyph["branch"] if branch else "")
        where = "" if book.stable or not region.address else f" at 0x{region.address:x}"
        title = f"{region.label}  {region.kind}, {_bytes(region.size)}{where}"
        lines.append(lead + self.paint(title, _BOLD))
        body = " " * (len(lead) if branch else indent + 2)
        if region.summary:
            lines.append(body + region.summary)
        if region.code:
            lines.append(body + self.paint(f"[{region.code}]", _DIM))
        fields = region.fields()
        offset_width = max([len(f"+{f.offset + max(f.size - 1, 0)}") for f in fields] + [2])
        name_width = min(max([len(f.name) for f in fields] + [4]), 28)
        type_width = min(max([len(f.ctype) for f in fields] + [4]), 16)
        for section in region.sections:
            if section.elided:
                lines.append(body + "  " + self.paint(section.note, _DIM))
                continue
            if section.title or (section.struct and section.struct != region.kind):
                heading = ": ".join(part for part in (section.title, section.struct) if part)
                if section.note:
                    heading += f"  ({section.note})"
                lines.append(body + "  " + self.paint(heading, _CYAN))
            for k, f in enumerate(section.fields):
                lines += self.field_lines(f, book, body + "    ", offset_width, name_width,
                                          type_width, _FIELD_COLORS[k % len(_FIELD_COLORS)])
        for child in region.children():
            self.region(child, book, len(body) + 2, lines, branch=True)

    def byte_text(self, f: Field, chunk: bytes, book: AddressBook) -> str:
        if f.is_pointer and book.stable and f.pointer:
            return " ".join([self.glyph["mask"]] * len(chunk))
        return " ".join(f"{b:02x}" for b in chunk)

    def field_lines(self, f: Field, book: AddressBook, pad: str, offset_width: int,
                    name_width: int, type_width: int, style: str) -> List[str]:
        meaning = f.meaning
        if f.is_pointer and (f.pointer or not meaning):
            target = book.pointer(f.pointer)
            meaning = f"{meaning} {self.glyph['arrow']} {target}" if meaning else \
                f"{self.glyph['arrow']} {target}"
            if f.see_also is not None:
                meaning += " (drawn above)"
        chunks = [f.raw[i:i + 8] for i in range(0, len(f.raw), 8)] or [b""]
        is_text = f.ctype.startswith("char[")
        out = []
        for n, chunk in enumerate(chunks):
            offset = f"+{f.offset + 8 * n}".rjust(offset_width)
            data = self.paint(self.byte_text(f, chunk, book).ljust(23), style)
            if n == 0:
                ascii_part = f"|{_printable(chunk)}|  " if is_text and len(chunks) > 1 else ""
                out.append(f"{pad}{offset}  {data}  {f.name.ljust(name_width)}  "
                           f"{f.ctype.ljust(type_width)}  {ascii_part}{meaning}".rstrip())
            else:
                ascii_part = f"|{_printable(chunk)}|" if is_text else ""
                out.append(f"{pad}{offset}  {data}  {''.ljust(name_width)}  "
                           f"{''.ljust(type_width)}  {ascii_part}".rstrip())
        return out


def _printable(chunk: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)


def render_text(explanation: Explanation, ascii: bool = False, color: bool = False,
                header: bool = True) -> str:
    """The explanation as terminal text; ``header=False`` leaves out the lines about the values.

    ``ascii`` draws with ASCII only, escaping any other character of the
    values (``\\xe9``), for terminals that cannot print more.
    """
    text = TextRenderer(ascii=ascii, color=color).render(explanation, header=header)
    return text.encode("ascii", "backslashreplace").decode("ascii") if ascii else text


def can_encode(stream, text: str) -> bool:
    """Whether ``stream`` can print ``text`` (a C-locale terminal cannot print box drawing)."""
    encoding: Optional[str] = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        text.encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _bytes(count: int) -> str:
    return f"{count} byte" if count == 1 else f"{count} bytes"
