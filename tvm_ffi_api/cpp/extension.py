"""``build``, ``build_inline``, ``load`` and ``load_inline``: C, C++ and CUDA into a Module.

Upstream's ``tvm_ffi.cpp`` interface. Inline builds write the given source
strings into a build directory (``main.cpp``, ``cuda.cu``), with the TVM FFI
C++ headers included and an export line (``TVM_FFI_DLL_EXPORT_TYPED_FUNC``)
added per function named in ``functions``; file builds compile the files as
they are. Either way the result is a shared library linked against this
package's ``libtvm_ffi.so`` (or an object file, for ``output="x.o"``), cached
by content (:mod:`.build_cache`) and rebuilt only when something it depends
on changed (:mod:`.builder`). C sources compile against this package's C
headers; C++ and CUDA sources may also use upstream's header-only C++ API,
taken from an installed ``apache-tvm-ffi`` (:mod:`.headers`).

Defaults: C ``-fPIC -O2``; C++ ``-std=c++17 -fPIC -O2``; CUDA
``-Xcompiler -fPIC -std=c++17 -O2`` and the detected architectures; link
``-shared -L<libtvm_ffi dir> -ltvm_ffi``. ``$CC``/``$CXX`` choose the host
compilers; ``$TVM_FFI_CACHE_DIR`` the cache (default ``~/.cache/tvm-ffi``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Dict, List, Optional, Union

from ..module import Module, load_built_library
from . import build_cache, headers

#: The front end these modules belong to (``tvm_ffi_fast`` or ``tvm_ffi_ref``).
_PACKAGE = __name__.split(".")[0]

#: What every inline C++/CUDA source is compiled with ahead of the user's code.
_INLINE_PRELUDE = (
    "#include <tvm/ffi/container/tensor.h>",
    "#include <tvm/ffi/dtype.h>",
    "#include <tvm/ffi/error.h>",
    "#include <tvm/ffi/extra/c_env_api.h>",
    "#include <tvm/ffi/function.h>",
)

StrOrSeq = Union[str, Sequence[str], None]
Functions = Union[Mapping[str, str], Sequence[str], str, None]
Flags = Optional[Sequence[str]]
Cubins = Optional[Mapping[str, bytes]]


def _as_list(value: StrOrSeq, argument: str) -> List[str]:
    """``None`` -> [], a str -> [it], a sequence of str -> a list; anything else is a TypeError."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if isinstance(value, Sequence):
        items = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in value]
        if all(isinstance(v, str) for v in items):
            return items
    raise TypeError(f"{argument} must be a str or a sequence of str, got {value!r}")


def _function_docs(functions: Functions) -> Dict[str, str]:
    """``functions`` as ``{name: doc}`` (an empty doc exports no documentation)."""
    if functions is None:
        return {}
    if isinstance(functions, str):
        return {functions: ""}
    if isinstance(functions, Mapping):
        return {str(k): str(v) for k, v in functions.items()}
    return {str(name): "" for name in functions}


_CPP_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _decorate(source: str, functions: Mapping[str, str]) -> str:
    """``source`` with the TVM FFI headers before it and an export line per function after it."""
    lines = [*_INLINE_PRELUDE, "", source]
    for name, doc in functions.items():
        lines.append(f"TVM_FFI_DLL_EXPORT_TYPED_FUNC({name}, {name});")
        if doc:
            lines.append(f'TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC({name}, "{doc.translate(_CPP_ESCAPES)}");')
    lines.append("")
    return "\n".join(lines)


def _run(name: str, directory: str, sources: List[str], options: dict) -> str:
    """Plans and brings up to date the build of ``sources`` in ``directory``; the target's path."""
    # Loaded at the first build: the package imports this module with itself.
    from . import build_plan
    from .builder import Builder

    plan = build_plan.plan_build(
        name, sources, extra_cflags=options["extra_cflags"],
        extra_cuda_cflags=options["extra_cuda_cflags"], extra_ldflags=options["extra_ldflags"],
        extra_include_paths=options["extra_include_paths"],
        cubin_names=sorted(options.get("embed_cubin") or {}), backend=options.get("backend"),
        output=options.get("output"), package=_PACKAGE)
    return Builder(directory, repr(name)).run(plan)


def _options(extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
             **rest) -> dict:
    """The flag arguments as lists (checked), plus the other options as given."""
    return {
        "extra_cflags": _as_list(extra_cflags, "extra_cflags"),
        "extra_cuda_cflags": _as_list(extra_cuda_cflags, "extra_cuda_cflags"),
        "extra_ldflags": _as_list(extra_ldflags, "extra_ldflags"),
        "extra_include_paths": _as_list(extra_include_paths, "extra_include_paths"),
        **rest,
    }


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name or os.sep in name:
        raise ValueError(f"name must be a non-empty str usable as a file name, got {name!r}")
    return name


def build_inline(name: str, *, cpp_sources: StrOrSeq = None, cuda_sources: StrOrSeq = None,
                 functions: Functions = None, extra_cflags: Flags = None,
                 extra_cuda_cflags: Flags = None, extra_ldflags: Flags = None,
                 extra_include_paths: Flags = None, build_directory: Optional[str] = None,
                 embed_cubin: Cubins = None, backend: Optional[str] = None,
                 output: Optional[str] = None) -> str:
    """Builds C++ (and/or CUDA) source strings into a shared library; returns its path.

    ``cpp_sources`` / ``cuda_sources``: one source string or several (joined
    into one file each). ``functions``: the functions to export, a name, a
    list of names, or ``{name: docstring}``; they must be declared in
    ``cpp_sources`` (or, without C++ sources, defined in ``cuda_sources``).
    The TVM FFI headers (``tvm/ffi/function.h``, ``container/tensor.h``, ...)
    are included for you, so the code may use ``tvm::ffi::TensorView``,
    ``TVM_FFI_ICHECK`` and the rest.

    ``extra_cflags``, ``extra_cuda_cflags``, ``extra_ldflags``,
    ``extra_include_paths`` add to the defaults. ``build_directory``
    replaces the cache directory. ``embed_cubin`` maps names used with
    ``TVM_FFI_EMBED_CUBIN(name)`` to CUBIN bytes. ``backend`` is ``"cuda"``
    or ``"hip"`` (detected when None). ``output`` names the file made in the
    build directory; an ``.o`` name skips the link and delivers an object.

    The result is cached under ``$TVM_FFI_CACHE_DIR`` by a hash of all the
    above; an unchanged call rebuilds nothing. A failed build raises
    ``RuntimeError`` holding the compiler's output.
    """
    _check_name(name)
    cpp_list = _as_list(cpp_sources, "cpp_sources")
    cuda_list = _as_list(cuda_sources, "cuda_sources")
    docs = _function_docs(functions)
    if not cpp_list and not cuda_list:
        raise ValueError("build_inline needs cpp_sources or cuda_sources")
    headers.require_upstream_cxx_include(f"tvm_ffi.cpp.build_inline({name!r})")
    # The exports go where the functions are visible: the C++ file, else the CUDA one.
    cpp_source = _decorate("\n".join(cpp_list), docs if cpp_list else {})
    cuda_source = _decorate("\n".join(cuda_list), {} if cpp_list else docs)
    options = _options(extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                       embed_cubin=embed_cubin, backend=backend, output=output)
    directory = build_cache.build_directory_for(
        name, build_directory, "inline", cpp_source, cuda_source, docs, options["extra_cflags"],
        options["extra_cuda_cflags"], options["extra_ldflags"], options["extra_include_paths"],
        dict(embed_cubin) if embed_cubin else None, backend, output)
    with build_cache.exclusive(directory, repr(name)):
        sources = []
        if cpp_list:
            sources.append(os.path.join(directory, "main.cpp"))
            build_cache.write_if_changed(sources[-1], cpp_source)
        if cuda_list:
            sources.append(os.path.join(directory, "cuda.cu"))
            build_cache.write_if_changed(sources[-1], cuda_source)
        _write_cubins(directory, embed_cubin)
        return _run(name, directory, sources, options)


def _write_cubins(directory: str, embed_cubin: Optional[Mapping[str, bytes]]) -> None:
    for cubin, data in (embed_cubin or {}).items():
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"embed_cubin[{cubin!r}] must be bytes, got {type(data).__name__}")
        path = os.path.join(directory, f"{cubin}.cubin")
        try:
            with open(path, "rb") as f:
                if f.read() == bytes(data):
                    continue  # unchanged: keep its mtime so nothing is redone
        except OSError:
            pass
        with open(path, "wb") as f:
            f.write(data)


def load_inline(name: str, *, cpp_sources: StrOrSeq = None, cuda_sources: StrOrSeq = None,
                functions: Functions = None, extra_cflags: Flags = None,
                extra_cuda_cflags: Flags = None, extra_ldflags: Flags = None,
                extra_include_paths: Flags = None, build_directory: Optional[str] = None,
                embed_cubin: Cubins = None, keep_module_alive: bool = True,
                backend: Optional[str] = None) -> Module:
    """:func:`build_inline`, then the library loaded (as :func:`load_module`, with no check of
    its symbols: empty sources give an empty Module, as upstream's): the exported functions
    are the Module's attributes (``mod.add_one(x, y)``).

    ``keep_module_alive`` (default True) keeps the library loaded for the life
    of the process; see :func:`build_inline` for the other arguments.
    """
    path = build_inline(name, cpp_sources=cpp_sources, cuda_sources=cuda_sources,
                        functions=functions, extra_cflags=extra_cflags,
                        extra_cuda_cflags=extra_cuda_cflags, extra_ldflags=extra_ldflags,
                        extra_include_paths=extra_include_paths,
                        build_directory=build_directory, embed_cubin=embed_cubin, backend=backend)
    return load_built_library(path, keep_module_alive=keep_module_alive)


def build(name: str, *, sources: StrOrSeq = None, cpp_files: StrOrSeq = None,
          cuda_files: StrOrSeq = None, extra_cflags: Flags = None,
          extra_cuda_cflags: Flags = None, extra_ldflags: Flags = None,
          extra_include_paths: Flags = None, build_directory: Optional[str] = None,
          backend: Optional[str] = None, output: Optional[str] = None) -> str:
    """Builds source files into a shared library (or an object file); returns its path.

    ``sources`` (``cpp_files`` and ``cuda_files`` are older names for it,
    merged in): one path or several, compiled by extension, ``.c`` with
    ``$CC``, ``.cu`` with nvcc/hipcc, ``.o`` passed to the linker, the rest
    as C++ with ``$CXX``. Nothing is exported for you: the sources use
    ``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` (C++) or define ``__tvm_ffi_<name>``
    (C) themselves. The cache key is the resolved paths and the flags; a
    rebuild happens when a source, a header it includes, or a flag changed.
    The other arguments are :func:`build_inline`'s.
    """
    _check_name(name)
    merged = (_as_list(sources, "sources") + _as_list(cpp_files, "cpp_files")
              + _as_list(cuda_files, "cuda_files"))
    if not merged:
        raise ValueError("sources must be provided.")
    paths = [os.path.realpath(p) for p in merged]
    for given, path in zip(merged, paths):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"tvm_ffi.cpp.build({name!r}): source {given!r} does not exist")
    options = _options(extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths,
                       backend=backend, output=output)
    directory = build_cache.build_directory_for(
        name, build_directory, "files", sorted(paths), options["extra_cflags"],
        options["extra_cuda_cflags"], options["extra_ldflags"], options["extra_include_paths"],
        backend, output)
    with build_cache.exclusive(directory, repr(name)):
        return _run(name, directory, paths, options)


def load(name: str, *, sources: StrOrSeq = None, cpp_files: StrOrSeq = None,
         cuda_files: StrOrSeq = None, extra_cflags: Flags = None,
         extra_cuda_cflags: Flags = None, extra_ldflags: Flags = None,
         extra_include_paths: Flags = None, build_directory: Optional[str] = None,
         keep_module_alive: bool = True, backend: Optional[str] = None) -> Module:
    """:func:`build`, then :func:`load_module` of the library (see both for the arguments)."""
    path = build(name, sources=sources, cpp_files=cpp_files, cuda_files=cuda_files,
                 extra_cflags=extra_cflags, extra_cuda_cflags=extra_cuda_cflags,
                 extra_ldflags=extra_ldflags, extra_include_paths=extra_include_paths,
                 build_directory=build_directory, backend=backend)
    return load_built_library(path, keep_module_alive=keep_module_alive)
