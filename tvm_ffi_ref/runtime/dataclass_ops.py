"""Value-level repr, comparison and hashing of any value, walking its object graph.

Its twin in C: ``tvm_ffi_fast/src/dataclass_ops.c``.

Three questions a Python user asks of every value have one answer in the
runtime, so that ``repr(x)``, ``x == y`` and ``hash(x)`` agree in every
language binding:

``ffi.ReprPrint(value) -> str``
    Readable text for a value. Scalars print as Python would mostly print
    them (``None``, ``True``, ``3``), floats as C++'s ``ostream`` prints a
    double (six significant digits: ``0.1``, ``1.23457e+08``, ``-0``,
    ``nan``), strings quoted and escaped (``"a\\n"``), bytes as ``b"..."``,
    an Array as a tuple ``(1,)``, a List as a list ``[1]``, a Map or Dict as
    ``{k: v}``, a reflected object as ``Type(field=value, ...)``.
``ffi.RecursiveEq/Lt/Le/Gt/Ge(lhs, rhs) -> bool``
    One three-way comparison, ``compare(lhs, rhs)`` in ``{-1, 0, 1}``, under
    two modes: *equality* (Eq) never fails, every mismatch is "unequal";
    *ordering* (Lt/Le/Gt/Ge) raises ``TypeError`` where no order exists
    (different types, NaN, maps).
``ffi.RecursiveHash(value) -> int``
    A deterministic 64-bit hash (returned as int64) that agrees with
    RecursiveEq: equal values hash alike. It is not the AnyHash of map keys
    (:mod:`.any_hash`), which hashes objects by address.

The object graph
----------------
All three walk the value depth first. A *leaf* is answered on the spot: a
scalar, a string, bytes, a BigInt, a Shape, a Tensor (repr only), or a value
whose type registered a custom hook. Anything else gets a *frame* whose
children are visited in order:

* Array and List: the elements;
* Map and Dict: key, value, key, value, ... in iteration order;
* any other object (reflected or not): the values of its reflected fields,
  read through each field's getter, ancestors' fields first (from depth 1,
  since ``ffi.Object`` has none), skipping fields whose flags carry the
  operation's "off" bit: ``kTVMFFIFieldFlagBitMaskReprOff`` for repr,
  ``CompareOff`` for comparison, ``HashOff | CompareOff`` for hashing (so
  that equal values still hash alike). A Function, Error, Module or opaque
  object has no fields: it prints as its type key, all of one type compare
  equal and hash alike.

Graphs may share objects and have cycles. Repr remembers each finished
object's text (a shared object prints the same twice) and prints an object
met again while still being printed as ``...``. Hash memoizes finished
objects and hashes an object met again on the way down as its type's
``type_key_hash``. Comparison tracks the (lhs, rhs) object pairs being
compared: meeting one again counts as equal in equality mode and raises
``ValueError("RecursiveCompare: cyclic reference detected in ordering")``
otherwise.

The walk is iterative (:func:`.dataclass_walk.run_frames`): each frame is a generator that
yields the frame of a child it cannot answer on the spot and receives the
child's result back, so deep graphs never exhaust Python's stack. Like
upstream, more than 2**20 frames at once raise ``ValueError``.

Custom hooks
------------
Types customize the walk through type attribute columns; each entry is a
Function (these columns exist from the start, as upstream makes them at load):

* ``__ffi_repr__(obj, fn_repr) -> str``
* ``__ffi_hash__(obj, fn_hash) -> int``
* ``__ffi_eq__(lhs, rhs, fn_eq) -> bool`` (equality mode only)
* ``__ffi_compare__(lhs, rhs, fn_cmp) -> int`` (ordering, and equality when
  there is no ``__ffi_eq__``)

``fn_*`` is a callback that runs the same operation on a nested value with the
walk's state (the repr cache, the hash memo, the pairs on the stack), so a
hook can recurse without looping forever. A hook applies to any object type
for repr and hash, and to types from index 79 (after the static ones) for
comparison. A type with ``__ffi_eq__`` or ``__ffi_compare__`` but no
``__ffi_hash__`` cannot be hashed (``ValueError``). BigInt registers all
three, as upstream's library does: ``RecursiveHash`` of a BigInt is the
StableHashBytes of its words. ``ffi.reflection.AccessStep`` and
``AccessPath`` register ``__ffi_repr__`` (``<root>.field[3]["key"]``).

Hooks and callbacks are typed as upstream's: a callback called with the
wrong number of arguments names its signature (``(0: AnyView) -> str``), a
hook result of the wrong type is ``Cannot convert from type `float` to
`int```, and a column entry that is no Function is ``Cannot treat type
`int` as type `...```. ``ffi.ReprPrint`` returns a small str only for the
text of a leaf of at most 7 bytes; a container's or object's text is always
a String object (upstream moves its ``std::string`` into the String).

Leaves, in detail
-----------------
============  =======================  ======================================
value         repr                     hash (``combine`` = StableHashCombine)
============  =======================  ======================================
None          ``None``                 ``combine(0, 0)``
bool          ``True`` / ``False``     ``combine(2, 0 or 1)``
int           decimal                  ``combine(1, value as uint64)``
float         ``ostream`` (``%g``)     ``combine(3, bits)``, NaN canonical
                                       (``0x7ff8...``), -0.0 as 0.0
dtype         ``float32``              ``combine(combine(combine(5, code),
                                       bits), lanes)``
device        ``cuda:1``               ``combine(combine(6, type), id)``
str           ``"..."`` escaped        ``combine(65, StableHashBytes)``
                                       whether small or boxed
bytes         ``b"..."``               ``combine(67, StableHashBytes)``
other POD     its type key (``void*``) ``combine(type index, payload)``
BigInt        decimal                  its ``__ffi_hash__``
Shape         ``Shape(2, 3)``          ``combine(type_key_hash, ndim)`` then
                                       each dim combined in
Tensor        ``float32[2, 3]@cpu:0``  a frame without fields
============  =======================  ======================================

A frame's hash starts at ``type_key_hash`` (objects) or
``combine(type_key_hash, size)`` (containers); a sequence folds in
``combine(child, position)`` per element, an object ``child`` per field, and
a map the sorted ``combine(key hash, value hash)`` of its entries (so
iteration order does not matter).

Comparison, in detail
---------------------
* None sorts before everything. A str equals a str by content whatever the
  encoding (small or boxed), bytes likewise; their bytes compare as C
  ``char``, which is signed on x86-64, so ``"\\xe9"`` sorts before ``"a"``.
* Otherwise different type indices are unequal; ordering them raises
  ``TypeError("Cannot compare values of different types: int vs float")``,
  except int vs BigInt, which compare by value.
* bool, int, float, dtype (code, bits, lanes) and device (type, id) compare
  by value; NaN equals NaN in equality mode and cannot be ordered; other POD
  kinds compare their payload for equality only.
* The same object is equal to itself without looking inside (even a list
  holding NaN). Shapes compare lexicographically, then by length; so do
  Arrays and Lists, element by element. Maps and Dicts are equal when they
  have the same size and every key of the left one maps to an equal value in
  the right one; they have no order (``TypeError("Cannot order Map/Dict
  values")``, also when the difference lies inside a value). Objects compare
  field by field, in field order.

Both runtimes must give the same text, the same truth values, the same
errors and the same hash numbers as upstream: Python's ``repr``, ``==`` and
``hash`` of containers are these functions.

The code
--------
* :mod:`.dataclass_walk`: the frames and their stack, the children a frame
  visits, the hook columns and how a hook is called;
* :mod:`.dataclass_repr`, :mod:`.dataclass_hash`, :mod:`.dataclass_compare`:
  each operation's leaves and frames;
* this module: the columns created at load, BigInt's hooks, and the ``ffi.*``
  globals.
"""

from __future__ import annotations

from typing import Callable

from tvm_ffi_common import abi

from . import functions, memory, strings
from .dataclass_compare import compare_ints, recursive_compare
from .dataclass_hash import recursive_hash, signed64
from .dataclass_repr import ReprPrinter, access_path_repr, access_step_repr, store_str
from .dataclass_walk import COMPARE_ATTR, EQ_ATTR, HASH_ATTR, REPR_ATTR, object_view, run_frames
from .hashing import stable_hash_bytes
from .registry import TYPES
from .signatures import typed_function, typed_global
from .slots import FFIError
from .strings import bigint_words

TI = abi.TVMFFITypeIndex

#: The other columns upstream creates with the walk's hook columns.
_OTHER_DATACLASS_ATTRS = (b"__ffi_shallow_copy__", b"__ffi_new__", b"__ffi_init__")


# -------------------------------------------------- columns, hooks, globals


def _bigint_words_of(address: int) -> bytes:
    """The words of the BigInt object at ``address`` (upstream's ``as_or_throw<BigInt>``)."""
    index = memory.type_index_of(address)
    if index != TI.kTVMFFIBigInt:
        raise FFIError("TypeError", f"Cannot treat type `{TYPES.type_key(index)}` as type `BigInt`")
    return bigint_words(object_view(address))


def _bigint_hash_hook(result, value, fn):
    strings.store_int(result, signed64(stable_hash_bytes(_bigint_words_of(value))))


# eq and compare read rhs first: upstream's two reads are the arguments of one C++ call


def _bigint_eq_hook(result, lhs, rhs, fn):
    right = _bigint_words_of(rhs)
    functions.set_bool(result, _bigint_words_of(lhs) == right)


def _bigint_compare_hook(result, lhs, rhs, fn):
    right = strings.words_to_int(_bigint_words_of(rhs))
    strings.store_int(result, compare_ints(strings.words_to_int(_bigint_words_of(lhs)), right))


#: BigInt's hooks: typed functions, named as upstream names them in argument errors.
_BIGINT_HOOKS = (
    (EQ_ATTR, ["ffi.Object", "ffi.Object", "ffi.Function"], "bool", _bigint_eq_hook),
    (COMPARE_ATTR, ["ffi.Object", "ffi.Object", "ffi.Function"], "int", _bigint_compare_hook),
    (HASH_ATTR, ["ffi.Object", "ffi.Function"], "int", _bigint_hash_hook),
)


def _register_columns() -> None:
    """Creates the walk's hook columns (and the other dataclass columns) and BigInt's hooks."""
    for attr in (REPR_ATTR, HASH_ATTR, EQ_ATTR, COMPARE_ATTR) + _OTHER_DATACLASS_ATTRS:
        TYPES.register_attr(TI.kTVMFFINone, attr, abi.TVMFFIAny())
    for attr, params, returns, impl in _BIGINT_HOOKS:
        func = typed_function(params, returns, impl, name=f"ffi.BigInt.{attr.decode()}")
        TYPES.register_attr(TI.kTVMFFIBigInt, attr, object_view(func))
        memory.dec_ref(func)  # the column keeps its own reference
    for type_key, impl in (("ffi.reflection.AccessStep", access_step_repr),
                           ("ffi.reflection.AccessPath", access_path_repr)):
        func = typed_function(["ffi.Object", "ffi.Function"], "str", impl,
                              name=f"{type_key}.__ffi_repr__")
        TYPES.register_attr(TYPES.key_to_index(type_key.encode()), REPR_ATTR, object_view(func))
        memory.dec_ref(func)


_register_columns()


@typed_global("ffi.ReprPrint", ["Any"], "str")
def _repr_print(result, value):
    printer = ReprPrinter()
    text = printer.immediate(value)
    if text is not None:  # upstream copies this text into a String: small when it fits
        store_str(result, str(text))
        return
    # ... and moves a frame's text into one, which makes a String object whatever its size
    data = str(run_frames(printer.frame(value), "ObjectGraphDFS")).encode("utf-8",
                                                                           "surrogateescape")
    result.type_index = TI.kTVMFFIStr
    result.zero_padding = 0
    result.v_ptr = strings.new_bytes_object(TI.kTVMFFIStr, data)


@typed_global("ffi.RecursiveHash", ["Any"], "int")
def _recursive_hash(result, value):
    strings.store_int(result, recursive_hash(value))


def _define_comparison(name: str, eq_only: bool, holds: Callable[[int], bool]) -> None:
    @typed_global(name, ["Any", "Any"], "bool")
    def _compare(result, lhs, rhs):
        functions.set_bool(result, holds(recursive_compare(lhs, rhs, eq_only)))


_define_comparison("ffi.RecursiveEq", True, lambda c: c == 0)
_define_comparison("ffi.RecursiveLt", False, lambda c: c < 0)
_define_comparison("ffi.RecursiveLe", False, lambda c: c <= 0)
_define_comparison("ffi.RecursiveGt", False, lambda c: c > 0)
_define_comparison("ffi.RecursiveGe", False, lambda c: c >= 0)
