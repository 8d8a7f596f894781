"""The command line: ``tvm-ffi-explain EXPR [EXPR ...]``.

Each expression is evaluated as Python with ``np`` (NumPy), ``torch`` (when
installed; imported only for an expression that names it), ``tvm_ffi`` (the
reference front end, :mod:`tvm_ffi_ref`), ``demo`` (:mod:`tvm_ffi_explain.demo`,
whose ``example_library_path()`` is the example kernel library and
``kernels()`` that library loaded) and the names of the API (``Array``,
``Map``, ``Shape``, ``dtype``, ``device``, ``load_module``, ...) in scope; the
values become the arguments of one call, ``args[0]``, ``args[1]``, ... and
are explained, one after the other.

``--trace EXPR`` instead makes the call ``EXPR`` (``f(a, b)``) and shows it as
it happens (:mod:`.trace`).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

from tvm_ffi_common.cli_args import (
    OneLineParser,
    complain,
    non_negative_integer,
    output_problem,
    write_problem,
)

EXAMPLES = """\
examples:
  tvm-ffi-explain '"hello"'                 a str of at most 7 bytes travels inline
  tvm-ffi-explain '"hello, world!"'         a longer one is a String object
  tvm-ffi-explain '[1, 2.5, "abc"]'         a list becomes an Array
  tvm-ffi-explain 'np.arange(6).reshape(2,3)'   a NumPy array becomes a Tensor (DLPack)
  tvm-ffi-explain 'torch.ones(2, 3)'        a torch tensor, through torch's DLPack exchange API
  tvm-ffi-explain 1 2.5 --svg call.svg      two arguments, also drawn as SVG
  tvm-ffi-explain --trace 'demo.kernels().echo("a string longer than seven bytes")'
                                            the call as it happens: bytes, counts, ownership
"""


def namespace(expressions: Sequence[str] = ()) -> Dict[str, Any]:
    """What an expression may use: numpy as ``np``, tvm_ffi_ref as ``tvm_ffi`` and its API.

    ``torch`` too, when one of ``expressions`` names it and it is installed
    (importing it takes a while, so only then).
    """
    import ctypes

    import numpy

    import tvm_ffi_ref

    from . import demo

    names: Dict[str, Any] = {"np": numpy, "numpy": numpy, "tvm_ffi": tvm_ffi_ref, "demo": demo,
                             "tvm_ffi_ref": tvm_ffi_ref, "ctypes": ctypes, "math": math,
                             "nan": math.nan, "inf": math.inf}
    for name in tvm_ffi_ref.__all__:
        try:
            names.setdefault(name, getattr(tvm_ffi_ref, name))
        except AttributeError:  # pragma: no cover - __all__ lists what exists
            pass
    if any("torch" in text for text in expressions):
        try:
            import torch
        except ImportError:  # the expression then fails with a NameError that says why
            pass
        else:
            names["torch"] = torch
    return names


def evaluate(expressions: Sequence[str]) -> List[Any]:
    """The value of each expression, evaluated in :func:`namespace`."""
    scope = namespace(expressions)
    return [eval(compile(text, f"<argument {i}>", "eval"), scope)  # noqa: S307 - on purpose
            for i, text in enumerate(expressions)]


def _use_color(choice: str, stream) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def main(argv: Optional[Sequence[str]] = None, stdout=None) -> int:
    """Entry point of ``tvm-ffi-explain``; 0 when every value could be passed, 1 otherwise."""
    from tvm_ffi_common import extras

    extras.require("tvm-ffi-explain", ("numpy",))  # expressions see NumPy as ``np``
    from . import explain, render_svg
    from .text import can_encode, render_text

    stdout = stdout or sys.stdout
    parser = OneLineParser(
        prog="tvm-ffi-explain",
        description="Shows the bytes a kernel receives when Python passes it these values: "
                    "each TVMFFIAny field by field and, for objects, the header, the cell "
                    "and the payload, recursively.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("expressions", nargs="*", metavar="EXPR",
                        help="a Python expression; np, torch, tvm_ffi and its API are in scope")
    parser.add_argument("--trace", metavar="CALL",
                        help="make this call (f(a, b), f a Function) and show it as it happens: "
                             "each argument's bytes and reference counts before, during and "
                             "after, and who owns the result")
    parser.add_argument("--svg", metavar="FILE", help="also draw the explanation as SVG")
    parser.add_argument("--stable", action="store_true",
                        help="hide addresses (mask pointer bytes), so output is reproducible")
    parser.add_argument("--max-items", type=non_negative_integer, default=8, metavar="N",
                        help="container elements and tensor bytes/8 to show (default 8)")
    parser.add_argument("--depth", type=non_negative_integer, default=6, metavar="N",
                        help="how many pointers deep to follow (default 6)")
    parser.add_argument("--ascii", action="store_true", help="no box-drawing characters")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the bytes of each field (default: when a terminal)")
    parser.add_argument("--no-round-trip", action="store_true",
                        help="do not say what each value comes back as")
    args = parser.parse_args(argv)
    problem = output_problem(args.svg, "--svg")
    if problem:
        return complain(parser.prog, problem)
    if args.trace is not None:
        return _trace(args, stdout)
    if not args.expressions:
        parser.error("give an expression to explain, or --trace CALL")

    try:
        values = evaluate(args.expressions)
    except Exception as error:  # noqa: BLE001 - report it like Python would, without a trace
        return complain(parser.prog, f"cannot evaluate: {type(error).__name__}: {error}")
    explanation = explain(*values, sources=args.expressions, stable=args.stable,
                          max_items=args.max_items, max_depth=args.depth,
                          max_bytes=8 * max(args.max_items, 1),
                          round_trip=not args.no_round_trip)
    text = render_text(explanation, color=_use_color(args.color, stdout))
    if not args.ascii and not can_encode(stdout, text):
        args.ascii = True
    if args.ascii:
        text = render_text(explanation, ascii=True, color=_use_color(args.color, stdout))
    stdout.write(text)
    if args.svg and not _write_svg(args.svg, render_svg(explanation)):
        return 2
    return 0 if explanation.error is None else 1


def _write_svg(path: str, svg: str) -> bool:
    """Writes ``--svg``'s file; a failed write is one line on stderr (and False)."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
    except OSError as exc:
        complain("tvm-ffi-explain", write_problem(path, "--svg", exc))
        return False
    print(f"wrote {path}", file=sys.stderr)
    return True


def _trace(args, stdout) -> int:
    """``--trace``: 0 when the call could be made (whatever its status), 2 otherwise."""
    from .text import can_encode
    from .trace import render_trace, trace_call

    if args.expressions:
        return complain("tvm-ffi-explain", "--trace takes one call and no other expression")
    try:
        trace = trace_call(args.trace, namespace([args.trace]), stable=args.stable,
                           max_items=args.max_items, max_depth=args.depth)
    except Exception as error:  # noqa: BLE001 - report it like Python would, without a trace
        return complain("tvm-ffi-explain", f"cannot trace: {type(error).__name__}: {error}")
    text = render_trace(trace)
    if args.ascii or not can_encode(stdout, text):
        text = render_trace(trace, ascii=True)
    stdout.write(text)
    if args.svg and not trace.problem:
        from .svg import render_trace_svg

        if not _write_svg(args.svg, render_trace_svg(trace)):
            return 2
    return 2 if trace.problem else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
