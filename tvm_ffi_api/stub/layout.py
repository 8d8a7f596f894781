"""Can a type's memory layout be rebuilt from reflection? The ``--coverage-out`` verdicts.

A generator for a language with native structs may hold an object by value
only if it can reproduce its bytes. The registry publishes each type's own
``sizeof`` (:attr:`ObjectInfo.total_size`) and each reflected field's size,
alignment and offset. The rule:

    the type's own fields must fill ``[parent's total_size, total_size)``,
    leaving only the gaps alignment forces.

Walking the fields by offset from the parent's size, each must begin at the
cursor rounded up to its alignment; at the end, the cursor rounded up to the
type's alignment (the largest along the chain, the 8 of the header
included) must be ``total_size``. The type needs metadata of its own and a
complete parent before the rule can apply. ``opaque`` is a normal verdict:
the generator then reaches fields through the C ABI. Two target rules come
from the caller: which fields it can render, and which types it refuses to
mirror.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, Union

from .utils import NamedTypeSchema, ObjectInfo

#: Alignment of the ``TVMFFIObject`` header (its 64-bit reference count).
OBJECT_HEADER_ALIGNMENT = 8

#: Why a type is opaque: no byte facts (``layout-unknown``), an opaque parent,
#: a field before the cursor or past the end (``field-overlap``), bytes no
#: field or alignment explains (``uncovered-bytes``), a field the caller
#: cannot render, the caller's veto of a reproducible type (``by-directive``),
#: or a type whose bytes the caller never mirrors (``no-mirror``).
OpaqueReason = Literal["layout-unknown", "parent-opaque", "field-overlap", "uncovered-bytes",
                       "unrenderable-field", "by-directive", "no-mirror"]

_Outcome = Optional[Tuple[OpaqueReason, str]]


def align_up(value: int, alignment: int) -> int:
    """``value`` rounded up to a multiple of ``alignment``."""
    return -(-value // alignment) * alignment


@dataclasses.dataclass(frozen=True)
class ByteRange:
    """The bytes ``[start, end)`` of an object."""

    start: int
    end: int

    def __str__(self) -> str:
        return f"[{self.start}, {self.end})"

    def to_json_obj(self) -> List[int]:
        """``[start, end]``."""
        return [self.start, self.end]


@dataclasses.dataclass(frozen=True)
class FieldBytes:
    """Where one reflected field lives."""

    name: str
    offset: int
    size: int
    alignment: int

    @property
    def end(self) -> int:
        """The first byte after the field."""
        return self.offset + self.size

    def to_json_obj(self) -> Dict[str, Any]:
        """``{"name", "offset", "size", "alignment"}``."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Verdict:
    """A type's verdict and the bytes that decided it.

    ``own_bytes`` is the region its fields must fill, ``fields`` its own
    fields by offset, ``padding`` the gaps alignment explains and
    ``uncovered`` those it does not; ``alignment`` is the object's, along
    the chain.
    """

    type_key: str
    verdict: Literal["complete", "opaque"]
    reason: Optional[OpaqueReason]
    detail: str
    parent_type_key: Optional[str]
    ancestors: List[str]
    total_size: Optional[int]
    is_final: Optional[bool]
    alignment: Optional[int] = None
    own_bytes: Optional[ByteRange] = None
    fields: List[FieldBytes] = dataclasses.field(default_factory=list)
    uncovered: List[ByteRange] = dataclasses.field(default_factory=list)
    padding: List[ByteRange] = dataclasses.field(default_factory=list)

    @property
    def is_complete(self) -> bool:
        """Whether the layout can be rebuilt from the reflected fields."""
        return self.verdict == "complete"

    def to_json_obj(self) -> Dict[str, Any]:
        """The report entry: the language-neutral keys."""
        return {
            "verdict": self.verdict, "reason": self.reason, "detail": self.detail,
            "parent": self.parent_type_key, "ancestors": list(self.ancestors),
            "total_size": self.total_size, "is_final": self.is_final,
            "own_bytes": self.own_bytes.to_json_obj() if self.own_bytes else None,
            "fields": [f.to_json_obj() for f in self.fields],
            "uncovered": [r.to_json_obj() for r in self.uncovered],
            "padding": [r.to_json_obj() for r in self.padding],
        }


def classify(infos: Mapping[str, ObjectInfo], *, forced_opaque: AbstractSet[str] = frozenset(),
             unmirrored: AbstractSet[str] = frozenset(),
             field_renderable: Optional[Callable[[NamedTypeSchema], bool]] = None,
             ) -> Dict[str, Verdict]:
    """The verdict of every type of ``infos`` (keyed by type key; every ancestor included).

    ``forced_opaque``: types the caller vetoes (only a complete one changes).
    ``unmirrored``: types the caller never reproduces (opaque before any
    evidence). ``field_renderable``: whether the caller can render a field.
    ``KeyError`` names an ancestor missing from ``infos``.
    """
    verdicts: Dict[str, Verdict] = {}

    def verdict_of(type_key: str) -> Verdict:
        if type_key not in verdicts:
            if type_key not in infos:
                raise KeyError(f"Ancestor {type_key!r} is not among the types to classify")
            info = infos[type_key]
            parent = verdict_of(info.parent_type_key) if info.parent_type_key else None
            verdicts[type_key] = _judge(info, parent, forced_opaque, unmirrored, field_renderable)
        return verdicts[type_key]

    for type_key in infos:
        verdict_of(type_key)
    return verdicts


def _judge(info: ObjectInfo, parent: Optional[Verdict], forced_opaque: AbstractSet[str],
           unmirrored: AbstractSet[str],
           field_renderable: Optional[Callable[[NamedTypeSchema], bool]]) -> Verdict:
    if info.type_key is None:
        raise ValueError("cannot classify an ObjectInfo without a type key")
    verdict = Verdict(type_key=info.type_key, verdict="opaque", reason=None, detail="",
                      parent_type_key=info.parent_type_key, ancestors=list(info.ancestors),
                      total_size=info.total_size, is_final=info.is_final)
    if info.type_key in unmirrored:
        verdict.reason = "no-mirror"
        verdict.detail = "its bytes are owned by the target's runtime and never mirrored"
        return verdict
    outcome = _check_bytes(info, parent, verdict) or _target_rules(info, forced_opaque,
                                                                    field_renderable)
    if outcome is not None:
        verdict.reason, verdict.detail = outcome
        return verdict
    verdict.verdict = "complete"
    if parent is None:
        verdict.detail = f"object header [0, {info.total_size}): owned by the C ABI"
    else:
        verdict.detail = f"reflected fields fill {verdict.own_bytes} exactly"
        if verdict.padding:
            verdict.detail += f" (alignment padding {', '.join(map(str, verdict.padding))})"
    return verdict


def _field_bytes(info: ObjectInfo) -> Union[List[FieldBytes], str]:
    """The type's own fields by offset, or why their bytes are unknown."""
    found = []
    for f in info.fields:
        if f.size is None or f.alignment is None or f.offset is None:
            return f"field {f.name!r} carries no native layout facts"
        found.append(FieldBytes(f.name, f.offset, f.size, f.alignment))
    return sorted(found, key=lambda f: f.offset)


def _check_bytes(info: ObjectInfo, parent: Optional[Verdict], verdict: Verdict) -> _Outcome:
    """Records the evidence on ``verdict``; None when the fields fill their region."""
    if info.total_size is None:
        return "layout-unknown", "no metadata of its own: total_size is unknown"
    fields = _field_bytes(info)
    if isinstance(fields, str):
        return "layout-unknown", fields
    verdict.fields = fields
    if parent is None:  # the root: the C ABI's header, nothing of its own to fill
        verdict.alignment = OBJECT_HEADER_ALIGNMENT
        verdict.own_bytes = ByteRange(info.total_size, info.total_size)
        return None
    if not parent.is_complete or parent.total_size is None or parent.alignment is None:
        return "parent-opaque", f"parent {parent.type_key!r} is opaque ({parent.reason})"
    verdict.own_bytes = ByteRange(parent.total_size, info.total_size)
    verdict.alignment = max([parent.alignment, *(f.alignment for f in fields)])
    return _walk_fields(verdict)


def _walk_fields(verdict: Verdict) -> _Outcome:
    """Sorts every gap in ``own_bytes`` into padding or uncovered; the first overlap wins."""
    assert verdict.own_bytes is not None and verdict.alignment is not None
    overlap: Optional[str] = None
    cursor, end = verdict.own_bytes.start, verdict.own_bytes.end

    def gap_to(boundary: int, alignment: int) -> None:
        aligned = align_up(cursor, alignment)
        if aligned != boundary:
            verdict.uncovered.append(ByteRange(cursor, boundary))
        elif aligned != cursor:
            verdict.padding.append(ByteRange(cursor, aligned))

    for f in verdict.fields:
        if f.offset < cursor:
            overlap = overlap or (f"field {f.name!r} at [{f.offset}, {f.end}) starts before "
                                  f"byte {cursor}")
            cursor = max(cursor, f.end)
            continue
        gap_to(f.offset, f.alignment)
        cursor = f.end
    if cursor > end:
        overlap = overlap or f"fields extend to byte {cursor}, past total_size {end}"
    else:
        gap_to(end, verdict.alignment)
    if overlap is not None:
        return "field-overlap", overlap
    if verdict.uncovered:
        return "uncovered-bytes", (f"bytes {', '.join(map(str, verdict.uncovered))} of "
                                   f"{verdict.own_bytes} are not accounted for by reflected fields")
    return None


def _target_rules(info: ObjectInfo, forced_opaque: AbstractSet[str],
                  field_renderable: Optional[Callable[[NamedTypeSchema], bool]]) -> _Outcome:
    """The caller's rules, for a type whose bytes are proven."""
    for f in info.fields if field_renderable is not None else []:
        if not field_renderable(f):
            return "unrenderable-field", f"field {f.name!r} ({f.repr()}) has no native mirror"
    if info.type_key in forced_opaque:
        return "by-directive", "vetoed by directive although the layout is reproducible"
    return None


def coverage_report(verdicts: Mapping[str, Verdict]) -> Dict[str, Any]:
    """The JSON-ready report: each type key (sorted) to its entry."""
    return {key: verdicts[key].to_json_obj() for key in sorted(verdicts)}


def write_coverage_report(path: Path, verdicts: Mapping[str, Verdict]) -> None:
    """:func:`coverage_report` as indented JSON in ``path``."""
    path.write_text(json.dumps(coverage_report(verdicts), indent=2) + "\n", encoding="utf-8")
