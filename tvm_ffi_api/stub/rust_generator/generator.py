""":class:`RustGenerator`: the :class:`~..generator.Generator` that writes Rust bindings.

Objects only: Rust reaches global functions through ``cached_global_func!``,
and re-exports are the crate's business, so those blocks are left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Mapping, Set, Tuple

from .. import consts as SC
from ..file_utils import CodeBlock
from ..utils import FuncInfo, InitConfig, ObjectInfo, Options
from . import codegen, consts as C
from .utils import RustImports, RustUse, check_tokens, is_crate_type_key, rust_module_path


class _ModulesOf(Mapping):
    """The run's ``object/`` blocks: type key -> the Rust module of the file holding it."""

    def __init__(self, files: Mapping[str, Path]):
        self._files = files

    def __getitem__(self, type_key: str) -> Tuple[str, ...]:
        return rust_module_path(self._files[type_key])

    def __contains__(self, type_key: object) -> bool:
        return type_key in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


class RustGenerator:
    """Rust bindings of reflected objects, in ``.rs`` files under a crate's ``src/``."""

    name = "rust"
    syntax = SC.RUST_SYNTAX
    source_exts: FrozenSet[str] = frozenset({".rs"})
    directive_kinds: FrozenSet[str] = C.RUST_DIRECTIVE_KINDS

    def default_ty_map(self) -> Dict[str, str]:
        """A fresh copy of the FFI origin -> crate type map."""
        return dict(C.RUST_TY_MAP_DEFAULTS)

    def new_imports(self) -> RustImports:
        """An empty collector for one file (``use`` items and directives)."""
        return RustImports()

    def add_directive(self, imports: RustImports, name: str, payload: str, lineno: int) -> None:
        """``import-object`` becomes a ``use`` of its first ``;`` field; the others are parsed."""
        if name == "import-object":
            imports.record(payload.split(";", 1)[0].strip())
        else:
            imports.directives.add(name, payload, lineno)

    def canonical_type_name(self, type_key: str) -> str:
        """The Rust path of a defined type key (as :attr:`RustUse.path` spells it)."""
        return RustUse(type_key).path

    def extra_export_names(self, imports: RustImports) -> Set[str]:
        """None for Rust."""
        return set()

    def is_builtin(self, type_key: str) -> bool:
        """Every ``ffi.*`` key: the crate binds it."""
        return is_crate_type_key(type_key)

    def check_view(self, code_blocks: List[CodeBlock]) -> Dict[Tuple[str, object], Tuple[str, ...]]:
        """What the ``object/`` blocks and the import section define, not how it is spelled
        (see :func:`.utils.check_tokens`): a run that only moves ``use`` lines, comments,
        wrapping or module paths leaves a file up to date."""
        view = {}
        for code in code_blocks:
            if code.kind in ("object", "import-section"):
                tokens = check_tokens(code.lines[1:-1])
                if tokens:  # `use` lines alone define nothing
                    view[code.kind, code.param] = tokens
        return view

    def generate_global_funcs_block(self, code: CodeBlock, global_funcs: List[FuncInfo],
                                    ty_map: Dict[str, str], imports: RustImports,
                                    opt: Options) -> None:
        """Left alone: Rust calls globals through ``cached_global_func!``."""

    def generate_object_block(self, code: CodeBlock, ty_map: Dict[str, str],
                              imports: RustImports, opt: Options, obj_info: ObjectInfo,
                              declared: Mapping[str, Path]) -> None:
        """An ``object/`` block, each type named from the module of its block's file."""
        codegen.generate_rust_object(code, ty_map, imports, opt, obj_info, _ModulesOf(declared))

    def generate_import_section_block(self, code: CodeBlock, imports: RustImports,
                                      opt: Options, defined_types: Set[str]) -> None:
        """The ``use`` lines and builtin stand-ins."""
        codegen.generate_rust_import_section(code, imports, opt, defined_types)

    def generate_all_block(self, code: CodeBlock, names: Set[str], opt: Options) -> None:
        """Left alone: no re-export list in Rust."""

    def generate_export_block(self, code: CodeBlock) -> None:
        """Left alone: no submodule re-export in Rust."""

    def generate_helpers_block(self, code: CodeBlock, opt: Options) -> None:
        """The bindings need no per-file support code."""

    def api_filename(self) -> str:
        """``mod.rs``: one file per prefix."""
        return "mod.rs"

    def init_filename(self) -> str:
        """``mod.rs`` too: the API file is the module."""
        return "mod.rs"

    def generate_api_file(self, code_blocks: List[CodeBlock], ty_map: Dict[str, str],
                          module_name: str, object_infos: List[ObjectInfo],
                          init_cfg: InitConfig, is_root: bool) -> str:
        """What ``--init`` appends to a prefix's ``mod.rs``."""
        return codegen.generate_rust_api_file(code_blocks, ty_map, module_name, object_infos,
                                              init_cfg, is_root, self.syntax)

    def generate_init_file(self, code_blocks: List[CodeBlock], module_name: str,
                           submodule: str) -> str:
        """Nothing: the API file is the module entry."""
        return ""

    def finalize_init(self, init_path: Path, generated_prefixes: Set[str]) -> None:
        """``pub mod`` declarations from each parent to its generated children."""
        codegen.finalize_rust_module_tree(init_path, generated_prefixes)
