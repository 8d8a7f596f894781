"""The checker's side of the worker process (:mod:`tvm_ffi_check._worker`).

The worker is started from *this* installation of the checker, whatever the
current directory holds: ``python -m`` would put the current directory first
on ``sys.path``, so from a source checkout's root (where a newcomer stands)
the worker would import the unbuilt source tree instead of the installed
package. The worker therefore runs through a ``-c`` bootstrap that puts the
directory this package was imported from first, so it imports exactly what
the checker itself imported.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

from ._worker import read_message, write_message
from .hints import language_of
from .results import CheckError
from .sandbox import Sandbox, cuda_exemption

#: The directory holding this package (site-packages, or a source checkout installed with -e).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BOOTSTRAP = ("import sys; sys.path[0] = sys.argv.pop(1); "
              "from tvm_ffi_check._worker import main; sys.exit(main(sys.argv[1:]))")


class Worker:
    """The worker process for one library.

    ``registered`` is what the library registered while it loaded (globals
    and types, :func:`tvm_ffi_check.targets.registered_since`);
    ``fault_reporter`` whether guard-page faults are reported with their address;
    ``sandbox`` the limits it runs under (:class:`tvm_ffi_check.sandbox.Sandbox`,
    the default when None) and ``limits`` what the worker said applied;
    ``language`` the library's, ``"C"`` or ``"C++"`` (:mod:`.hints`).
    """

    def __init__(self, library: str, load_timeout: float = 60.0,
                 sandbox: Optional[Sandbox] = None) -> None:
        self.library = library
        self.load_timeout = load_timeout
        self.output = tempfile.TemporaryFile()
        self.process: Optional[subprocess.Popen] = None
        self.registered: Dict[str, Any] = {}
        self.fault_reporter = False
        self.limits: List[str] = []
        self.sandbox = Sandbox.default() if sandbox is None else sandbox
        try:
            symbols = read_dynamic_symbols(library)
            self.language: Optional[str] = language_of(symbols.defined | symbols.undefined)
            exemption = cuda_exemption(symbols.undefined)
        except (OSError, ValueError, IndexError, UnicodeError):
            self.language, exemption = None, None
        self.settings = json.dumps({"sandbox": self.sandbox.to_json(),
                                    "memory_exemption": exemption})
        self.start()

    def start(self) -> None:
        offset = self.output_offset()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP, PACKAGE_ROOT, self.library, self.settings],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.output)
        try:
            hello = read_message(self.process.stdout.fileno(),
                                 time.monotonic() + self.load_timeout)
        except TimeoutError:
            self.close()
            raise CheckError(f"{self.library}: loading the library did not finish within "
                             f"{self.load_timeout:.0f} s") from None
        if hello is None:
            status = self.process.wait()
            tail = self.output_since(offset)
            self.process = None
            raise CheckError(f"{self.library}: the library crashed the process loading it "
                             f"({_exit_detail(status)})" + (f":\n{tail}" if tail else ""))
        if not hello.get("ok"):
            self.close()
            raise CheckError(f"{self.library}: cannot be loaded as a TVM FFI library: "
                             f"{explain_load_error(hello.get('error') or '')}")
        self.registered = hello.get("registered") or {}
        self.fault_reporter = bool(hello.get("fault_reporter"))
        self.limits = list(hello.get("sandbox") or [])

    def output_offset(self) -> int:
        self.output.seek(0, os.SEEK_END)
        return self.output.tell()

    def output_since(self, offset: int, limit: int = 2000) -> str:
        """What the worker (and the kernel) printed since ``offset``: the last ``limit`` chars."""
        self.output.seek(offset)
        text = self.output.read().decode("utf-8", "replace").strip()
        return text if len(text) <= limit else "..." + text[-limit:]

    def request(self, message: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        """Sends one request and waits for its answer (restarting a dead worker)."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        message = dict(message, timeout=timeout)
        try:
            write_message(self.process.stdin.fileno(), message)
            # The worker enforces ``timeout`` between progress messages; this is a backstop.
            answer = read_message(self.process.stdout.fileno(),
                                  time.monotonic() + timeout * 20 + 60)
        except (TimeoutError, BrokenPipeError):
            answer = None
        if answer is None:
            self.close()
            return {"done": True, "crash": "the worker process died", "phase": "?"}
        return answer

    def close(self) -> None:
        if self.process is not None:
            try:
                if self.process.poll() is None:
                    write_message(self.process.stdin.fileno(), {"op": "exit"})
                    self.process.wait(timeout=5)
            except Exception:  # noqa: BLE001 - it is going away anyway
                pass
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.process = None


_UNDEFINED = re.compile(r"undefined symbol: (\S+)")


def demangle(name: str) -> Optional[str]:
    """A C++ symbol's readable name (``foo::bar(int)``), or None."""
    if not name.startswith("_Z"):
        return None
    try:
        runtime = ctypes.CDLL("libstdc++.so.6")
    except OSError:
        return None
    function = runtime.__cxa_demangle
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    status = ctypes.c_int()
    text = function(name.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not text:
        return None
    readable = ctypes.string_at(text).decode("utf-8", "replace")
    ctypes.CDLL(None).free(ctypes.c_void_p(text))
    return readable


def _cxx_only_helpers() -> "frozenset[str]":
    """The inline helpers c_api.h defines for C++ only: names no library exports."""
    from tvm_ffi_common import libinfo

    try:
        with open(os.path.join(libinfo.include_paths()[0], "tvm", "ffi", "c_api.h"),
                  encoding="utf-8") as f:
            return frozenset(re.findall(r"^inline [^(;]*?\b(TVMFFI\w+)\(", f.read(), re.M))
    except OSError:
        return frozenset()


def explain_load_error(error: str) -> str:
    """The loader's error, with the symbol it could not find named and placed."""
    found = _UNDEFINED.search(error)
    if found is None:
        return error
    symbol = found.group(1)
    readable = demangle(symbol)
    named = f"{readable} ({symbol})" if readable else symbol
    if symbol in _cxx_only_helpers():
        where = ("an inline C++ helper of tvm/ffi/c_api.h (upstream's and this project's): no "
                 "libtvm_ffi.so exports it, and C code sees no declaration of it (the compiler "
                 "warned of an implicit declaration). In C, add the offset yourself (the cell "
                 "follows the 24-byte object header) or include this project's "
                 "tvm_ffi_abi/object_cells.h")
    elif symbol.startswith("TVMFFI"):
        where = ("this project's libtvm_ffi.so does not export it (a C API function newer "
                 "than the headers it implements?)")
    elif readable and readable.startswith("tvm::ffi::"):
        where = "a C++ symbol of upstream's libtvm_ffi.so that this project's does not provide"
    else:
        where = "no library loaded with it defines it (a library it needs is missing, or older)"
    return f"{error}\nthe missing symbol is {named}: {where}"


def _exit_detail(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"
