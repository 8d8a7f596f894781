"""Source files as blocks: the plain lines, the generated blocks and the directives.

:meth:`FileInfo.from_file` splits a file along its stub markers (see
:mod:`.consts`) into :class:`CodeBlock` s; generators replace the lines of the
generated blocks; :meth:`FileInfo.update` joins the blocks again and writes
the file only if its text changed.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import traceback
from pathlib import Path
from typing import Callable, Collection, Iterator, List, Optional, Tuple, Union

from . import consts as C

#: The block kinds by the stub name's prefix (``global/x`` -> ``global``, param ``x``).
_PREFIXED_KINDS = ("global", "object", "export")
#: Block kinds whose whole stub name is the kind.
_BARE_KINDS = ("import-section", "__all__")


def syntax_for(path: Path) -> C.MarkerSyntax:
    """The marker syntax of ``path`` by its extension (Python's for unknown ones)."""
    return C.SYNTAX_BY_EXT.get(path.suffix.lower(), C.PYTHON_SYNTAX)


@dataclasses.dataclass
class CodeBlock:
    """A run of lines: a generated block (markers included), a directive, or a plain line.

    ``param`` is what the marker names: the prefix and import module of a
    ``global`` block (a pair), the type key of an ``object`` block, the
    submodule of an ``export`` block, ``(name, payload)`` of a directive.
    """

    kind: C.STUB_BLOCK_KINDS
    param: Union[str, Tuple[str, ...]]
    lineno_start: int
    lineno_end: Optional[int]
    lines: List[str]

    def __post_init__(self) -> None:
        if self.kind not in C.BLOCK_KINDS:
            raise ValueError(f"unknown block kind {self.kind!r}")

    @property
    def indent(self) -> int:
        """The indentation (spaces) of the block's first line."""
        if not self.lines:
            return 0
        first = self.lines[0]
        return len(first) - len(first.lstrip(" "))

    @staticmethod
    def from_begin_line(lineo: int, line: str, syntax: C.MarkerSyntax) -> "CodeBlock":
        """The block a marker line (stripped) opens, or the directive it is; no lines yet."""
        if not line.startswith(syntax.begin):
            # `<comment> tvm-ffi-stubgen(<name>): <payload>`: the payload stays as written.
            name, sep, payload = line[len(syntax.prefix):].partition("):")
            if not sep or not name or not name.replace("-", "_").isidentifier():
                raise ValueError(f"Unknown stub type at line {lineo}: {line}")
            return CodeBlock(kind="directive", param=(name, payload.strip()),
                             lineno_start=lineo, lineno_end=lineo, lines=[])
        stub = line[len(syntax.begin):].strip()
        param: Union[str, Tuple[str, ...]] = ""
        if stub in _BARE_KINDS:
            kind = stub
        else:
            kind, slash, rest = stub.partition("/")
            if not slash or kind not in _PREFIXED_KINDS:
                raise ValueError(f"Unknown stub type `{stub}` at line {lineo}")
            param = rest.strip()
            if kind == "global":
                # `global/<prefix>@<module that provides init_ffi_api>`
                param = tuple(param.split("@")) if "@" in param else (param, "")
        return CodeBlock(kind=kind, param=param, lineno_start=lineo, lineno_end=None, lines=[])


def _print_diff(old: Tuple[str, ...], new: Tuple[str, ...]) -> None:
    colors = {"-": C.TERM_RED, "+": C.TERM_GREEN, "?": C.TERM_YELLOW}
    for line in difflib.unified_diff(old, new, lineterm=""):
        if line.startswith(("---", "+++")):
            continue  # the file-name header of the diff, empty here
        color = colors.get(line[:1])
        print(f"{color}{line}{C.TERM_RESET}" if color else line)


@dataclasses.dataclass
class FileInfo:
    """A file split into blocks; ``lines`` is its text as last read or written."""

    path: Path
    lines: Tuple[str, ...]
    code_blocks: List[CodeBlock]
    syntax: C.MarkerSyntax

    def update(self, verbose: bool, dry_run: bool) -> bool:
        """Joins the blocks; if that changes the text, writes it (unless ``dry_run``).

        Returns whether the text changed; ``verbose`` prints the diff.
        """
        new_lines = tuple(line for block in self.code_blocks for line in block.lines)
        if new_lines == self.lines:
            if verbose:
                print(f"{C.TERM_CYAN}-----> Unchanged{C.TERM_RESET}")
            return False
        if verbose:
            _print_diff(self.lines, new_lines)
        self.lines = new_lines
        if not dry_run:
            self.path.write_text("\n".join(new_lines) + "\n", encoding="utf-8")
        return True

    @staticmethod
    def from_file(file: Path, include_empty: bool = False,
                  syntax: Optional[C.MarkerSyntax] = None) -> Optional["FileInfo"]:
        """``file`` split into blocks; None for a ``skip-file`` file, and for a file
        without any marker unless ``include_empty``. ``ValueError`` on a nested,
        unmatched or unclosed block or an unknown marker."""
        if not file.is_file():
            raise ValueError(f"Expected a file, but got: {file}")
        file = file.resolve()
        syntax = syntax or syntax_for(file)
        lines = file.read_text(encoding="utf-8").splitlines()
        stripped = [line.strip() for line in lines]
        if any(s.startswith(syntax.skip_file) for s in stripped):
            return None
        if not include_empty and not any(s.startswith(syntax.prefix) for s in stripped):
            return None
        blocks: List[CodeBlock] = []
        open_block: Optional[CodeBlock] = None
        for lineno, (line, clean) in enumerate(zip(lines, stripped), 1):
            if clean.startswith(syntax.begin):
                if open_block is not None:
                    raise ValueError(f"Nested stub not permitted at line {lineno}")
                open_block = CodeBlock.from_begin_line(lineno, clean, syntax)
                open_block.lines.append(line)
            elif clean.startswith(syntax.end):
                if open_block is None:
                    raise ValueError(f"Unmatched `{syntax.end}` found at line {lineno}")
                open_block.lineno_end = lineno
                open_block.lines.append(line)
                blocks.append(open_block)
                open_block = None
            elif clean.startswith(syntax.prefix):
                directive = CodeBlock.from_begin_line(lineno, clean, syntax)
                directive.lines.append(line)
                blocks.append(directive)
            elif open_block is None:
                blocks.append(CodeBlock(kind=None, param="", lineno_start=lineno,
                                        lineno_end=lineno, lines=[line]))
            else:
                open_block.lines.append(line)
        if open_block is not None:
            raise ValueError("Unclosed stub block at end of file")
        return FileInfo(path=file, lines=tuple(lines), code_blocks=blocks, syntax=syntax)

    def reload(self) -> None:
        """Re-reads the blocks from disk; ``lines`` keeps the text last seen."""
        source = FileInfo.from_file(self.path, syntax=self.syntax)
        if source is None:
            raise ValueError(f"File no longer exists or valid: {self.path}")
        self.code_blocks = source.code_blocks


def _report_error(error: BaseException) -> None:
    print(f"{C.TERM_RED}[Error]\n{traceback.format_exc()}{C.TERM_RESET}", end="", flush=True)


def collect_files(paths: List[Path], source_exts: Collection[str]) -> List[FileInfo]:
    """Every file with markers among ``paths``, parsed, sorted by path.

    A file named in ``paths`` is always read; a directory is walked
    recursively for files whose extension (any case) is in ``source_exts``.
    A file that fails to parse is reported and left out.
    """
    exts = {ext.lower() for ext in source_exts}

    def candidates() -> Iterator[Path]:
        for path in paths:
            if path.is_file():
                yield path
                continue
            for root, _dirs, names in path_walk(path, follow_symlinks=False,
                                                on_error=_report_error):
                yield from (root / n for n in names if Path(n).suffix.lower() in exts)

    files = []
    for path in sorted(candidates(), key=str):
        try:
            info = FileInfo.from_file(path)
        except Exception as error:  # noqa: BLE001 - one bad file does not stop the run
            _report_error(error)
            continue
        if info is not None:
            files.append(info)
    return files


def path_walk(p: Path, *, top_down: bool = True,
              on_error: Optional[Callable[[Exception], None]] = None,
              follow_symlinks: bool = False) -> Iterator[Tuple[Path, List[str], List[str]]]:
    """``Path.walk`` (Python 3.12+) on every Python: ``(folder, dir names, file names)``."""
    if not p.exists():
        return
    for root, dirs, names in os.walk(p, topdown=top_down, onerror=on_error,
                                     followlinks=follow_symlinks):
        yield Path(root), dirs, names
