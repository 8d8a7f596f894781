"""``tvm-ffi-stubgen``: keeps the stub blocks of a package's source files up to date.

    tvm-ffi-stubgen [--dlls LIBS] [--imports MODS] [--init-pypkg P --init-lib T
                    --init-prefix X.] [--check] [--dry-run] [--verbose] PATH...

After loading ``--dlls`` / ``--imports`` (whatever registers the functions and
types), a run goes in stages over every file with markers under ``PATH``:

1. collect the ``ty-map`` directives (type renames, ``A.B -> C.D``);
2. with ``--init-*``, scaffold ``_ffi_api.py`` and ``__init__.py`` for every
   prefix under ``--init-prefix`` that has functions or types without a block;
   then a file with a ``prefix`` directive gets an ``object/`` block for each
   registered type under that prefix that has none;
3. regenerate every block (globals, objects, then imports, ``__all__``,
   re-exports) and write each file whose text changed.

Exit status: 0, 1 when ``--check`` found a stale file, 2 when a file failed.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import os
import sys
import traceback
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Set

from tvm_ffi_common.cli_args import OneLineParser, complain, non_negative_integer, output_problem

from ..core import _object_type_key_to_index
from . import consts as C
from .file_utils import CodeBlock, FileInfo, collect_files, syntax_for
from .generator import Generator, generator_names, get_generator
from .layout import classify, write_coverage_report
from .lib_state import (
    collect_global_funcs,
    collect_type_keys,
    object_info_from_type_key,
    toposort_objects,
)
from .utils import FuncInfo, InitConfig, Options

_PROG = "tvm-ffi-stubgen"


def _library_problem(path: str) -> Optional[str]:
    """Why ``path`` cannot be a shared library to load (before dlopen's longer message)."""
    if not os.path.exists(path):
        return "no such file"
    if os.path.isdir(path):
        return "is a directory, expected a shared library"
    with open(path, "rb") as f:
        if f.read(4) != b"\x7fELF":
            return "not a shared library (no ELF header)"
    return None


def _fail(path: Path, text: str) -> None:
    print(f'{C.TERM_RED}[Failed] File "{path}": {text}{C.TERM_RESET}')


def __main__() -> int:
    """Runs the command line; returns the exit status (see the module docstring)."""
    opt = _parse_args()
    generator = get_generator(opt.target)
    for module in opt.imports:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - whatever the module raised, one line
            return complain(_PROG, f"--imports {module}: cannot be imported "
                                   f"({type(exc).__name__}: {exc})")
    libraries = []  # kept loaded for the run
    for path in opt.dlls:
        problem = _library_problem(path)
        if problem is None:
            try:
                libraries.append(ctypes.CDLL(path))
            except OSError as exc:
                problem = f"cannot be loaded as a shared library ({exc})"
        if problem is not None:
            return complain(_PROG, f"--dlls {path}: {problem}")
    files = collect_files([Path(f) for f in opt.files], generator.source_exts)
    global_funcs = collect_global_funcs()
    init_path: Optional[Path] = None
    if opt.files:
        init_path = Path(opt.files[0]).resolve()
        init_path = init_path.parent if init_path.is_file() else init_path

    ty_map = generator.default_ty_map()
    failed = stale = 0
    for file in files:
        try:
            _stage_1(file, ty_map)
        except Exception:  # noqa: BLE001 - reported, the other files go on
            failed += 1
            _fail(file.path, traceback.format_exc())

    generated: Set[str] = set()
    if opt.init is not None and init_path is not None:
        generated = _stage_2(files, ty_map, init_cfg=opt.init, init_path=init_path,
                             global_funcs=global_funcs, generator=generator)
    # `--check` compares each file as the generator sees it before any block is rewritten.
    before = {f.path: generator.check_view(f.code_blocks) for f in files} if opt.check else {}
    failed += _roll_out_prefixes(files, generator)

    declared = _declared_objects(files)
    for file in files:
        if opt.verbose:
            print(f"{C.TERM_CYAN}[File] {file.path}{C.TERM_RESET}")
        try:
            changed = _stage_3(file, opt, ty_map, global_funcs, generator=generator,
                               declared=declared)
        except Exception:  # noqa: BLE001 - reported, the other files go on
            failed += 1
            _fail(file.path, traceback.format_exc())
            continue
        if changed and opt.check and generator.check_view(file.code_blocks) != before[file.path]:
            stale += 1
            print(f"{C.TERM_YELLOW}[Stale] {file.path}{C.TERM_RESET}")

    if generated and init_path is not None:
        generator.finalize_init(init_path, generated)
    if opt.coverage_out is not None:
        infos = {key: object_info_from_type_key(key)
                 for keys in collect_type_keys().values() for key in keys}
        write_coverage_report(Path(opt.coverage_out), classify(infos))
    del libraries
    return 2 if failed else 1 if stale else 0


def _stage_1(file: FileInfo, ty_map: Dict[str, str]) -> None:
    """Adds the file's ``ty-map`` directives (``A.B -> C.D``) to ``ty_map``."""
    for code in file.code_blocks:
        if code.kind == "directive" and code.param[0] == "ty-map":
            source, arrow, target = code.param[1].partition("->")
            if not arrow or "->" in target:
                raise ValueError(f"Invalid ty_map format at line {code.lineno_start}. "
                                 "Example: `A.B -> C.D`")
            ty_map[source.strip()] = target.strip()


def _new_blocks(syntax: C.MarkerSyntax, lineno: int, stub: str) -> List[CodeBlock]:
    """A blank line and an empty ``stub`` block, to insert into a file's blocks."""
    begin = f"{syntax.begin} {stub}"
    block = CodeBlock.from_begin_line(lineno, begin, syntax)
    block.lineno_end = lineno
    block.lines = [begin, syntax.end]
    return [CodeBlock(kind=None, param="", lineno_start=lineno, lineno_end=lineno, lines=[""]),
            block]


def _remove_unregistered_blocks(file: FileInfo, prefix: str, registered: List[str]) -> None:
    """Drops each ``object/`` block right under ``prefix`` whose type is no longer registered
    (with the blank line the roll-out put before it)."""
    kept: List[CodeBlock] = []
    for code in file.code_blocks:
        if (code.kind == "object" and isinstance(code.param, str)
                and code.param.rpartition(".")[0] == prefix and code.param not in registered):
            print(f'{C.TERM_YELLOW}[Removed] File "{file.path}": `object/{code.param}` '
                  f"(line {code.lineno_start}): the type is no longer registered{C.TERM_RESET}")
            if kept and kept[-1].kind is None and kept[-1].lines == [""]:
                kept.pop()
            continue
        kept.append(code)
    file.code_blocks[:] = kept


def _roll_out_prefixes(files: List[FileInfo], generator: Generator) -> int:
    """Gives a file with a ``prefix`` directive an ``object/`` block per registered type
    under the prefix that has none anywhere (unless named by ``skip``, or a builtin), and
    an ``import-section`` if it lacks one. Returns the number of files refused."""
    defined = {c.param for f in files for c in f.code_blocks if c.kind == "object"}
    registry = collect_type_keys()
    owners: Dict[str, Path] = {}
    failed = 0
    for file in files:
        directives = [c for c in file.code_blocks if c.kind == "directive"]
        heads = [c for c in directives if c.param[0] == "prefix"]
        if not heads:
            continue
        head, prefix = heads[0], heads[0].param[1].rstrip(".")
        if len(heads) > 1:
            failed += 1
            _fail(file.path, f"more than one `prefix` directive (line {heads[1].lineno_start})")
            continue
        if owners.setdefault(prefix, file.path) != file.path:
            failed += 1
            _fail(file.path, f"prefix `{prefix}` is already declared by {owners[prefix]}")
            continue
        _remove_unregistered_blocks(file, prefix, registry.get(prefix, []))
        if prefix not in registry:
            print(f"{C.TERM_YELLOW}[Skipped] No registered object under prefix `{prefix}`"
                  f"{C.TERM_RESET}")
            continue
        skipped = {c.param[1].strip() for c in directives if c.param[0] == "skip"}
        missing = [key for key in registry[prefix] if key not in defined
                   and key not in skipped and not generator.is_builtin(key)]
        blocks = file.code_blocks
        if not any(c.kind == "import-section" for c in blocks):
            at = blocks.index(head) + 1
            blocks[at:at] = _new_blocks(file.syntax, head.lineno_start, "import-section")
        at = 1 + max(i for i, c in enumerate(blocks) if c.kind in ("object", "import-section"))
        blocks[at:at] = [block for info in toposort_objects(missing)
                         for block in _new_blocks(file.syntax, head.lineno_start,
                                                  f"object/{info.type_key}")]
    return failed


def _file_for(files: List[FileInfo], path: Path) -> FileInfo:
    """The run's record of ``path``, added to ``files`` (read, or empty when new) if absent."""
    if path.exists():
        for file in files:
            if path.samefile(file.path):
                return file
        found = FileInfo.from_file(file=path, include_empty=True)
        if found is None:
            raise ValueError(f"Failed to read file: {path}")
    else:
        found = FileInfo(path=path, lines=(), code_blocks=[], syntax=syntax_for(path))
    files.append(found)
    return found


def _append(file: FileInfo, text: str) -> None:
    with file.path.open("a", encoding="utf-8") as f:
        f.write(text)
    file.reload()


def _stage_2(files: List[FileInfo], ty_map: Dict[str, str], init_cfg: InitConfig,
             init_path: Path, global_funcs: Dict[str, List[FuncInfo]],
             generator: Generator) -> Set[str]:
    """``--init``: for each prefix under ``init_cfg.prefix`` with functions or types that
    have no block yet, appends the API file and the package entry under ``init_path``
    (``a.b`` -> ``a/b/``). Returns the prefixes given files."""
    with_globals = {c.param[0] for f in files for c in f.code_blocks if c.kind == "global"}
    defined = {c.param for f in files for c in f.code_blocks if c.kind == "object"}
    skipped = {c.param[1].strip() for f in files for c in f.code_blocks
               if c.kind == "directive" and c.param[0] == "skip"}
    wanted = init_cfg.prefix.strip()
    if wanted and not wanted.endswith("."):
        wanted += "."
    root = wanted.rstrip(".")
    prefixes = collect_type_keys()
    for prefix in global_funcs:
        prefixes.setdefault(prefix, [])
    generated: Set[str] = set()
    for prefix, type_keys in prefixes.items():
        if prefix != root and not prefix.startswith(wanted):
            continue
        funcs = [] if prefix in with_globals else sorted(global_funcs.get(prefix, []),
                                                           key=lambda f: f.schema.name)
        objects = toposort_objects(sorted(
            key for key in set(type_keys) - defined - skipped if not generator.is_builtin(key)))
        if not funcs and not objects:
            continue
        generated.add(prefix)
        directory = init_path / prefix.replace(".", "/")
        directory.mkdir(parents=True, exist_ok=True)
        api = _file_for(files, directory / generator.api_filename())
        _append(api, generator.generate_api_file(api.code_blocks, ty_map, prefix, objects,
                                                 init_cfg, is_root=prefix == root))
        entry = _file_for(files, directory / generator.init_filename())
        _append(entry, generator.generate_init_file(entry.code_blocks, prefix,
                                                    generator.api_filename().rsplit(".", 1)[0]))
    return generated


def _declared_objects(files: List[FileInfo]) -> Dict[str, Path]:
    """Each type key with an ``object/`` block among ``files``, to its (first) file."""
    declared: Dict[str, Path] = {}
    for file in files:
        for code in file.code_blocks:
            if code.kind == "object" and isinstance(code.param, str):
                declared.setdefault(code.param, file.path)
    return declared


def _stage_3(file: FileInfo, opt: Options, ty_map: Dict[str, str],
             global_funcs: Dict[str, List[FuncInfo]], generator: Generator,
             declared: Optional[Mapping[str, Path]] = None) -> bool:
    """Regenerates every block of ``file`` and writes it if its text changed (unless
    ``opt.dry_run``); returns whether it changed. An ``object/`` block of a type no
    longer registered is left alone and reported (``ValueError``) once the rest is done."""
    declared = _declared_objects([file]) if declared is None else declared
    imports = generator.new_imports()
    for code in file.code_blocks:
        if code.kind != "directive" or code.param[0] in C.PIPELINE_DIRECTIVE_KINDS:
            continue
        name, payload = code.param  # type: ignore[str-unpack]  # (a pair for a directive)
        if name not in generator.directive_kinds:
            raise ValueError(f"Unknown directive `{name}` at line {code.lineno_start}")
        generator.add_directive(imports, name, payload, code.lineno_start)
    functions: Set[str] = set()
    for code in file.code_blocks:
        if code.kind == "global":
            funcs = global_funcs.get(code.param[0], [])
            functions.update(f.schema.name for f in funcs)
            generator.generate_global_funcs_block(code, funcs, ty_map, imports, opt)
    types: Set[str] = set()
    unregistered: List[str] = []
    for code in file.code_blocks:
        if code.kind != "object":
            continue
        if _object_type_key_to_index(code.param) is None:
            unregistered.append(f"`object/{code.param}` (line {code.lineno_start})")
            continue
        info = object_info_from_type_key(code.param)
        types.add(generator.canonical_type_name(ty_map.get(code.param, code.param)))
        generator.generate_object_block(code, ty_map, imports, opt, info, declared)
    for kind in ("import-section", "__all__"):  # one of each per file is filled
        code = next((c for c in file.code_blocks if c.kind == kind), None)
        if code is not None and kind == "import-section":
            generator.generate_import_section_block(code, imports, opt, types)
        elif code is not None:
            generator.generate_all_block(
                code, functions | types | generator.extra_export_names(imports), opt)
    for code in file.code_blocks:
        if code.kind == "export":
            generator.generate_export_block(code)
    changed = file.update(verbose=opt.verbose, dry_run=opt.dry_run)
    if unregistered:
        raise ValueError(f"{', '.join(unregistered)}: the type is no longer registered; "
                         "delete the block")
    return changed


def _split_list_arg(arg: Optional[str]) -> List[str]:
    return [item.strip() for item in (arg or "").split(";") if item.strip()]


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawTextHelpFormatter):
    """Defaults shown, line breaks kept."""


def _parse_args() -> Options:
    parser = OneLineParser(
        prog=_PROG, formatter_class=_HelpFormatter,
        description=(
            "Generate type stubs for TVM FFI extensions, in two modes:\n"
            "- with `--init-*`, write the `_ffi_api.py` and `__init__.py` files a package "
            "lacks for the global functions and object types the loaded libraries register;\n"
            "- always, regenerate in place the `tvm-ffi-stubgen` blocks of the given files "
            "and directories.\n\n"
            f"Documentation: {C.TERM_CYAN}{C.DOC_URL}{C.TERM_RESET}."))
    parser.add_argument("--imports", type=str, default="", metavar="IMPORTS",
                        help="Python modules to import first, separated by ';' "
                             "(e.g. 'pkgA;pkgB.submodule').")
    parser.add_argument("--dlls", type=str, default="", metavar="LIBS",
                        help="Shared libraries to load first (the TVM runtime, your "
                             "extension), separated by ';', so that their functions and "
                             "types are registered.")
    parser.add_argument("--init-pypkg", type=str, default="",
                        help="Python distribution to scaffold stubs for (e.g. apache-tvm-ffi); "
                             "with --init-lib and --init-prefix.")
    parser.add_argument("--init-lib", type=str, default="",
                        help="CMake target of the shared library the package loads "
                             "(e.g. tvm_ffi_shared); with --init-pypkg and --init-prefix.")
    parser.add_argument("--init-prefix", type=str, default="",
                        help="Registry prefix whose functions and types get files "
                             "(e.g. tvm_ffi.); with --init-pypkg and --init-lib.")
    parser.add_argument("--indent", type=non_negative_integer, default=4,
                        help="Extra spaces inside each generated block, relative to the "
                             "indentation of its 'begin' marker.")
    parser.add_argument("files", nargs="*", metavar="PATH",
                        help="Files or directories to process (directories recursively, "
                             "files with the target's extensions: .py and .pyi for python).")
    parser.add_argument("--target", type=str, default="python", choices=generator_names(),
                        help="Code generator target.")
    parser.add_argument("--verbose", action="store_true",
                        help="Print a unified diff of the changes to each file.")
    parser.add_argument("--dry-run", action="store_true",
                        help="Don't write changes to files.")
    parser.add_argument("--check", action="store_true",
                        help="Don't write changes; report every file whose stub blocks are out "
                             "of date and exit with status 1 if there is any. Cannot be "
                             "combined with --init-*.")
    parser.add_argument("--coverage-out", type=str, default=None, metavar="JSON",
                        help="Write a JSON report saying, for every registered object type, "
                             "whether its native memory layout can be rebuilt from reflection "
                             "(complete) or not (opaque), with the byte evidence. Needs no PATH.")
    args = parser.parse_args()

    init_flags = (args.init_pypkg, args.init_lib, args.init_prefix)
    init_cfg = None
    if any(init_flags):
        if not all(init_flags):
            parser.error("--init-pypkg, --init-lib, and --init-prefix must be provided together")
        init_cfg = InitConfig(pkg=args.init_pypkg, shared_target=args.init_lib,
                              prefix=args.init_prefix)
    if args.check and init_cfg is not None:
        parser.error("--check cannot be combined with --init-* flags")
    if not args.files and args.coverage_out is None:
        parser.print_help()
        sys.exit(1)
    for path in args.files:
        if not os.path.exists(path):
            parser.error(f"PATH {path}: no such file or directory")
    problem = output_problem(args.coverage_out, "--coverage-out")
    if problem:
        parser.error(problem)
    return Options(imports=_split_list_arg(args.imports), dlls=_split_list_arg(args.dlls),
                   init=init_cfg, indent=args.indent, files=args.files, verbose=args.verbose,
                   dry_run=args.dry_run or args.check, check=args.check, target=args.target,
                   coverage_out=args.coverage_out)


if __name__ == "__main__":
    sys.exit(__main__())
