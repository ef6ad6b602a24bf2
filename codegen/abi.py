"""The native side's view of memory: the frame buffer shared by compiled traces and the interpreter, and the
layout of the few CPython objects native code reads.

Frame buffer (one per call of a jitted function, made on its first entry to native code), in 8-byte words::

    [EXIT]       the number of the last exit taken (written by every exit stub)
    [FUEL]       the iteration count-down (carried across tree calls): set to FUEL_START at entry, minus one per
                 iteration of any tree, a periodic check each time it is a multiple of PERIOD; so
                 FUEL_START - FUEL at the exit is the number of iterations the entry ran
    [DEPTH]      the operand stack depth of the last exit taken (written by every exit stub, with EXIT)
    [SLOTS + i]  slot i's value: i64, double bits, 0/1 for a bool, a PyObject* for object kinds
    [STACK + k]  operand stack entry k at an exit (the low word of an i128: Kind.WIDE_INT)
    [WIDE + k]   the high word of operand stack entry k, if it is an i128
  then, bytewise, one tag per slot and per stack entry: the value's Kind, with DIRTY set by native code

The interpreter fills every slot and its tag before entering a tree; native code writes a slot (and sets
DIRTY) only at an exit, before calling an inner tree, or before tail-jumping to a tree, so the interpreter
re-boxes only what changed.

CPython object layouts are taken from the running interpreter (``__basicsize__``) and checked against live
objects at import; if a check fails, the kinds that need it are not compiled (``LAYOUT_OK``).
"""

from __future__ import annotations

import ctypes
import sys
import sysconfig

EXIT = 0
FUEL = 1
DEPTH = 2
SLOTS = 3  # first slot word
PERIOD = 1 << 14  # iterations between two periodic checks (signals, hoisted guards): a power of two
FUEL_START = 1 << 62

WORD = 8
OB_TYPE = 8  # offset of ob_type in PyObject
OB_SIZE = 16  # offset of ob_size in PyVarObject
FLOAT_VALUE = float.__basicsize__ - 8  # offset of ob_fval
LIST_ITEMS = 24  # offset of PyListObject.ob_item (PyObject **)
TUPLE_ITEMS = tuple.__basicsize__  # offset of PyTupleObject.ob_item[0]
LONG_DIGITS = int.__basicsize__  # offset of PyLongObject.ob_digit[0]
LIST_ALLOCATED = 32  # offset of PyListObject.allocated (room for items before a resize; checked below)
SMALL_INT_MIN, SMALL_INT_MAX = -5, 256  # the ints CPython caches (one object each, in one static array)

# enumerate and zip objects, list and tuple iterators (enumobject, zipobject, _PyListIterObject,
# _PyTupleIterObject: the same from 3.11 on; checked below)
ENUMERATE_COUNT = 16  # en_index (Py_ssize_t)
ENUMERATE_ITERATOR = 24  # en_sit
ENUMERATE_LONG_COUNT = 40  # en_longindex: NULL while the count fits in en_index
SEQUENCE_ITERATOR_INDEX = 16  # it_index
SEQUENCE_ITERATOR_SEQUENCE = 24  # it_seq: NULL once exhausted
ZIP_SIZE = 16  # tuplesize
ZIP_ITERATORS = 24  # ittuple
# the iterators whose next item native code takes with their own tp_iternext (PyTypeObject, dictiterobject,
# unicodeiterobject, PyASCIIObject: the same from 3.11 on; checked below)
TYPE_ITERNEXT = 224  # PyTypeObject.tp_iternext
CONTAINER_ITERATOR_CONTAINER = 16  # dictiterobject.di_dict, setiterobject.si_set: NULL once exhausted
DICT_ITERATOR_LENGTH = 48  # dictiterobject.len: what it has left to give
DICT_ITERATOR_USED = 24  # dictiterobject.di_used: the dict's size when it started (-1 once it raised)
DICT_USED = 16  # PyDictObject.ma_used: its number of items
DICT_VERSION = 24  # PyDictObject.ma_version_tag: changes at every change of the dict (3.11 to 3.13; checked below)
STR_STATE = 32  # PyASCIIObject.state: its `kind` (bytes per character) in bits 2-4
STR_HASH = 24  # PyASCIIObject.hash: the str's hash once computed, else -1 (checked below)
STR_KIND_SHIFT = 2
STR_COMPACT_BIT = 5  # PyASCIIObject.state: `compact` (its characters follow the header; checked below)
STR_ASCII_BIT = 6  # PyASCIIObject.state: `ascii` (every character below 128; checked below)
STR_LENGTH = 16  # PyASCIIObject.length: its number of characters (checked below)

FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


class Layout:
    """Where a frame's slots, stack and tags are in its buffer."""

    def __init__(self, nslots: int, max_stack: int) -> None:
        self.nslots = nslots
        self.max_stack = max(max_stack, 1)
        self.stack_word = SLOTS + nslots
        self.wide_word = self.stack_word + self.max_stack
        self.words = self.wide_word + self.max_stack
        self.tags_offset = self.words * WORD
        self.size = self.tags_offset + nslots + self.max_stack

    def slot_word(self, slot: int) -> int:
        return SLOTS + slot

    def stack_word_of(self, index: int) -> int:
        return self.stack_word + index

    def wide_word_of(self, index: int) -> int:
        return self.wide_word + index

    def slot_tag(self, slot: int) -> int:
        return self.tags_offset + slot

    def stack_tag(self, index: int) -> int:
        return self.tags_offset + self.nslots + index


def _read_ssize(address: int) -> int:
    return ctypes.c_ssize_t.from_address(address).value


def _read_pointer(address: int) -> int:
    return ctypes.c_void_p.from_address(address).value or 0


def _check_layouts() -> bool:
    """Compare the offsets above with live objects of this interpreter."""
    if FREE_THREADED or ctypes.sizeof(ctypes.c_void_p) != WORD:
        return False
    try:
        probe = [1.5, 2.5, 3.5]
        if _read_pointer(id(probe) + OB_TYPE) != id(list) or _read_ssize(id(probe) + OB_SIZE) != 3:
            return False
        items = _read_pointer(id(probe) + LIST_ITEMS)
        if _read_pointer(items + WORD) != id(probe[1]):
            return False
        if ctypes.c_double.from_address(id(probe[2]) + FLOAT_VALUE).value != 3.5:
            return False
        pair = (probe, 7.25)
        if _read_ssize(id(pair) + OB_SIZE) != 2 or _read_pointer(id(pair) + TUPLE_ITEMS + WORD) != id(pair[1]):
            return False
        return True
    except Exception:
        return False


def _check_small_ints() -> bool:
    """Do ints keep their sign and size in ob_size and 30-bit digits at LONG_DIGITS, as CPython 3.11 does?
    (Then native code reads an int of at most one digit directly; otherwise it asks the C-API.)"""
    if sys.version_info[:2] != (3, 11) or sys.int_info.bits_per_digit != 30 or sys.int_info.sizeof_digit != 4:
        return False
    try:
        for value in (0, 5, -7, 2**30 - 1, -(2**30) + 1):
            size = _read_ssize(id(value) + OB_SIZE)
            digit = ctypes.c_uint32.from_address(id(value) + LONG_DIGITS).value
            if size != (value > 0) - (value < 0) or size * digit != value:
                return False
        return _read_ssize(id(2**40) + OB_SIZE) == 2 and _read_ssize(id(-(2**40)) + OB_SIZE) == -2
    except Exception:
        return False


class _Indexed:
    def __getitem__(self, index: int) -> int:
        if index < 3:
            return index
        raise IndexError(index)


def _check_iterators() -> bool:
    """Compare the enumerate, zip and sequence iterator offsets above with live objects (list, tuple and plain
    sequence iterators)."""
    try:
        for sequence in ([1.5, 2.5, 3.5], (1.5, 2.5, 3.5)):
            numbered = enumerate(sequence, 5)
            next(numbered)
            inner = numbered.__reduce__()[1][0]
            if _read_ssize(id(numbered) + ENUMERATE_COUNT) != 6 or _read_pointer(id(numbered) + ENUMERATE_LONG_COUNT):
                return False
            if _read_pointer(id(numbered) + ENUMERATE_ITERATOR) != id(inner):
                return False
            if _read_ssize(id(inner) + SEQUENCE_ITERATOR_INDEX) != 1:
                return False
            if _read_pointer(id(inner) + SEQUENCE_ITERATOR_SEQUENCE) != id(sequence):
                return False
            zipped = zip(sequence, [])
            iterators = zipped.__reduce__()[1]
            if _read_ssize(id(zipped) + ZIP_SIZE) != 2 or _read_pointer(id(zipped) + ZIP_ITERATORS) != id(iterators):
                return False
        indexed = _Indexed()  # (the iterator of an object with __getitem__ alone: an ndarray's)
        walker = iter(indexed)
        next(walker)
        if _read_ssize(id(walker) + SEQUENCE_ITERATOR_INDEX) != 1:
            return False
        return _read_pointer(id(walker) + SEQUENCE_ITERATOR_SEQUENCE) == id(indexed)
    except Exception:
        return False


def _check_builtin_iterators() -> bool:
    """Compare the type, dict iterator and str offsets above with live objects."""
    try:
        self_iter = ctypes.cast(ctypes.pythonapi.PyObject_SelfIter, ctypes.c_void_p).value
        for made in (iter({}), iter(""), iter("é"), iter(set())):
            if _read_pointer(id(type(made)) + TYPE_ITERNEXT - WORD) != self_iter:  # tp_iter, just before
                return False
        mapping = {1: 2, 3: 4, 5: 6}
        for iterator in (iter(mapping), iter(mapping.values()), iter(mapping.items())):
            next(iterator)
            if _read_ssize(id(iterator) + DICT_ITERATOR_LENGTH) != 2:
                return False
            if _read_pointer(id(iterator) + CONTAINER_ITERATOR_CONTAINER) != id(mapping):
                return False
            if _read_ssize(id(iterator) + DICT_ITERATOR_USED) != 3 or _read_ssize(id(mapping) + DICT_USED) != 3:
                return False
        members = {1, 2}
        walker = iter(members)  # (alive while read: a temporary's memory is freed at once)
        if _read_pointer(id(walker) + CONTAINER_ITERATOR_CONTAINER) != id(members):
            return False
        for text, kind in (("abc", 1), ("é", 1), ("€", 2), ("\U0001f600", 4)):
            expected = hash(text)  # (computed first: then the str holds it)
            if _read_ssize(id(text) + STR_HASH) != expected:
                return False
            state = ctypes.c_uint32.from_address(id(text) + STR_STATE).value
            if (state >> STR_KIND_SHIFT) & 7 != kind or not (state >> STR_COMPACT_BIT) & 1:
                return False
            if (state >> STR_ASCII_BIT) & 1 != (text == "abc") or _read_ssize(id(text) + STR_LENGTH) != len(text):
                return False
            walker = iter(text)
            if _read_pointer(id(walker) + SEQUENCE_ITERATOR_SEQUENCE) != id(text):
                return False
        return True
    except Exception:
        return False


def _check_dict_version() -> bool:
    """Does a dict's word at DICT_VERSION change whenever the dict does (a store, a rebinding, a deletion), and
    only then? (Then a barrier's re-check of the guards on globals is skipped while their dicts' versions stay
    the same: codegen.lower.generic.)"""
    if not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return False
    try:
        mapping = {"a": 1}
        seen = [ctypes.c_uint64.from_address(id(mapping) + DICT_VERSION).value]
        for change in (lambda: mapping.__setitem__("a", 2), lambda: mapping.__setitem__("b", 3), mapping.clear):
            _ = mapping.get("a")
            if ctypes.c_uint64.from_address(id(mapping) + DICT_VERSION).value != seen[-1]:
                return False  # (a read changed it)
            change()
            seen.append(ctypes.c_uint64.from_address(id(mapping) + DICT_VERSION).value)
            if seen[-1] == seen[-2] or seen[-1] == 0:
                return False
        return True
    except Exception:
        return False


def _check_list_allocated() -> bool:
    """Is a list's room for items (what list.__sizeof__ counts) at LIST_ALLOCATED? (Then native code appends
    in place while there is room, as list.append does.)"""
    try:
        probe: list[float] = []
        for k in range(7):
            probe.append(k + 0.5)
            allocated = (probe.__sizeof__() - list.__basicsize__) // WORD
            if _read_ssize(id(probe) + LIST_ALLOCATED) != allocated or allocated < len(probe):
                return False
        return True
    except Exception:
        return False


# dicts (PyDictObject, PyDictKeysObject of 3.11 and 3.12: checked below by looking keys up in live dicts)
DICT_KEYS = 32  # PyDictObject.ma_keys
DICT_VALUES = 40  # PyDictObject.ma_values: NULL unless the table is split (an instance's __dict__)
KEYS_LOG2_SIZE = 8  # PyDictKeysObject.dk_log2_size (uint8)
KEYS_LOG2_INDEX_BYTES = 9  # dk_log2_index_bytes (uint8)
KEYS_KIND = 10  # dk_kind (uint8): DICT_KEYS_UNICODE (1) for a table of str keys only
KEYS_UNICODE = 1
KEYS_INDICES = 32  # dk_indices: 1, 2, 4 or 8 bytes per slot; then the entries, (key, value) pairs of str keys
ENTRY_EMPTY = -1  # an index slot never used (DKIX_EMPTY): the probe ends there


def probe_dict(mapping: dict, key: str) -> int | None:
    """What native code finds for an exact str key in a combined table of str keys, read as it reads it (the
    address of the value, 0 if the key is missing), or None where it asks the C-API (a split or general
    table, a hash not computed yet, an equal key that is another object)."""
    keys = _read_pointer(id(mapping) + DICT_KEYS)
    if _read_pointer(id(mapping) + DICT_VALUES) or ctypes.c_uint8.from_address(keys + KEYS_KIND).value != KEYS_UNICODE:
        return None
    key_hash = _read_ssize(id(key) + STR_HASH)
    if key_hash == -1:
        return None
    log2_size = ctypes.c_uint8.from_address(keys + KEYS_LOG2_SIZE).value
    log2_index_bytes = ctypes.c_uint8.from_address(keys + KEYS_LOG2_INDEX_BYTES).value
    width = log2_index_bytes - log2_size
    index_type = (ctypes.c_int8, ctypes.c_int16, ctypes.c_int32, ctypes.c_int64)[width]
    entries = keys + KEYS_INDICES + (1 << log2_index_bytes)
    mask = (1 << log2_size) - 1
    perturb = key_hash % 2**64
    i = key_hash & mask
    while True:
        ix = index_type.from_address(keys + KEYS_INDICES + (i << width)).value
        if ix == ENTRY_EMPTY:
            return 0
        if ix >= 0:
            found = _read_pointer(entries + ix * 2 * WORD)
            if found == id(key):
                return _read_pointer(entries + ix * 2 * WORD + WORD)
            if _read_ssize(found + STR_HASH) == key_hash:
                return None
        perturb >>= 5
        i = (i * 5 + perturb + 1) & mask


def _check_dict_probe() -> bool:
    """Does probe_dict find what dicts hold, in tables of every index width (and miss what they do not)?"""
    try:
        for size in (3, 100, 300, 40000):
            mapping = {f"k{k}": k * 0.5 for k in range(size)}
            del mapping["k1"]  # (a deleted entry: its slot is skipped, not the end)
            for key in list(mapping)[:50] + list(mapping)[-50:]:
                if probe_dict(mapping, key) != id(mapping[key]):
                    return False
            for missing in ("k1", "absent", f"k{size}"):
                hash(missing)
                if probe_dict(mapping, missing) not in (0, None):
                    return False
        return probe_dict({1: 2}, "k") is None
    except Exception:
        return False


def _small_int_stride() -> int:
    """The distance between the objects of consecutive cached small ints, if CPython keeps them in one array
    (then boxing one is an address computation: ``codegen.lower.objects``); 0 if not."""
    stride = id(SMALL_INT_MIN + 1) - id(SMALL_INT_MIN)
    ok = stride > 0 and all(
        id(k) == id(SMALL_INT_MIN) + (k - SMALL_INT_MIN) * stride for k in range(SMALL_INT_MIN, SMALL_INT_MAX + 1)
    )
    return stride if ok else 0


LAYOUT_OK = _check_layouts()
LIST_APPEND_OK = LAYOUT_OK and _check_list_allocated()
SMALL_INT_STRIDE = _small_int_stride() if LAYOUT_OK else 0
ITERATORS_OK = LAYOUT_OK and _check_iterators() and _check_builtin_iterators()
DICT_PROBE_OK = ITERATORS_OK and _check_dict_probe()  # (the str hash's place checked with the iterators')
SMALL_INTS_OK = LAYOUT_OK and _check_small_ints()
DICT_VERSION_OK = LAYOUT_OK and _check_dict_version()
JIT_SUPPORTED = LAYOUT_OK and sys.implementation.name == "cpython"


CELL_CONTENTS = 16  # offset of PyCellObject.ob_ref (checked below)
# offsets of PyFunctionObject.func_globals, func_code, func_defaults, func_closure (3.11 to 3.13; checked below)
FUNCTION_GLOBALS, FUNCTION_CODE, FUNCTION_DEFAULTS, FUNCTION_CLOSURE = 16, 48, 56, 72


def _check_functions() -> bool:
    """Compare the function and cell offsets above with a live closure."""
    probe = [1.5]

    def closure(x: float = 2.5) -> list[float]:
        return probe

    try:
        cells = closure.__closure__
        fields = {
            FUNCTION_GLOBALS: closure.__globals__,
            FUNCTION_CODE: closure.__code__,
            FUNCTION_DEFAULTS: closure.__defaults__,
            FUNCTION_CLOSURE: cells,
        }
        if cells is None or any(_read_pointer(id(closure) + at) != id(field) for at, field in fields.items()):
            return False
        return _read_pointer(id(cells[0]) + CELL_CONTENTS) == id(probe)
    except Exception:
        return False


FUNCTIONS_OK = LAYOUT_OK and _check_functions()

METHOD_FUNCTION, METHOD_SELF = 16, 24  # offsets of PyMethodObject.im_func and im_self (checked below)


def _check_methods() -> bool:
    probe = _Indexed()
    bound = probe.__getitem__
    try:
        return _read_pointer(id(bound) + METHOD_FUNCTION) == id(bound.__func__) and _read_pointer(
            id(bound) + METHOD_SELF
        ) == id(probe)
    except Exception:
        return False


METHODS_OK = LAYOUT_OK and _check_methods()

# a method descriptor (PyMethodDescrObject: PyDescr_COMMON, then d_method) and its PyMethodDef's ml_meth and
# ml_flags (3.11 to 3.13; checked below): native code calls a str method's C function as CPython's specialized
# CALL of a method descriptor does (jit.recorder.pure_methods), without PyObject_Vectorcall's dispatch
DESCRIPTOR_METHOD, METHOD_DEF_FUNCTION, METHOD_DEF_FLAGS = 40, 8, 16
METH_VARARGS, METH_KEYWORDS, METH_NOARGS, METH_O, METH_FASTCALL = 0x1, 0x2, 0x4, 0x8, 0x80


def method_flags(descriptor: object) -> int | None:
    """A method descriptor's ml_flags (None where the layout was not confirmed at import)."""
    if not DESCRIPTORS_OK:
        return None
    definition = _read_pointer(id(descriptor) + DESCRIPTOR_METHOD)
    return ctypes.c_int.from_address(definition + METHOD_DEF_FLAGS).value


def _check_descriptors() -> bool:
    """Compare the offsets above with str.upper (METH_NOARGS) and str.partition (METH_O): their names, flags, and
    the C function str.upper's PyMethodDef gives, which ctypes calls as CPython would."""
    try:
        for descriptor, flag in ((str.upper, METH_NOARGS), (str.partition, METH_O)):
            definition = _read_pointer(id(descriptor) + DESCRIPTOR_METHOD)
            name = ctypes.c_char_p.from_address(definition).value
            flags = ctypes.c_int.from_address(definition + METHOD_DEF_FLAGS).value
            if name != descriptor.__name__.encode() or flags & ~(METH_KEYWORDS | 0x10) != flag:  # (0x10: METH_CLASS)
                return False
        definition = _read_pointer(id(str.upper) + DESCRIPTOR_METHOD)
        function = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object, ctypes.c_void_p)(
            _read_pointer(definition + METHOD_DEF_FUNCTION)
        )
        return function("probe", None) == "PROBE"
    except Exception:
        return False


DESCRIPTORS_OK = LAYOUT_OK and _check_descriptors()


BYTES_DATA = bytes.__basicsize__ - 1  # offset of PyBytesObject.ob_sval
RANGE_FIELDS = (16, 24, 32)  # offsets of a range object's start, stop and step (int objects)


def _range_iterator_layout() -> tuple[int, int, int] | None:
    """Where a range iterator keeps its state, as (offset of the index of the next item, or -1 if the start
    moves instead; offset of the start; offset of the step): CPython 3.11 keeps the range's start and counts
    an index, 3.12 on advance the start. Probed on a live iterator; None if neither layout is found (the
    hand-off then reads ranges through Python)."""
    if not LAYOUT_OK:
        return None
    try:
        rng = range(5, 100, 7)
        it = iter(rng)
        next(it), next(it)
        words = ctypes.c_long * ((type(it).__basicsize__ - 16) // WORD)
        fields = list(words.from_address(id(it) + 16))
        pointers = [_read_pointer(id(rng) + offset) for offset in RANGE_FIELDS]
        if pointers != [id(rng.start), id(rng.stop), id(rng.step)]:
            return None
        if fields == [2, 5, 7, 14]:
            return 16, 24, 32
        if fields == [19, 7, 12]:
            return -1, 16, 24
    except Exception:
        pass
    return None


RANGE_ITERATOR = _range_iterator_layout()
