"""Kinds: the static types of values in traces, which are also the tags of slots in the native frame buffer.

A trace is specialized on the kinds it observed; native code holds an INT as i64, a FLOAT as double, a BOOL as
i1 (0/1 in the buffer), NONE and UNBOUND as nothing, and object kinds as a PyObject pointer.

NumPy's kinds exist only once the program imported NumPy (``jit.arrays``): ARRAY is an exact ``numpy.ndarray``
of a dtype, dimension and layout native code handles (a pointer; its spec is guarded at the trace's entry), and
NP_FLOAT64, NP_FLOAT32, NP_INT64, NP_INT32, NP_UINT8 and NP_BOOL are NumPy's scalars (``numpy.float64`` held as
a double, ``numpy.float32`` as a float, the NumPy ints as an i64 within their dtype's range with NumPy's
arithmetic, ``numpy.bool`` as an i1), boxed back into NumPy's types.
"""

from __future__ import annotations

import enum
import sys
from typing import Any

from jit import arrays
from runtime.frame import UNBOUND

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class Kind(enum.IntEnum):
    INT = 1
    FLOAT = 2
    BOOL = 3
    NONE = 4
    UNBOUND = 5
    LIST = 6
    TUPLE = 7
    STR = 8  # an exact str (borrowed: kept alive by a container, a constant or the frame)
    DICT = 9  # an exact dict
    OBJECT = 10  # any other object (a big int, a str, a module, a function, ...): only moved or compared by identity
    RANGE = 11  # a virtual range(...), not yet split into its loop's hidden slots; never in the buffer (a range
    # object anywhere else, in a variable or a constant, is an OBJECT)
    APPEND_METHOD = 12  # `lst.append` about to be called: held as the list's pointer, re-bound when boxed
    DICT_GET_METHOD = 13  # `d.get` about to be called: held as the dict's pointer, likewise
    # an exact int held as an object: a result that left 64 bits (or an operand on its way to one), on the
    # operand stack or in a slot (a local past 64 bits). Native code owns its reference (codegen.ownership); a
    # slot tagged INT_OBJECT in the buffer always holds a reference of the buffer's own (see OWNED)
    INT_OBJECT = 14
    # an int held as an i128: a result past 64 bits whose magnitude the recorder bounds below 2**127 (a
    # product of two ints, plus a few more), on its way back to 64 bits (typically `% m`). Only ever an
    # operand-stack temporary; at an exit its high word goes to the buffer's wide area (codegen.abi)
    WIDE_INT = 15
    ARRAY = 16  # an exact numpy.ndarray native code handles (jit.arrays.spec_of); borrowed, like lists
    NP_FLOAT64 = 17  # a numpy.float64, held as a double
    NP_INT64 = 18  # a numpy.int64, held as an i64 (NumPy's arithmetic: leaves native code where it would warn)
    NP_BOOL = 19  # a numpy.bool, held as an i1
    ARRAY_INDEX = 20  # `a[i]` of a multi-dimensional array, or `(i, j)` subscripting one: never in the buffer
    NP_FLOAT32 = 21  # a numpy.float32: an LLVM float in registers, its (exact) double in the buffer
    NP_INT32 = 22  # a numpy.int32, held as an i64 in its range (leaves native code where NumPy would warn)
    NP_UINT8 = 23  # a numpy.uint8, likewise

    @property
    def is_number(self) -> bool:
        return self in (Kind.INT, Kind.FLOAT, Kind.BOOL)

    @property
    def is_numpy_scalar(self) -> bool:
        return self in (Kind.NP_FLOAT64, Kind.NP_INT64, Kind.NP_BOOL, Kind.NP_FLOAT32, Kind.NP_INT32, Kind.NP_UINT8)

    @property
    def is_numpy_int(self) -> bool:
        """A NumPy integer scalar: held as an i64 within its dtype's range (``NUMPY_INT_RANGES``)."""
        return self in (Kind.NP_INT64, Kind.NP_INT32, Kind.NP_UINT8)

    @property
    def is_double(self) -> bool:
        """Held as an LLVM double (a Python float or a numpy.float64)."""
        return self in (Kind.FLOAT, Kind.NP_FLOAT64)

    @property
    def is_pointer(self) -> bool:
        return self in POINTER_KINDS

    @property
    def short(self) -> str:
        return _SHORT[self]


#: the kinds whose values are exactly of one builtin class (no subclass): the class
EXACT_TYPES: dict[Kind, type] = {
    Kind.INT: int,
    Kind.FLOAT: float,
    Kind.BOOL: bool,
    Kind.LIST: list,
    Kind.TUPLE: tuple,
    Kind.STR: str,
    Kind.DICT: dict,
    Kind.NONE: type(None),
}

POINTER_KINDS = frozenset(
    {
        Kind.LIST,
        Kind.TUPLE,
        Kind.STR,
        Kind.DICT,
        Kind.OBJECT,
        Kind.APPEND_METHOD,
        Kind.DICT_GET_METHOD,
        Kind.INT_OBJECT,
        Kind.ARRAY,
    }
)
_SHORT = {
    Kind.INT: "int",
    Kind.FLOAT: "float",
    Kind.BOOL: "bool",
    Kind.NONE: "None",
    Kind.UNBOUND: "unbound",
    Kind.LIST: "list",
    Kind.TUPLE: "tuple",
    Kind.STR: "str",
    Kind.DICT: "dict",
    Kind.OBJECT: "object",
    Kind.RANGE: "range",
    Kind.APPEND_METHOD: "list.append",
    Kind.DICT_GET_METHOD: "dict.get",
    Kind.INT_OBJECT: "int_object",
    Kind.WIDE_INT: "int128",
    Kind.ARRAY: "ndarray",
    Kind.NP_FLOAT64: "np.float64",
    Kind.NP_INT64: "np.int64",
    Kind.NP_BOOL: "np.bool",
    Kind.NP_FLOAT32: "np.float32",
    Kind.NP_INT32: "np.int32",
    Kind.NP_UINT8: "np.uint8",
    Kind.ARRAY_INDEX: "array-index",
}

# marks a buffer tag written by native code: the interpreter re-boxes those slots at an exit
DIRTY = 0x80
# marks a buffer tag whose object native code hands over with a reference of its own (an owned value at an
# exit): the interpreter releases that reference once it holds the object. A slot of an int object the tree's
# entry type map names is tagged OWNED at the entry too (the entry stub or the packer took a reference), and
# released at the end if native code did not write the slot
OWNED = 0x40
KIND_BITS = 0x3F
#: the kinds a slot may hold an owned reference of (an int object, a list, tuple, str or dict built by the trace,
#: the result of a generic operation): where an exit writes such a slot, the reference the buffer held to its
#: former value is released if its tag says so (codegen.ownership); what an inner tree's exit wrote there is
#: reloaded with a reference of the trace's own (jit.recorder)
MAY_BE_OWNED = frozenset({Kind.INT_OBJECT, Kind.LIST, Kind.TUPLE, Kind.STR, Kind.DICT, Kind.OBJECT, Kind.ARRAY})

_BY_TYPE: dict[type, Kind] = {
    float: Kind.FLOAT,
    bool: Kind.BOOL,
    type(None): Kind.NONE,
    list: Kind.LIST,
    tuple: Kind.TUPLE,
    str: Kind.STR,
    dict: Kind.DICT,
}


# NumPy's scalar types by kind, once NumPy is registered (the types native code boxes its scalars into)
NUMPY_SCALARS: dict[Kind, type] = {}
# the element kind of an array of each dtype (dtypes whose scalars have no kind yet are read as nothing)
ELEMENT_KINDS: dict[str, Kind] = {
    "float64": Kind.NP_FLOAT64,
    "int64": Kind.NP_INT64,
    "bool": Kind.NP_BOOL,
    "float32": Kind.NP_FLOAT32,
    "int32": Kind.NP_INT32,
    "uint8": Kind.NP_UINT8,
}
# the kinds of NumPy's values (an entry stub, codegen.entry, handles none of them)
NUMPY_KINDS = frozenset(
    {
        Kind.ARRAY,
        Kind.NP_FLOAT64,
        Kind.NP_INT64,
        Kind.NP_BOOL,
        Kind.NP_FLOAT32,
        Kind.NP_INT32,
        Kind.NP_UINT8,
        Kind.ARRAY_INDEX,
    }
)
# the values each NumPy integer kind holds
NUMPY_INT_RANGES: dict[Kind, tuple[int, int]] = {
    Kind.NP_INT64: (INT64_MIN, INT64_MAX),
    Kind.NP_INT32: (-(2**31), 2**31 - 1),
    Kind.NP_UINT8: (0, 255),
}
_numpy: dict[str, Any] = {"ndarray": None, "module": None}


def _register_numpy() -> bool:
    """Give NumPy's types their kinds, once the program imported a NumPy native code can handle."""
    np = arrays.numpy_module()
    if np is None or _numpy["module"] is np:
        return False
    _numpy["module"] = np
    _numpy["ndarray"] = np.ndarray
    scalars = (
        (Kind.NP_FLOAT64, np.float64),
        (Kind.NP_INT64, np.int64),
        (Kind.NP_BOOL, np.bool_),
        (Kind.NP_FLOAT32, np.float32),
        (Kind.NP_INT32, np.int32),
        (Kind.NP_UINT8, np.uint8),
    )
    for kind, scalar in scalars:
        NUMPY_SCALARS[kind] = scalar
        _BY_TYPE[scalar] = kind
    return True


class _Indexable:
    def __getitem__(self, index: int) -> Any:
        raise IndexError(index)


#: the iterator CPython makes of an object with __getitem__ but no __iter__ (an ndarray's: NumPy's tp_iter makes
#: one), laid out as a list iterator (``codegen.abi``)
SEQUENCE_ITERATOR = type(iter(_Indexable()))


def by_index(value: Any) -> bool:
    """Does tier 1 iterate value by index (``for x in value``: the sequence and an index in the loop's hidden
    slots, exactly what its iterator does step by step)? Exact lists and tuples, and exact ndarrays of one
    dimension or more (whose iterator indexes them: a[0], a[1], ... until the first dimension ends)."""
    t = type(value)
    if t is list or t is tuple:
        return True
    if _numpy["ndarray"] is None and ("numpy" not in sys.modules or not _register_numpy()):
        return False
    return t is _numpy["ndarray"] and value.ndim >= 1


def kind_of(value: Any) -> Kind:
    """The kind of a Python value as native code would hold it (ints only if they fit in i64)."""
    t = type(value)
    if t is int:
        return Kind.INT if INT64_MIN <= value <= INT64_MAX else Kind.OBJECT
    kind = _BY_TYPE.get(t)
    if kind is not None:
        return kind
    if value is UNBOUND:
        return Kind.UNBOUND
    if t is _numpy["ndarray"]:
        return Kind.ARRAY if arrays.spec_of(value) is not None else Kind.OBJECT
    if _numpy["module"] is None and "numpy" in sys.modules and _register_numpy():
        return kind_of(value)
    return Kind.OBJECT
