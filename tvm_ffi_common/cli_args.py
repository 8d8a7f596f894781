"""What every command line of the project shares: bad input gets one line, not a page.

A user who mistypes an option should read one line that names the option (or
the path) and what was expected, and get exit status 2; not argparse's usage
block, not a traceback. :class:`OneLineParser` prints argparse's errors that
way; the converters below name what they expected; :func:`output_problem`
says why a path cannot take a file we are about to write (before a long run,
not after it).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Optional

#: The exit status of a usage error (argparse's, and the shell's convention).
EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line: ``prog: error: --opt: what was wrong``."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):  # argparse's "argument --x: ..." -> "--x: ..."
            message = message[len("argument "):]
        sys.exit(complain(self.prog, f"{message} (see {self.prog} --help)"))


def complain(prog: str, message: str, status: int = EXIT_USAGE) -> int:
    """Prints ``prog: error: message`` as one line on stderr; returns ``status``."""
    text = " ".join(str(message).split())  # one line, whatever the message held
    print(f"{prog}: error: {text}", file=sys.stderr)
    return status


def integer(text: str) -> int:
    """An int option's converter: says what it expected."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _at_least(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def positive_integer(text: str) -> int:
    """A converter for counts that must be at least 1."""
    return _at_least(text, 1, "a positive integer")


def non_negative_integer(text: str) -> int:
    """A converter for counts and depths that may be 0."""
    return _at_least(text, 0, "an integer of 0 or more")


def positive_number(text: str) -> float:
    """A converter for durations: a number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def output_problem(path: Optional[str], option: str) -> Optional[str]:
    """Why ``option``'s output file ``path`` cannot be written, or None.

    Checked before the work, so that a long run does not end in a failed write.
    """
    if not path or path == "-":
        return None
    if os.path.isdir(path):
        return f"{option} {path}: is a directory, expected a file to write"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"{option} {path}: the directory {directory} does not exist"
    if os.path.exists(path):
        # A file that exists: only opening it for writing tells (/proc, read-only mounts).
        try:
            with open(path, "a"):
                pass
        except OSError as exc:
            return f"{option} {path}: not writable ({exc.strerror or exc})"
    elif not os.access(directory, os.W_OK):
        return f"{option} {path}: the directory {directory} is not writable"
    return None


def write_problem(path: str, option: str, exc: OSError) -> str:
    """The one line for a write of ``option``'s file at ``path`` that failed with ``exc``."""
    return f"{option} {path}: writing it failed ({exc.strerror or exc})"
