"""``python -m tvm_ffi_explain EXPR ...``: the same as ``tvm-ffi-explain``."""

import sys

from .cli import main

sys.exit(main())
