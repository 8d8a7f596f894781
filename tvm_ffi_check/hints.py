"""What the report tells a user to do about functions it could not check (one place).

The checker's verdict logic (:mod:`.function_check`, :mod:`.results`) decides
*that* a function is unverified and why; this module holds only the advice.
Without ``__tvm_ffi__metadata_<name>`` the checker cannot tell what a function
takes, and one that needs a tensor is never reached. How to export the schema
depends on the library's language: C++ gets it from upstream's
``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` built with
``-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1``, a define C code never reads; C
from this project's ``tvm_ffi_abi/export.h``. The language is read from the
library's dynamic symbols: a C++ library references mangled names (``_Z...``,
operator new and delete at least) or ``__gxx_personality_v0``; a C one none.
"""

from __future__ import annotations

from typing import Iterable, List, Optional

C, CXX = "C", "C++"

#: Mangled names (operator new is _Znwm) and the C++ runtime's exception personality. Not
#: __cxa_*: every shared object gcc links, C ones too, references __cxa_finalize.
_CXX_RUNTIME_PREFIXES = ("_Z", "__gxx_personality")

#: How a C library exports a function's type schema.
C_FIX = ("export each function's type schema from C with TVM_FFI_ABI_EXPORT_SCHEMA(name, "
         "result, params...) of <tvm_ffi_abi/export.h> (this package's include directory; "
         "spec/15-first-kernel.md, section 6)")
#: How a C++ library does.
CXX_FIX = ("build the library with -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 so that "
           "TVM_FFI_DLL_EXPORT_TYPED_FUNC also exports each function's type schema "
           "(__tvm_ffi__metadata_<name>)")


def language_of(symbol_names: Iterable[str]) -> str:
    """``"C++"`` when any of a library's dynamic symbols is C++'s, else ``"C"``."""
    return CXX if any(name.startswith(_CXX_RUNTIME_PREFIXES) for name in symbol_names) else C


def metadata_hint(language: Optional[str]) -> str:
    """How to give the checker a function's signature, for a library in ``language``.

    The one place this advice is written: the unverified functions' reasons and
    the summary use it.
    """
    if language == C:
        fix = C_FIX
    elif language == CXX:
        fix = CXX_FIX
    else:
        fix = f"{CXX_FIX}; from C, {C_FIX}"
    return f"{fix}, and the checker calls each function with the types it takes"


def unverified_closing_line(names: List[str], allowed: bool, without_schema: int,
                            language: Optional[str] = None) -> str:
    """The line a report with unverified functions ends with: what was not checked, how to
    fix it, and whether it failed the run (``allowed``: ``--allow-unverified`` was given).
    ``without_schema`` of them carry no type schema; ``language`` is the library's
    (:func:`language_of`), which decides how a schema is exported."""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    verdict = ("--allow-unverified: they do not fail the run" if allowed else
               "they fail the run (exit status 3; --allow-unverified accepts them)")
    if without_schema:
        fix = f"give each a type schema so the checker can call it ({metadata_hint(language)})"
    else:
        fix = ("their type schemas name types the checker cannot make well (Any, or a type "
               "no constructor or function of the library makes): declare the exact types")
    return f"not checked: {len(names)} function(s) ({shown}); {fix}; {verdict}"
