"""Upstream's tools find this script next to the package; it is tvm_ffi_api/utils's one."""
import os  # noqa: E401 - tvm_ffi_api imports nothing at all
import runpy

import tvm_ffi_api

runpy.run_path(os.path.join(tvm_ffi_api.FOLDER, "utils", os.path.basename(__file__)),
               run_name=__name__)
