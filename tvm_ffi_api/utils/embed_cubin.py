"""Embeds a CUDA binary (CUBIN) into an object file, for ``TVM_FFI_EMBED_CUBIN(<name>)``.

C++ code compiled with ``TVM_FFI_EMBED_CUBIN(name)`` refers to two symbols,
``__tvm_ffi__cubin_<name>`` and ``__tvm_ffi__cubin_<name>_end``, bracketing
the CUBIN's bytes. :func:`embed_cubin` makes an object file holding both
that code and those bytes, with GNU binutils alone (no GPU, no CUDA):

1. ``ld -r -b binary`` wraps the CUBIN in an object (``_binary_<file>_start``/``_end``);
2. ``objcopy`` marks its stack non-executable and renames the two symbols;
3. ``ld -r`` merges it with the code's object;
4. ``objcopy --localize-symbol`` makes the symbols local, so two objects
   embedding the same name do not clash when linked together.

As a command::

    python -m tvm_ffi_fast.utils.embed_cubin --input-obj old.o --cubin k.cubin \\
        --name my_kernels --output-obj new.o
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Optional


def _run(step: str, command: List[str], verbose: bool, cwd: Optional[Path] = None) -> None:
    if verbose:
        print(f"[{step}] {' '.join(command)}")
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if verbose and (done.stdout or done.stderr):
        print(done.stdout + done.stderr, end="")
    if done.returncode != 0:
        raise RuntimeError(f"{step} failed with status {done.returncode}\n"
                           f"Command: {' '.join(command)}\nstdout: {done.stdout}\n"
                           f"stderr: {done.stderr}")


def embed_cubin(cubin_path: Path, input_obj_path: Path, output_obj_path: Path, name: str,
                verbose: bool = False) -> None:
    """Writes ``output_obj_path``: the object ``input_obj_path`` plus the bytes of
    ``cubin_path`` as ``__tvm_ffi__cubin_<name>`` .. ``__tvm_ffi__cubin_<name>_end``.

    Raises ``FileNotFoundError`` for a missing input, ``ValueError`` for a name
    that is no C identifier, ``RuntimeError`` (with the command and its output)
    when ``ld`` or ``objcopy`` fails.
    """
    cubin_path, input_obj_path = Path(cubin_path), Path(input_obj_path)
    output_obj_path = Path(output_obj_path)
    if not cubin_path.exists():
        raise FileNotFoundError(f"CUBIN file not found: {cubin_path}")
    if not input_obj_path.exists():
        raise FileNotFoundError(f"Input object file not found: {input_obj_path}")
    if not name.isidentifier():
        raise ValueError(f"name must be a C identifier (as in TVM_FFI_EMBED_CUBIN), got {name!r}")
    start, end = f"__tvm_ffi__cubin_{name}", f"__tvm_ffi__cubin_{name}_end"
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        # ld names the symbols after the file name it is given: make it predictable.
        blob = f"embedded_{name}.cubin"
        shutil.copyfile(cubin_path, work / blob)
        wrapped, renamed = work / "cubin.o", work / "cubin_renamed.o"
        _run("ld (binary)", ["ld", "-r", "-b", "binary", "-o", str(wrapped), blob], verbose,
             cwd=work)
        _run("objcopy (rename)", [
            "objcopy", "--add-section", ".note.GNU-stack=/dev/null",
            "--set-section-flags", ".note.GNU-stack=noload,readonly",
            "--redefine-sym", f"_binary_embedded_{name}_cubin_start={start}",
            "--redefine-sym", f"_binary_embedded_{name}_cubin_end={end}",
            str(wrapped), str(renamed)], verbose)
        _run("ld (merge)", ["ld", "-r", "-o", str(output_obj_path), str(input_obj_path),
                            str(renamed)], verbose)
        _run("objcopy (localize)", ["objcopy", "--localize-symbol", start,
                                    "--localize-symbol", end, str(output_obj_path)], verbose)
    if verbose:
        print(f"{output_obj_path}: {start} .. {end} (local)")


def main(argv: Optional[List[str]] = None) -> int:
    """The command: 0 when done, 1 for a missing input, 2 when a tool failed, 3 otherwise."""
    parser = argparse.ArgumentParser(
        prog="python -m tvm_ffi.utils.embed_cubin",
        description="Embed a CUBIN into an object file that uses TVM_FFI_EMBED_CUBIN(<name>)")
    parser.add_argument("--output-obj", required=True, metavar="PATH",
                        help="the object file to write")
    parser.add_argument("--input-obj", required=True, metavar="PATH",
                        help="the object file of the code using TVM_FFI_EMBED_CUBIN")
    parser.add_argument("--cubin", required=True, metavar="PATH", help="the CUBIN to embed")
    parser.add_argument("--name", required=True, metavar="NAME",
                        help="the name given to TVM_FFI_EMBED_CUBIN")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each command")
    args = parser.parse_args(argv)
    output = Path(args.output_obj).resolve()
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        embed_cubin(Path(args.cubin).resolve(), Path(args.input_obj).resolve(), output,
                    args.name, args.verbose)
    except FileNotFoundError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a command reports every failure
        print(f"Unexpected error: {exc}", file=sys.stderr)
        return 3
    if not args.verbose:
        print(f"Created {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
