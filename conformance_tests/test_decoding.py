"""Decoding: forged ``TVMFFIAny`` results fed to each front end's result decoder.

``probe.forge(raw, obj, status)`` returns exactly the 16 bytes it is given
(with a real object's pointer as payload when there is one), so the front
end's call path decodes a result no well-behaved kernel would hand it.
:func:`expected_outcome` states, independently of any front end, which
forged results break which ABI rule (the rules ``tvm_ffi_ref.rules``
documents):

* **valid** results (any POD payload and padding, small strings of 0-7
  bytes even with undecodable bytes, objects of their own type) must decode
  exactly as upstream decodes them;
* **invalid** ones must make every front end of ours raise
  ``ABIViolation`` (a RuntimeError) naming the rule, with the same message
  under each, and never crash;
* status -2 ("error pending in the calling front end") must raise the same
  error under each of ours.

Upstream runs every case in a forked child of its worker
(``child.op_decode_isolated``): it has no defined behaviour for invalid
results and crashes on several (NULL objects, unregistered indices, huge
small-string lengths, bad statuses, a DLTensor* result), and a crash there
only means "nothing to compare". What upstream did is recorded as a
hypothesis event (``--hypothesis-show-statistics``). Ours run in their own
long-lived workers: a crash there fails the test.
"""

from __future__ import annotations

import struct

from hypothesis import assume, event, example, given
from hypothesis import strategies as st

from . import config
from . import strategies as S
from .compare import short, is_crash
from .known import hits_known_divergence
from .profiles import conformance

_OWNED_ONLY_VIOLATIONS = {8, 9, 10}


def expected_outcome(case):
    """``("valid",)``, ``("pending",)`` or ``("invalid", rule)`` for a forged result."""
    raw, recipe, status = case
    type_index, padding, payload = struct.unpack("<iIQ", raw)
    if status == -2:
        return ("pending",)
    if status == -1:
        return ("invalid", "error-raised")  # forge leaves nothing in the raised-error slot
    if status != 0:
        return ("invalid", "status")
    if type_index in _OWNED_ONLY_VIOLATIONS:
        return ("invalid", "result-owned")
    if type_index in (11, 12) and padding > 7:
        return ("invalid", "small-str-length")
    if type_index < 0 or 13 < type_index < 64:
        return ("invalid", "result-type")
    if type_index >= 64:
        if recipe is None:
            return ("invalid", "object-header")  # NULL object pointer
        if type_index not in S.REGISTERED_OBJECT_INDICES:
            return ("invalid", "result-type")
        if type_index != S.object_index_of(recipe):
            return ("invalid", "object-header")
    return ("valid",)


def _pick(reply, i):
    return reply if is_crash(reply) else reply[i]


@conformance(examples=200)
@given(st.lists(S.forged_results(), min_size=1, max_size=6))
@example([(struct.pack("<iIQ", 11, 7, int.from_bytes(b"abcdefg\0", "little")), None, 0),
          (struct.pack("<iIQ", 11, 8, int.from_bytes(b"abcdefgh", "little")), None, 0),
          (struct.pack("<iIQ", 65, 0, 0), ("Array", []), 0),
          (struct.pack("<iIQ", 71, 0, 0), None, 0),
          (struct.pack("<iIQ", 9, 0, 0), None, 0),
          (struct.pack("<iIQ", 1, 0, 5), None, 7)])
def test_decode_forged_results(pool, cases):
    cases = [c for c in cases if not hits_known_divergence(("forged",) + tuple(c))]
    assume(cases)
    ours = pool.run("decode", cases, only=list(config.FRONTENDS))
    upstream = pool.workers[config.ORACLE].request("decode_isolated", cases)
    problems = []
    for frontend, reply in ours.items():
        if is_crash(reply):
            problems.append(f"{frontend} crashed decoding {short(cases)}:\n{reply[1]}\n{reply[2]}")
    if not problems:
        for i, case in enumerate(cases):
            outcome = expected_outcome(case)
            theirs = upstream[i]
            type_index = struct.unpack("<iIQ", case[0])[0]
            what = outcome[-1] if outcome[0] != "valid" else f"valid type index {type_index}"
            event(f"upstream on {what}: "
                  f"{theirs[0] if theirs[0] != 'raises' else 'raises ' + theirs[1]}")
            first = config.FRONTENDS[0]
            for frontend in config.FRONTENDS:
                got = ours[frontend][i]
                if got != ours[first][i]:
                    problems.append(f"case {i} {short(case)}: {frontend} {short(got)} "
                                    f"but {first} {short(ours[first][i])}")
                if outcome[0] == "invalid":
                    if got[:2] != ["raises", "ABIViolation"] or got[-1] != outcome[1]:
                        problems.append(f"case {i} {short(case)} breaks rule {outcome[1]!r}: "
                                        f"{frontend} gave {short(got)}")
                elif outcome[0] == "pending":
                    if got[0] != "raises":
                        problems.append(f"case {i} {short(case)}: status -2 must raise, "
                                        f"{frontend} gave {short(got)}")
                elif theirs[0] != "crash" and got != theirs:
                    problems.append(f"case {i} {short(case)} is valid: {frontend} decoded "
                                    f"{short(got)}, upstream {short(theirs)}")
    assert not problems, "\n".join(problems)
