"""Entering compiled code and coming back: the frame buffer seen from Python.

``pack`` unboxes every slot of a frame into its buffer (value and tag) before a tree runs; ``unpack`` rebuilds
the frame's slots and operand stack from what an exit wrote (only the slots tagged DIRTY change). Object
slots travel as addresses; every object native code can point to is kept alive by the frame, a trace
constant, or a container the frame holds, so turning an address back into an object is safe (all objects are
materialized before any slot is overwritten, so none is freed in between).
"""

from __future__ import annotations

import ctypes
from typing import Any

from codegen import abi
from jit.kinds import DIRTY, INT64_MAX, INT64_MIN, Kind, kind_of
from runtime.frame import UNBOUND

_APPEND_METHOD = int(Kind.APPEND_METHOD)
_INT, _FLOAT, _BOOL, _NONE, _UNBOUND, _OBJECT = (
    int(Kind.INT),
    int(Kind.FLOAT),
    int(Kind.BOOL),
    int(Kind.NONE),
    int(Kind.UNBOUND),
    int(Kind.OBJECT),
)


class NativeBuffer:
    """One frame's buffer (see ``codegen.abi``)."""

    __slots__ = ("address", "doubles", "layout", "raw", "tags", "words")

    def __init__(self, layout: abi.Layout) -> None:
        self.layout = layout
        self.raw = bytearray(layout.size)
        view = memoryview(self.raw)
        self.words = view[: layout.tags_offset].cast("q")
        self.doubles = view[: layout.tags_offset].cast("d")
        self.tags = view[layout.tags_offset :]
        self.address = ctypes.addressof((ctypes.c_char * layout.size).from_buffer(self.raw))

    def pack(self, slots: list[Any]) -> bytes:
        """Unbox every slot into the buffer; return the tags (one per slot)."""
        words, doubles, tags = self.words, self.doubles, self.tags
        word = abi.SLOTS
        for i, value in enumerate(slots):
            t = type(value)
            if t is int:
                if INT64_MIN <= value <= INT64_MAX:
                    words[word + i] = value
                    tags[i] = _INT
                else:
                    words[word + i] = id(value)
                    tags[i] = _OBJECT
            elif t is float:
                doubles[word + i] = value
                tags[i] = _FLOAT
            elif t is bool:
                words[word + i] = value
                tags[i] = _BOOL
            elif value is None:
                tags[i] = _NONE
            elif value is UNBOUND:
                tags[i] = _UNBOUND
            else:
                kind = kind_of(value)
                words[word + i] = id(value)
                tags[i] = int(kind) if kind != Kind.RANGE else _OBJECT
        return bytes(tags[: len(slots)])

    def unpack(self, slots: list[Any], stack_depth: int) -> list[Any]:
        """Rebuild the slots native code changed; return the operand stack an exit wrote."""
        layout = self.layout
        tags = self.tags[: layout.nslots + stack_depth].tobytes()
        box = self._box
        changed = [(i, box(tag & 0x7F, abi.SLOTS + i)) for i, tag in enumerate(tags[: layout.nslots]) if tag & DIRTY]
        stack = [box(tags[layout.nslots + k] & 0x7F, layout.stack_word + k) for k in range(stack_depth)]
        for i, value in changed:
            slots[i] = value
        return stack

    def _box(self, tag: int, word: int) -> Any:
        if tag == _INT:
            return self.words[word]
        if tag == _FLOAT:
            return self.doubles[word]
        if tag == _BOOL:
            return self.words[word] != 0
        if tag == _NONE:
            return None
        if tag == _UNBOUND:
            return UNBOUND
        obj = ctypes.cast(self.words[word], ctypes.py_object).value
        if tag == _APPEND_METHOD:
            return obj.append  # the bound method the interpreter had pushed
        return obj
