"""What every core's ``function`` module provides: Function, callbacks, global functions, errors.

Part of the core contract (``object.pyi`` says what that is).
"""

from typing import Any, Callable, Optional

from tvm_ffi_common import abi

from .error import Error
from .object_wrapper import Object

TI = abi.TVMFFITypeIndex

class Function(Object):
    """A TVM FFI function; calling it calls through the ABI."""

    def __call__(self, *args: Any) -> Any: ...

def take_last_error() -> Optional[Error]:
    """The error the last failed call raised (the runtime's thread-local one), taken out."""

def raise_last_error() -> None:
    """Raises the Python exception of the error the last failed call raised."""

def finish_call(status: int, result: abi.TVMFFIAny, exchange_api: int = 0) -> Any:
    """The Python result of a call that returned ``status`` and wrote ``result``."""

def convert_to_function(func: Callable[..., Any]) -> Function:
    """A Function calling the Python ``func``."""

def wrap_callable(func: Callable[..., Any], exchange_api: int = 0) -> Function:
    """A Function calling ``func``, its Tensor arguments seen through a framework's exchange table."""

def get_global_func(name: str, allow_missing: bool = False) -> Optional[Function]:
    """The global function registered as ``name`` (``None`` when missing and allowed)."""
