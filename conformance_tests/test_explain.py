"""``tvm-ffi-explain`` describes every value the value strategies generate.

The explainer encodes a value exactly as a call through the reference front
end would, then walks its bytes. For every generated value, in the reference
worker: both renderings (text and SVG) are drawn without an error; the type
index it shows for ``args[0]`` is the one the probe kernel receives for the
same value; and a value it reports as impossible to pass is one that passing
to the probe rejects with the same exception class.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from . import config
from . import strategies as S
from .profiles import conformance

#: The worker that runs the reference ("ref", or "pypy-ref" when PyPy runs the suite).
REFERENCE = next(f for f in config.FRONTENDS if config.PACKAGES[f] == "tvm_ffi_ref")


@conformance(examples=200)
@given(st.lists(st.one_of(S.values, S.nested, S.numpy_dtypes, S.exceptions, S.void_pointers,
                          S.numpy_scalars, S.opaques, S.ndarrays), min_size=1, max_size=6))
def test_explain_describes_every_generated_value(pool, recipes):
    replies = pool.workers[REFERENCE].request("explain", recipes)
    for recipe, reply in zip(recipes, replies):
        if reply[0] == "build-raises":
            continue  # not a value (the recipe itself is refused the same way everywhere)
        assert reply[0] in ("explained", "cannot-pass"), (recipe, reply)
        if reply[0] == "explained":
            assert reply[1] == reply[2], (recipe, reply)
        else:
            assert reply[2][:2] == ["raises", reply[1]], (recipe, reply)
