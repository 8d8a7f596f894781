"""The target languages of ``tvm-ffi-stubgen``: the :class:`Generator` interface and the registry.

The pipeline (:mod:`.cli`) reads the registry, parses the marker blocks and
holds the language-neutral records (:mod:`.utils`); a generator turns those
into text of one language. It also owns that language's notion of an import:
the pipeline asks it for a collector per file (:meth:`Generator.new_imports`),
passes the collector to every block of the file, and has it rendered into the
file's ``import-section``, without ever looking inside.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Protocol, Set

from . import consts as C
from .file_utils import CodeBlock
from .python_generator import PythonGenerator
from .rust_generator import RustGenerator
from .utils import FuncInfo, InitConfig, ObjectInfo, Options


class Generator(Protocol):
    """What a target language provides. ``*_block`` methods rewrite ``code.lines``
    between the markers; ``*_file`` methods return text ``--init`` appends to new
    files. A generator keeps no state between files."""

    #: The target's name (``--target``).
    name: str
    #: The file extensions (lower case, with the dot) a directory scan visits.
    source_exts: FrozenSet[str]
    #: The marker syntax of the files it writes.
    syntax: C.MarkerSyntax
    #: The one-line directives it consumes (besides the pipeline's own).
    directive_kinds: FrozenSet[str]

    def default_ty_map(self) -> Dict[str, str]:
        """The FFI origin -> target type name map a run starts from."""

    def new_imports(self) -> Any:
        """An empty import collector for one file."""

    def add_directive(self, imports: Any, name: str, payload: str, lineno: int) -> None:
        """Records one of its directives (as written) into a file's collector."""

    def canonical_type_name(self, type_key: str) -> str:
        """The name a locally defined ``type_key`` is known by (so it is not imported)."""

    def extra_export_names(self, imports: Any) -> Set[str]:
        """Public names the collected imports imply."""

    def is_builtin(self, type_key: str) -> bool:
        """Whether the target's runtime binds ``type_key`` itself (no block for it)."""

    def check_view(self, code_blocks: List[CodeBlock]) -> object:
        """What ``--check`` compares before and after a run."""

    def generate_global_funcs_block(self, code: CodeBlock, global_funcs: List[FuncInfo],
                                    ty_map: Dict[str, str], imports: Any, opt: Options) -> None:
        """A ``global/<prefix>`` block."""

    def generate_object_block(self, code: CodeBlock, ty_map: Dict[str, str], imports: Any,
                              opt: Options, obj_info: ObjectInfo,
                              declared: Mapping[str, Path]) -> None:
        """An ``object/<type key>`` block; ``declared``: every type key with a block in
        this run, to the file holding it."""

    def generate_import_section_block(self, code: CodeBlock, imports: Any, opt: Options,
                                      defined_types: Set[str]) -> None:
        """The ``import-section`` block (``defined_types``: what the file defines)."""

    def generate_all_block(self, code: CodeBlock, names: Set[str], opt: Options) -> None:
        """The public-names block."""

    def generate_export_block(self, code: CodeBlock) -> None:
        """An ``export/<submodule>`` block."""

    def generate_helpers_block(self, code: CodeBlock, opt: Options) -> None:
        """Per-file support code, for targets that need some."""

    def api_filename(self) -> str:
        """The name of a scaffolded API file."""

    def init_filename(self) -> str:
        """The name of a scaffolded package entry."""

    def generate_api_file(self, code_blocks: List[CodeBlock], ty_map: Dict[str, str],
                          module_name: str, object_infos: List[ObjectInfo],
                          init_cfg: InitConfig, is_root: bool) -> str:
        """Text appended to a scaffolded API file."""

    def generate_init_file(self, code_blocks: List[CodeBlock], module_name: str,
                           submodule: str) -> str:
        """Text appended to a scaffolded package entry."""

    def finalize_init(self, init_path: Path, generated_prefixes: Set[str]) -> None:
        """Wiring after ``--init`` wrote every file."""


_GENERATORS: Dict[str, Generator] = {"python": PythonGenerator(), "rust": RustGenerator()}


def generator_names() -> List[str]:
    """The target names, sorted (``--target``'s choices)."""
    return sorted(_GENERATORS)


def get_generator(target: str) -> Generator:
    """The generator of ``target``; ``ValueError`` listing the known ones otherwise."""
    if target not in _GENERATORS:
        raise ValueError(f"Unknown stubgen generator: {target!r}. "
                         f"Known generators: {', '.join(sorted(_GENERATORS))}")
    return _GENERATORS[target]
