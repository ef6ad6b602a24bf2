"""Attributes of plain instances of Python classes: where the running CPython keeps them, and where one is found.

CPython 3.11 to 3.13 keep the attributes of an instance of an ordinary class (no ``__slots__``) not in a dict
but in an array of values indexed by the position of the name in the class's *shared keys*
(``ht_cached_keys``, append-only: a name keeps its index for the class's life), until something makes the
instance a real dict (reading its ``__dict__`` in 3.11 and 3.12, replacing it, too many names). Where that
array is differs per version (``VALUES``):

* 3.11: a pointer in the word 4 words before the object (``_PyObject_ValuesPointer``), NULL once the
  instance has a real dict;
* 3.12: the word 3 words before it holds the dict, or the values' address - 1 (odd: ``_PyDictOrValues``);
* 3.13: the values follow the object itself (at ``tp_basicsize``), after a 4-byte header whose last byte
  (``valid``) is cleared once they no longer hold the attributes.

A ``__slots__`` member (also ``@dataclass(slots=True)``) is a pointer at a fixed offset in the object, read by
its member descriptor (NULL while unset). Native code reads either directly (``codegen.lower.attributes``),
guarded by the class's version tag (``tp_version_tag``: any change of the class or of a class in its MRO clears
it), so that what the lookup finds on the class (nothing, a plain class attribute, a method: never a data
descriptor) is what it found while recording.

Every offset here is checked against live objects at import (``LAYOUT_OK``); where a check fails, attribute
loads stay on the generic path (``PyObject_GetAttr``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import sys
import types
from typing import Any

WORD = 8
TYPE_BASICSIZE = 32  # PyTypeObject.tp_basicsize
TYPE_FLAGS = 168  # PyTypeObject.tp_flags
TYPE_VERSION_TAG = 384  # PyTypeObject.tp_version_tag (unsigned int): 0 once the class changed
TYPE_NEW = 312  # PyTypeObject.tp_new
IS_ABSTRACT = 1 << 20  # Py_TPFLAGS_IS_ABSTRACT
MANAGED_DICT = 1 << 4  # Py_TPFLAGS_MANAGED_DICT: the instance's dict (or values) before the object
HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE
INLINE_VALUES = 1 << 2  # (3.13) Py_TPFLAGS_INLINE_VALUES: the values follow the object
KEYS_KIND = 10  # PyDictKeysObject.dk_kind
KEYS_SPLIT = 2  # DICT_KEYS_SPLIT: a class's shared keys
KEYS_LOG2_INDEX_BYTES = 9
KEYS_NENTRIES = 24  # dk_nentries
KEYS_INDICES = 32  # then the entries: (key, value) pairs
MEMBER_DESCR_MEMBER = 40  # PyMemberDescrObject.d_member (PyMemberDef *)
MEMBER_TYPE = 8  # PyMemberDef.type (int)
MEMBER_OFFSET = 16  # PyMemberDef.offset (Py_ssize_t)
T_OBJECT_EX = 16  # a __slots__ member: AttributeError while NULL

#: where an instance's values are: "pointer" (3.11), "tagged" (3.12), "inline" (3.13), None: not handled
VALUES: str | None = {(3, 11): "pointer", (3, 12): "tagged", (3, 13): "inline"}.get(sys.version_info[:2])
VALUES_POINTER = -4 * WORD  # 3.11: the values' address, or NULL
DICT_OR_VALUES = -3 * WORD  # 3.12: the dict, or the values' address - 1
INLINE_VALID = 3  # 3.13: the byte of the inline values' header set while they hold the attributes
INLINE_ITEMS = WORD  # 3.13: the values after their header
CACHED_KEYS: int | None = None  # PyHeapTypeObject.ht_cached_keys (found at import: after ht_qualname)

_MISSING = object()

#: the types whose objects free without running Python code (no finalizer, nothing inside to release): what a
#: native attribute store may drop (jit.recorder.attributes decides by them, codegen.lower.attributes checks them)
FREED_PLAINLY = (int, float, bool, str, type(None))


@dataclasses.dataclass(frozen=True, eq=False)
class ClassAttr:
    """An attribute of instances of klass (exactly that class), while its version tag is version: in the
    instance's values at index (``index``), or a ``__slots__`` member at offset (``offset``)."""

    klass: type
    version: int
    name: str
    index: int = -1
    offset: int = -1
    # (a method of klass: ``find_method``) the class's shared keys and their entries, where no instance holds name
    keys: int = 0
    nentries: int = -1
    # (``find_in_dict``) in the dict the instance holds its attributes in (a real dict: no values array)
    in_dict: bool = False

    def where(self) -> str:
        if self.in_dict:
            return "its dict"
        if self.index >= 0:
            return f"values[{self.index}]"
        if self.offset >= 0:
            return f"slot +{self.offset}"
        return f"method, shared keys {self.keys:#x} of {self.nentries}" if self.keys else "method, no instance dict"


def _pointer(address: int) -> int:
    return ctypes.c_void_p.from_address(address).value or 0


def _object(address: int) -> Any:
    return ctypes.cast(ctypes.c_void_p(address), ctypes.py_object).value


def version_of(klass: type) -> int:
    return ctypes.c_uint32.from_address(id(klass) + TYPE_VERSION_TAG).value


def values_address(obj: Any) -> int:
    """The address of obj's values array as native code finds it, 0 where it has none (a real dict)."""
    klass = type(obj)
    if VALUES == "pointer":
        return _pointer(id(obj) + VALUES_POINTER)
    if VALUES == "tagged":
        word = _pointer(id(obj) + DICT_OR_VALUES)
        return word + 1 if word & 1 else 0
    if VALUES == "inline":
        header = id(obj) + klass.__basicsize__
        return header + INLINE_ITEMS if ctypes.c_uint8.from_address(header + INLINE_VALID).value else 0
    return 0


def _shared_index(klass: type, name: str) -> int:
    """The index of name in klass's shared keys (-1 if it is not there)."""
    assert CACHED_KEYS is not None
    keys = _pointer(id(klass) + CACHED_KEYS)
    if not keys or ctypes.c_uint8.from_address(keys + KEYS_KIND).value != KEYS_SPLIT:
        return -1
    entries = keys + KEYS_INDICES + (1 << ctypes.c_uint8.from_address(keys + KEYS_LOG2_INDEX_BYTES).value)
    for index in range(ctypes.c_ssize_t.from_address(keys + KEYS_NENTRIES).value):
        key = _pointer(entries + 2 * WORD * index)
        if key and (key == id(name) or (type(_object(key)) is str and _object(key) == name)):
            return index
    return -1


def _lookup(klass: type, name: str) -> Any:
    """What CPython's _PyType_Lookup finds for name along klass's MRO (``_MISSING`` if nothing)."""
    for base in klass.__mro__:
        found = base.__dict__.get(name, _MISSING)
        if found is not _MISSING:
            return found
    return _MISSING


def _plain_lookup(klass: type) -> bool:
    """Does klass look its instances' attributes up as object does (no __getattribute__ or __getattr__ of its
    own, nor of a base, written in Python or C)?"""
    if klass.__getattribute__ is not object.__getattribute__:  # type: ignore[comparison-overlap]
        return False
    return all("__getattr__" not in base.__dict__ for base in klass.__mro__)


def find(obj: Any, name: str) -> ClassAttr | None:
    """Where obj.name is, if native code can read it directly as CPython finds it (else None: the generic path).
    Reads nothing that makes CPython give obj a real dict."""
    klass = type(obj)
    if not LAYOUT_OK or not isinstance(name, str) or not klass.__flags__ & HEAPTYPE or not _plain_lookup(klass):
        return None
    found = _lookup(klass, name)
    version = version_of(klass)  # (the lookups above gave klass a tag if it had none)
    if not version:
        return None
    if type(found) is types.MemberDescriptorType and found.__objclass__ in klass.__mro__:
        member = _pointer(id(found) + MEMBER_DESCR_MEMBER)
        if not member or ctypes.c_int.from_address(member + MEMBER_TYPE).value != T_OBJECT_EX:
            return None
        offset = ctypes.c_ssize_t.from_address(member + MEMBER_OFFSET).value
        return ClassAttr(klass, version, name, offset=offset) if _pointer(id(obj) + offset) else None
    if found is not _MISSING and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
        return None  # (a data descriptor: a property, __dict__, ...: it decides)
    if not klass.__flags__ & MANAGED_DICT or VALUES is None:
        return None
    if VALUES == "inline" and not klass.__flags__ & INLINE_VALUES:
        return None
    values = values_address(obj)
    index = _shared_index(klass, name)
    if not values or index < 0 or not _pointer(values + WORD * index):
        return None  # (a real dict, or no such instance attribute: a class attribute, or AttributeError)
    return ClassAttr(klass, version, name, index=index)


def find_in_dict(obj: Any, name: str) -> ClassAttr | None:
    """Where obj.name is, for an instance whose attributes a real dict holds (its values array given up: a deep
    copy's, an unpickled one's, one whose `__dict__` was updated): found in that dict, as CPython finds it there
    where its class has no data descriptor of that name (else None: ``find``, or the generic path). The dict's
    pointer is the word 3 before the object on every layout this knows (3.11's managed dict, 3.12's untagged
    dict-or-values, 3.13's managed dict)."""
    klass = type(obj)
    if not LAYOUT_OK or not isinstance(name, str) or not klass.__flags__ & HEAPTYPE or not _plain_lookup(klass):
        return None
    if not klass.__flags__ & MANAGED_DICT or VALUES is None or values_address(obj):
        return None
    word = _pointer(id(obj) + DICT_OR_VALUES)
    if not word or word & 1 or type(_object(word)) is not dict:
        return None
    found = _lookup(klass, name)
    if found is not _MISSING and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
        return None  # (a data descriptor: it decides)
    version = version_of(klass)
    if not version or name not in _object(word):
        return None
    return ClassAttr(klass, version, name, in_dict=True)


def find_store(obj: Any, name: str) -> ClassAttr | None:
    """Where `obj.name = value` replaces the value ``find`` finds, if native code can store it there as CPython
    does: its class also sets attributes as object does (no ``__setattr__`` of its own or of a base, such as a
    frozen dataclass's)."""
    if type(obj).__setattr__ is not object.__setattr__:  # type: ignore[comparison-overlap]
        return None
    return find(obj, name)


def find_method(obj: Any, name: str) -> tuple[ClassAttr, types.FunctionType] | None:
    """`obj.name` as CPython's LOAD_ATTR finds it for a method call, if it is a plain Python function on obj's class
    that native code can tell no instance attribute hides: where instances have no dict at all (``__slots__``
    only), or hold their attributes in values whose shared keys (append-only) do not name it. Then the class's
    version, the instance's values (no real dict) and the number of shared keys, guarded, keep it so."""
    return _on_class(obj, name, (types.FunctionType,))


#: the types of class attributes read through an instance as constants (``find_class_value``): immutable, and no
#: descriptor
CLASS_VALUE_TYPES = (int, float, bool, str, type(None))


def find_class_value(obj: Any, name: str) -> tuple[ClassAttr, Any] | None:
    """`obj.name` where CPython finds a class attribute holding a number, str or None (`self.fee`, `self.LIMIT`),
    which no instance attribute can hide (as ``find_method`` says): a constant while the class's version, the
    instance's values and its shared keys, guarded, stay as they are."""
    return _on_class(obj, name, CLASS_VALUE_TYPES)


def _on_class(obj: Any, name: str, types_: tuple[type, ...]) -> tuple[ClassAttr, Any] | None:
    """What find_method and find_class_value find: name on obj's class, of one of types_ exactly."""
    klass = type(obj)
    if not LAYOUT_OK or not klass.__flags__ & HEAPTYPE or not _plain_lookup(klass):
        return None
    found = _lookup(klass, name)
    version = version_of(klass)
    if type(found) not in types_ or not version:
        return None
    if not klass.__flags__ & MANAGED_DICT:
        if klass.__dictoffset__:  # (a dict of its own at an offset: not looked into natively)
            return None
        return ClassAttr(klass, version, name), found
    if VALUES is None or (VALUES == "inline" and not klass.__flags__ & INLINE_VALUES):
        return None
    assert CACHED_KEYS is not None
    keys = _pointer(id(klass) + CACHED_KEYS)
    if not values_address(obj) or not keys or _shared_index(klass, name) >= 0:
        return None
    nentries = ctypes.c_ssize_t.from_address(keys + KEYS_NENTRIES).value
    return ClassAttr(klass, version, name, keys=keys, nentries=nentries), found


def lookup_in_class(klass: type, name: str) -> Any:
    """What CPython's type lookup finds for name along klass's MRO (None if nothing)."""
    found = _lookup(klass, name)
    return None if found is _MISSING else found


def find_operator(klass: type, name: str) -> tuple[ClassAttr, types.FunctionType] | None:
    """The plain Python function an operator's special method name (`__add__`) finds on klass, an ordinary class
    (special methods are looked up on the type, never the instance), with klass's version: guarded, it keeps the
    method so."""
    if not LAYOUT_OK or not klass.__flags__ & HEAPTYPE or type(klass) is not type:
        return None
    found = _lookup(klass, name)
    version = version_of(klass)
    if type(found) is not types.FunctionType or not version:
        return None
    return ClassAttr(klass, version, name), found


def find_property(obj: Any, name: str) -> tuple[ClassAttr, types.FunctionType] | None:
    """`obj.name` where CPython finds a property on obj's class whose getter is a plain Python function: the
    getter, called on obj. A property is a data descriptor, so no instance attribute can hide it: the class's
    version, guarded, keeps it so (replacing or deleting it on the class changes the version)."""
    klass = type(obj)
    if not LAYOUT_OK or not klass.__flags__ & HEAPTYPE or not _plain_lookup(klass):
        return None
    found = _lookup(klass, name)
    version = version_of(klass)
    if type(found) is not property or type(found.fget) is not types.FunctionType or not version:
        return None
    return ClassAttr(klass, version, name), found.fget


def find_constructor(klass: Any) -> tuple[ClassAttr, types.FunctionType] | None:
    """Where `klass(...)` can be made natively as CPython's type call makes it: klass an ordinary class (a heap
    type whose metaclass is type, not abstract) whose instances object.__new__ makes (its ``tp_new`` slot is
    object's), with a plain Python ``__init__``, no finalizer (``__del__``), attributes looked up and set as
    object does. Then native code calls that ``tp_new`` and the recorder inlines ``__init__`` on the new
    instance; the class's version tag (a ``ClassAttr`` named "__init__") keeps all of that so. None: a generic
    call."""
    if not NEW_OK or type(klass) is not type or not klass.__flags__ & HEAPTYPE or klass.__flags__ & IS_ABSTRACT:
        return None
    if _lookup(klass, "__new__") is not object.__dict__["__new__"] or _lookup(klass, "__del__") is not _MISSING:
        return None
    init = _lookup(klass, "__init__")
    if type(init) is not types.FunctionType or not _plain_lookup(klass):
        return None
    if klass.__setattr__ is not object.__setattr__:  # type: ignore[comparison-overlap]
        return None
    if _pointer(id(klass) + TYPE_NEW) != _pointer(id(object) + TYPE_NEW):
        return None
    version = version_of(klass)
    return (ClassAttr(klass, version, "__init__"), init) if version else None


def iterated_as_tuple(klass: type) -> ClassAttr | None:
    """Where CPython unpacks an instance of klass, a subclass of tuple (a namedtuple, a structseq), exactly as it
    unpacks a tuple: its ``__iter__`` is tuple's own (so ``tp_iter`` is tuple's iterator, which reads the object's
    size and items in place, as a tuple's; its ``__len__`` and ``__getitem__`` play no part). The class's version tag
    (a ``ClassAttr`` named "__iter__") keeps that so: assigning ``__iter__`` to it or to a base changes it. None:
    unpacked generically."""
    if not LAYOUT_OK or klass is tuple or tuple not in klass.__mro__:
        return None
    if _lookup(klass, "__iter__") is not tuple.__dict__["__iter__"]:
        return None
    type.__getattribute__(klass, "__iter__")  # (CPython's lookup gives klass a version tag if it has none)
    version = version_of(klass)
    return ClassAttr(klass, version, "__iter__") if version else None


def stores_plainly(klass: type, name: str) -> bool:
    """Does `obj.name = value` on an instance of klass (whose lookups and stores are object's) store into the
    instance (its values or dict, or a ``__slots__`` member) without running Python code: no data descriptor of
    the class takes it, but a ``__slots__`` member's? (A new instance's store, ``_STORE_ATTR_FRESH``.)"""
    found = _lookup(klass, name)
    if type(found) is types.MemberDescriptorType and found.__objclass__ in klass.__mro__:
        member = _pointer(id(found) + MEMBER_DESCR_MEMBER)
        return bool(member) and ctypes.c_int.from_address(member + MEMBER_TYPE).value == T_OBJECT_EX
    if found is not _MISSING and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")):
        return False
    return bool(klass.__flags__ & MANAGED_DICT or klass.__dictoffset__)


def value_of(obj: Any, where: ClassAttr) -> Any:
    """obj's attribute as native code reads it (found by ``find`` or ``find_in_dict``)."""
    if where.in_dict:
        return _object(_pointer(id(obj) + DICT_OR_VALUES))[where.name]
    if where.index >= 0:
        return _object(_pointer(values_address(obj) + WORD * where.index))
    return _object(_pointer(id(obj) + where.offset))


def _find_cached_keys() -> int | None:
    """PyHeapTypeObject.ht_cached_keys: the word after ht_qualname, found by the class's own __qualname__."""

    class _Probe_qualname_:
        pass

    qualname = _Probe_qualname_.__qualname__
    for offset in range(TYPE_VERSION_TAG, 2048, WORD):
        if _pointer(id(_Probe_qualname_) + offset) == id(qualname):
            return offset + WORD
    return None


def _check() -> bool:
    """Read live instances as native code will, and compare with what CPython says."""
    global CACHED_KEYS
    if VALUES is None or ctypes.sizeof(ctypes.c_void_p) != WORD:
        return False
    try:
        CACHED_KEYS = _find_cached_keys()
        if CACHED_KEYS is None:
            return False

        class Probe:
            def __init__(self) -> None:
                self.a = 1.5
                self.b = "x"

        class Slotted:
            __slots__ = ("p", "q")

        if _pointer(id(Probe) + TYPE_BASICSIZE) != Probe.__basicsize__:
            return False
        if ctypes.c_ulong.from_address(id(Probe) + TYPE_FLAGS).value != Probe.__flags__:
            return False
        first, second = Probe(), Probe()
        second.b = "y"
        version = version_of(Probe)
        if not version:
            return False
        for obj in (first, second):
            for name in ("a", "b"):
                where = find(obj, name)
                if where is None or where.version != version or value_of(obj, where) is not getattr(obj, name):
                    return False
        Probe.c = 0  # (any change of the class clears its tag)
        if version_of(Probe):
            return False
        del first.a  # (deleted: the value's word NULL, found no more)
        if find(first, "a") is not None or find(first, "b") is None:
            return False
        slotted = Slotted()
        slotted.q = 2.5
        where = find(slotted, "q")
        if where is None or value_of(slotted, where) is not slotted.q or find(slotted, "p") is not None:
            return False
        return True
    except Exception:
        return False


LAYOUT_OK = True  # (so that find() runs during the check)
LAYOUT_OK = _check()


def _check_new() -> bool:
    """Is ``TYPE_NEW`` the ``tp_new`` slot: object's in a plain class, another in a class defining __new__?"""

    class Plain:
        pass

    class Made:
        def __new__(cls) -> Any:
            return super().__new__(cls)

    try:
        made = _pointer(id(object) + TYPE_NEW)
        return bool(made) and _pointer(id(Plain) + TYPE_NEW) == made and _pointer(id(Made) + TYPE_NEW) != made
    except Exception:
        return False


#: may native code make instances through their class's tp_new slot (``find_constructor``)?
NEW_OK = LAYOUT_OK and _check_new()
