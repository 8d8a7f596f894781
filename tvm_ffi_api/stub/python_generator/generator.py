""":class:`PythonGenerator`: the :class:`~..generator.Generator` that writes Python stubs."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, FrozenSet, List, Mapping, Set, Tuple

from .. import consts as C
from ..file_utils import CodeBlock
from ..utils import FuncInfo, InitConfig, ObjectInfo, Options
from . import codegen as G, consts as PC
from .utils import ImportItem, PythonImports


class PythonGenerator:
    """Python stubs: signatures under ``if TYPE_CHECKING:``, imports, ``__all__``, re-exports.

    Its one directive, ``import-object: <full name>;<type checking only>;<alias>``,
    adds an import to the file (``_FFI_LOAD_LIB``, ``tvm_ffi.libinfo.load_lib_module``,
    marks a file that loads its library, whose ``__all__`` then has ``LIB``).
    """

    name = "python"
    syntax = C.PYTHON_SYNTAX
    source_exts: FrozenSet[str] = frozenset({".py", ".pyi"})
    directive_kinds: FrozenSet[str] = frozenset({"import-object"})

    def default_ty_map(self) -> Dict[str, str]:
        """A fresh copy of the FFI origin -> Python name map."""
        return dict(PC.TY_MAP_DEFAULTS)

    def new_imports(self) -> PythonImports:
        """An empty import collector for one file."""
        return PythonImports()

    def add_directive(self, imports: PythonImports, name: str, payload: str, lineno: int) -> None:
        """Records an ``import-object`` directive."""
        if name != "import-object":
            raise ValueError(f"Unknown directive `{name}` at line {lineno}")
        full_name, checking_only, alias = ([p.strip() for p in payload.split(";")] + ["", ""])[:3]
        imports.items.append(ImportItem(full_name, type_checking_only=checking_only.lower() == "true",
                                        alias=alias or None))
        if alias == "_FFI_LOAD_LIB" or full_name.endswith("libinfo.load_lib_module"):
            imports.has_lib_load = True

    def canonical_type_name(self, type_key: str) -> str:
        """The full name an import of ``type_key`` would have (to skip importing it locally)."""
        return ImportItem(type_key).full_name

    def extra_export_names(self, imports: PythonImports) -> Set[str]:
        """``{"LIB"}`` for a file that loads its library."""
        return {"LIB"} if imports.has_lib_load else set()

    def is_builtin(self, type_key: str) -> bool:
        """Whether ``tvm_ffi`` itself binds ``type_key``."""
        return type_key in C.BUILTIN_TYPE_KEYS

    def check_view(self, code_blocks: List[CodeBlock]) -> Tuple[str, ...]:
        """What ``--check`` compares: the whole text."""
        return tuple(line for code in code_blocks for line in code.lines)

    def generate_global_funcs_block(self, code: CodeBlock, global_funcs: List[FuncInfo],
                                    ty_map: Dict[str, str], imports: PythonImports,
                                    opt: Options) -> None:
        """A ``global/`` block."""
        G.generate_python_global_funcs(code, global_funcs, ty_map, imports.items, opt)

    def generate_object_block(self, code: CodeBlock, ty_map: Dict[str, str],
                              imports: PythonImports, opt: Options, obj_info: ObjectInfo,
                              declared: Mapping[str, Path]) -> None:
        """An ``object/`` block."""
        G.generate_python_object(code, ty_map, imports.items, opt, obj_info)

    def generate_import_section_block(self, code: CodeBlock, imports: PythonImports,
                                      opt: Options, defined_types: Set[str]) -> None:
        """The ``import-section`` block, without the types the file defines itself."""
        G.generate_python_import_section(
            code, [i for i in imports.items if i.full_name not in defined_types], opt)

    def generate_all_block(self, code: CodeBlock, names: Set[str], opt: Options) -> None:
        """The ``__all__`` block."""
        G.generate_python_all(code, names, opt)

    def generate_export_block(self, code: CodeBlock) -> None:
        """An ``export/`` block."""
        G.generate_python_export(code)

    def generate_helpers_block(self, code: CodeBlock, opt: Options) -> None:
        """Python files have no helpers block."""

    def api_filename(self) -> str:
        """``_ffi_api.py``."""
        return "_ffi_api.py"

    def init_filename(self) -> str:
        """``__init__.py``."""
        return "__init__.py"

    def generate_api_file(self, code_blocks: List[CodeBlock], ty_map: Dict[str, str],
                          module_name: str, object_infos: List[ObjectInfo],
                          init_cfg: InitConfig, is_root: bool) -> str:
        """What ``--init`` appends to a module's ``_ffi_api.py``."""
        return G.generate_python_ffi_api(code_blocks, ty_map, module_name, object_infos,
                                         init_cfg, is_root, self.syntax)

    def generate_init_file(self, code_blocks: List[CodeBlock], module_name: str,
                           submodule: str) -> str:
        """What ``--init`` appends to a package's ``__init__.py``."""
        return G.generate_python_init(code_blocks, module_name, submodule, self.syntax)

    def finalize_init(self, init_path: Path, generated_prefixes: Set[str]) -> None:
        """Python packages need no wiring after ``--init``."""
