"""``python -m tvm_ffi_fast.config --cflags`` (or ``tvm_ffi.config``): build flags and paths.

Upstream's ``tvm-ffi-config``, with its options, answering for this
installation (see :mod:`.libinfo`): a build system asks it where the headers,
the library and the CMake package are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

from . import libinfo

#: (option, help, what it prints), in the order the answers are printed.
_QUERIES = (
    ("--includedir", "Print include directory", libinfo.find_include_path),
    ("--dlpack-includedir", "Print dlpack include directory", libinfo.find_dlpack_include_path),
    ("--cmakedir", "Print the directory of tvm_ffi-config.cmake", libinfo.find_cmake_path),
    ("--libdir", "Print library directory",
     lambda: str(Path(libinfo.find_libtvm_ffi()).parent)),
    ("--libfiles", "Fully qualified library filenames", libinfo.find_libtvm_ffi),
    ("--sourcedir", "Print source directory", libinfo.find_source_path),
    ("--cython-lib-path", "Print the path of the compiled Python core", libinfo.find_cython_lib),
    ("--cxxflags", "Print cxx flags",
     lambda: f"{_cxx_include_flags()} -std=c++17"),
    ("--cflags", "Print c flags", lambda: _include_flags()),
    ("--libs", "Libraries to be linked", lambda: "-ltvm_ffi"),
    ("--ldflags", "Print ld flags",
     lambda: f"-L{Path(libinfo.find_libtvm_ffi()).parent}"),
)


def _include_flags() -> str:
    return f"-I{libinfo.find_include_path()} -I{libinfo.find_dlpack_include_path()}"


class _MissingCxxHeaders(Exception):
    """C++ flags were asked for and upstream's C++ headers are not installed."""


def _cxx_include_flags() -> str:
    missing = libinfo._missing_cxx_headers()
    if missing:
        raise _MissingCxxHeaders(missing)
    return _include_flags()


def main(argv: Optional[List[str]] = None) -> int:
    """Prints the answer to each option given (help when none is)."""
    parser = argparse.ArgumentParser(
        description="Paths and flags to compile and link against TVM FFI")
    for option, help_text, _ in _QUERIES:
        parser.add_argument(option, action="store_true", help=help_text)
    args = parser.parse_args(argv)
    chosen = [answer for option, _, answer in _QUERIES
              if getattr(args, option.lstrip("-").replace("-", "_"))]
    if not chosen:
        parser.print_help()
    for answer in chosen:
        try:
            text = answer()
        except _MissingCxxHeaders as missing:  # one line saying what to install, no traceback
            print(missing, file=sys.stderr)
            return 1
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
