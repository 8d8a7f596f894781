"""The front ends under test are the ones listed, and each really is what it claims.

``config.FRONTENDS`` is the single list of front ends compared with
upstream. A listed front end that cannot be imported makes the ``pool``
fixture (and so every test) fail with ``FrontEndUnavailable``: nothing is
skipped silently. This test also pins which module each worker imported, so
a mutant copy of ``tvm_ffi_ref`` (``CONFORMANCE_REF_PATH``) or a whole scratch
copy of the project (``CONFORMANCE_SCRATCH_ROOT``, see ``mutants/``) is
provably the one under test.
"""

from __future__ import annotations

import os

from . import config

def test_every_listed_frontend_is_running(pool):
    assert config.FRONTENDS, "no front end is listed for comparison"
    for frontend in config.FRONTENDS:
        assert frontend in config.PACKAGES, f"unknown front end {frontend!r}"
        hello = pool.workers[frontend].hello
        assert hello["frontend"] == frontend
        package = os.path.basename(os.path.dirname(hello["module"]))
        assert package == config.PACKAGES[frontend], hello
        expected = "pypy" if frontend.startswith("pypy-") else "cpython"
        assert hello["interpreter"] == expected, hello
        # Each fast front end runs on the core it names (the cffi one, too, on CPython).
        assert hello["fast_core"] == config.FAST_CORES.get(frontend), hello
        mutant = os.environ.get("CONFORMANCE_REF_PATH")
        if frontend == "ref" and mutant:
            assert hello["module"].startswith(os.path.abspath(mutant) + os.sep), hello
        # A scratch copy under test (the mutation harness, ``mutants/``): every front end
        # and the library they run on come from the copy, not from the working tree.
        scratch = os.environ.get("CONFORMANCE_SCRATCH_ROOT")
        if scratch:
            for key in ("module", "lib", "core"):
                if hello.get(key):
                    assert os.path.realpath(hello[key]).startswith(
                        os.path.realpath(scratch) + os.sep), (key, hello)
        # Our front ends run on our libtvm_ffi.so, never on upstream's.
        assert "tvm_ffi_common" in hello["lib"], hello


def test_upstream_is_the_oracle(pool):
    hello = pool.workers[config.ORACLE].hello
    assert os.path.basename(os.path.dirname(hello["module"])) == "tvm_ffi", hello
    assert hello["lib"].endswith(os.path.join("tvm_ffi", "lib", "libtvm_ffi.so")), hello
