"""``python -m tvm_ffi_check``: the same as ``tvm-ffi-check``."""

import sys

from . import main

sys.exit(main())
