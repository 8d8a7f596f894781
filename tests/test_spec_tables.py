"""The committed spec tables are exactly what the generator writes from the mirror."""

import os

from tvm_ffi_explain import spec_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_committed_tables_are_fresh():
    with open(os.path.join(ROOT, spec_tables.TABLES_PATH)) as f:
        committed = f.read()
    assert committed == spec_tables.generate(), "run: python -m tvm_ffi_explain.spec_tables"


def test_tables_cover_every_struct_field_and_enum_value():
    from tvm_ffi_common import abi

    page = spec_tables.generate()
    for struct in abi.STRUCTS:
        assert f"### `{struct.__name__}`" in page
        for field in abi.c_fields(struct):
            assert f"| {field.offset} | {field.size} |" in page
    for enum_type in abi.ENUMS:
        for name, value in abi.enum_members(enum_type):
            assert f"| {value} | `{name}` |" in page


def test_check_mode_detects_a_stale_file(tmp_path):
    os.makedirs(tmp_path / "spec")
    (tmp_path / spec_tables.TABLES_PATH).write_text("stale\n")
    assert spec_tables.main(["--root", str(tmp_path), "--check"]) == 1
    assert spec_tables.main(["--root", str(tmp_path)]) == 0
    assert spec_tables.main(["--root", str(tmp_path), "--check"]) == 0


def test_the_map_cells_data_deleter_is_drawn_as_upstreams_function_pointer():
    # The dense-map diagram typed data_deleter as void*; upstream's map_base.h declares
    # `void (*data_deleter_)(void*)`.
    import re as _re

    import upstream_headers

    with open(os.path.join(upstream_headers.include_dir(), "tvm", "ffi", "container",
                           "map_base.h"), encoding="utf-8") as f:
        declared = _re.search(r"(\w+) \(\*data_deleter_\)\((\w+\*)\)", f.read())
    spelling = f"{declared.group(1)} (*)({declared.group(2)})"
    with open(os.path.join(ROOT, "spec", "09-maps.md"), encoding="utf-8") as f:
        page = f.read()
    rows = [line for line in page.splitlines() if line.endswith("| `data_deleter` |")]
    assert len(rows) == 2 and all(f"| `{spelling}` |" in row for row in rows), rows
    assert spelling in spec_tables.diagram_svg("object-Map-dense")
