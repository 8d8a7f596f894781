"""``ffi.VisitErrorContext.FindAccessPaths``: where in a value graph an error happened.

Its twin in C: ``tvm_ffi_fast/src/visit_error_context.c``.

An error that leaves a structural visit or mutation through objects carries an
``ffi.VisitErrorContext`` (:mod:`.structural_traversal` records it) listing
those objects, innermost first. Given the root of the graph, this finds the
access paths that pass them in order.
"""

from __future__ import annotations

import ctypes
from typing import List, Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .dataclass_walk import Frame, object_view, read_field, reflected_fields, run_frames
from .functions import set_object
from .maps import map_items
from .reflection import new_access_path, new_access_step
from .registry import TYPES
from .sequences import array_from_anys, seq_items
from .signatures import typed_global

TI = abi.TVMFFITypeIndex
OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin


class AccessPathFinder:
    """``ffi.VisitErrorContext.FindAccessPaths(root, context, allow_prefix_match)``.

    Every access path from ``root`` that passes, in order, the objects an
    error's ``VisitErrorContext`` recorded (innermost first; None entries and
    repeats of the same object in a row dropped). The search goes through
    reflected fields (all of them), elements and map values; it matches at
    non-container objects only, and starts at ``root`` only when it is a
    reflected object. With ``allow_prefix_match``, a branch that matched some
    but not all of the recorded objects yields the path to its last match.
    """

    def __init__(self, context: int, allow_prefix_match: bool):
        pattern = ctypes.c_void_p.from_address(context + 24).value
        self.records: List[int] = []
        for entry in seq_items(pattern) if pattern else []:
            if entry.type_index >= OBJECT_BEGIN and not (self.records and
                                                         self.records[-1] == entry.v_ptr):
                self.records.append(entry.v_ptr)
        self.allow_prefix = allow_prefix_match
        self.matched = 0
        self.steps: List[Tuple[int, abi.TVMFFIAny]] = []  # (kind, owned key)
        self.results: List[int] = []  # owned AccessPath addresses

    def path(self) -> int:
        path = new_access_path(None, None)
        for kind, key in self.steps:
            step = new_access_step(kind, key)
            deeper = new_access_path(path, step)
            memory.dec_ref(step)
            memory.dec_ref(path)
            path = deeper
        return path

    def visit_object(self, address: int) -> Frame:
        """The search's frame at a reflected object: its fields' values are child frames (run
        by ``run_frames``: depth costs heap, not Python or C stack)."""
        metadata = TYPES.entry(memory.type_index_of(address)).info.metadata
        if not metadata:
            return
        records = self.records
        matched = self.matched < len(records) and address == records[-1 - self.matched]
        if matched:
            self.matched += 1
            if self.matched == len(records):
                self.results.append(self.path())
                self.matched -= 1
                return
        before = len(self.results)
        for field in reflected_fields(memory.type_index_of(address), 0):
            child = read_field(address, field)
            name = abi.TVMFFIAny()
            strings.store_str_or_bytes(name, ctypes.string_at(field.name.data, field.name.size),
                                       is_str=True)
            self.steps.append((0, name))
            try:
                yield self.visit_any(child)
            finally:
                self.steps.pop()
                anyvalue.dec_ref_any(name)
                anyvalue.dec_ref_any(child)
        if self.allow_prefix and 0 < self.matched < len(records) and self.steps \
                and len(self.results) == before:
            self.results.append(self.path())
        if matched:
            self.matched -= 1

    def visit_any(self, value: abi.TVMFFIAny) -> Frame:
        index = value.type_index
        if index < OBJECT_BEGIN:
            return
        if index in (TI.kTVMFFIArray, TI.kTVMFFIList):
            for i, item in enumerate(seq_items(value.v_ptr)):
                if item.type_index != TI.kTVMFFINone:
                    key = abi.TVMFFIAny()
                    strings.store_int(key, i)
                    yield from self.descend(1, key, item)
        elif index in (TI.kTVMFFIMap, TI.kTVMFFIDict):
            for key, item in map_items(value.v_ptr):
                if key.type_index != TI.kTVMFFINone and item.type_index != TI.kTVMFFINone:
                    yield from self.descend(2, key, item)
        else:
            yield from self.visit_object(value.v_ptr)

    def descend(self, kind: int, key: abi.TVMFFIAny, child: abi.TVMFFIAny) -> Frame:
        self.steps.append((kind, key))
        try:
            yield self.visit_any(child)
        finally:
            self.steps.pop()


@typed_global("ffi.VisitErrorContext.FindAccessPaths",
              ["ffi.Object", "ffi.VisitErrorContext", "bool"], "Array<ffi.reflection.AccessPath>")
def _find_access_paths(result, root, context, allow_prefix_match):
    finder = AccessPathFinder(context, allow_prefix_match)
    run_frames(finder.visit_object(root), "FindAccessPaths")
    views = [object_view(path) for path in finder.results]
    set_object(result, array_from_anys(views))
    for path in finder.results:
        memory.dec_ref(path)
