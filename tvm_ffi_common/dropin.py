"""``import tvm_ffi`` served by ours, and ours living beside upstream's.

Two import hooks, both on ``sys.meta_path``:

* **The drop-in.** With ``TVM_FFI_IMPL=fast`` (or ``ref``) in the environment
  when Python starts, ``import tvm_ffi`` gives ``tvm_ffi_fast`` (or
  ``tvm_ffi_ref``) and ``import tvm_ffi.X`` gives ``tvm_ffi_fast.X``: the very
  same module objects, so ``tvm_ffi.Array is tvm_ffi_fast.Array``. A library
  that imports ``tvm_ffi`` inside runs on ours unchanged, even with upstream's
  ``apache-tvm-ffi`` installed. The file ``tvm_ffi_abi_dropin.pth`` that
  ``pip install`` puts in ``site-packages`` calls :func:`install_from_environment`
  at start-up; without the variable it does nothing else.

* **The guard.** One process has one TVM FFI runtime behind the C symbols
  (``TVMFFI*``) that kernels resolve globally. Upstream's ``tvm_ffi`` brings
  its own ``libtvm_ffi.so`` and registers into whichever library serves those
  symbols, so the two packages cannot share a process: importing one after the
  other raises ``ImportError`` naming the conflict and the way out
  (:func:`refuse_upstream_after_ours`, :func:`check_no_other_library`),
  instead of the abort or the silent mix it would otherwise be.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from typing import Optional, Sequence

#: The environment variable naming the implementation ``import tvm_ffi`` gives.
ENV_VAR = "TVM_FFI_IMPL"

#: Its values and the package each selects.
IMPLEMENTATIONS = {"fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref"}

UPSTREAM = "tvm_ffi"


def _upstream_part(fullname: str) -> Optional[str]:
    """``""`` for ``tvm_ffi``, ``".X"`` for ``tvm_ffi.X``, else None."""
    if fullname == UPSTREAM:
        return ""
    if fullname.startswith(UPSTREAM + "."):
        return fullname[len(UPSTREAM):]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Makes ``tvm_ffi[.X]`` the already-importable module ``<ours>[.X]``."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None  # a placeholder; exec_module puts the real module in its place

    def exec_module(self, module) -> None:
        # The import system returns whatever sys.modules holds under the name
        # after exec_module, so the alias is our module itself, its __spec__
        # untouched (it says which package this really is). The package answers
        # to upstream's name, as code written for upstream reads it (loggers,
        # messages, ``importlib.import_module(tvm_ffi.__name__ + ".cpp")``);
        # its submodules and classes keep ours, where pickle and imports look.
        target = importlib.import_module(self.target)
        if module.__name__ == UPSTREAM:
            target.__name__ = UPSTREAM
        sys.modules[module.__name__] = target

    def get_code(self, fullname: str):
        """Our module's code, for ``python -m tvm_ffi.X`` (runpy runs it as ``__main__``)."""
        spec = importlib.util.find_spec(self.target)
        get_code = getattr(spec.loader, "get_code", None) if spec is not None else None
        if get_code is None:
            raise ImportError(f"no code object available for {fullname} ({self.target})",
                              name=fullname)
        return get_code(self.target)


class _DropIn(importlib.abc.MetaPathFinder):
    """Resolves ``tvm_ffi`` and its submodules to ``package`` and its submodules."""

    def __init__(self, package: str):
        self.package = package

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None, target=None):
        part = _upstream_part(fullname)
        if part is None:
            return None
        ours = self.package + part
        loaded = sys.modules.get(ours)
        found = importlib.util.find_spec(ours) if loaded is None else None
        if loaded is None and found is None:
            return None  # ModuleNotFoundError, under the name asked for
        # The origin (our file) is what ``python -m tvm_ffi.X`` shows as sys.argv[0].
        origin = getattr(loaded, "__file__", None) if found is None else found.origin
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(ours), origin=origin,
                                              is_package=(part == ""))


class _Refusal(importlib.abc.Loader):
    """The loader of a refused import: loading raises ``ImportError`` with ``message``."""

    def __init__(self, message: str):
        self.message = message

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        raise ImportError(self.message, name=module.__name__)


class _RefuseUpstream(importlib.abc.MetaPathFinder):
    """Refuses to load upstream's ``tvm_ffi`` once one of our packages serves the process.

    ``importlib.util.find_spec("tvm_ffi")`` still finds it (tests locate its
    headers that way); only executing it raises.
    """

    def __init__(self, ours: str):
        self.ours = ours

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None, target=None):
        if fullname != UPSTREAM or _active_drop_in() is not None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        spec.loader = _Refusal(
            f"cannot import tvm_ffi (upstream's apache-tvm-ffi): {self.ours} already serves the "
            "TVM FFI C API in this process, and two runtimes cannot share one process. "
            f"To run code that imports tvm_ffi on {self.ours}, set {ENV_VAR}="
            f"{_impl_name(self.ours)} in the environment before Python starts; to use "
            "upstream's, do not import ours in the same process.")
        return spec


def _impl_name(package: str) -> str:
    return {v: k for k, v in IMPLEMENTATIONS.items()}.get(package, package)


def _upstream_module():
    """Upstream's ``tvm_ffi`` if it is imported (or being imported) here, else None."""
    module = sys.modules.get(UPSTREAM)
    if module is None or isinstance(getattr(module, "__loader__", None), _AliasLoader):
        return None  # absent, or the drop-in's placeholder while ours loads
    spec = getattr(module, "__spec__", None)
    if spec is not None and spec.name in IMPLEMENTATIONS.values():
        return None  # ours under the drop-in (which answers to upstream's __name__)
    return module if module.__name__ == UPSTREAM else None


def _active_drop_in() -> Optional[_DropIn]:
    for finder in sys.meta_path:
        if isinstance(finder, _DropIn):
            return finder
    return None


def install(package: str) -> None:
    """Makes ``import tvm_ffi[.X]`` give ``package[.X]`` in this process (idempotent)."""
    if package not in IMPLEMENTATIONS.values():
        raise ValueError(f"package must be one of {sorted(IMPLEMENTATIONS.values())}, "
                         f"got {package!r}")
    active = _active_drop_in()
    if active is not None:
        if active.package != package:
            raise ImportError(f"import tvm_ffi already resolves to {active.package}")
        return
    upstream = _upstream_module()
    if upstream is not None:
        raise ImportError(f"upstream's tvm_ffi is already imported ({getattr(upstream, '__file__', '?')}); "
                          f"{ENV_VAR} must be set before anything imports tvm_ffi")
    sys.meta_path.insert(0, _DropIn(package))


#: Whether :func:`install_from_environment` has run in this process. Python may process one
#: site-packages directory twice (a venv whose prefix is also a site directory, a second
#: ``site.addsitedir``), running the .pth line each time; the work, and a warning, is done once.
_started = False


def install_from_environment() -> None:
    """Installs the drop-in named by ``TVM_FFI_IMPL``, if set (run at start-up by the .pth;
    once per process, however often the .pth line runs)."""
    global _started
    if _started:
        return
    _started = True
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return
    package = IMPLEMENTATIONS.get(value)
    if package is None:
        # A .pth line cannot stop start-up; say so on stderr and leave tvm_ffi alone.
        sys.stderr.write(f"{ENV_VAR}={value!r} is not one of {sorted(IMPLEMENTATIONS)}; "
                         "`import tvm_ffi` is left to whatever provides it\n")
        return
    install(package)


def refuse_upstream_after_ours(ours: str) -> None:
    """Called by our package as it starts serving the process.

    Raises ``ImportError`` if upstream's ``tvm_ffi`` already runs here, and
    makes a later ``import tvm_ffi`` (not the drop-in) raise one.
    """
    upstream = _upstream_module()
    if upstream is not None:
        raise ImportError(
            f"cannot import {ours}: upstream's tvm_ffi (apache-tvm-ffi, {getattr(upstream, '__file__', '?')}) "
            "already serves the TVM FFI C API in this process, and two runtimes cannot share "
            f"one process. Set {ENV_VAR}={_impl_name(ours)} before Python starts so that "
            f"`import tvm_ffi` gives {ours}, or use only one of them per process.",
            name=ours)
    if not any(isinstance(f, _RefuseUpstream) for f in sys.meta_path):
        sys.meta_path.insert(0, _RefuseUpstream(ours))


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _file_of(address: int) -> str:
    try:
        libc = ctypes.CDLL(None)
        info = _DlInfo()
        if libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) and info.dli_fname:
            return os.fsdecode(info.dli_fname)
    except (OSError, AttributeError):
        pass
    return "another library"


def check_no_other_library(ours: ctypes.CDLL, path: str) -> None:
    """Raises ``ImportError`` when a kernel would resolve ``TVMFFI*`` to another library.

    Kernels (and our compiled core) bind the C API by symbol name in the
    process's global scope; if another ``libtvm_ffi.so`` (upstream's) was
    loaded globally before ours, it is the one they would reach.
    """
    probe = "TVMFFIObjectIncRef"
    try:
        seen = ctypes.cast(getattr(ctypes.CDLL(None), probe), ctypes.c_void_p).value
    except AttributeError:
        return  # nothing global provides it yet: ours is the first
    mine = ctypes.cast(getattr(ours, probe), ctypes.c_void_p).value
    if seen != mine:
        raise ImportError(
            f"another libtvm_ffi.so ({_file_of(seen)}) was loaded into this process before ours "
            f"({path}), so kernels would reach it instead: two TVM FFI runtimes cannot share one "
            f"process. Import tvm_ffi_fast or tvm_ffi_ref before anything loads the other library, "
            f"or set {ENV_VAR}=fast so that `import tvm_ffi` gives ours.")


def serves(package: str) -> bool:
    """Whether ``import tvm_ffi`` gives ``package`` in this process (its drop-in is installed)."""
    active = _active_drop_in()
    return active is not None and active.package == package
