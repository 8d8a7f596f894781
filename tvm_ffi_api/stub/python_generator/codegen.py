"""The Python text of each block kind, and the files ``--init`` scaffolds.

Each ``generate_python_*`` function replaces the lines between a block's
markers (keeping the markers); what it names is recorded in ``imports`` for
the file's ``import-section``. Generated text is fenced with ``# fmt: off`` /
``# fmt: on`` so formatters leave it as generated. Signatures go under ``if
TYPE_CHECKING:``: at run time the names come from the library, the stubs only
tell type checkers about them.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

from .. import consts as C
from ..file_utils import CodeBlock
from ..utils import FuncInfo, InitConfig, ObjectInfo, Options
from . import consts as PC
from .utils import (
    ImportItem,
    TyMap,
    render_func_signature,
    render_object_ffi_init,
    render_object_fields,
    render_object_init,
    render_object_methods,
)

__all__ = [
    "generate_python_all", "generate_python_export", "generate_python_ffi_api",
    "generate_python_global_funcs", "generate_python_import_section", "generate_python_init",
    "generate_python_object", "render_func_signature", "render_object_ffi_init",
    "render_object_fields", "render_object_init", "render_object_methods",
]


def _recording_ty_map(ty_map: Dict[str, str], imports: List[ImportItem],
                      func_names: Optional[Set[str]] = None) -> TyMap:
    """A ``ty_map`` callable: maps an origin, imports it (type checking only) when dotted,
    and returns the name to write; a name that a function of the block also has gets an
    ``_`` alias, so the import does not shadow the function."""

    def name_of(origin: str) -> str:
        full = ty_map.get(origin, origin)
        short = full.rsplit(".", 1)[-1]
        if "." not in full:
            return short
        alias = f"_{short}" if func_names and short in func_names else None
        imports.append(ImportItem(full, type_checking_only=True, alias=alias))
        return alias or short

    return name_of


def _input_ty_map(ty_map: Dict[str, str]) -> Dict[str, str]:
    """``ty_map`` with parameter-side defaults wherever it keeps the output default."""
    result = dict(ty_map)
    for origin, accepted in PC.TY_MAP_INPUT_DEFAULTS.items():
        if ty_map.get(origin, PC.TY_MAP_DEFAULTS.get(origin)) == PC.TY_MAP_DEFAULTS.get(origin):
            result[origin] = accepted
    return result


def _fill(code: CodeBlock, lines: List[str]) -> None:
    """Puts ``lines`` between the block's markers, indented as the opening marker."""
    indent = " " * code.indent
    code.lines = [code.lines[0], *(indent + line for line in lines), code.lines[-1]]


def generate_python_global_funcs(code: CodeBlock, global_funcs: List[FuncInfo],
                                 ty_map: Dict[str, str], imports: List[ImportItem],
                                 opt: Options) -> None:
    """A ``global/<prefix>[@<module>]`` block: registers the prefix's functions as module
    attributes (``<module>.init_ffi_api``, default ``tvm_ffi``) and declares them for type
    checkers. Without functions the block is left as it is."""
    if len(code.lines) < 2:
        raise ValueError(f"block at line {code.lineno_start} has no end marker")
    if not global_funcs:
        return
    prefix, import_from = code.param  # type: ignore[str-unpack]  # (a pair for this kind)
    imports.append(ImportItem(f"{import_from or 'tvm_ffi'}.init_ffi_api", alias="_FFI_INIT_FUNC"))
    imports.append(ImportItem("typing.TYPE_CHECKING"))
    names = {f.schema.name.rsplit(".", 1)[-1] for f in global_funcs}
    outputs = _recording_ty_map(ty_map, imports, names)
    inputs = _recording_ty_map(_input_ty_map(ty_map), imports, names)
    _fill(code, [
        "# fmt: off",
        f'_FFI_INIT_FUNC("{prefix}", __name__)',
        "if TYPE_CHECKING:",
        *(render_func_signature(f, outputs, opt.indent, input_ty_map=inputs)
          for f in global_funcs),
        "# fmt: on",
    ])


def generate_python_object(code: CodeBlock, ty_map: Dict[str, str], imports: List[ImportItem],
                           opt: Options, obj_info: ObjectInfo) -> None:
    """An ``object/<type key>`` block (inside the class): the fields, then, for type
    checkers, the constructor and the methods."""
    if len(code.lines) < 2:
        raise ValueError(f"block at line {code.lineno_start} has no end marker")
    names = {m.schema.name.rsplit(".", 1)[-1] for m in obj_info.methods}
    outputs = _recording_ty_map(ty_map, imports, names)
    if obj_info.has_overloaded_methods():
        imports.append(ImportItem("typing.overload", type_checking_only=True))
    inputs = _recording_ty_map(_input_ty_map(ty_map), imports, names)
    checked = [
        *render_object_init(obj_info, outputs, opt.indent, input_ty_map=inputs),
        *render_object_ffi_init(obj_info, outputs, opt.indent, input_ty_map=inputs),
        *render_object_methods(obj_info, outputs, opt.indent, input_ty_map=inputs),
    ]
    body = ["# fmt: off", *render_object_fields(obj_info, outputs, 0)]
    if checked:
        imports.append(ImportItem("typing.TYPE_CHECKING"))
        body += ["if TYPE_CHECKING:", *checked]
    _fill(code, [*body, "# fmt: on"])


def generate_python_import_section(code: CodeBlock, imports: List[ImportItem],
                                   opt: Options) -> None:
    """The ``import-section`` block: one ``from <mod> import ...`` line per module, those
    needed only by type checkers under ``if TYPE_CHECKING:``. Left as is when empty."""
    at_run_time: Dict[str, List[ImportItem]] = {}
    for_checkers: Dict[str, List[ImportItem]] = {}
    for item in imports:
        (for_checkers if item.type_checking_only else at_run_time).setdefault(
            item.mod, []).append(item)
    if for_checkers:
        at_run_time.setdefault("typing", []).append(ImportItem("typing.TYPE_CHECKING"))

    def line(mod: str, items: List[ImportItem], indent: int) -> str:
        names = ", ".join(sorted({item.name_with_alias for item in items}))
        return " " * indent + (f"from {mod} import {names}" if mod else f"import {names}")

    body = [line(mod, at_run_time[mod], 0) for mod in sorted(at_run_time)]
    if for_checkers:
        body.append("if TYPE_CHECKING:")
        body += [line(mod, for_checkers[mod], opt.indent) for mod in sorted(for_checkers)]
    if body:
        code.lines = [code.lines[0], "# fmt: off", "# isort: off",
                      "from __future__ import annotations", *body, "# isort: on", "# fmt: on",
                      code.lines[-1]]


def _isort_key(name: str):
    """Constants first, then classes, then the rest (isort's force_sort_within_sections)."""
    if name.isupper():
        return (0, name)
    if name[:1].isupper() and "_" not in name:
        return (1, name)
    return (2, name)


def generate_python_all(code: CodeBlock, names: Set[str], opt: Options) -> None:
    """An ``__all__`` block: the short names, one quoted per line, in isort's order."""
    if len(code.lines) < 2:
        raise ValueError(f"block at line {code.lineno_start} has no end marker")
    if not names:
        return
    short = {name.rsplit(".", 1)[-1] for name in names}
    indent = " " * code.indent
    code.lines = [code.lines[0], *(f'{indent}"{n}",' for n in sorted(short, key=_isort_key)),
                  code.lines[-1]]


def generate_python_export(code: CodeBlock) -> None:
    """An ``export/<submodule>`` block: re-exports the submodule's ``__all__``."""
    if len(code.lines) < 2:
        raise ValueError(f"block at line {code.lineno_start} has no end marker")
    mod = code.param
    code.lines = [
        code.lines[0], "# fmt: off", "# isort: off",
        f"from .{mod} import *  # noqa: F403",
        f"from .{mod} import __all__ as {mod}__all__",
        'if "__all__" not in globals():', "    __all__ = []",
        f"__all__.extend({mod}__all__)",
        "# isort: on", "# fmt: on", code.lines[-1],
    ]


def _empty_block(syntax: C.MarkerSyntax, stub: str, indent: str = "") -> str:
    return f"{indent}{syntax.begin} {stub}\n{indent}{syntax.end}\n"


def _import_object(syntax: C.MarkerSyntax, full_name: str, alias: str) -> str:
    return f"{syntax.import_object} {full_name};False;{alias}\n"


def generate_python_ffi_api(code_blocks: List[CodeBlock], ty_map: Dict[str, str],
                            module_name: str, object_infos: List[ObjectInfo],
                            init_cfg: InitConfig, is_root: bool, syntax: C.MarkerSyntax) -> str:
    """Text to append to an ``_ffi_api.py`` being scaffolded for ``module_name``: the
    sections it lacks (docstring, imports, globals, ``__all__``), the library load in the
    root module, and a class with an ``object/`` block per type (parents imported when
    defined elsewhere)."""
    text = "" if code_blocks else f'"""FFI API bindings for {module_name}."""\n'
    if not any(code.kind == "import-section" for code in code_blocks):
        text += "\n" + _empty_block(syntax, "import-section")
    if is_root:
        text += _import_object(syntax, "tvm_ffi.libinfo.load_lib_module", "_FFI_LOAD_LIB")
        text += f'LIB = _FFI_LOAD_LIB("{init_cfg.pkg}", "{init_cfg.shared_target}")\n'
    if not any(code.kind == "global" for code in code_blocks):
        text += _empty_block(syntax, f"global/{module_name}")
    if object_infos:
        text += _import_object(syntax, "tvm_ffi.register_object", "_FFI_REG_OBJ")
    here = {ty_map.get(info.type_key, info.type_key) for info in object_infos if info.type_key}
    for info in object_infos:
        if info.type_key is None:
            continue
        type_key = ty_map.get(info.type_key, info.type_key)
        parent_key = ty_map.get(info.parent_type_key, info.parent_type_key) \
            if info.parent_type_key else None
        parent_name = parent_key.rsplit(".", 1)[-1] if parent_key else "Object"
        if parent_key and parent_key not in here:
            parent_name = "_" + parent_key.replace(".", "_")
            text += _import_object(syntax, parent_key, parent_name)
        text += (f'@_FFI_REG_OBJ("{type_key}")\n'
                 f"class {type_key.rsplit('.', 1)[-1]}({parent_name}):\n"
                 f'    """FFI binding for `{type_key}`."""\n\n'
                 + _empty_block(syntax, f"object/{type_key}", "    ") + "\n")
    if not any(code.kind == "__all__" for code in code_blocks):
        text += f"\n__all__ = [\n{_empty_block(syntax, '__all__', '    ')}]\n"
    return text


def generate_python_init(code_blocks: List[CodeBlock], module_name: str, submodule: str,
                         syntax: C.MarkerSyntax) -> str:
    """Text to append to a package's ``__init__.py`` so that it re-exports ``submodule``
    (nothing when it already does)."""
    block = "\n" + _empty_block(syntax, f"export/{submodule}")
    if not code_blocks:
        return f'"""Package {module_name}."""\n' + block
    return "" if any(code.kind == "export" for code in code_blocks) else block
