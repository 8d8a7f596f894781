"""tvm-ffi-explain's call traces, its readable SVGs, torch in scope and one block per value.

* ``--trace f(args)`` makes the call as the front end does and reports the
  counts before, during (at each C API call the kernel makes) and after it,
  the result's ownership, the slots a kernel wrote, and the error it raised;
* the SVG of an explanation is at most 900 pixels wide whatever the value,
  wraps text instead of cutting it, draws every region as one block, uses
  12-pixel text or larger and carries a legend;
* the ``TVMFFIAny`` layout drawing lists the live payload member of every
  type index, the same member the walker reads;
* several values print one after the other, each header above its block.
"""

from __future__ import annotations

import ctypes
import io
import re
import xml.etree.ElementTree as ET

import pytest

import tvm_ffi_ref as tvm_ffi
from tvm_ffi_common import abi
from tvm_ffi_explain import explain, render_svg, render_text, spec_tables
from tvm_ffi_explain.cli import main, namespace
from tvm_ffi_explain.model import AddressBook
from tvm_ffi_explain.reading import PAYLOAD_MEMBERS
from tvm_ffi_explain.svg_explain import WIDTH, widest_text, wrap
from tvm_ffi_explain.trace import parse_call, render_trace, trace_call
from tvm_ffi_explain.walk import Walker

TI = abi.TVMFFITypeIndex
ECHO = 'demo.kernels().echo("a string longer than seven bytes")'


def run_main(*argv):
    out = io.StringIO()
    status = main(list(argv), stdout=out)
    return status, out.getvalue()


def trace(text):
    return trace_call(text, namespace([text]))


# ------------------------------------------------------------------ --trace


def test_a_traced_call_shows_counts_before_during_and_after():
    seen = trace(ECHO)
    assert seen.status == 0 and seen.callee.endswith("__tvm_ffi_echo in libtvm_ffi_example_kernels.so")
    (address, label), = seen.objects.items()
    assert label == "#1 ffi.String"
    assert seen.before[address] == (1, 1)  # the call's own reference
    (name, entry, exit), = seen.events
    assert name == "TVMFFIAnyViewToOwnedAny" and entry[address] == (1, 1) and exit[address] == (2, 1)
    assert seen.after_call[address] == (2, 1) and seen.after_release[address] == (1, 1)
    assert "one strong reference to #1" in seen.ownership
    assert seen.written == [] and seen.returns.startswith("String('a string longer")
    text = render_trace(seen)
    assert "#1 ffi.String: strong 1 → strong 2" in text
    assert "#1 ffi.String: strong 1  (was strong 2)" in text


def test_a_failing_call_shows_the_raised_error():
    seen = trace('demo.kernels().add_int("x", 1)')
    assert seen.status == -1 and seen.result is None
    assert seen.error == "TypeError: add_int(): argument 0 must be an int, got a value of type index 11"
    assert [name for name, _, _ in seen.events] == ["TVMFFIErrorSetRaisedFromCStr"]
    assert "status -1 (an error was raised)" in render_trace(seen)


def test_a_kernel_breaking_rules_is_shown_breaking_them():
    from tvm_ffi_check.examples import library_path

    scope = namespace()
    scope["broken"] = tvm_ffi.load_module(library_path("broken"))
    written = trace_call("broken.bad_args_written(5)", scope)
    assert written.written == ["args[0]"] and written.status == 0
    owned = trace_call("broken.bad_result_owned()", scope)
    assert owned.returns.startswith("nothing: ABIViolation: ABI rule 'result-owned' broken")


def test_torch_is_in_scope_and_its_call_environment_is_named():
    assert "torch" not in namespace(["1 + 1"])  # imported only when named
    seen = trace("demo.kernels().sum_float32(torch.arange(6, dtype=torch.float32))")
    assert seen.status == 0 and seen.returns.startswith("15.0")
    assert "DLPack exchange API serves this call" in seen.environment
    (address, label), = seen.objects.items()
    assert label == "#1 ffi.Tensor" and seen.after_release[address][0] == 0
    assert "no reference is left, so it is freed" in render_trace(seen)
    status, out = run_main("torch.ones(2, 3)", "--stable")
    assert status == 0 and "kTVMFFITensor" in out


def test_trace_refuses_what_is_not_a_positional_call(capsys):
    for text, why in (("1 + 2", "not one"), ("f(x=1)", "positional"), ("f(*a)", "positional"),
                      ("f(", "needs a call")):
        with pytest.raises(ValueError, match=why):
            parse_call(text)
    status, _ = run_main("--trace", "len([1])")
    assert status == 2
    status, out = run_main("--trace", "print(1)")
    assert status == 2 and "not a Function" in out
    status, _ = run_main("--trace", "1 +")
    assert status == 2 and "cannot trace" in capsys.readouterr().err


def test_trace_cli_prints_and_draws(tmp_path):
    svg = tmp_path / "trace.svg"
    status, out = run_main("--stable", "--trace", ECHO, "--svg", str(svg))
    assert status == 0
    assert out.index("1. before the call") < out.index("2. during the call") < \
        out.index("3. after the call") < out.index("4. after the call's arguments") < \
        out.index("5. the result becomes")
    root = ET.parse(svg).getroot()
    assert float(root.get("width")) <= WIDTH


# ------------------------------------------------------------------ SVG, text


def _font_sizes(svg):
    return {int(size) for size in re.findall(r'font-size="(\d+)"', svg)}


def test_explanation_svgs_are_narrow_wrapped_legended_and_one_block_per_region():
    value = {"a key": [1, 2.5, "a string longer than seven bytes, made to wrap " * 3],
             "deep": [[[["nested four levels down, boxed"]]]]}
    explanation = explain(value, max_depth=8)
    svg = render_svg(explanation)
    root = ET.fromstring(svg)
    assert float(root.get("width")) <= WIDTH and widest_text(svg) <= WIDTH
    assert "…" not in svg
    assert min(_font_sizes(svg)) >= 12
    assert ">Legend<" in svg and "object header (TVMFFIObject)" in svg

    def regions(region):
        return [region] + [r for child in region.children() for r in regions(child)]

    blocks = re.findall(r'<rect x="44" [^>]*rx="4"/>', svg)
    assert len(blocks) == sum(len(regions(r)) for r in explanation.roots)


def test_wrap_never_loses_text():
    text = "dl_tensor.device.device_type and a_very_long_identifier_with_no_spaces_at_all x"
    lines = wrap(text, 120)
    assert all(len(line) * 7.3 <= 120 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_values_print_one_block_at_a_time():
    text = render_text(explain(1, "two", sources=["1", '"two"']))
    assert text.index('"two"') > text.index("args[0]") and text.index("args[1]") > text.index('"two"')


def test_the_any_diagram_keys_the_payload_by_type_index():
    rows = spec_tables.any_payload_table()
    assert [row[0] for row in rows[1:15]] == [str(i) for i in range(14)]
    svg = spec_tables.diagram_svg("TVMFFIAny")
    for index in range(14):
        assert f">{TI(index).name}<" in svg
    assert "v_obj (TVMFFIObject*)" in svg and "…" not in svg.split("type_index</text>", 1)[-1]


@pytest.mark.parametrize("index", sorted(PAYLOAD_MEMBERS))
def test_the_payload_table_names_the_member_the_walker_reads(index):
    value = abi.TVMFFIAny()
    value.type_index = index
    if index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes):
        value.small_str_len = 1
    walker = Walker(AddressBook(stable=True), max_depth=0)
    fields = walker.any_fields(ctypes.addressof(value), 0, depth=0)
    names = [f.name for f in fields[2:]]
    assert names[0].split(".")[0] == PAYLOAD_MEMBERS[index], names


def test_a_reference_left_on_a_borrowed_argument_is_flagged():
    from tvm_ffi_check.examples import library_path

    scope = namespace()
    scope["broken"] = tvm_ffi.load_module(library_path("broken"))
    kept = trace_call("broken.bad_leak_kept_arg(tvm_ffi.Array([1, 2]))", scope)
    text = render_trace(kept)
    assert "LEFT BEHIND: #1 ffi.Array has 1 more strong reference than before the call" in text
    # keeping one is allowed (a registry); the checker's rule is about growth, under --leaks
    assert "rule leak, found by tvm-ffi-check --leaks" in text
    # Returning an argument hands the caller a reference: that one is owed, not left behind.
    assert "LEFT BEHIND" not in render_trace(trace(ECHO))


def test_a_none_with_a_nonzero_payload_is_not_called_unused():
    slot = abi.TVMFFIAny()
    slot.type_index, slot.v_int64 = TI.kTVMFFINone, 0x1234
    text = render_text_of(slot)
    assert "unused (zero)" not in text and "0x1234: NOT ZERO" in text
    slot.v_int64 = 0
    assert "unused (zero)" in render_text_of(slot)


def render_text_of(slot) -> str:
    from tvm_ffi_explain.text import TextRenderer

    book = AddressBook(stable=True)
    region = Walker(book).any_region(ctypes.addressof(slot), "result", "")
    lines: list = []
    TextRenderer().region(region, book, 0, lines, branch=False)
    return "\n".join(lines)
