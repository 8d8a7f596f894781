"""How the walker shows containers: shapes, arrays, lists, maps and dicts.

A Shape's dims, an Array's or a List's slots (inline or in a buffer), a Map's
or a Dict's pairs in the small form, or its dense table slot by slot, with
what each metadata byte says. One of the three families of object bodies
:class:`.walk.Walker` is made of; it uses the walker's helpers through
``self``.
"""

from __future__ import annotations

import ctypes
from typing import List, Optional

from tvm_ffi_common import abi

from .model import Field, Region, Section
from .reading import ANY_SIZE, HEADER_SIZE, TI


class ContainerBodies:
    """Shape, Array, List, Map and Dict objects."""

    # --- shapes, sequences

    def shape_body(self, region: Region, address: int, index: int, depth: int) -> None:
        region.summary = "a shape: header, TVMFFIShapeCell, then the dims"
        region.code = "tvm_ffi_ref.runtime.shapes.shape_from_ints"
        C = self.struct_fields(abi.TVMFFIShapeCell, address + HEADER_SIZE, HEADER_SIZE)
        size = self.int_field(C["size"], ctypes.c_uint64)
        data = C["data"].pointer
        C["size"].meaning = f"{size} dims"
        region.sections.append(Section("cell", "TVMFFIShapeCell", [C["data"], C["size"]]))
        if self._inside(address, data, HEADER_SIZE + 16 + 8):
            C["data"].meaning = "the dims, inside this object"
            region.size = data - address + 8 * size
            region.sections += self.int64_sections(data, data - address, size, "dim")
        else:
            C["data"].meaning = "the dims, elsewhere"
            if data and depth < self.max_depth:
                C["data"].target = self.int64_region("shape dims", data, size)

    def seq_body(self, region: Region, address: int, index: int, depth: int) -> None:
        is_array = index == TI.kTVMFFIArray
        region.summary = ("an Array: header, TVMFFISeqCell, then its slots inline" if is_array
                          else "a List: header and TVMFFISeqCell; the slots are in a buffer")
        region.code = ("tvm_ffi_ref.runtime.sequences.array_from_anys" if is_array else
                       "tvm_ffi_ref.runtime.sequences.list_from_anys")
        C = self.struct_fields(abi.TVMFFISeqCell, address + HEADER_SIZE, HEADER_SIZE)
        size = self.int_field(C["size"])
        capacity = self.int_field(C["capacity"])
        data = C["data"].pointer
        C["size"].meaning = f"{size} live slots"
        C["capacity"].meaning = f"room for {capacity}"
        inline = data == address + HEADER_SIZE + ctypes.sizeof(abi.TVMFFISeqCell)
        C["data_deleter"].meaning = ("NULL: the slots are part of this object" if
                                     not C["data_deleter"].pointer else
                                     "frees the separate slot buffer")
        region.sections.append(Section("cell", "TVMFFISeqCell", [
            C["data"], C["size"], C["capacity"], C["data_deleter"]]))
        if inline:
            C["data"].meaning = "the slots, inside this object"
            region.size = data - address + capacity * ANY_SIZE
            region.sections += self.slot_sections(data, data - address, size, capacity, depth)
        else:
            C["data"].meaning = "the slots, in a separate buffer"
            if data and depth < self.max_depth:
                buffer = self.new_region("List buffer", data,
                                         f"{capacity} slots of 16 bytes, the first {size} live",
                                         key="buffer")
                buffer.sections += self.slot_sections(data, 0, size, capacity, depth)
                buffer.size = capacity * ANY_SIZE
                C["data"].target = self.finish(buffer)

    def slot_sections(self, address: int, base: int, size: int, capacity: int,
                      depth: int) -> List[Section]:
        sections = []
        for i in self._shown_indices(size):
            if i is None:
                sections.append(self._gap(size, "slots"))
                continue
            sections.append(Section(f"slot[{i}]", "TVMFFIAny", self.any_fields(
                address + ANY_SIZE * i, base + ANY_SIZE * i, depth)))
        if capacity > size:
            sections.append(Section("", "", elided=True,
                                    note=f"{capacity - size} unused slot(s) of room"))
        return sections

    def _shown_indices(self, count: int) -> List[Optional[int]]:
        """Which elements to show: all, or the first ``max_items - 1``, a gap, and the last."""
        if count <= self.max_items:
            return list(range(count))
        if self.max_items == 1:
            return [0, None]
        shown: List[Optional[int]] = list(range(self.max_items - 1))
        return shown + [None, count - 1]

    def _hidden(self, count: int) -> int:
        """How many elements :meth:`_shown_indices` leaves out."""
        return count - len([i for i in self._shown_indices(count) if i is not None])

    def _gap(self, count: int, what: str) -> Section:
        """The row standing for the ``what`` :meth:`_shown_indices` leaves out."""
        return Section("", "", elided=True, note=f"... {self._hidden(count)} more {what} ...")

    # --- maps

    def map_body(self, region: Region, address: int, index: int, depth: int) -> None:
        from tvm_ffi_ref.runtime import map_layout

        is_map = index == TI.kTVMFFIMap
        cell = map_layout.map_cell(address)
        small = map_layout.is_small(cell)
        C = self.struct_fields(map_layout.MapCell, address + map_layout.MAP_CELL_AT,
                               map_layout.MAP_CELL_AT)
        slots = cell.slots
        C["size"].meaning = f"{cell.size} entr{'y' if cell.size == 1 else 'ies'}"
        name = "Map" if is_map else "Dict"
        if small:
            region.summary = (f"a {name} in the small form: header, the map fields, then up to 4 "
                              "key/value pairs, scanned in order")
            region.code = "tvm_ffi_ref.runtime.map_storage.new_small_map"
            C["slots"].meaning = (f"bit 63 set = small form; room for "
                                  f"{slots & ~map_layout.SMALL_TAG} pairs")
            C["data_deleter"].meaning = ("NULL: the pairs are inside this object" if not
                                         cell.data_deleter else "frees the pairs' storage")
            fields = [C["data"], C["size"], C["slots"], C["data_deleter"]]
            region.sections.append(Section("cell", "MapBaseObj", fields))
            data = cell.data
            if data == address + map_layout.SMALL_PAIRS_AT:
                C["data"].meaning = "the pairs, inside this object"
                region.size = (map_layout.SMALL_PAIRS_AT
                               + (slots & ~map_layout.SMALL_TAG) * map_layout.PAIR_SIZE)
                region.sections += self.pair_sections(data, data - address, cell.size,
                                                      slots & ~map_layout.SMALL_TAG, depth)
            else:
                C["data"].meaning = "the pairs, elsewhere"
                if data and depth < self.max_depth:
                    pairs = self.new_region("small map pairs", data, "key/value pairs",
                                            key="buffer")
                    pairs.sections += self.pair_sections(data, 0, cell.size,
                                                         slots & ~map_layout.SMALL_TAG, depth)
                    C["data"].target = self.finish(pairs)
            return
        region.summary = (f"a {name} in the dense form: header and the map fields; the entries "
                          "are in a table of 16-slot blocks")
        region.code = "tvm_ffi_ref.runtime.map_storage.new_dense_map"
        C["slots"].meaning = f"{slots} slots (bit 63 clear = dense form)"
        C["data"].meaning = "the table of blocks"
        C["data_deleter"].meaning = "frees the table"
        C["fib_shift"].meaning = f"64 - log2(slots): home slot = (hash * 2^64/phi) >> " \
                                 f"{cell.fib_shift}"
        C["iter_list_head"].meaning = "first slot in insertion order"
        C["iter_list_tail"].meaning = "last slot in insertion order"
        region.sections.append(Section("cell", "DenseMapBaseObj", [
            C["data"], C["size"], C["slots"], C["data_deleter"], C["fib_shift"],
            C["iter_list_head"], C["iter_list_tail"]]))
        if cell.data and depth < self.max_depth:
            C["data"].target = self.dense_table_region(address, depth)

    def pair_sections(self, address: int, base: int, size: int, capacity: int,
                      depth: int) -> List[Section]:
        from tvm_ffi_ref.runtime import map_layout

        sections = []
        for i in self._shown_indices(size):
            if i is None:
                sections.append(self._gap(size, "pairs"))
                continue
            at = address + map_layout.PAIR_SIZE * i
            at_base = base + map_layout.PAIR_SIZE * i
            sections.append(Section(f"pair[{i}].key", "TVMFFIAny",
                                    self.any_fields(at, at_base, depth)))
            sections.append(Section(f"pair[{i}].value", "TVMFFIAny",
                                    self.any_fields(at + ANY_SIZE, at_base + ANY_SIZE, depth)))
        if capacity > size:
            sections.append(Section("", "", elided=True,
                                    note=f"room for {capacity - size} more pair(s)"))
        return sections

    def dense_table_region(self, address: int, depth: int) -> Region:
        from tvm_ffi_ref.runtime import any_hash, map_dense, map_layout

        table = map_dense.DenseTable(address)
        cell = table.cell
        blocks = (cell.slots + map_layout.BLOCK_SLOTS - 1) // map_layout.BLOCK_SLOTS
        region = self.new_region(
            "dense map table", cell.data,
            f"{blocks} block(s) of {map_layout.BLOCK_SIZE} bytes: 16 metadata bytes, then 16 "
            "items (key, value, prev, next); shown in insertion order", key="buffer")
        region.code = "tvm_ffi_ref.runtime.map_dense.DenseTable"
        region.size = blocks * map_layout.BLOCK_SIZE
        order = []
        slot = cell.iter_list_head
        while slot != map_layout.INVALID_INDEX and len(order) < cell.size:
            order.append(slot)
            slot = table.item(slot).next
        for n in self._shown_indices(len(order)):
            if n is None:
                region.sections.append(self._gap(len(order), "entries"))
                continue
            i = order[n]
            block, item = divmod(i, map_layout.BLOCK_SLOTS)
            meta_at = block * map_layout.BLOCK_SIZE + item
            meta = table.meta(i)
            item_at = table.item_address(i) - cell.data
            key = table.item(i).first
            try:
                home = table.home(any_hash.any_hash(key))
                home_note = f"; its key hashes to home slot {home}"
            except Exception:  # noqa: BLE001 - a custom hash may fail; say nothing then
                home_note = ""
            section = Section(f"slot {i}", "meta byte + DenseItem",
                              note=f"entry {n} in insertion order: block {block}, item {item}"
                                   + home_note)
            section.fields.append(Field(meta_at, "meta", "uint8_t", bytes([meta]),
                                        self.meta_note(meta)))
            item_address = cell.data + item_at
            section.fields += self.any_fields(item_address, item_at, depth, "key.")
            section.fields += self.any_fields(item_address + ANY_SIZE, item_at + ANY_SIZE,
                                              depth, "value.")
            D = self.struct_fields(map_layout.DenseItem, item_address, item_at)
            for name, which in (("prev", "before"), ("next", "after")):
                value = self.int_field(D[name], ctypes.c_uint64)
                D[name].meaning = (f"no entry {which} this one"
                                   if value == map_layout.INVALID_INDEX else
                                   f"slot {value} comes {which} this one in insertion order")
                section.fields.append(D[name])
            region.sections.append(section)
        self.book.add_region(region)
        return region

    @staticmethod
    def meta_note(meta: int) -> str:
        from tvm_ffi_ref.runtime import map_layout

        if meta == map_layout.EMPTY_SLOT:
            return "0xff: empty"
        if meta == map_layout.PROTECTED_SLOT:
            return "0xfe: being vacated"
        role = ("a later link of its chain" if meta & map_layout.NOT_HEAD else
                "the head of its chain")
        jump = meta & map_layout.JUMP_MASK
        distance = map_layout.PROBE_DISTANCES[jump]
        follow = "the chain ends here" if distance == 0 else f"next link {distance} slots on"
        return f"0x{meta:02x}: {role}; jump {jump}: {follow}"
