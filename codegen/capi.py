"""The CPython C-API functions compiled code calls, with their LLVM signatures.

Their addresses come from ctypes (``ctypes.pythonapi``) and are registered with the JIT linker as imports, so
generated code calls them directly. Native code runs with the GIL held throughout.
"""

from __future__ import annotations

import ctypes

from llvmlite import ir

I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
I1 = ir.IntType(1)
I128 = ir.IntType(128)
DOUBLE = ir.DoubleType()
PTR = ir.IntType(8).as_pointer()

# name -> (return type, argument types)
SIGNATURES: dict[str, tuple[ir.Type, tuple[ir.Type, ...]]] = {
    "PyErr_CheckSignals": (I32, ()),
    "PyErr_Clear": (ir.VoidType(), ()),
    "PyDict_GetItem": (PTR, (PTR, PTR)),
    "PyDict_SetItem": (I32, (PTR, PTR, PTR)),
    "PyDict_DelItem": (I32, (PTR, PTR)),
    "PyDict_Size": (I64, (PTR,)),
    "PyUnicode_GetLength": (I64, (PTR,)),
    "PyUnicode_Compare": (I32, (PTR, PTR)),
    "PyUnicode_Contains": (I32, (PTR, PTR)),
    "PyLong_AsLongLongAndOverflow": (I64, (PTR, I32.as_pointer())),
    "PyLong_FromLongLong": (PTR, (I64,)),
    "PyFloat_FromDouble": (PTR, (DOUBLE,)),
    "Py_IncRef": (ir.VoidType(), (PTR,)),
    "Py_DecRef": (ir.VoidType(), (PTR,)),
    "_Py_Dealloc": (ir.VoidType(), (PTR,)),
    "PyObject_Vectorcall": (PTR, (PTR, PTR.as_pointer(), I64, PTR)),
    "PyObject_VectorcallMethod": (PTR, (PTR, PTR.as_pointer(), I64, PTR)),
    "PyObject_Str": (PTR, (PTR,)),
    "PyObject_Repr": (PTR, (PTR,)),
    "PyObject_ASCII": (PTR, (PTR,)),
    "PyObject_Format": (PTR, (PTR, PTR)),
    "PyUnicode_Join": (PTR, (PTR, PTR)),
    "PyUnicode_Concat": (PTR, (PTR, PTR)),
    "PyUnicode_Resize": (I32, (PTR.as_pointer(), I64)),
    "PyUnicode_CopyCharacters": (I64, (PTR, I64, PTR, I64, I64)),
    "PyList_Append": (I32, (PTR, PTR)),
    "PyList_New": (PTR, (I64,)),
    "PyFunction_GetCode": (PTR, (PTR,)),
    "PyFunction_GetDefaults": (PTR, (PTR,)),
    "PyFunction_GetGlobals": (PTR, (PTR,)),
    "PyFunction_GetClosure": (PTR, (PTR,)),
    "PyCell_Get": (PTR, (PTR,)),
    "PyCell_New": (PTR, (PTR,)),
    "PyCell_Set": (I32, (PTR, PTR)),
    "PyFunction_New": (PTR, (PTR, PTR)),
    "PyFunction_SetClosure": (I32, (PTR, PTR)),
    "PyFunction_SetDefaults": (I32, (PTR, PTR)),
    "PyFunction_SetKwDefaults": (I32, (PTR, PTR)),
    "PyFunction_SetAnnotations": (I32, (PTR, PTR)),
    "PyMethod_Function": (PTR, (PTR,)),
    "PyMethod_Self": (PTR, (PTR,)),
    "PyNumber_Add": (PTR, (PTR, PTR)),
    "PyNumber_Subtract": (PTR, (PTR, PTR)),
    "PyNumber_Multiply": (PTR, (PTR, PTR)),
    "PyNumber_FloorDivide": (PTR, (PTR, PTR)),
    "PyNumber_Remainder": (PTR, (PTR, PTR)),
    "PyNumber_Lshift": (PTR, (PTR, PTR)),
    "PyNumber_Rshift": (PTR, (PTR, PTR)),
    "PyNumber_And": (PTR, (PTR, PTR)),
    "PyNumber_Or": (PTR, (PTR, PTR)),
    "PyNumber_Xor": (PTR, (PTR, PTR)),
    "PyNumber_Power": (PTR, (PTR, PTR, PTR)),
    "PyObject_RichCompareBool": (I32, (PTR, PTR, I32)),
    "PyNumber_Negative": (PTR, (PTR,)),
    "PyNumber_Invert": (PTR, (PTR,)),
    "PyNumber_Positive": (PTR, (PTR,)),
    "PyLong_FromUnsignedLongLong": (PTR, (I64,)),
    "PyLong_AsDouble": (DOUBLE, (PTR,)),
    "PyLong_FromDouble": (PTR, (DOUBLE,)),
    "PyNumber_Absolute": (PTR, (PTR,)),
    # iterators an outer trace makes for its inner loops (codegen.lower.loops)
    "PyObject_GetIter": (PTR, (PTR,)),
    "PyIter_Next": (PTR, (PTR,)),
    "PyErr_Occurred": (PTR, ()),
    # NumPy's error state (codegen.lower.numpy_values: _GUARD_NP_ERRSTATE)
    "PyContextVar_Get": (I32, (PTR, PTR, PTR.as_pointer())),
    # the entry stubs (codegen.entry)
    "PyErr_Fetch": (ir.VoidType(), (PTR.as_pointer(), PTR.as_pointer(), PTR.as_pointer())),
    "PyErr_Restore": (ir.VoidType(), (PTR, PTR, PTR)),
    "PyErr_SetString": (ir.VoidType(), (PTR, PTR)),
    "PyTuple_New": (PTR, (I64,)),
    "PyObject_GetAttr": (PTR, (PTR, PTR)),
    # the generic object path (codegen.lower.generic)
    "PyObject_SetAttr": (I32, (PTR, PTR, PTR)),
    "PyObject_RichCompare": (PTR, (PTR, PTR, I32)),
    "PySequence_Contains": (I32, (PTR, PTR)),
    "PyObject_IsTrue": (I32, (PTR,)),
    "PyObject_GetItem": (PTR, (PTR, PTR)),
    "PyObject_SetItem": (I32, (PTR, PTR, PTR)),
    "PyObject_DelItem": (I32, (PTR, PTR)),
    "PySlice_New": (PTR, (PTR, PTR, PTR)),
    "PySet_New": (PTR, (PTR,)),
    "PySet_Add": (I32, (PTR, PTR)),
    "PySet_Contains": (I32, (PTR, PTR)),
    "PyDict_New": (PTR, ()),
    "PyFrozenSet_New": (PTR, (PTR,)),
    "PyNumber_TrueDivide": (PTR, (PTR, PTR)),
    "PyNumber_MatrixMultiply": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceAdd": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceSubtract": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceMultiply": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceTrueDivide": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceFloorDivide": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceRemainder": (PTR, (PTR, PTR)),
    "PyNumber_InPlacePower": (PTR, (PTR, PTR, PTR)),
    "PyNumber_InPlaceLshift": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceRshift": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceAnd": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceOr": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceXor": (PTR, (PTR, PTR)),
    "PyNumber_InPlaceMatrixMultiply": (PTR, (PTR, PTR)),
}

# (int / int past 2**53: codegen.lower.int_objects; the generic object path declares it too)
SIGNATURES.setdefault("PyNumber_TrueDivide", (PTR, (PTR, PTR)))

# `"".join` of an array of strs, with no tuple made (an f-string's parts: CPython's own BUILD_STRING calls it): a
# private function CPython 3.11 and 3.12 export; where it is missing, the parts go through a tuple and PyUnicode_Join
JOIN_ARRAY = "_PyUnicode_JoinArray"
HAS_JOIN_ARRAY = hasattr(ctypes.pythonapi, JOIN_ARRAY)
if HAS_JOIN_ARRAY:
    SIGNATURES[JOIN_ARRAY] = (PTR, (PTR, PTR.as_pointer(), I64))

# i128 division: LLVM compiles it to calls of the C compiler's runtime (libgcc, or compiler-rt's equivalents),
# which ctypes finds in the process or in libgcc_s; without them the lowering goes through CPython's ints
WIDE_DIVISION = {"__divti3": (I128, (I128, I128)), "__modti3": (I128, (I128, I128))}


def _wide_division_addresses() -> dict[str, int]:
    for library in (None, "libgcc_s.so.1", "libgcc_s.1.dylib", "libcompiler_rt.dylib"):
        try:
            lib = ctypes.CDLL(library)
            return {name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value for name in WIDE_DIVISION}  # type: ignore[misc]
        except (OSError, AttributeError):
            continue
    return {}


WIDE_DIVISION_ADDRESSES = _wide_division_addresses()


def address(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value  # type: ignore[return-value]


def addresses() -> dict[str, int]:
    return {**{name: address(name) for name in SIGNATURES}, **WIDE_DIVISION_ADDRESSES}
