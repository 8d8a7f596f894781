"""What the report tells a user to do about functions it could not check (one place).

The checker's verdict logic (:mod:`.function_check`, :mod:`.results`) decides
*that* a function is unverified and why; this module holds only the advice
text, so that the advice for each kind of library (a C library, a C++ one
built on upstream's macros, a registered global) can change without touching
the verdicts.
"""

from __future__ import annotations

from typing import List


#: The hint a function no call reached gets when it carries no type schema.
METADATA_HINT = ("build the library with -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 so that it "
                 "exports each function's type schema (__tvm_ffi__metadata_<name>), and the "
                 "checker calls it with the types it takes")


def unverified_closing_line(names: List[str], allowed: bool, without_schema: int) -> str:
    """The line a report with unverified functions ends with: what was not checked, how to
    fix it, and whether it failed the run (``allowed``: ``--allow-unverified`` was given).
    ``without_schema`` of them carry no type schema."""
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    verdict = ("--allow-unverified: they do not fail the run" if allowed else
               "they fail the run (exit status 3; --allow-unverified accepts them)")
    if without_schema:
        fix = f"give each a type schema so the checker can call it ({METADATA_HINT})"
    else:
        fix = ("their type schemas name types the checker cannot make well (Any, or a type "
               "no constructor or function of the library makes): declare the exact types")
    return f"not checked: {len(names)} function(s) ({shown}); {fix}; {verdict}"
