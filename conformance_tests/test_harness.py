"""The suite itself: its own faults are never taken for agreement.

A case the workers cannot carry out (an unknown recipe, a register outside a
call program, a callback's argument outside a callback, an unknown kernel
function or container op) fails the same way
in every worker; were it recorded like a front end's exception, the replies
would agree and the case would pass having tested nothing. Such a request
must raise ``HarnessError`` instead (``harness_faults.py``), even when the
fault happens inside a callback that a front end turns into its own error.
Registers inside argument lists (``("list", [("reg", 0)])``) must resolve.
"""

from __future__ import annotations

import pytest

from . import config
from .compare import assert_agree
from .workers import HarnessError


def _program(steps, init=(("List", [("int", 1)]),)):
    return {"init": list(init), "steps": steps}


@pytest.mark.parametrize("program", [
    _program([("call", "echo", [("no-such-recipe", 1)])]),
    _program([("call", "no_such_function", [])]),
    _program([("call", "call", [("callable", ("return", ("no-such-recipe",))), ("list", [])])]),
    _program([("call", "call", [("callable", ("no-such-behaviour",)), ("list", [])])]),
    _program([("call", "echo", [("arg", 0)])]),
    _program([("call", "call", [("callable", ("nest", "no_such_function", [])), ("list", [])])]),
], ids=["recipe", "function", "inside-a-callback", "callback-behaviour",
        "argument-outside-a-callback", "nested-function"])
def test_a_fault_of_the_harness_is_refused_by_every_worker(pool, program):
    for name, worker in pool.workers.items():
        if name.endswith("-isolated"):
            continue
        with pytest.raises(HarnessError):
            worker.request("program", [program])


def test_a_register_outside_a_program_is_a_fault(pool):
    with pytest.raises(HarnessError):
        pool.workers["upstream"].request("echo", [("reg", 0)])


def test_a_container_op_the_harness_lacks_is_a_fault(pool):
    with pytest.raises(HarnessError):
        pool.workers["upstream"].request(
            "container", [{"make": ("py", ("List", [])), "ops": [("py_no_such_op",)]}])


def test_registers_resolve_inside_argument_lists(pool):
    """The call passes a list holding register 0 to a recording callback: every worker
    must record the List it holds, not a failure to build the arguments."""
    program = _program([("call", "call", [("callable", ("record", 1)),
                                          ("list", [("reg", 0), ("str", "abcdefgh")])])])
    for name in [config.ORACLE] + config.FRONTENDS:
        (records,) = pool.workers[name].request("program", [program])
        assert not any(r[0] == "args-raise" for r in records), (name, records)
        log = records[-2]
        assert log[0] == "callback-log" and log[1][0][1][0][0] == "list", (name, log)


def test_a_fault_leaves_no_reply_behind(pool):
    """A request every worker refuses still has each worker's reply read: the next request
    gets its own replies, not ones left over (which made every later property fail)."""
    with pytest.raises(HarnessError):
        pool.run("echo", [("reg", 0)])
    assert_agree(pool.run("dump", [("int", 5)]), [("int", 5)], "the next request")
