"""The ``testing.*`` global functions of the testing library, as module attributes.

``tvm_ffi.testing._ffi_api.add_one`` is the Function registered as
``testing.add_one``; ``__all__`` names the ones upstream's module exports.
"""

from __future__ import annotations

from ..registry import init_ffi_api

init_ffi_api("testing", __name__)

__all__ = [
    "TestIntPairSum", "add_one", "apply", "echo", "enum_variant_get", "get_add_one_c_symbol",
    "get_mlir_add_one_c_symbol", "make_array_with_mixed", "make_array_with_tensor",
    "make_dict_with_tensor", "make_empty_array_with_tensor_input", "make_list_with_tensor",
    "make_map_with_tensor", "make_nested_array_with_tensor", "make_nested_map_with_tensor",
    "make_unregistered_object", "nop", "object_use_count", "optional_tensor_view_has_value",
    "run_check_signal", "schema_arr_map_opt", "schema_id_any", "schema_id_arr",
    "schema_id_arr_int", "schema_id_arr_obj", "schema_id_arr_str", "schema_id_bool",
    "schema_id_bytes", "schema_id_device", "schema_id_dict_str_int", "schema_id_dict_str_str",
    "schema_id_dltensor", "schema_id_dtype", "schema_id_float", "schema_id_func",
    "schema_id_func_typed", "schema_id_int", "schema_id_list_int", "schema_id_list_obj",
    "schema_id_list_str", "schema_id_map", "schema_id_map_str_int", "schema_id_map_str_obj",
    "schema_id_map_str_str", "schema_id_object", "schema_id_opt_int", "schema_id_opt_obj",
    "schema_id_opt_str", "schema_id_string", "schema_id_tensor", "schema_id_variant_int_str",
    "schema_no_args", "schema_no_args_no_return", "schema_no_return", "schema_packed",
    "schema_tensor_view_input", "schema_variant_mix", "test_raise_error",
]
