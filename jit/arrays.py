"""NumPy arrays as native code sees them: the lazy import, the array header's layout (checked on live arrays),
the dtypes native code reads and writes, and the spec an array's trace is specialized on.

tracejit never imports NumPy itself: arrays exist only if the user's program imported ``numpy`` already
(``sys.modules``), and only NumPy 2.x is supported (its scalar promotion rules, NEP 50, and its header). The
offsets of ``PyArrayObject_fields`` and ``PyArray_Descr`` below (numpy/_core/include/numpy/ndarraytypes.h,
NumPy 2.x, 64-bit) are compared with what ctypes reads from live arrays before any array is given a kind;
if one differs, arrays stay plain objects (``layout_ok``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import sys
from typing import Any

# PyArrayObject_fields (after PyObject_HEAD: ob_refcnt, ob_type)
ARRAY_DATA = 16  # char *data
ARRAY_ND = 24  # int nd
ARRAY_DIMENSIONS = 32  # npy_intp *dimensions
ARRAY_STRIDES = 40  # npy_intp *strides
ARRAY_DESCR = 56  # PyArray_Descr *descr
ARRAY_FLAGS = 64  # int flags
# PyArray_Descr (NumPy 2.x)
DESCR_TYPEOBJ = 16  # PyTypeObject *typeobj: the scalar type (numpy.float64, ...)
DESCR_BYTEORDER = 26  # char byteorder: '=', '<', '>' or '|'
DESCR_ELSIZE = 40  # npy_intp elsize
# a NumPy scalar object (PyLongLongScalarObject for numpy.int64): its value after PyObject_HEAD
SCALAR_VALUE = 16
# flags
C_CONTIGUOUS = 0x0001
F_CONTIGUOUS = 0x0002
ALIGNED = 0x0100
WRITEABLE = 0x0400


@dataclasses.dataclass(frozen=True)
class DType:
    """A dtype native code handles: its name, item size, and how an element is held (``storage``: the LLVM
    type of the memory, ``float`` or ``int`` values, signed or not)."""

    name: str
    itemsize: int
    is_float: bool
    signed: bool = True


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("float64", 8, True),
        DType("float32", 4, True),
        DType("int64", 8, False),
        DType("int32", 4, False),
        DType("uint8", 1, False, signed=False),
        DType("bool", 1, False, signed=False),
    )
}
MAX_NDIM = 3


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """What a trace is specialized on for one array: its dtype, number of dimensions, and whether it is
    C-contiguous (then element addresses come from the shape alone; otherwise from the strides). Arrays must
    also be exactly ``numpy.ndarray``, aligned and in the machine's byte order (checked with the spec)."""

    dtype: str
    ndim: int
    contiguous: bool

    def __str__(self) -> str:
        return f"{self.dtype} {self.ndim}-D {'C' if self.contiguous else 'strided'}"

    @staticmethod
    def parse(text: str) -> ArraySpec:
        dtype, ndim, layout = text.split()
        return ArraySpec(dtype, int(ndim.removesuffix("-D")), layout == "C")

    @property
    def item(self) -> DType:
        return DTYPES[self.dtype]


def numpy_module() -> Any:
    """NumPy, if the program imported it, it is 2.x and its array header is as above; else None."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    if _state["checked"] is not np:
        _state["checked"] = np
        _state["ok"] = _check(np)
    return np if _state["ok"] else None


_state: dict[str, Any] = {"checked": None, "ok": False}


def layout_ok() -> bool:
    """Whether arrays can be native (NumPy imported, 2.x, header as expected)."""
    return numpy_module() is not None


def scalars_ok() -> bool:
    """Is the value of a numpy.int64, int32, uint8, float32 and bool where ``SCALAR_VALUE`` says (checked on
    live scalars once)?"""
    np = numpy_module()
    if np is None:
        return False
    if _state.get("scalars_of") is not np:
        probes = [
            (np.int64, ctypes.c_int64, (-(2**63), -1234567890123, 0, 2**63 - 1)),
            (np.int32, ctypes.c_int32, (-(2**31), -5, 2**31 - 1)),
            (np.uint8, ctypes.c_uint8, (0, 7, 255)),
            (np.float32, ctypes.c_float, (-1.5, 0.0, 2.0**100)),
            (np.bool_, ctypes.c_uint8, (False, True)),
        ]
        try:
            ok = all(
                _read(id(scalar) + SCALAR_VALUE, ctype) == value
                for kind, ctype, values in probes
                for value in values
                for scalar in [kind(value)]
            )
        except Exception:
            ok = False
        _state["scalars_of"], _state["scalars_ok"] = np, ok
    return bool(_state["scalars_ok"])


def spec_of(array: Any) -> ArraySpec | None:
    """The spec of an exact ndarray native code can handle (None: the generic path)."""
    dtype = array.dtype
    if dtype.name not in DTYPES or dtype.byteorder == ">" or not 1 <= array.ndim <= MAX_NDIM:
        return None
    flags = array.flags
    if not flags.aligned:
        return None
    return ArraySpec(dtype.name, array.ndim, bool(flags.c_contiguous))


# entries of NumPy's C API table (numpy/_core/include/numpy/__multiarray_api.h, NumPy 2.x): the functions
# native code calls to make arrays (np.empty, np.zeros, np.ones in a loop)
API_NDARRAY_TYPE = 2  # &PyArray_Type: checks the table is the one expected
API_FILL_WITH_SCALAR = 104  # int PyArray_FillWithScalar(PyArrayObject *, PyObject *)
API_ZEROS = 183  # PyObject *PyArray_Zeros(int nd, npy_intp const *dims, PyArray_Descr *descr (stolen), int fortran)
API_EMPTY = 184  # PyObject *PyArray_Empty(likewise)


def api_function(index: int) -> int | None:
    """The address of entry index of NumPy's C API table (None: NumPy missing or its table not as expected)."""
    np = numpy_module()
    if np is None:
        return None
    if _state.get("api_of") is not np:
        _state["api_of"], _state["api"] = np, _api_table(np)
    table = _state["api"]
    return None if table is None else table[index]


def _api_table(np: Any) -> Any:
    try:
        capsule = np._core._multiarray_umath._ARRAY_API
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        table = (ctypes.c_void_p * (API_EMPTY + 1)).from_address(get(capsule, None))
        return table if table[API_NDARRAY_TYPE] == id(np.ndarray) else None
    except Exception:
        return None


def _read(address: int, ctype: Any) -> Any:
    return ctype.from_address(address).value


def _check(np: Any) -> bool:
    try:
        if int(np.__version__.split(".")[0]) < 2 or ctypes.sizeof(ctypes.c_void_p) != 8:
            return False
        base = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
        probes = [base, base.transpose(2, 0, 1), base[:, ::-1, ::2], np.zeros(5, dtype=np.uint8)]
        readonly = np.arange(3)
        readonly.flags.writeable = False
        probes.append(readonly)
        for a in probes:
            address = id(a)
            if _read(address + ARRAY_DATA, ctypes.c_void_p) != a.__array_interface__["data"][0]:
                return False
            if _read(address + ARRAY_ND, ctypes.c_int) != a.ndim:
                return False
            dims = _read(address + ARRAY_DIMENSIONS, ctypes.c_void_p)
            strides = _read(address + ARRAY_STRIDES, ctypes.c_void_p)
            for k in range(a.ndim):
                if _read(dims + 8 * k, ctypes.c_ssize_t) != a.shape[k]:
                    return False
                if _read(strides + 8 * k, ctypes.c_ssize_t) != a.strides[k]:
                    return False
            descr = _read(address + ARRAY_DESCR, ctypes.c_void_p)
            if descr != id(a.dtype) or _read(descr + DESCR_TYPEOBJ, ctypes.c_void_p) != id(a.dtype.type):
                return False
            if _read(descr + DESCR_ELSIZE, ctypes.c_ssize_t) != a.itemsize:
                return False
            if chr(ctypes.c_char.from_address(descr + DESCR_BYTEORDER).value[0]) != a.dtype.byteorder:
                return False
            flags = _read(address + ARRAY_FLAGS, ctypes.c_int)
            expected = {
                C_CONTIGUOUS: a.flags.c_contiguous,
                F_CONTIGUOUS: a.flags.f_contiguous,
                ALIGNED: a.flags.aligned,
                WRITEABLE: a.flags.writeable,
            }
            if any(bool(flags & bit) != value for bit, value in expected.items()):
                return False
        return True
    except Exception:
        return False
