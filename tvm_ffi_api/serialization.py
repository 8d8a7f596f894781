"""Saving value graphs as JSON text and loading them back (upstream's ``tvm_ffi.serialization``).

The *JSON graph* format keeps sharing: every distinct value becomes one node
``{"type": <type key>, "data": ...}`` in ``nodes``, containers and objects
refer to their children by node index, and ``root_index`` names the value
itself (optional ``metadata`` rides along). The runtime's
``ffi.ToJSONGraphString`` / ``ffi.FromJSONGraphString`` do the work, driven
by reflection, so objects of any reflected type with a creator round-trip.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .function import get_global_func


def to_json_graph_str(obj: Any, metadata: Optional[Dict[str, Any]] = None) -> str:
    """The JSON graph text of ``obj`` (with ``metadata`` saved alongside, if given)."""
    return get_global_func("ffi.ToJSONGraphString")(obj, metadata)


def from_json_graph_str(json_str: str) -> Any:
    """The value a JSON graph text (from :func:`to_json_graph_str`) describes."""
    return get_global_func("ffi.FromJSONGraphString")(json_str)


__all__ = ["from_json_graph_str", "to_json_graph_str"]
