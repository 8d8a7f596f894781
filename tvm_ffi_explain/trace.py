"""``tvm-ffi-explain --trace EXPR``: one call as it happens, through the reference runtime.

``EXPR`` is a call, ``f(a, b)``: ``f`` a Function (a kernel of a loaded
module, a global function, a converted callable), the arguments any Python
values. The call is made exactly as the front end makes it
(:class:`tvm_ffi_ref.function.Function`'s ``__call__``: the arguments packed
into ``TVMFFIAny`` slots inside a :class:`~tvm_ffi_ref.convert.CallScope`, the
framework's stream and allocator in place for a torch tensor, the result
set to None first), and watched at five moments:

1. **before**: the bytes each argument is, walked as ``explain`` walks them,
   with the reference counts of every object they reach;
2. **during**: each C API function the kernel calls, in order, with the
   counts at that moment (the reference runtime serves these functions in
   Python, so it sees them; ``TVMFFIObjectIncRef``/``DecRef`` run in
   ``libtvm_ffi.so`` itself and show only through the counts);
3. **after the call**: the status, the result's bytes and who owns them,
   the counts, and whether the argument slots were written;
4. **after the arguments are released** (the scope closes, as the front end
   does before it converts the result);
5. **the Python value** the result becomes.

To read counts safely the tracer holds one reference of its own to every
object it shows, from the moment it sees it to the end, and subtracts it:
the counts printed are the ones the call would see without the tracer.
"""

from __future__ import annotations

import ast
import ctypes
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from .model import AddressBook, Region

Counts = Dict[int, Tuple[int, int]]  # object address -> (strong, weak)

_ARG_SUMMARY = "the argument a kernel receives: a borrowed view (AnyView)"


@dataclass
class Trace:
    """One traced call: what was seen at each moment."""

    source: str
    callee: str = ""  # what the Function calls
    args: List[Region] = field(default_factory=list)  # the argument slots, before the call
    objects: Dict[int, str] = field(default_factory=dict)  # address -> "#1 ffi.String"
    before: Counts = field(default_factory=dict)
    # each C API call the kernel made, with the counts when it was called and when it returned
    events: List[Tuple[str, Counts, Counts]] = field(default_factory=list)
    status: Optional[int] = None
    result: Optional[Region] = None
    ownership: str = ""
    after_call: Counts = field(default_factory=dict)
    written: List[str] = field(default_factory=list)  # argument slots the callee changed
    error: str = ""  # the error a failed call raised
    after_release: Counts = field(default_factory=dict)
    returns: str = ""
    environment: str = ""  # what the caller's framework provides during the call
    book: Optional[AddressBook] = None
    problem: str = ""  # why the call could not be traced
    # argument objects the result does not reach: their counts must end where they began
    borrowed_only: List[int] = field(default_factory=list)


def parse_call(text: str) -> Tuple[ast.expr, List[ast.expr]]:
    """The callee and argument expressions of ``text``, which must be a plain call."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"--trace needs a call such as f(1, 2): {error.msg}") from None
    if not isinstance(tree, ast.Call):
        raise ValueError("--trace needs a call such as f(1, 2), got an expression that is not one")
    if tree.keywords or any(isinstance(a, ast.Starred) for a in tree.args):
        raise ValueError("--trace needs positional arguments only: a packed call has no names")
    return tree.func, list(tree.args)


def _evaluate(node: ast.expr, scope: Dict[str, Any]) -> Any:
    return eval(compile(ast.Expression(node), "<trace>", "eval"), scope)  # noqa: S307


class _Counter:
    """Holds a reference to each object shown, and reads counts net of that reference."""

    def __init__(self) -> None:
        self.held: List[int] = []

    def hold(self, addresses) -> None:
        for address in addresses:
            if address not in self.held:
                LIB.TVMFFIObjectIncRef(address)
                self.held.append(address)

    def counts(self) -> Counts:
        out = {}
        for address in self.held:
            combined = ctypes.c_uint64.from_address(address).value
            out[address] = ((combined & 0xFFFFFFFF) - 1, combined >> 32)
        return out

    def release(self) -> None:
        for address in self.held:
            LIB.TVMFFIObjectDecRef(address)
        self.held.clear()


def _objects(region: Region) -> List[Tuple[int, Region]]:
    """Every object region below (and including) ``region``, depth first."""
    found = [(region.address, region)] if region.kind.endswith(" object") else []
    for child in region.children():
        found += _objects(child)
    return found


def _callee(handle: int) -> str:
    """What a Function object calls, by the name of its entry point (walked on its own)."""
    from .known_code import known_code
    from .walk import Walker

    book = AddressBook(stable=True, known_code=known_code())
    region = Walker(book, max_depth=1).object_region(handle, depth=1)
    fields = {f.name: f for f in region.fields()}
    target = fields.get("target") or fields.get("safe_call")
    name = book.pointer(target.pointer) if target is not None else "?"
    return f"ffi.Function → {name}"


def trace_call(text: str, scope: Dict[str, Any], stable: bool = True, max_items: int = 8,
               max_depth: int = 6) -> Trace:
    """Traces the call ``text``, evaluated in ``scope`` (see the module docstring)."""
    from tvm_ffi_ref import dlpack_exchange
    from tvm_ffi_ref.convert import CallScope, pack_args
    from tvm_ffi_ref.function import Function, finish_call, take_last_error
    from tvm_ffi_ref.runtime import slots

    from .known_code import known_code
    from .values import describe
    from .walk import Walker

    trace = Trace(text)
    func_node, arg_nodes = parse_call(text)
    function = _evaluate(func_node, scope)
    values = [_evaluate(node, scope) for node in arg_nodes]
    if not isinstance(function, Function):
        trace.problem = (f"{ast.unparse(func_node)} is a {type(function).__name__}, not a "
                         "Function: --trace calls a TVM FFI Function")
        return trace
    book = AddressBook(stable=stable, known_code=known_code())
    trace.book = book
    walker = Walker(book, max_items=max_items, max_depth=max_depth, max_bytes=8 * max_items)
    trace.callee = _callee(function._handle)
    counter = _Counter()
    call_scope = CallScope()
    try:
        packed = pack_args(values, call_scope)
        trace.args = [walker.any_region(ctypes.addressof(packed[i]), f"args[{i}]", _ARG_SUMMARY)
                      for i in range(len(values))]
        counter.hold(a for root in trace.args for a, _ in _objects(root))
        trace.before = counter.counts()
        slots_before = [bytes(packed[i]) for i in range(len(values))]

        entered: List[Counts] = []

        def called(name: str, _args) -> None:
            entered.append(counter.counts())

        def returned(name: str) -> None:
            trace.events.append((name, entered.pop(), counter.counts()))

        result = abi.TVMFFIAny()
        environment = None
        if call_scope.device_type != -1 or call_scope.exchange_api:
            trace.environment = _environment_note(call_scope)
            environment = dlpack_exchange.CallEnvironment(call_scope)
            environment.enter()
        try:
            slots.observers.append(called)
            slots.returned_observers.append(returned)
            try:
                trace.status = function._safe_call(function._handle, packed, len(values),
                                                   ctypes.byref(result))
            finally:
                slots.observers.remove(called)
                slots.returned_observers.remove(returned)
        finally:
            if environment is not None:
                environment.leave()
        trace.written = [f"args[{i}]" for i in range(len(values))
                         if bytes(packed[i]) != slots_before[i]]
        if trace.status == 0:
            trace.result = walker.any_region(ctypes.addressof(result), "result", "")
            counter.hold(a for a, _ in _objects(trace.result))
        trace.after_call = counter.counts()
    finally:
        call_scope.close()
    AddressBook.relabel(trace.args + ([trace.result] if trace.result else []))
    for root in trace.args + ([trace.result] if trace.result else []):
        for address, region in _objects(root):
            trace.objects.setdefault(address, f"{region.label} {region.kind[:-len(' object')]}")
    in_result = {a for a, _ in _objects(trace.result)} if trace.result else set()
    trace.borrowed_only = [a for root in trace.args for a, _ in _objects(root)
                           if a not in in_result]
    if trace.result is not None:
        trace.ownership = _ownership(result, book)
        trace.result.summary = f"the result: {trace.ownership}"
    trace.after_release = counter.counts()
    try:
        if trace.status == 0:
            value = finish_call(trace.status, result, call_scope.exchange_api)
            trace.returns = f"{describe(value)}, of type {type(value).__module__}." \
                            f"{type(value).__qualname__}"
        else:
            error = take_last_error()
            trace.error = f"{error.kind}: {error.message}" if error is not None else \
                "(no error was raised)"
    except Exception as error:  # noqa: BLE001 - a result the front end refuses is shown too
        trace.returns = f"nothing: {type(error).__name__}: {error}"
    finally:
        counter.release()
    return trace


def _environment_note(call_scope) -> str:
    """What a framework's DLPack exchange API provides while the call runs."""
    parts = []
    if call_scope.exchange_api:
        parts.append("the framework's DLPack exchange API serves this call: its tensor "
                     "allocator is this thread's DLPack allocator (TVMFFIEnvTensorAlloc "
                     "makes its tensors)")
    if call_scope.device_type != -1:
        parts.append(f"its current stream is the stream of device ({call_scope.device_type}, "
                     f"{call_scope.device_id}) (TVMFFIEnvGetStream)")
    return "; ".join(parts)


def _ownership(result: abi.TVMFFIAny, book: AddressBook) -> str:
    index = result.type_index
    if index >= int(abi.TVMFFITypeIndex.kTVMFFIStaticObjectBegin):
        return (f"an owned value (Any): it carries one strong reference to "
                f"{book.pointer(result.v_ptr)}, which is now the caller's to release")
    return "an owned value (Any) with nothing to release: the payload is the value itself"


# ------------------------------------------------------------------ text


def _count(strong: int, weak: int) -> str:
    return f"strong {strong}" + (f", weak {weak}" if weak != 1 else "")


def _count_text(trace: Trace, counts: Counts, previous: Optional[Counts] = None,
                during: bool = False) -> List[str]:
    """One line per object: its counts, and how they changed since ``previous``.

    ``during``: the counts when a C API function was called (``previous``) and
    when it returned, as ``strong 1 -> 2``.
    """
    lines = []
    for address, (strong, weak) in counts.items():
        label = trace.objects.get(address, trace.book.hex_address(address) if trace.book else "?")
        was = previous.get(address) if previous is not None else None
        if during:
            text = f"{label}: {_count(*was)} → {_count(strong, weak)}" if was and was != (
                strong, weak) else f"{label}: {_count(strong, weak)}, unchanged"
        else:
            text = f"{label}: {_count(strong, weak)}"
            if strong == 0:
                text += ": no reference is left, so it is freed (the tracer kept it to show this)"
            elif was is not None and was != (strong, weak):
                text += f"  (was {_count(*was)})"
            elif previous is not None and was is None:
                text += "  (new)"
        lines.append(text)
    return lines


def _left_behind(trace: Trace) -> List[str]:
    """A flag for each argument object the call leaves with more references than it had.

    An argument is borrowed: once the arguments are released, an object the
    result does not reach must have the counts it had before the call. More
    strong references mean the kernel took one and never released it.
    """
    flags = []
    for address in dict.fromkeys(trace.borrowed_only):
        was, now = trace.before.get(address), trace.after_release.get(address)
        if was is None or now is None or now[0] <= was[0]:
            continue
        label = trace.objects.get(address, trace.book.hex_address(address) if trace.book else "?")
        extra = now[0] - was[0]
        flags.append(f"LEFT BEHIND: {label} has {extra} more strong reference"
                     f"{'' if extra == 1 else 's'} than before the call, and the result does "
                     "not hold it: the kernel kept a reference to a borrowed argument (allowed "
                     "when it stores the object, as a registry does; a leak when the count grows "
                     "with every call: rule leak, found by tvm-ffi-check --leaks)")
    return flags


def render_trace(trace: Trace, ascii: bool = False) -> str:
    """The trace as terminal text, one moment after the other."""
    from .text import TextRenderer

    if trace.problem:
        return f"cannot trace: {trace.problem}\n"
    renderer = TextRenderer(ascii=ascii)
    arrow = "->" if ascii else "→"
    lines = [f"trace  {trace.source}", f"  calls {trace.callee.replace('→', arrow)}",
             f"  {len(trace.args)} argument{'' if len(trace.args) == 1 else 's'}, packed by "
             "tvm_ffi_ref.convert.pack_args; the "
             "result slot holds None (type index 0) before the call"]
    if trace.environment:
        lines.append(f"  {trace.environment}")
    lines.append("")
    lines.append("1. before the call: what the kernel receives")
    for root in trace.args:
        lines.append("")
        renderer.region(root, trace.book, 0, lines, branch=False)
    if trace.before:
        lines += ["", "   reference counts:"] + ["     " + t for t in _count_text(trace, trace.before)]
    lines += ["", "2. during the call: the C API functions the kernel called"]
    if not trace.events:
        lines.append("     none (IncRef/DecRef, done in libtvm_ffi.so, show only in the counts)")
    for n, (name, entry, exit) in enumerate(trace.events, 1):
        lines.append(f"   {n}. {name}")
        lines += ["        " + t for t in _count_text(trace, exit, entry, during=True)]
    status = {0: "0 (success)", -1: "-1 (an error was raised)"}.get(trace.status,
                                                                      f"{trace.status}")
    lines += ["", f"3. after the call: status {status}"]
    if trace.result is not None:
        lines.append("")
        renderer.region(trace.result, trace.book, 0, lines, branch=False)
    if trace.error:
        lines.append(f"   raised: {trace.error}")
    lines.append("")
    lines.append("   argument slots written by the callee: " + (", ".join(trace.written)
                                                             if trace.written else "none"))
    if trace.after_call:
        lines += ["   reference counts:"] + ["     " + t for t in
                                              _count_text(trace, trace.after_call, trace.before)]
    lines += ["", "4. after the call's arguments are released (the call scope closes)"]
    if trace.after_release:
        lines += ["     " + t for t in _count_text(trace, trace.after_release, trace.after_call)]
        lines += ["     " + t for t in _left_behind(trace)]
    else:
        lines.append("     no objects")
    if trace.returns:
        lines += ["", f"5. the result becomes {trace.returns}"]
    text = "\n".join(lines).replace("→", arrow) + "\n"
    return text.encode("ascii", "backslashreplace").decode("ascii") if ascii else text
