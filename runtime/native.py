"""Entering compiled code and coming back: the frame buffer seen from Python.

``pack`` unboxes every slot of a frame into its buffer (value and tag) before a tree runs; ``unpack`` rebuilds
the frame's slots and operand stack from what an exit wrote (only the slots tagged DIRTY change). Object
slots travel as addresses; every object native code can point to is kept alive by the frame, a trace
constant, or a container the frame holds, so turning an address back into an object is safe (all objects are
materialized before any slot is overwritten, so none is freed in between).

They run when a tree has no entry stub (``codegen.entry``: one that checks the types of the slots, unboxes
them, runs the tree and boxes the exit's state in native code, called as a builtin function made here by
``entry_function``), or when the recorder runs a tree. Both run on every such entry, so each has a fast path planned once per shape and cached (``Plans``): a
frame whose slots have the same exact types as one seen before is packed by one ``struct.pack_into`` (an int
that does not fit in 64 bits makes it fail, and the per-slot path takes over), and an exit whose tags (which
slots are dirty, and their kinds) were seen before is unpacked by one ``struct.unpack_from`` plus the
conversion of its bools and objects.
"""

from __future__ import annotations

import ctypes
import operator
import struct
from typing import Any

from codegen import abi
from jit.kinds import DIRTY, INT64_MAX, INT64_MIN, KIND_BITS, NUMPY_SCALARS, OWNED, POINTER_KINDS, Kind, kind_of
from runtime.frame import UNBOUND

_APPEND_METHOD = int(Kind.APPEND_METHOD)
_DICT_GET_METHOD = int(Kind.DICT_GET_METHOD)
_WIDE_INT = int(Kind.WIDE_INT)
_INT_OBJECT = int(Kind.INT_OBJECT)
_LOW_WORD = (1 << 64) - 1
_INT, _FLOAT, _BOOL, _NONE, _UNBOUND, _OBJECT = (
    int(Kind.INT),
    int(Kind.FLOAT),
    int(Kind.BOOL),
    int(Kind.NONE),
    int(Kind.UNBOUND),
    int(Kind.OBJECT),
)


_SLOTS_OFFSET = abi.SLOTS * abi.WORD
_MAX_PLANS = 256  # per function and direction; past this the cache starts over
_NP_FLOAT64, _NP_INT64, _NP_BOOL = int(Kind.NP_FLOAT64), int(Kind.NP_INT64), int(Kind.NP_BOOL)
_NP_FLOAT32 = int(Kind.NP_FLOAT32)
_FORMAT_OF_KIND = {
    _FLOAT: "d",
    _NP_FLOAT64: "d",
    _NP_FLOAT32: "d",
}  # every other kind's word reads and writes as an i64 ("q")
_POINTER_TAGS = frozenset(int(kind) for kind in POINTER_KINDS)
_NUMPY_NUMBERS = frozenset(
    int(k) for k in (Kind.NP_FLOAT64, Kind.NP_INT64, Kind.NP_FLOAT32, Kind.NP_INT32, Kind.NP_UINT8)
)


class _PackPlan:
    __slots__ = ("fmt", "gather", "ids", "tags")

    def __init__(self, fmt: str, picked: list[int], ids: list[int], tags: bytes) -> None:
        self.fmt = fmt
        if len(picked) == 1:
            self.gather: Any = lambda slots, _i=picked[0]: (slots[_i],)
        elif picked:
            self.gather = operator.itemgetter(*picked)
        else:
            self.gather = lambda slots: ()
        self.ids = ids  # positions in the gathered values of objects, which travel as addresses
        self.tags = tags


class _UnpackPlan:
    __slots__ = ("fmt", "fixups", "owned", "slots", "wides")

    def __init__(
        self, fmt: str, slots: list[int], fixups: list[tuple[int, int]], owned: list[int], wides: list[tuple[int, int]]
    ) -> None:
        self.fmt = fmt
        self.slots = slots  # the dirty slots, in the order of the unpacked values (the stack's follow)
        self.fixups = fixups  # (position, kind) of values that are not an int or a float as read
        self.owned = owned  # positions of objects native code handed over with a reference of their own
        self.wides = wides  # (position, word of the high half) of the i128 stack entries


class Plans:
    """The pack and unpack plans of one function's buffers (one layout), shared by all its buffers."""

    __slots__ = ("pack", "unpack")

    def __init__(self) -> None:
        self.pack: dict[tuple[type, ...], _PackPlan | None] = {}
        self.unpack: dict[bytes, _UnpackPlan] = {}


def _plan_pack(slots: list[Any], tags: bytes) -> _PackPlan | None:
    """How to pack slots of these exact types in one call (None: some type has no such path)."""
    fmt = ["="]
    picked: list[int] = []
    ids: list[int] = []
    for i, (value, tag) in enumerate(zip(slots, tags)):
        t = type(value)
        if t is int and tag != _INT:
            return None  # a big int: its kind depends on its value, not its type
        if tag in (_NONE, _UNBOUND):
            fmt.append("8x")
            continue
        if tag == _NP_BOOL:
            return None  # (struct takes no numpy.bool as an integer)
        if tag in _POINTER_TAGS:
            ids.append(len(picked))
        picked.append(i)
        fmt.append(_FORMAT_OF_KIND.get(tag, "q"))
    return _PackPlan("".join(fmt), picked, ids, tags)


def _plan_unpack(tags: bytes, nslots: int, wide_word: int) -> _UnpackPlan:
    fmt = ["="]
    dirty: list[int] = []
    fixups: list[tuple[int, int]] = []
    owned: list[int] = []
    wides: list[tuple[int, int]] = []
    position = 0
    for i, tag in enumerate(tags):
        if i < nslots and not tag & DIRTY:
            fmt.append("8x")
            continue
        kind = tag & KIND_BITS
        fmt.append(_FORMAT_OF_KIND.get(kind, "q"))
        if i < nslots:
            dirty.append(i)
        if kind == _WIDE_INT:
            wides.append((position, wide_word + i - nslots))
        elif kind != _INT and kind != _FLOAT:
            fixups.append((position, kind))
        if tag & OWNED:
            owned.append(position)
        position += 1
    return _UnpackPlan("".join(fmt).rstrip("8x") or "=", dirty, fixups, owned, wides)


class NativeBuffer:
    """One frame's buffer (see ``codegen.abi``)."""

    __slots__ = ("address", "doubles", "layout", "plans", "raw", "tags", "words")

    def __init__(self, layout: abi.Layout, plans: Plans | None = None) -> None:
        self.layout = layout
        self.plans = plans if plans is not None else Plans()
        self.raw = bytearray(layout.size)
        view = memoryview(self.raw)
        self.words = view[: layout.tags_offset].cast("q")
        self.doubles = view[: layout.tags_offset].cast("d")
        self.tags = view[layout.tags_offset :]
        self.address = ctypes.addressof((ctypes.c_char * layout.size).from_buffer(self.raw))

    def pack(self, slots: list[Any]) -> bytes:
        """Unbox every slot into the buffer; return the tags (one per slot)."""
        plans = self.plans.pack
        key = tuple(map(type, slots))
        plan = plans.get(key)
        if plan is not None:
            values = plan.gather(slots)
            if plan.ids:
                values = list(values)
                for position in plan.ids:
                    values[position] = id(values[position])
            try:
                struct.pack_into(plan.fmt, self.raw, _SLOTS_OFFSET, *values)
            except struct.error:  # an int beyond 64 bits
                pass
            else:
                tags = plan.tags
                self.tags[: len(tags)] = tags
                return tags
        tags = self.pack_each(slots)
        if key not in plans:
            if len(plans) >= _MAX_PLANS:
                plans.clear()
            plans[key] = _plan_pack(slots, tags)
        return tags

    def pack_each(self, slots: list[Any]) -> bytes:
        """pack, slot by slot."""
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
                    tags[i] = _INT_OBJECT
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
                if kind == Kind.NP_FLOAT64 or kind == Kind.NP_FLOAT32:
                    doubles[word + i] = value
                elif kind.is_numpy_int or kind == Kind.NP_BOOL:
                    words[word + i] = int(value)
                else:
                    words[word + i] = id(value)
                tags[i] = int(kind) if kind != Kind.RANGE else _OBJECT
        return bytes(tags[: len(slots)])

    def take_references(self, slots: list[Any], owned: tuple[int, ...]) -> None:
        """Before a tree runs on the packed buffer: the buffer takes a reference of its own to the int past 64
        bits in each slot owned names (the tree's entry type map says Kind.INT_OBJECT there: its traces count
        on it, ``codegen.ownership``), tagged OWNED; an int past 64 bits in any other slot is tagged an object
        (borrowed: native code only moves it)."""
        tags = self.tags
        nslots = self.layout.nslots
        if _INT_OBJECT not in bytes(tags[:nslots]):
            return
        for i in range(nslots):
            if tags[i] == _INT_OBJECT:
                tags[i] = _OBJECT
        for slot in owned:
            _incref(slots[slot])
            tags[slot] = _INT_OBJECT | OWNED

    def release_references(self, slots: list[Any], owned: tuple[int, ...]) -> None:
        """After the exit was unpacked: give up the buffer's references (take_references) that native code did
        not hand over (a slot not written since: it holds the same object)."""
        tags = self.tags
        for slot in owned:
            if not tags[slot] & DIRTY:
                _decref(slots[slot])

    def unpack(self, slots: list[Any], stack_depth: int) -> list[Any]:
        """Rebuild the slots native code changed; return the operand stack an exit wrote."""
        nslots = self.layout.nslots
        key = self.tags[: nslots + stack_depth].tobytes()
        plans = self.plans.unpack
        plan = plans.get(key)
        if plan is None:
            if len(plans) >= _MAX_PLANS:
                plans.clear()
            plan = plans[key] = _plan_unpack(key, nslots, self.layout.wide_word)
        values = list(struct.unpack_from(plan.fmt, self.raw, _SLOTS_OFFSET))
        for position, kind in plan.fixups:
            values[position] = _convert(kind, values[position])
        for position in plan.owned:  # the list holds the object now: give up native code's reference
            _decref(values[position])
        for position, high in plan.wides:
            values[position] = (self.words[high] << 64) | (values[position] & _LOW_WORD)
        dirty = plan.slots
        for i, value in zip(dirty, values):
            slots[i] = value
        return values[len(dirty) :]


_decref = ctypes.PYFUNCTYPE(None, ctypes.py_object)(("Py_DecRef", ctypes.pythonapi))
_incref = ctypes.PYFUNCTYPE(None, ctypes.py_object)(("Py_IncRef", ctypes.pythonapi))


class _MethodDef(ctypes.Structure):
    """CPython's ``PyMethodDef``."""

    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


_METH_O = 0x0008
_new_builtin = ctypes.pythonapi.PyCFunction_NewEx
_new_builtin.restype = ctypes.py_object
_new_builtin.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.py_object]


_holds_unbound: list[Any] = []


def holds_unbound(cache: Any = None) -> Any:
    """The builtin ``holds_unbound(values)``: does the tuple values hold the unbound marker? (Compiled with
    the entry stubs' support library, at the first call: it needs LLVM; or found in cache, a
    ``codegen.cache.CodeCache``.)"""
    if not _holds_unbound:
        from codegen.entry import HOLDS_UNBOUND, support

        _holds_unbound.append(entry_function(support(cache).addresses[HOLDS_UNBOUND], HOLDS_UNBOUND))
    return _holds_unbound[0]


_METH_FASTCALL = 0x0080
_handoff_definition: list[_MethodDef] = []  # (one for every tree: each builtin's __self__ is its parameters)


def handoff_function(
    stub_address: int,
    nslots: int,
    nlocals: int,
    base: int,
    kind: int,
    runner_counts: int,
    tree_counts: int,
    accumulator: int = -1,
) -> Any:
    """The builtin ``handoff(values, it, iterable, spill)`` of a tree whose entry stub is at stub_address
    (``codegen.entry.build_handoff``: a loop's hand-off from CPython into the tree in one call); base: the
    loop's first hidden slot, kind: the loop's kind (``codegen.entry.HANDOFF_WHILE``, ...); runner_counts and
    tree_counts: the addresses of the counter blocks each entry adds itself to (``codegen.entry.HANDOFF_COUNTS``
    words each); accumulator: the slot of what the loop's comprehension builds, if CPython hands it over whole
    (then ``handoff(values, it, iterable, spill, built)``), else -1. The caller keeps the code and the counter
    blocks alive."""
    from codegen.entry import HANDOFF, HANDOFF_PARAMS, support

    address = support().addresses[HANDOFF]
    if not _handoff_definition:
        definition = _MethodDef(HANDOFF.encode(), address, _METH_FASTCALL, None)
        # Never freed: a builtin made from it reads it when it is freed itself (``meth_dealloc``), which at the
        # interpreter's exit may come after this module's globals are cleared (a Tree in a cycle, collected by
        # the last garbage collection): it read freed memory there and crashed.
        _incref(definition)
        _handoff_definition.append(definition)
    params = struct.pack(
        HANDOFF_PARAMS, stub_address, nslots, nlocals, base, kind, runner_counts, tree_counts, accumulator
    )
    return _new_builtin(_handoff_definition[0], params, None)


def entry_function(address: int, name: str) -> Any:
    """A builtin function calling the entry stub at address (``codegen.entry``: ``METH_O``) with one
    argument: calling it costs what calling any builtin does, much less than a ctypes call. The builtin
    keeps its method definition alive (it is the builtin's ``__self__``). The caller keeps the code alive."""
    definition = _MethodDef(name.encode(), address, _METH_O, None)
    return _new_builtin(definition, definition, None)


def _convert(kind: int, word: int) -> Any:
    """The value of a word whose kind is not an int or a float (read as an i64, or as a double for a
    numpy.float64)."""
    if kind == _BOOL:
        return word != 0
    if kind == _NONE:
        return None
    if kind == _UNBOUND:
        return UNBOUND
    if kind in _NUMPY_NUMBERS:
        return NUMPY_SCALARS[Kind(kind)](word)
    if kind == _NP_BOOL:
        return NUMPY_SCALARS[Kind.NP_BOOL](word != 0)
    obj = ctypes.cast(word, ctypes.py_object).value
    if kind == _APPEND_METHOD:
        return obj.append  # the bound method the interpreter had pushed
    if kind == _DICT_GET_METHOD:
        return obj.get
    return obj
