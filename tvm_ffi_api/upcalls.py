"""The functions and classes a module calls but may not import: their module sits above it.

The shared API is layered, and a module imports only modules below it, at its
top (``tests/test_import_layers.py`` checks it): the type records, then the
core's ``object``, ``convert``, ``function`` and ``shortcuts``, then the value
classes (dtype, tensor, containers), the type registry, the Python-class
machinery. A few calls still run the other way: an error to raise from a low
module, the class of a type nobody registered, a ``dtype`` argument to
recognise. Each such callee has a slot here; the module that defines it
installs it when it loads (:func:`install`), and callers below look it up per
call (``upcalls.raise_last_error()``). A slot called before its module has
loaded raises a ``RuntimeError`` naming that module (a bug in the import
order); a class slot holds a class nothing is an instance of until then.
This module imports nothing of the package, so everything may use it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from tvm_ffi_common.installed_later import installed_later


class NotLoadedYet:
    """Stands for a class whose module has not loaded: no value is an instance of it."""


#: Slot name -> the module that installs it (relative to the front end's package).
PROVIDERS: Dict[str, str] = {
    # the core's function module
    "Function": "function", "get_global_func": "function", "raise_last_error": "function",
    "take_last_error": "function", "convert_to_function": "function",
    # the core's convert module
    "set_arg": "convert", "set_device_class": "convert",
    # the core's object module (the reference's and the cffi core's Object are Python)
    "type_index_of": "object",
    # the core's shortcuts module
    "import_managed_tensor": "shortcuts", "take_pending_signal_error": "shortcuts",
    # value classes above the core
    "DataType": "dtype", "dtype": "dtype", "dtype_from_tuple": "dtype",
    "torch_dtype_table": "dtype", "numpy_dtype_triple": "dtype",
    "Shape": "tensor", "from_dlpack": "tensor", "tensor_class": "tensor",
    "missing": "sentinels",
    # the type registry, the Python-class fields, the value converters
    "make_fallback_class": "type_registry", "class_of_type_index": "type_registry",
    "type_index_to_key": "type_registry", "object_type_key_to_index": "type_registry",
    "lookup_type_attr": "type_registry", "type_index_to_type_info": "type_registry",
    "lookup_or_register_type_info_from_type_key": "type_registry",
    "register_fields": "pyclass_fields", "register_py_methods": "pyclass_fields",
    "build_converter": "type_converter", "run_converter": "type_converter",
    "schema_of_annotation": "annotation_schema",
}

_CLASSES = ("Function", "DataType", "dtype", "Shape")

Function: Any = NotLoadedYet
DataType: Any = NotLoadedYet
dtype: Any = NotLoadedYet
Shape: Any = NotLoadedYet
get_global_func: Callable[..., Any]
raise_last_error: Callable[..., Any]
take_last_error: Callable[..., Any]
convert_to_function: Callable[..., Any]
set_arg: Callable[..., Any]
set_device_class: Callable[..., Any]
type_index_of: Callable[..., Any]
import_managed_tensor: Callable[..., Any]
take_pending_signal_error: Callable[..., Any]
dtype_from_tuple: Callable[..., Any]
torch_dtype_table: Callable[..., Any]
numpy_dtype_triple: Callable[..., Any]
from_dlpack: Callable[..., Any]
tensor_class: Callable[..., Any]
missing: Callable[[], Any]
make_fallback_class: Callable[..., Any]
class_of_type_index: Callable[..., Any]
type_index_to_key: Callable[..., Any]
object_type_key_to_index: Callable[..., Any]
lookup_type_attr: Callable[..., Any]
type_index_to_type_info: Callable[..., Any]
lookup_or_register_type_info_from_type_key: Callable[..., Any]
register_fields: Callable[..., Any]
register_py_methods: Callable[..., Any]
build_converter: Callable[..., Any]
run_converter: Callable[..., Any]
schema_of_annotation: Callable[..., Any]

for _name, _provider in PROVIDERS.items():
    if _name not in _CLASSES:
        globals()[_name] = installed_later(f"upcalls.{_name}", f"the {_provider} module")


def install(provider: str, **slots: Any) -> None:
    """Fills slots with the callees of ``provider`` (the installing module's last name).

    A slot that does not exist, or that another module provides, is refused: the
    table above is the one list of calls that run upward.
    """
    for name, value in slots.items():
        owner = PROVIDERS.get(name)
        if owner != provider:
            raise NameError(f"upcalls has no slot {name!r} for module {provider!r}"
                            + (f" (module {owner!r} provides it)" if owner else ""))
        globals()[name] = value
