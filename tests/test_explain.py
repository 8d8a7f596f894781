"""tvm-ffi-explain: every kind of value is encoded as a call would and explained without error."""

from __future__ import annotations

import ctypes
import io
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tvm_ffi_ref as tvm_ffi
from tvm_ffi_common import abi
from tvm_ffi_ref.convert import CallScope, set_arg
from tvm_ffi_explain import any_hex, explain, render_svg, render_text
from tvm_ffi_explain.cli import main

TI = abi.TVMFFITypeIndex
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


class Opaque:
    """A class with no TVM FFI encoding: it crosses as an opaque object."""


def _strided_4d():
    return np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)[:, ::2, 1:, ::-2]


#: (id, factory, expected type index): factories, so that each test gets fresh objects.
CASES = [
    ("none", lambda: None, TI.kTVMFFINone),
    ("true", lambda: True, TI.kTVMFFIBool),
    ("false", lambda: False, TI.kTVMFFIBool),
    ("zero", lambda: 0, TI.kTVMFFIInt),
    ("int64-max", lambda: 2**63 - 1, TI.kTVMFFIInt),
    ("int64-min", lambda: -2**63, TI.kTVMFFIInt),
    ("beyond-int64", lambda: 2**63, TI.kTVMFFIBigInt),
    ("below-int64", lambda: -2**63 - 1, TI.kTVMFFIBigInt),
    ("huge-int", lambda: 3**500, TI.kTVMFFIBigInt),
    ("float", lambda: 2.5, TI.kTVMFFIFloat),
    ("nan", lambda: math.nan, TI.kTVMFFIFloat),
    ("negative-zero", lambda: -0.0, TI.kTVMFFIFloat),
    ("infinity", lambda: -math.inf, TI.kTVMFFIFloat),
    ("numpy-float32", lambda: np.float32(1.5), TI.kTVMFFIFloat),
    ("numpy-int", lambda: np.int16(-3), TI.kTVMFFIInt),
    ("empty-str", lambda: "", TI.kTVMFFISmallStr),
    ("small-str", lambda: "1234567", TI.kTVMFFISmallStr),
    ("long-str", lambda: "12345678", TI.kTVMFFIStr),
    ("very-long-str", lambda: "x" * 5000, TI.kTVMFFIStr),
    ("non-ascii-small", lambda: "héllo", TI.kTVMFFISmallStr),
    ("non-ascii-long", lambda: "日本語のテキスト", TI.kTVMFFIStr),
    ("emoji", lambda: "🙂", TI.kTVMFFISmallStr),
    ("empty-bytes", lambda: b"", TI.kTVMFFISmallBytes),
    ("bytes-with-nul", lambda: b"a\x00b", TI.kTVMFFISmallBytes),
    ("long-bytes-with-nul", lambda: b"\x00" * 9 + b"\xff", TI.kTVMFFIBytes),
    ("bytearray", lambda: bytearray(b"xyz"), TI.kTVMFFISmallBytes),
    ("dtype", lambda: tvm_ffi.dtype("float32"), TI.kTVMFFIDataType),
    ("dtype-vector", lambda: tvm_ffi.dtype("int8x4"), TI.kTVMFFIDataType),
    ("numpy-dtype", lambda: np.dtype("float16"), TI.kTVMFFIDataType),
    ("device-cpu", lambda: tvm_ffi.device("cpu"), TI.kTVMFFIDevice),
    ("device-cuda", lambda: tvm_ffi.device("cuda:1"), TI.kTVMFFIDevice),
    ("void-p", lambda: ctypes.c_void_p(0x1234), TI.kTVMFFIOpaquePtr),
    ("empty-list", lambda: [], TI.kTVMFFIArray),
    ("list", lambda: [1, 2.5, "abc"], TI.kTVMFFIArray),
    ("tuple", lambda: (1, "x", None), TI.kTVMFFIArray),
    ("nested-list", lambda: [1, [2, [3, [4, [5, [6, [7, [8]]]]]]]], TI.kTVMFFIArray),
    ("dict", lambda: {"a": 1, "b": [1, 2]}, TI.kTVMFFIMap),
    ("nested-dict", lambda: {"a": {"b": {"c": (1, 2)}}}, TI.kTVMFFIMap),
    ("dict-mixed-keys", lambda: {1: 2, 2.5: "x", None: b"q", "long key here": 0},
     TI.kTVMFFIMap),
    ("shape", lambda: tvm_ffi.Shape((2, 3, 4)), TI.kTVMFFIShape),
    ("empty-shape", lambda: tvm_ffi.Shape(()), TI.kTVMFFIShape),
    ("array-0d", lambda: np.array(5.0), TI.kTVMFFITensor),
    ("array-1d", lambda: np.arange(3, dtype=np.int8), TI.kTVMFFITensor),
    ("array-2d", lambda: np.arange(6).reshape(2, 3), TI.kTVMFFITensor),
    ("array-2d-transposed", lambda: np.arange(6, dtype=np.float32).reshape(2, 3).T,
     TI.kTVMFFITensor),
    ("array-3d", lambda: np.zeros((2, 3, 4), np.float32), TI.kTVMFFITensor),
    ("array-4d-strided", _strided_4d, TI.kTVMFFITensor),
    ("array-negative-stride", lambda: np.arange(10)[::-3], TI.kTVMFFITensor),
    ("array-empty", lambda: np.zeros((0, 3)), TI.kTVMFFITensor),
    ("array-bool", lambda: np.array([True, False]), TI.kTVMFFITensor),
    ("array-float16", lambda: np.arange(4, dtype=np.float16), TI.kTVMFFITensor),
    ("array-complex", lambda: np.arange(4, dtype=np.complex64), TI.kTVMFFITensor),
    ("array-offset-view", lambda: np.arange(20, dtype=np.int32)[5:15:2], TI.kTVMFFITensor),
    ("lambda", lambda: (lambda x: x), TI.kTVMFFIFunction),
    ("builtin", lambda: print, TI.kTVMFFIFunction),
    ("function-object", lambda: tvm_ffi.convert(lambda: 1), TI.kTVMFFIFunction),
    ("exception", lambda: ValueError("boom"), TI.kTVMFFIError),
    ("key-error", lambda: KeyError("k"), TI.kTVMFFIError),
    ("opaque", lambda: Opaque(), TI.kTVMFFIOpaquePyObject),
    ("object", lambda: object(), TI.kTVMFFIOpaquePyObject),
    ("ffi-string", lambda: tvm_ffi.convert("a long string here"), TI.kTVMFFIStr),
    ("moved", lambda: tvm_ffi.Array([1])._move(), TI.kTVMFFIObjectRValueRef),
    ("array-300", lambda: tvm_ffi.Array(list(range(300))), TI.kTVMFFIArray),
    ("list-300", lambda: tvm_ffi.List(list(range(300))), TI.kTVMFFIList),
    ("map-300", lambda: tvm_ffi.Map({i: str(i) * 9 for i in range(300)}), TI.kTVMFFIMap),
    ("dict-300", lambda: tvm_ffi.Dict({str(i): i for i in range(300)}), TI.kTVMFFIDict),
    ("small-dict", lambda: tvm_ffi.Dict({1: 2}), TI.kTVMFFIDict),
    ("empty-list-object", lambda: tvm_ffi.List([]), TI.kTVMFFIList),
]


def root_index(explanation, i=0):
    """The type index written in ``args[i]``."""
    first = explanation.roots[i].fields()[0]
    assert first.name == "type_index"
    return int.from_bytes(first.raw, "little", signed=True)


@pytest.mark.parametrize("factory,index", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_every_kind_is_explained_as_text_and_svg(factory, index):
    value = factory()
    explanation = explain(value)
    assert explanation.error is None, explanation.error
    assert root_index(explanation) == index
    text = render_text(explanation)
    assert f"{int(index)} = " in text
    assert render_text(explanation, ascii=True).isascii()
    root = ET.fromstring(render_svg(explanation))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    root_bytes = sum(f.size for f in explanation.roots[0].fields())
    assert root_bytes == 16, "the fields of a TVMFFIAny cover its 16 bytes exactly once"


@pytest.mark.parametrize("factory,index", [c[1:] for c in CASES if c[2] >= 64],
                         ids=[c[0] for c in CASES if c[2] >= 64])
def test_objects_show_header_cell_and_payload(factory, index):
    explanation = explain(factory())
    (obj,) = explanation.roots[0].children()
    header = obj.sections[0]
    assert header.title == "header" and header.struct == "TVMFFIObject"
    assert [f.name for f in header.fields] == ["combined_ref_count", "type_index", "__padding",
                                               "deleter"]
    assert int.from_bytes(header.fields[1].raw, "little") == index
    assert len(obj.sections) >= 2, "a cell follows the header"
    assert obj.size >= 24


def test_the_bytes_shown_are_the_bytes_passed():
    for value in (None, True, -7, 2.5, -0.0, "hi", b"\x00\x01", tvm_ffi.dtype("bfloat16"),
                  tvm_ffi.device("cuda:3")):
        scope = CallScope()
        written = abi.TVMFFIAny()
        set_arg(written, value, scope)
        scope.close()
        shown = b"".join(f.raw for f in sorted(explain(value).roots[0].fields(),
                                               key=lambda f: f.offset))
        assert shown == bytes(written), value


def test_a_nan_and_negative_zero_are_told_apart():
    assert "NaN" in render_text(explain(math.nan))
    assert "sign bit" in render_text(explain(-0.0))
    assert any_hex(-0.0).endswith("00 00 00 00 00 00 00 80")


def test_big_integers_show_their_words():
    text = render_text(explain(-(2**64)))
    assert "2 int64 words" in text
    assert "word[1]" in text and "-1" in text


TENSORS = {
    "0-d": lambda: np.array(1.5, dtype=np.float32),
    "1-d": lambda: np.arange(3, dtype=np.float32),
    "2-d": lambda: np.arange(6, dtype=np.float32).reshape(2, 3),
    "2-d-transposed": lambda: np.arange(6, dtype=np.float32).reshape(2, 3).T,
    "3-d-sliced": lambda: np.arange(60, dtype=np.int16).reshape(3, 4, 5)[1:, ::2, 1:4],
    "4-d-negative": _strided_4d,
}


@pytest.mark.parametrize("make", TENSORS.values(), ids=TENSORS.keys())
def test_tensors_show_shape_and_strides_in_elements(make):
    array = make()
    shape, strides = array.shape, tuple(s // array.itemsize for s in array.strides)
    text = render_text(explain(array))
    assert f"{len(shape)} dimensions" in text
    if shape:
        assert re.search(rf"shape\s+int64_t\*\s+{re.escape(str(shape))} ", text)
        assert f"{strides} in elements" in text
    assert "tensor data" in text and "DLManagedTensor" in text


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_tensors_of_a_dtype_the_runtime_cannot_spell_are_explained(dtype):
    # DLPack's complex code (5) has no dtype string, so Tensor.dtype raises: the
    # description falls back to the (code, bits, lanes) triple.
    for value in (np.zeros((2,), dtype=dtype), tvm_ffi.from_dlpack(np.zeros((), dtype=dtype))):
        explanation = explain(value)
        text = render_text(explanation)
        render_svg(explanation)
        assert explanation.error is None
        assert "dtype=(code, bits, lanes)=(5, " in text


def test_containers_of_300_show_the_ends_and_elide_the_middle():
    text = render_text(explain(tvm_ffi.Array(list(range(300)))))
    assert "... 292 more slots ..." in text and "slot[299]" in text and "slot[7]" not in text
    text = render_text(explain(tvm_ffi.List(list(range(300)))))
    assert "List buffer, 4800 bytes" in text and "slot[299]" in text
    text = render_text(explain(tvm_ffi.Dict({str(i): i for i in range(300)})))
    assert "dense form" in text and "512 slots" in text and "292 more entries" in text
    text = render_text(explain(tvm_ffi.Map({i: str(i) * 9 for i in range(300)})))
    assert "home slot" in text and "ffi.String object" in text
    text = render_text(explain(list(range(300)), max_items=3))
    assert "... 297 more slots ..." in text


def test_depth_limit_and_shared_objects():
    nested = [[[[["deep string, boxed"]]]]]
    text = render_text(explain(nested, max_depth=2))
    assert "not expanded" in text
    shared = tvm_ffi.Array(["a string long enough to be boxed"])[0]  # a String with its object
    text = render_text(explain([shared, shared]))
    assert text.count("ffi.String object") == 1 and "(drawn above)" in text


def test_stable_output_has_no_addresses_and_repeats():
    value = {"k": [1, "a long string value"], "t": np.arange(4)}
    first = render_text(explain(value))
    assert first == render_text(explain(value))
    assert not ADDRESS.search(first), ADDRESS.search(first)
    unstable = render_text(explain(value, stable=False))
    assert ADDRESS.search(unstable)


def test_a_value_that_cannot_be_passed_is_explained_not_raised():
    readonly = np.arange(3)
    readonly.setflags(write=False)
    explanation = explain(readonly)
    assert explanation.error and "BufferError" in explanation.error
    assert "cannot be passed" in render_text(explanation)
    ET.fromstring(render_svg(explanation))


def test_modules_and_kernel_functions_are_explained():
    from tvm_ffi_explain.demo import example_library_path

    kernels = tvm_ffi.load_module(example_library_path())
    text = render_text(explain(kernels.add_int))
    assert "__tvm_ffi_add_int in libtvm_ffi_example_kernels.so" in text
    text = render_text(explain(kernels))
    assert "imports_" in text and "ffi.Module" in text


def test_several_arguments_are_one_call():
    explanation = explain(1, "two", [3])
    assert [r.label for r in explanation.roots] == ["args[0]", "args[1]", "args[2]"]
    assert [root_index(explanation, i) for i in range(3)] == [1, 11, 71]


# ---------------------------------------------------------------- command line


def run_main(*argv, stdout=None):
    out = stdout or io.StringIO()
    status = main(list(argv), stdout=out)
    return status, out.getvalue() if hasattr(out, "getvalue") else ""


def test_cli_explains_expressions_with_numpy_in_scope(tmp_path):
    status, out = run_main('"hello"', "np.arange(6).reshape(2,3)", "--stable")
    assert status == 0
    assert "kTVMFFISmallStr" in out and "kTVMFFITensor" in out and "args[1]" in out
    svg = tmp_path / "call.svg"
    status, _ = run_main("[1, 2.5, 'abc']", "--svg", str(svg))
    assert status == 0
    assert ET.parse(svg).getroot().tag.endswith("svg")


def test_cli_reports_bad_expressions_and_unpassable_values(capsys):
    status, _ = run_main("1 +")
    assert status == 2 and "cannot evaluate" in capsys.readouterr().err
    status, out = run_main("np.broadcast_to(np.arange(3), (2, 3))")
    assert status == 1 and "cannot be passed: BufferError" in out


def test_cli_falls_back_to_ascii_on_a_terminal_that_cannot_print_unicode():
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    status, _ = run_main("[1, 'a long string value']", "--stable", stdout=stream)
    stream.flush()
    assert status == 0
    assert "`-> #1" in raw.getvalue().decode("ascii")


def test_cli_colour_is_opt_in_off_a_terminal():
    _, plain = run_main("1")
    _, coloured = run_main("1", "--color", "always")
    assert "\033[" not in plain and "\033[" in coloured


def test_console_script_is_installed():
    script = os.path.join(os.path.dirname(sys.executable), "tvm-ffi-explain")
    command = [script] if os.path.exists(script) else [sys.executable, "-m",
                                                        "tvm_ffi_explain"]
    done = subprocess.run(command + ['"hello"'], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    assert done.returncode == 0, done.stderr
    assert "68 65 6c 6c 6f 00 00 00  v_bytes" in done.stdout


def test_the_examples_in_explain_docstrings_run():
    import doctest

    import tvm_ffi_explain

    results = doctest.testmod(tvm_ffi_explain, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 5 and results.failed == 0


def test_tensor_data_marks_the_gaps_of_a_strided_view():
    text = render_text(explain(np.arange(20, dtype=np.int32)[5:15:3]))
    rows = [line for line in text.splitlines() if "int32  " in line and "] " in line]
    gaps = [line for line in rows if "a gap" in line]
    assert len(rows) == 10 and len(gaps) == 6  # elements 5, 8, 11, 14 and the six between
    text = render_text(explain(np.arange(2, dtype=np.complex128)))
    assert "(1+0j)" in text and "complex128" in text


@pytest.mark.parametrize("max_items", [1, 2, 8])
def test_tensor_data_is_titled_with_its_whole_size_however_little_is_shown(max_items):
    # A 24-byte tensor shown with --max-items 2 (16 bytes) was titled "16 bytes".
    text = render_text(explain(np.arange(6, dtype=np.float32), max_items=max_items,
                               max_bytes=8 * max_items))
    assert "tensor data, 24 bytes" in text
    shown = min(24, 8 * max_items)
    assert (f"... {24 - shown} more bytes ..." in text) == (shown < 24)
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[::2, 1:]  # 11 elements spanned
    assert "tensor data, 44 bytes" in render_text(explain(strided, max_items=max_items,
                                                          max_bytes=8 * max_items))
