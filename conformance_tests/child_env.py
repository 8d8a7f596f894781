"""The environment of one worker: its front end imported as ``api``, NumPy, the C API bound
with ctypes (``tvm_ffi_common/abi.py`` loaded by file path, so the upstream worker never loads
our library) and the conformance kernels loaded by the front end."""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import json
import os
import sys
from typing import Any, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Env:
    """What every handler uses: ``api``, ``np``, ``lib`` (ctypes, C API bound), kernels."""

    def __init__(self, frontend: str, config: Dict[str, Any]):
        self.frontend = frontend
        mutant = os.environ.get("CONFORMANCE_REF_PATH")
        if frontend == "ref" and mutant:
            sys.path.insert(0, mutant)
        package = frontend[len("pypy-"):] if frontend.startswith("pypy-") else frontend
        if frontend == "upstream":
            import tvm_ffi as api
            lib_path = os.path.join(os.path.dirname(api.__file__), "lib", "libtvm_ffi.so")
        elif package == "ref":
            import tvm_ffi_ref as api
            from tvm_ffi_common import libinfo
            lib_path = libinfo.library_path()
        elif package in ("fast", "fast-cffi"):
            # "fast-cffi": the same package on the core PyPy runs, chosen before the import.
            os.environ["TVM_FFI_FAST_CORE"] = "cffi" if package == "fast-cffi" else "compiled"
            import tvm_ffi_fast as api
            from tvm_ffi_common import libinfo
            lib_path = libinfo.library_path()
        else:
            raise ValueError(f"unknown front end {frontend!r}")
        import numpy

        self.api = api
        self.np = numpy
        spec = importlib.util.spec_from_file_location(
            "conformance_abi", os.path.join(ROOT, "tvm_ffi_common", "abi.py"))
        self.abi = importlib.util.module_from_spec(spec)
        sys.modules["conformance_abi"] = self.abi
        spec.loader.exec_module(self.abi)
        # A CDLL object of our own: binding argtypes on it leaves the front
        # end's own handle (if it has one) untouched.
        self.lib = self.abi.bind(ctypes.CDLL(lib_path, mode=ctypes.RTLD_GLOBAL))
        self.lib_path = lib_path
        self.kernel_paths = dict(config["kernels"])
        self.kernels = {name: api.load_module(path) for name, path in config["kernels"].items()}
        self.probe = self.kernels["probe"]
        self.calls = self.kernels.get("calls")

    @property
    def held_class(self) -> type:
        """``conformance.Held``, a ``@py_class`` with one field ``value: Any``: a user's object
        for the programs to hold and pass (registered on first use, once per worker)."""
        cls = self.__dict__.get("_held_class")
        if cls is None:
            @self.api.dataclasses.py_class("conformance.Held")
            class Held(self.api.Object):
                value: Any

            cls = self.__dict__["_held_class"] = Held
        return cls

    def dump(self, *values: Any) -> Any:
        """The probe's JSON report of ``values`` as the front end passes them.

        Where collection is not prompt (PyPy), wrappers made while building the values are
        garbage still holding references: collected first, so the counts are the values' own.
        """
        if sys.implementation.name != "cpython":
            gc.collect()
        return json.loads(str(self.probe.dump(*values)))
