"""The marker grammar of ``tvm-ffi-stubgen`` and the constants every generator shares.

A file takes part in stub generation through comment lines of one grammar,
whatever its language; only the comment token differs (``#`` in Python,
``//`` in Rust)::

    # tvm-ffi-stubgen(begin): global/my_ext          <- a generated block opens
    ...                                              <- regenerated on every run
    # tvm-ffi-stubgen(end)                           <- and closes
    # tvm-ffi-stubgen(ty-map): my_ext.Foo -> pkg.Foo <- a one-line directive
    # tvm-ffi-stubgen(skip-file)                     <- leave this file alone

Block kinds: ``global/<prefix>[@<module>]`` (the global functions under a
prefix), ``object/<type key>`` (a class body), ``import-section``,
``__all__`` and ``export/<submodule>``.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, Literal, Optional


@dataclasses.dataclass(frozen=True)
class MarkerSyntax:
    """The stub markers of one comment syntax (``comment`` is the line-comment token)."""

    comment: str

    @property
    def prefix(self) -> str:
        """What every marker line starts with: ``<comment> tvm-ffi-stubgen(``."""
        return f"{self.comment} tvm-ffi-stubgen("

    @property
    def begin(self) -> str:
        """Opens a generated block: ``<comment> tvm-ffi-stubgen(begin):``."""
        return f"{self.prefix}begin):"

    @property
    def end(self) -> str:
        """Closes a generated block: ``<comment> tvm-ffi-stubgen(end)``."""
        return f"{self.prefix}end)"

    @property
    def ty_map(self) -> str:
        """The type-renaming directive: ``<comment> tvm-ffi-stubgen(ty-map):``."""
        return self.directive("ty-map")

    @property
    def import_object(self) -> str:
        """The import directive: ``<comment> tvm-ffi-stubgen(import-object):``."""
        return self.directive("import-object")

    @property
    def skip_file(self) -> str:
        """Excludes the whole file: ``<comment> tvm-ffi-stubgen(skip-file)``."""
        return f"{self.prefix}skip-file)"

    def directive(self, name: str) -> str:
        """The one-line directive ``name``: ``<comment> tvm-ffi-stubgen(<name>):``."""
        return f"{self.prefix}{name}):"


PYTHON_SYNTAX = MarkerSyntax(comment="#")
RUST_SYNTAX = MarkerSyntax(comment="//")

#: The marker syntax of a file, by its (lower-case) extension; others use Python's.
SYNTAX_BY_EXT: Dict[str, MarkerSyntax] = {
    ".py": PYTHON_SYNTAX,
    ".pyi": PYTHON_SYNTAX,
    ".rs": RUST_SYNTAX,
}

#: One-line directives the pipeline itself consumes; a generator declares the others.
PIPELINE_DIRECTIVE_KINDS: FrozenSet[str] = frozenset({"ty-map", "prefix", "skip"})

#: The kinds a parsed block can have (None: a plain line outside any block).
STUB_BLOCK_KINDS = Optional[Literal["global", "object", "import-section", "directive", "export",
                                    "__all__"]]
BLOCK_KINDS = frozenset({"global", "object", "import-section", "directive", "export", "__all__",
                         None})

TERM_RESET = "\033[0m"
TERM_BOLD = "\033[1m"
TERM_BLACK = "\033[30m"
TERM_RED = "\033[31m"
TERM_GREEN = "\033[32m"
TERM_YELLOW = "\033[33m"
TERM_BLUE = "\033[34m"
TERM_MAGENTA = "\033[35m"
TERM_CYAN = "\033[36m"
TERM_WHITE = "\033[37m"

#: Where the tool is documented (printed by ``--help``).
DOC_URL = "https://tvm.apache.org/ffi/packaging/stubgen.html"

#: Renames applied to reflected method names when their metadata is read.
FN_NAME_MAP: Dict[str, str] = {}

#: Object types the ``tvm_ffi`` package binds itself: no generator writes a class for them.
BUILTIN_TYPE_KEYS = frozenset({
    "ffi.BigInt", "ffi.Bytes", "ffi.Error", "ffi.Function", "ffi.Object", "ffi.OpaquePyObject",
    "ffi.SmallBytes", "ffi.SmallStr", "ffi.String", "ffi.Tensor",
})
