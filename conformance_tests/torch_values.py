"""PyTorch tensors in the conformance cases: how a worker builds and reports them.

A ``("torch", dtype, shape, view, seed)`` recipe (``strategies.torch_tensor_recipes``)
is a CPU torch tensor of ``dtype`` whose bytes come from ``seed``, viewed as
``view`` says (per-axis ``(start, stop, step)`` slices, then ``"T"``: every
axis reversed), so that strides, offsets, zero-size and non-contiguous layouts
all occur. torch is imported on first use only, so workers that never meet a
torch recipe never load it.
"""

from __future__ import annotations

from typing import Any, List, Optional


def _torch():
    import torch

    return torch


def make_torch_tensor(dtype: str, shape: List[int], view: List[Any], seed: int) -> Any:
    """The torch tensor a recipe describes."""
    import random

    torch = _torch()
    dt = getattr(torch, dtype)
    count = 1
    for extent in shape:
        count *= extent
    itemsize = torch.empty((), dtype=dt).element_size()
    raw = random.Random(seed).randbytes(count * itemsize)
    base = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
    if dt == torch.bool:
        base = (base & 1).to(torch.bool)
    else:
        base = base.view(dt)
    slices, transpose = split_view(view)
    out = base.reshape(shape)
    out = out[slices] if slices else out
    return out.permute(*reversed(range(out.ndim))) if transpose else out


def split_view(view: List[Any]):
    """A recipe's view as (the tuple of slices to index with, whether to transpose after)."""
    slices = tuple(slice(*item) if item is not None else slice(None)
                   for item in view if item != "T")
    return slices, "T" in view


def normalize_torch(value: Any) -> Optional[List[Any]]:
    """``["torch", dtype, shape, strides, device, bytes]`` for a torch tensor, else None."""
    torch = __import__("sys").modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor):
        return None
    flat = value.contiguous().reshape(-1)
    data = flat.view(torch.uint8) if flat.dtype != torch.bool else flat.to(torch.uint8)
    return ["torch", str(value.dtype), list(value.shape), list(value.stride()), str(value.device),
            bytes(data.numpy().tobytes()).hex()]
