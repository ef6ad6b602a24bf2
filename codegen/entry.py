"""A tree's entry stub: entering native code from Python, and coming back, in one call of a builtin.

The stub is a C function of CPython's ``METH_O`` convention, ``PyObject *stub(PyObject *self, PyObject
*slots)``, generated per tree in the module of its root trace (``codegen.compile``); the runtime wraps it in
a builtin function object (``runtime.native.entry_function``), which Python calls like any builtin. Unless the
tree's entry type map has NumPy kinds, the stub only jumps to the support library's ``tj_entry_run``, which does
the work below given the tree's entry parameters (``ENTRY_PARAMS``: a constant of the root's module), so that a
root's module holds no copy of it (issue 9: compile time). Given a frame's slots (a list of ``Layout.nslots``
values), it

1. checks the types of the values against the tree's entry type map and unboxes them into a frame buffer on
   its own C stack (every slot, with its tag, as ``runtime.native.NativeBuffer.pack`` would: slots outside
   the map are classified by their type). On a mismatch (a value of another kind, an int beyond 64 bits
   where the map says int, a list of another length) it returns ``None`` and has changed nothing. An int
   beyond 64 bits where the map says int object (``Kind.INT_OBJECT``) gets a reference of the buffer's own,
   tagged OWNED (``codegen.ownership``); anywhere else it is tagged an object;
2. runs the tree's root on that buffer;
3. boxes what the exit wrote (slots tagged DIRTY, and the operand stack: ``abi.DEPTH`` entries), stores the
   boxed slots into the list (each list item owns its new reference; the old one is released once every
   item is in place), releases the buffer's references to int objects in slots native code did not write,
   and returns the tuple ``(exit number, iterations run, *operand stack)``.

If native code left with an exception set (a signal handler's, raised by the periodic check), the stub
still boxes the state, appends that same tuple to the list, and returns NULL with the exception: the caller
pops it. Objects native code holds as pointers are borrowed (kept alive by the frame, a trace constant or a
container the frame holds); the stub takes new references to all of them before allocating anything, so no
allocation (which may run the cyclic GC, and finalizers) can free one before it is owned. An object an exit
hands over with a reference of its own (tag bit OWNED: ``codegen.ownership``) gives the stub that reference. If boxing fails
(no memory), every reference taken is released and the stub returns NULL with the list unchanged.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

from llvmlite import ir

from codegen import abi, capi
from codegen.capi import DOUBLE, I1, I8, I32, I64, PTR
from codegen.context import FLOAT32, TRACE_FN, LowerContext
from codegen.engine import CompiledModule, ObjectCache, engine
from codegen.symbols import ObjectSymbols
from jit import arrays
from jit.kinds import DIRTY, KIND_BITS, NUMPY_SCALARS, OWNED, POINTER_KINDS, Kind
from runtime.frame import UNBOUND

ENTRY_FN = ir.FunctionType(PTR, [PTR, PTR])  # METH_O: (self, the slots list)
_CLASSIFY_FN = ir.FunctionType(I8, [PTR, I64.as_pointer()])  # (object, its word) -> its tag
_INT_FN = ir.LiteralStructType([I64, I1])  # (value, fits in 64 bits)

# kinds an entry type map may hold, and how the stub checks each
_EXACT_TYPES: dict[Kind, type] = {Kind.FLOAT: float, Kind.LIST: list, Kind.TUPLE: tuple, Kind.STR: str, Kind.DICT: dict}
# NumPy's scalars, as the buffer holds them: (the value's type at the header's end, as a word: sign-extended, or a
# double); the support library classifies them (and arrays) as objects: a tree's stub checks and unboxes those
# its type map names (NumPy is optional: the library, compiled once per process, never refers to it)
_NUMPY_SCALAR_VALUES: dict[Kind, ir.Type] = {
    Kind.NP_FLOAT64: DOUBLE,
    Kind.NP_FLOAT32: FLOAT32,
    Kind.NP_INT64: I64,
    Kind.NP_INT32: I32,
    Kind.NP_UINT8: I8,
    Kind.NP_BOOL: I8,
}
_NUMPY_KINDS = frozenset({Kind.ARRAY, *_NUMPY_SCALAR_VALUES})
ENTRY_KINDS = frozenset(
    {Kind.INT, Kind.BOOL, Kind.NONE, Kind.UNBOUND, Kind.OBJECT, Kind.INT_OBJECT, *_EXACT_TYPES, *_NUMPY_KINDS}
)
#: the table of NumPy's objects a stub hands tj_entry_leave (NULL before NumPy is imported): the scalar type of
#: each scalar kind at its kind's index, then numpy.False_ and numpy.True_
_NUMPY_TABLE = 64
_NUMPY_FALSE, _NUMPY_TRUE = _NUMPY_TABLE, _NUMPY_TABLE + 1
# kinds boxed by taking a new reference (no allocation), and the method kinds' attribute names
_METHODS = {Kind.APPEND_METHOD: "append", Kind.DICT_GET_METHOD: "get"}
# every kind an exit's state may hold that the stub can box (another makes it raise SystemError: never a crash)
BOXED_KINDS = frozenset(
    {Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NONE, Kind.UNBOUND, Kind.WIDE_INT, *_METHODS, *_NUMPY_SCALAR_VALUES}
    | {kind for kind in POINTER_KINDS if kind not in _METHODS}
)
UNKNOWN_KIND = "tracejit: an entry stub met a value of a kind it cannot box at an exit"


def entry_symbol(root_symbol: str) -> str:
    return f"{root_symbol}_entry"


#: the process's table of NumPy's objects (``_Stub.numpy_entries``' layout), which the stubs of trees whose entry
#: type map has no NumPy kind hand tj_entry_leave; and where they read it from: NULL until NumPy's kinds are known
#: (``numpy_objects_known``). Read at each exit, not fixed in a stub when it is built: NumPy imported, or its
#: kinds first met, after a tree's root was compiled, a side trace of that tree may still leave with a NumPy
#: scalar in a slot (an element of an array its root never read), which the stub boxes (it met a kind it could
#: not box, a SystemError, before)
_NUMPY_OBJECTS = (ctypes.c_void_p * (_NUMPY_TRUE + 1))()
_NUMPY_OBJECTS_AT = ctypes.c_void_p(0)
_numpy_objects_held: list[Any] = []  # (NumPy's types and its two bools: alive while NumPy is, held here too)


def numpy_objects_known() -> None:
    """Fill the process's table of NumPy's objects in, once NumPy's kinds are known (``jit.kinds``); before code
    that may hold a NumPy scalar in a slot runs: every trace's compilation calls this."""
    if _NUMPY_OBJECTS_AT.value or not NUMPY_SCALARS:
        return
    for index, obj in _numpy_objects().items():
        _numpy_objects_held.append(obj)
        _NUMPY_OBJECTS[index] = id(obj)
    _NUMPY_OBJECTS_AT.value = ctypes.addressof(_NUMPY_OBJECTS)


def _numpy_objects() -> dict[int, Any]:
    """The entries of a table of NumPy's objects (NumPy's kinds known), by index: the scalar type of each scalar
    kind at its kind's index, then numpy.False_ and numpy.True_ (tj_entry_leave reads no other)."""
    objects: dict[int, Any] = {int(kind): scalar_type for kind, scalar_type in NUMPY_SCALARS.items()}
    objects[_NUMPY_FALSE] = NUMPY_SCALARS[Kind.NP_BOOL](False)
    objects[_NUMPY_TRUE] = NUMPY_SCALARS[Kind.NP_BOOL](True)
    return objects


def can_build(entry_kinds: dict[int, Kind]) -> bool:
    """Can a stub check this entry type map?"""
    return all(kind in ENTRY_KINDS for kind in entry_kinds.values())


def build_entry(ctx: LowerContext, active_address: int) -> str:
    """Add the entry stub of the root trace ctx lowered (``ctx.function``) to its module; its symbol. The
    support library (``support``) must be compiled first: the module imports its functions. active_address: an i64 the stub
    adds one to while the tree runs (and boxes its exit's state), so that the runtime knows when no native
    code of the function is running (it frees invalidated code then)."""
    assert can_build(ctx.trace.entry_kinds)
    symbol = entry_symbol(ctx.symbol)
    _Stub(ctx.module, ctx.callees, ctx.pointer, ctx).build_stub(symbol, active_address)
    return symbol


# --- the support library: what every stub calls, compiled once per process --------------------------------
CLASSIFY = "tj_entry_classify"
LEAVE = "tj_entry_leave"
HOLDS_UNBOUND = "tj_holds_unbound"
UNBOX = "tj_entry_unbox"
HANDOFF = "tj_handoff"
#: ``METH_FASTCALL``: (self: the tree's hand-off parameters, a bytes object; args; nargs)
HANDOFF_FN = ir.FunctionType(PTR, [PTR, PTR.as_pointer(), I64])
#: the hand-off parameters: the stub's address, nslots, nlocals, the loop's first hidden slot, the loop's kind, the
#: addresses of the two counter blocks it adds each entry to (``HANDOFF_COUNTS`` int64s each: the runner's and the
#: tree's), and the slot of what a comprehension's loop builds (-1: not a comprehension handed over whole)
HANDOFF_PARAMS = "8q"
#: a hand-off's counter block: [entries, iterations] (counted natively: no Python per entry)
HANDOFF_COUNTS = 2
HANDOFF_WHILE, HANDOFF_RANGE, HANDOFF_SEQUENCE = 0, 1, 2  # the kinds of loops a hand-off builds the slots of


class _ByGetitem:
    def __getitem__(self, index: int) -> None:
        raise IndexError(index)


#: CPython's iterator of an object that has __getitem__ and no __iter__ (and of an ndarray)
SEQUENCE_ITERATOR = type(iter(_ByGetitem()))
_LEAVE_FN = ir.FunctionType(PTR, [PTR, I64, PTR, I64, I64, I64, PTR.as_pointer()])
#: ``PyObject *tj_entry_run(params, slots)``: a tree's stub where its entry type map has no NumPy kind, given the
#: tree's entry parameters (``ENTRY_PARAMS``); the stub itself only jumps there (``musttail``: the same types as
#: ``ENTRY_FN``)
RUN = "tj_entry_run"
#: a tree's entry parameters, a constant of its root's module: its root's function, its entry type map (one byte
#: per slot), nslots, the buffer's tags offset, its wide word, its size in words, the counter of calls in progress
#: (an i64) and where the process keeps its table of NumPy's objects (``numpy_objects_known``)
ENTRY_PARAMS = ir.LiteralStructType([PTR, PTR, I64, I64, I64, I64, PTR, PTR])
_UNBOX_FN = ir.FunctionType(I8, [PTR, PTR, PTR, I64, I64])
_support: list[CompiledModule] = []
_support_lock = threading.Lock()
_support_symbols: list[ObjectSymbols] = []  # (keeps the objects its code points to alive)
#: the key the support library's object code is cached by (``codegen.cache``: in every function's cache, with
#: tracejit's source files, CPython's build and LLVM in the key, which decide its text)
SUPPORT_KEY = "tracejit entry stubs' support library"


def _support_objects() -> tuple[object, ...]:
    """Every object the support library may refer to, in a fixed order: each is bound to the symbol of its
    index, so the bindings are known without making the library's module (a cached library is never made)."""
    objects: list[object] = []
    for obj in (
        int,
        float,
        bool,
        True,
        False,
        None,
        UNBOUND,
        SystemError,
        64,
        *_EXACT_TYPES.values(),
        *_METHODS.values(),
        # (the hand-off: build_handoff)
        list,
        tuple,
        range,
        type(iter(range(0))),
        type(iter([])),
        type(iter(())),
        SEQUENCE_ITERATOR,
        (),
        NotImplemented,
    ):
        if not any(obj is known for known in objects):
            objects.append(obj)
    return tuple(objects)


def support(cache: ObjectCache | None = None) -> CompiledModule:
    """The support library (compiled at the first call): ``tj_entry_classify``, ``tj_entry_leave`` and
    ``tj_entry_run``, which the stubs call (generic code, kept out of each tree's module: LLVM compiles it once), and
    ``tj_holds_unbound``. cache: where its object code may be found (and is stored), if the first trace that
    needs it is cached (``codegen.cache``)."""
    with _support_lock:
        if not _support:
            llvm = engine()
            symbols = ObjectSymbols(None, "tj_support", _support_objects())

            def make() -> str:
                module = ir.Module(name="tj_entry_support")
                module.triple = llvm.triple
                module.data_layout = llvm.data_layout
                symbols.module = module
                stub = _Stub(module, {}, symbols.pointer)
                stub.build_classify()
                stub.build_unbox()
                stub.build_leave()
                stub.build_run()
                _build_holds_unbound(module, symbols.pointer)
                stub.build_handoff()
                return str(module)

            exports = [CLASSIFY, UNBOX, LEAVE, RUN, HOLDS_UNBOUND, HANDOFF]
            compiled = llvm.compile(make, exports, [], 2, symbols.addresses, cache, SUPPORT_KEY)
            # every later module imports them by address, as it does the C-API (under the engine's lock: a
            # compilation in the background reads the imports)
            with llvm.lock:
                llvm.imports.update({name: compiled.addresses[name] for name in (CLASSIFY, UNBOX, LEAVE, RUN)})
            _support_symbols.append(symbols)
            _support.append(compiled)
        return _support[0]


class _Stub:
    """Builds IR in a module: a tree's stub (in its root's module, ``ctx`` given), or the support
    functions every stub calls (``_support_ir``)."""

    def __init__(
        self, module: ir.Module, callees: dict[str, ir.Function], pointer: Any, ctx: LowerContext | None = None
    ) -> None:
        self.module = module
        self.callees = callees
        self._pointer = pointer  # obj -> an i8* constant to it (kept alive)
        self.ctx = ctx
        self.function: ir.Function = None  # type: ignore[assignment]
        self.b: ir.IRBuilder = None  # type: ignore[assignment]
        self.overflow: ir.Value = None  # type: ignore[assignment]
        # (tj_entry_leave) its table of NumPy's objects, and a one-argument array for calls
        self.numpy_table: ir.Value = None  # type: ignore[assignment]
        self.call_args: ir.Value = None  # type: ignore[assignment]

    def start(self, name: str, ty: ir.FunctionType) -> ir.Function:
        """Begin a function: build in its entry block from now on."""
        self.function = self.callees[name] = ir.Function(self.module, ty, name=name)
        self.b = ir.IRBuilder(self.function.append_basic_block("entry"))
        self.overflow = self.b.alloca(I32, name="overflow")
        return self.function

    def declare(self, name: str, ty: ir.FunctionType) -> ir.Function:
        fn = self.callees.get(name)
        if fn is None:
            fn = self.callees[name] = ir.Function(self.module, ty, name)
        return fn

    # --- small things ----------------------------------------------------------------------------------
    def capi(self, name: str, *args: ir.Value) -> ir.Value:
        ret, params = capi.SIGNATURES[name]
        return self.b.call(self.declare(name, ir.FunctionType(ret, params)), list(args))

    def pointer(self, obj: object) -> ir.Value:
        return self._pointer(obj)

    def at(self, pointer: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
        """The address of a field of type ty at offset bytes from pointer."""
        address = self.b.gep(pointer, [ir.Constant(I64, offset)], inbounds=True)
        return self.b.bitcast(address, ty.as_pointer())

    def type_of(self, obj: ir.Value) -> ir.Value:
        return self.b.load(self.at(obj, abi.OB_TYPE, PTR))

    def is_(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.icmp_unsigned("==", a, b)

    def block(self, name: str) -> ir.Block:
        return self.function.append_basic_block(name)

    def loop(self, count: ir.Value, name: str, body: object) -> None:
        """for j in range(count): body(j) (body builds in the current block and may add blocks)."""
        b = self.b
        start = b.block
        head, step, done = self.block(f"{name}_head"), self.block(f"{name}_body"), self.block(f"{name}_done")
        b.branch(head)
        b.position_at_end(head)
        j = b.phi(I64, name=f"{name}_j")
        j.add_incoming(ir.Constant(I64, 0), start)
        b.cbranch(b.icmp_signed("<", j, count), step, done)
        b.position_at_end(step)
        body(j)  # type: ignore[operator]
        j.add_incoming(b.add(j, ir.Constant(I64, 1)), b.block)
        b.branch(head)
        b.position_at_end(done)

    # --- unboxing --------------------------------------------------------------------------------------
    def unbox_int(self, obj: ir.Value) -> tuple[ir.Value, ir.Value]:
        """An exact int's value, and whether it fits in 64 bits."""
        b = self.b
        overflow = self.overflow
        if not abi.SMALL_INTS_OK:
            value = self.capi("PyLong_AsLongLongAndOverflow", obj, overflow)
            return value, b.icmp_signed("==", b.load(overflow), ir.Constant(I32, 0))
        size = b.load(self.at(obj, abi.OB_SIZE, I64))
        small = b.icmp_unsigned("<=", b.add(size, ir.Constant(I64, 1)), ir.Constant(I64, 2))  # -1, 0 or 1 digit
        fast, slow, done = self.block("int_small"), self.block("int_big"), self.block("int_done")
        b.cbranch(small, fast, slow)
        b.position_at_end(fast)
        digit = b.zext(b.load(self.at(obj, abi.LONG_DIGITS, I32)), I64)
        signed = b.select(b.icmp_signed("<", size, ir.Constant(I64, 0)), b.neg(digit), digit)
        fast_value = b.select(b.icmp_signed("==", size, ir.Constant(I64, 0)), ir.Constant(I64, 0), signed)
        b.branch(done)
        b.position_at_end(slow)
        slow_value = self.capi("PyLong_AsLongLongAndOverflow", obj, overflow)
        slow_ok = b.icmp_signed("==", b.load(overflow), ir.Constant(I32, 0))
        b.branch(done)
        b.position_at_end(done)
        value = b.phi(I64)
        value.add_incoming(fast_value, fast)
        value.add_incoming(slow_value, slow)
        ok = b.phi(I1)
        ok.add_incoming(ir.Constant(I1, 1), fast)
        ok.add_incoming(slow_ok, slow)
        return value, ok

    def classify(self) -> ir.Function:
        """The declaration of the support function that classifies the slots outside an entry type map."""
        return self.declare(CLASSIFY, _CLASSIFY_FN)

    def build_classify(self) -> None:
        """``i8 tj_entry_classify(obj, word*)``: the tag of any object as ``NativeBuffer.pack_each`` gives it,
        its word written."""
        fn = self.start(CLASSIFY, _CLASSIFY_FN)
        b = self.b
        obj, word = fn.args
        t = self.type_of(obj)

        def leave(kind: Kind, value: ir.Value | None) -> None:
            if value is not None:
                b.store(value, word)
            b.ret(ir.Constant(I8, int(kind)))

        def test(condition: ir.Value, name: str) -> None:
            """Go on in a new block if condition is false; leave the current one positioned where it holds."""
            yes, no = self.block(f"is_{name}"), self.block(f"not_{name}")
            b.cbranch(condition, yes, no)
            b.position_at_end(yes)
            self._no = no

        as_word = b.ptrtoint(obj, I64)
        test(self.is_(t, self.pointer(int)), "int")
        value, fits = self.unbox_int(obj)
        small, big = self.block("int_fits"), self.block("int_object")
        b.cbranch(fits, small, big)
        b.position_at_end(small)
        leave(Kind.INT, value)
        b.position_at_end(big)
        leave(Kind.INT_OBJECT, as_word)  # (tj_entry_unbox tags it an object unless the type map takes it)
        b.position_at_end(self._no)
        test(self.is_(t, self.pointer(float)), "float")
        leave(Kind.FLOAT, b.load(self.at(obj, abi.FLOAT_VALUE, I64)))
        b.position_at_end(self._no)
        test(self.is_(t, self.pointer(bool)), "bool")
        leave(Kind.BOOL, b.zext(self.is_(obj, self.pointer(True)), I64))
        b.position_at_end(self._no)
        test(self.is_(obj, self.pointer(None)), "none")
        leave(Kind.NONE, None)
        b.position_at_end(self._no)
        test(self.is_(obj, self.pointer(UNBOUND)), "unbound")
        leave(Kind.UNBOUND, None)
        b.position_at_end(self._no)
        for kind, pytype in _EXACT_TYPES.items():
            if kind is Kind.FLOAT:
                continue
            test(self.is_(t, self.pointer(pytype)), kind.short)
            leave(kind, as_word)
            b.position_at_end(self._no)
        leave(Kind.OBJECT, as_word)  # (a range too: pack_each tags it an object)

    # --- boxing ----------------------------------------------------------------------------------------
    def boxable(self, kind: ir.Value) -> ir.Value:
        """Is kind one the stub boxes (every kind of Python values, and the methods and int temporaries; NumPy's
        scalars where tj_entry_leave was handed a table of NumPy's objects)?"""
        b = self.b
        known = ir.Constant(I1, 0)
        numpy = ir.Constant(I1, 0)
        for case in sorted(BOXED_KINDS):
            this = b.icmp_unsigned("==", kind, ir.Constant(I8, int(case)))
            if case in _NUMPY_SCALAR_VALUES:
                numpy = b.or_(numpy, this)
            else:
                known = b.or_(known, this)
        table = self.numpy_table
        return b.or_(known, b.and_(numpy, b.icmp_unsigned("!=", table, ir.Constant(table.type, None))))

    def pointer_to_text(self, text: str) -> ir.Value:
        """A NUL-terminated C string constant."""
        data = bytearray(text.encode() + b"\0")
        name = f"text{len(self.module.globals)}"
        variable = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(data)), name)
        variable.initializer = ir.Constant(variable.value_type, data)
        variable.global_constant = True
        variable.linkage = "internal"
        return self.b.bitcast(variable, PTR)

    def reference(self, kind: ir.Value, word: ir.Value, owned: ir.Value) -> ir.Value:
        """A new reference for what needs no allocation: an object kind's pointer (a method kind's owner), a
        bool, None, unbound; NULL for an int, a float or an i128. An object native code hands over (owned: the tag's
        OWNED bit) comes with its reference, which the stub takes."""
        b = self.b
        pointer = b.inttoptr(word, PTR)
        null = ir.Constant(PTR, None)
        chosen = null
        for case, obj in (
            (
                Kind.BOOL,
                b.select(b.icmp_unsigned("!=", word, ir.Constant(I64, 0)), self.pointer(True), self.pointer(False)),
            ),
            (Kind.NONE, self.pointer(None)),
            (Kind.UNBOUND, self.pointer(UNBOUND)),
        ):
            chosen = b.select(b.icmp_unsigned("==", kind, ir.Constant(I8, int(case))), obj, chosen)
        is_number = ir.Constant(I1, 0)
        for case in (Kind.INT, Kind.FLOAT, Kind.WIDE_INT, *_NUMPY_SCALAR_VALUES):
            is_number = b.or_(is_number, b.icmp_unsigned("==", kind, ir.Constant(I8, int(case))))
        is_pointer = b.icmp_unsigned("==", chosen, null)  # not one of the singletons above
        chosen = b.select(is_pointer, pointer, chosen)
        chosen = b.select(is_number, null, chosen)
        with b.if_then(b.and_(b.icmp_unsigned("!=", chosen, null), b.not_(owned))):
            self.capi("Py_IncRef", chosen)
        return chosen

    def allocate(self, kind: ir.Value, word: ir.Value, high: ir.Value, held: ir.Value, fail: ir.Block) -> ir.Value:
        """The boxed value of an int or a float, of an i128 (word its low half, high its high half), a method
        kind's bound method (its owner, held, released); held itself for any other kind. Goes to fail if an
        allocation fails."""
        b = self.b
        here = b.block
        done = self.block("boxed")
        results: list[tuple[ir.Value, ir.Block]] = [(held, here)]
        switch = b.switch(kind, done)
        int_block = self.block("box_int")
        switch.add_case(ir.Constant(I8, int(Kind.INT)), int_block)
        b.position_at_end(int_block)
        results.append((self.capi("PyLong_FromLongLong", word), b.block))
        b.branch(done)
        float_block = self.block("box_float")
        switch.add_case(ir.Constant(I8, int(Kind.FLOAT)), float_block)
        b.position_at_end(float_block)
        results.append((self.capi("PyFloat_FromDouble", b.bitcast(word, DOUBLE)), b.block))
        b.branch(done)
        wide_block = self.block("box_wide")
        switch.add_case(ir.Constant(I8, int(Kind.WIDE_INT)), wide_block)
        b.position_at_end(wide_block)
        results.append((self.box_wide(word, high), b.block))
        b.branch(done)
        for scalar in _NUMPY_SCALAR_VALUES:
            block = self.block(f"box_{scalar.short}")
            switch.add_case(ir.Constant(I8, int(scalar)), block)
            b.position_at_end(block)
            results.append((self.box_numpy_scalar(scalar, word), b.block))
            b.branch(done)
        for method, attribute in _METHODS.items():
            block = self.block(f"box_{attribute}")
            switch.add_case(ir.Constant(I8, int(method)), block)
            b.position_at_end(block)
            bound = self.capi("PyObject_GetAttr", held, self.pointer(attribute))
            with b.if_then(b.icmp_unsigned("!=", bound, ir.Constant(PTR, None))):
                self.capi("Py_DecRef", held)  # (else the failure path releases it, from the boxed array)
            results.append((bound, b.block))
            b.branch(done)
        b.position_at_end(done)
        boxed = b.phi(PTR, name="boxed")
        for value, block in results:
            boxed.add_incoming(value, block)
        ok = self.block("boxed_ok")
        b.cbranch(b.icmp_unsigned("!=", boxed, ir.Constant(PTR, None)), ok, fail).set_weights([1000, 1])
        b.position_at_end(ok)
        return boxed

    def box_numpy_scalar(self, kind: Kind, word: ir.Value) -> ir.Value:
        """A new NumPy scalar of kind whose value the word holds (tj_entry_leave's table of NumPy's objects gives
        its type: a numpy.bool is one of the two singletons, any other the type called on the Python float or
        int of the same value, as the interpreter boxes it); NULL if that failed. (Without a table, ``boxable``
        refused the kind first: never read a word as what it is not.)"""
        b = self.b
        table = self.numpy_table
        null = ir.Constant(PTR, None)
        results: list[tuple[ir.Value, ir.Block]] = []
        done = self.block("numpy_boxed")

        def entry(index: ir.Value) -> ir.Value:
            return b.load(b.gep(table, [index], inbounds=True))

        if kind is Kind.NP_BOOL:
            truth = b.icmp_unsigned("!=", word, ir.Constant(I64, 0))
            made = entry(b.select(truth, ir.Constant(I64, _NUMPY_TRUE), ir.Constant(I64, _NUMPY_FALSE)))
            self.capi("Py_IncRef", made)
            results.append((made, b.block))
            b.branch(done)
        else:
            if kind in (Kind.NP_FLOAT64, Kind.NP_FLOAT32):  # (the buffer holds a float32's exact double)
                python = self.capi("PyFloat_FromDouble", b.bitcast(word, DOUBLE))
            else:
                python = self.capi("PyLong_FromLongLong", word)
            call = self.block("numpy_call")
            results.append((null, b.block))
            b.cbranch(b.icmp_unsigned("!=", python, null), call, done)
            b.position_at_end(call)
            b.store(python, self.call_args)
            scalar_type = entry(ir.Constant(I64, int(kind)))
            made = self.capi("PyObject_Vectorcall", scalar_type, self.call_args, ir.Constant(I64, 1), null)
            self.capi("Py_DecRef", python)
            results.append((made, b.block))
            b.branch(done)
        b.position_at_end(done)
        boxed = b.phi(PTR, name="numpy_scalar")
        for value, block in results:
            boxed.add_incoming(value, block)
        return boxed

    def box_wide(self, low: ir.Value, high: ir.Value) -> ir.Value:
        """A new int for the i128 high * 2**64 + low (low unsigned); NULL if an allocation failed."""
        b = self.b
        null = ir.Constant(PTR, None)
        with b.goto_entry_block():
            out = b.alloca(PTR, name="wide_out")
        b.store(null, out)
        fits = b.icmp_unsigned("==", high, b.ashr(low, ir.Constant(I64, 63)))  # (it fits in 64 bits)
        with b.if_else(fits) as (small, large):
            with small:
                b.store(self.capi("PyLong_FromLongLong", low), out)
            with large:
                high_obj = self.capi("PyLong_FromLongLong", high)
                low_obj = self.capi("PyLong_FromUnsignedLongLong", low)
                with b.if_then(b.and_(b.icmp_unsigned("!=", high_obj, null), b.icmp_unsigned("!=", low_obj, null))):
                    shifted = self.capi("PyNumber_Lshift", high_obj, self.pointer(64))
                    with b.if_then(b.icmp_unsigned("!=", shifted, null)):
                        b.store(self.capi("PyNumber_Add", shifted, low_obj), out)
                        self.capi("Py_DecRef", shifted)
                self.capi("Py_DecRef", high_obj)  # (NULL-safe)
                self.capi("Py_DecRef", low_obj)
        return b.load(out)

    # --- the stub --------------------------------------------------------------------------------------
    def build_stub(self, symbol: str, active_address: int) -> None:
        """The tree's stub: check and unbox every slot, run the root, and leave through tj_entry_leave. Where the
        entry type map has no NumPy kind, that is the support library's tj_entry_run given the tree's entry
        parameters (``ENTRY_PARAMS``), which the stub jumps to: less IR per root trace (issue 9: compile time;
        the whole stub was about fifty instructions to build, print, parse and compile, ~1 ms per root trace)."""
        ctx = self.ctx
        assert ctx is not None
        layout = ctx.layout
        nslots = layout.nslots
        # the entry type map: one byte per slot, its kind or 0 (any)
        entry_kinds = ctx.trace.entry_kinds
        # (0 for NumPy's kinds: the support library classifies them as objects, checked below)
        kinds = [0 if entry_kinds.get(s) in _NUMPY_KINDS else int(entry_kinds.get(s, 0)) for s in range(nslots)]
        numpy_slots = {slot: kind for slot, kind in entry_kinds.items() if kind in _NUMPY_KINDS}
        if not numpy_slots:
            self.build_thin_stub(symbol, active_address, kinds)
            return
        fn = self.start(symbol, ENTRY_FN)
        # cold: compiled without optimization (codegen.engine.COLD; issue 9, compile time): its work is the
        # calls of the support library, and at O2 each root trace's stub cost ~1.5 ms of code generation
        fn.attributes.add("cold")
        b = self.b
        fn.args[0].name, fn.args[1].name = "self", "slots"
        buffer_words = (layout.size + abi.WORD - 1) // abi.WORD
        buf = b.bitcast(b.alloca(ir.ArrayType(I64, buffer_words), name="buffer"), PTR)
        table = self.kinds_table(symbol, kinds)
        active = ctx.symbols.variable("active", I64, active_address)
        sizes = [ir.Constant(I64, n) for n in (nslots, layout.tags_offset, layout.wide_word)]
        self.enter(fn.args[1], buf, b.bitcast(table, PTR), *sizes, active, ctx.function, numpy_slots, symbol)

    def kinds_table(self, symbol: str, kinds: list[int]) -> ir.GlobalVariable:
        """A stub's entry type map, as a constant of its module."""
        table = ir.GlobalVariable(self.module, ir.ArrayType(I8, max(len(kinds), 1)), f"{symbol}_kinds")
        table.initializer = ir.Constant(table.value_type, bytearray(kinds or [0]))
        table.global_constant = True
        table.linkage = "internal"
        return table

    def build_thin_stub(self, symbol: str, active_address: int, kinds: list[int]) -> None:
        """(A tree whose entry type map has no NumPy kind) its entry parameters, and a stub that jumps to
        tj_entry_run with them."""
        ctx = self.ctx
        assert ctx is not None
        layout = ctx.layout
        active = ctx.symbols.variable("active", I64, active_address)
        numpy_table = ctx.symbols.variable("numpy_objects", PTR, ctypes.addressof(_NUMPY_OBJECTS_AT)).bitcast(PTR)
        params = ir.GlobalVariable(self.module, ENTRY_PARAMS, f"{symbol}_params")
        sizes = [ir.Constant(I64, n) for n in (layout.nslots, layout.tags_offset, layout.wide_word)]
        buffer_words = ir.Constant(I64, (layout.size + abi.WORD - 1) // abi.WORD)
        table = self.kinds_table(symbol, kinds)
        fields = [ctx.function.bitcast(PTR), table.bitcast(PTR), *sizes, buffer_words, active.bitcast(PTR), numpy_table]
        params.initializer = ir.Constant(ENTRY_PARAMS, fields)
        params.global_constant = True
        params.linkage = "internal"
        fn = self.function = self.callees[symbol] = ir.Function(self.module, ENTRY_FN, name=symbol)
        fn.attributes.add("cold")  # (codegen.engine.COLD: compiled without optimization)
        fn.args[0].name, fn.args[1].name = "self", "slots"
        b = self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        run = self.declare(RUN, ENTRY_FN)
        # (musttail: none of this module's code runs once tj_entry_run has counted the call as done)
        b.ret(b.call(run, [params.bitcast(PTR), fn.args[1]], tail="musttail"))

    def build_run(self) -> None:
        """``PyObject *tj_entry_run(params, slots)``: a tree's stub, given its entry parameters (``ENTRY_PARAMS``):
        the support library's, for the trees whose entry type map has no NumPy kind (``build_thin_stub``)."""
        fn = self.start(RUN, ENTRY_FN)
        b = self.b
        params, slots = fn.args
        fields = b.bitcast(params, ENTRY_PARAMS.as_pointer())

        def field(index: int) -> ir.Value:
            return b.load(b.gep(fields, [ir.Constant(I32, 0), ir.Constant(I32, index)], inbounds=True))

        root, kinds, nslots, tags_offset, wide_word, buffer_words, active, numpy_table = (
            field(index) for index in range(len(ENTRY_PARAMS.elements))
        )
        buf = b.bitcast(b.alloca(I64, size=buffer_words, name="buffer"), PTR)
        active = b.bitcast(active, I64.as_pointer())
        root = b.bitcast(root, TRACE_FN.as_pointer())
        # (the process's table, or NULL while NumPy's kinds are not known: read at the exit, after the tree ran)
        numpy_table = b.bitcast(numpy_table, PTR.as_pointer().as_pointer())
        self.enter(slots, buf, kinds, nslots, tags_offset, wide_word, active, root, {}, numpy_table)

    def enter(
        self,
        slots: ir.Value,
        buf: ir.Value,
        kinds: ir.Value,
        nslots: ir.Value,
        tags_offset: ir.Value,
        wide_word: ir.Value,
        active: ir.Value,
        root: ir.Value,
        numpy_slots: dict[int, Kind],
        numpy_table: ir.Value | str,
    ) -> None:
        """A stub's work, from its entry block (the buffer allocated there): check slots and unbox them into buf
        as kinds says (then the NumPy slots: numpy_slots), run root, and leave through tj_entry_leave with the
        table of NumPy's objects numpy_table points to (the process's, or NULL: ``numpy_objects_known``), or, a
        stub's symbol, the stub's own, built on its stack."""
        b = self.b
        words = b.bitcast(buf, I64.as_pointer())
        mismatch = self.block("mismatch")

        def word(index: int) -> ir.Value:
            return b.gep(words, [ir.Constant(I64, index)], inbounds=True)

        # 1. the list, then every slot: checked, unboxed, tagged
        is_list = self.is_(self.type_of(slots), self.pointer(list))
        length_ok = self.block("list_ok")
        b.cbranch(is_list, length_ok, mismatch)
        b.position_at_end(length_ok)
        items_ok = self.block("length_ok")
        size = b.load(self.at(slots, abi.OB_SIZE, I64))
        b.cbranch(b.icmp_signed("==", size, nslots), items_ok, mismatch)
        b.position_at_end(items_ok)
        items = b.load(self.at(slots, abi.LIST_ITEMS, PTR))
        unboxed = b.call(self.declare(UNBOX, _UNBOX_FN), [items, buf, kinds, nslots, tags_offset])
        unboxed_ok = self.block("unboxed")
        b.cbranch(b.trunc(unboxed, I1), unboxed_ok, mismatch).set_weights([1000, 1])
        b.position_at_end(unboxed_ok)
        if numpy_slots:
            self.unbox_numpy(numpy_slots, items, words, buf, mismatch)

        # 2. the tree, then its exit's state boxed into the list
        b.store(ir.Constant(I64, abi.FUEL_START), word(abi.FUEL))
        b.store(b.add(b.load(active), ir.Constant(I64, 1)), active)
        exit_number = b.call(root, [buf])
        if isinstance(numpy_table, str):
            table = self.numpy_objects(numpy_table)
        else:  # (tj_entry_run: where the process keeps its table, read once the tree ran)
            table = b.load(numpy_table)
        leave_args = [buf, exit_number, slots, nslots, tags_offset, wide_word, table]
        result = b.call(self.declare(LEAVE, _LEAVE_FN), leave_args)
        # (no Python code runs between this decrement and the return: the stub's code cannot be freed before)
        b.store(b.sub(b.load(active), ir.Constant(I64, 1)), active)
        b.ret(result)

        # a type mismatch: None, nothing changed
        b.position_at_end(mismatch)
        none = self.pointer(None)
        self.capi("Py_IncRef", none)
        b.ret(none)

    def unbox_numpy(
        self, numpy_slots: dict[int, Kind], items: ir.Value, words: ir.Value, buf: ir.Value, mismatch: ir.Block
    ) -> None:
        """(A tree's stub, after tj_entry_unbox took every slot) each slot the entry type map says holds an
        array or a NumPy scalar: its exact type checked (else mismatch: nothing was taken yet but what
        tj_entry_unbox takes for int objects, which a mismatch of the map's kinds never gets to), then tagged as
        the buffer's Python path tags it (``runtime.native``), a scalar's value unboxed into its word (the guards
        of the tree's traces check an array's dtype, dimensions and layout)."""
        b = self.b
        ctx = self.ctx
        assert ctx is not None
        objects = b.bitcast(items, PTR.as_pointer())
        tags = b.gep(buf, [ir.Constant(I64, ctx.layout.tags_offset)], inbounds=True)
        for slot, kind in sorted(numpy_slots.items()):
            obj = b.load(b.gep(objects, [ir.Constant(I64, slot)], inbounds=True))
            exact = NUMPY_SCALARS[kind] if kind is not Kind.ARRAY else arrays.numpy_module().ndarray
            right = self.block(f"numpy_slot{slot}")
            b.cbranch(self.is_(self.type_of(obj), self.pointer(exact)), right, mismatch)
            b.position_at_end(right)
            word = b.gep(words, [ir.Constant(I64, abi.SLOTS + slot)], inbounds=True)
            value_type = _NUMPY_SCALAR_VALUES.get(kind)
            if value_type is not None:
                # (a double's bits, a float32's as its exact double's; an int32 sign-extended, a uint8 or bool not)
                value = b.load(self.at(obj, abi.FLOAT_VALUE, value_type))
                if value_type == FLOAT32:
                    value = b.fpext(value, DOUBLE)
                if value.type == DOUBLE:
                    value = b.bitcast(value, I64)
                elif value.type != I64:
                    value = b.sext(value, I64) if kind is Kind.NP_INT32 else b.zext(value, I64)
                b.store(value, word)
            b.store(ir.Constant(I8, int(kind)), b.gep(tags, [ir.Constant(I64, slot)], inbounds=True))

    def numpy_entries(self) -> dict[int, ir.Value]:
        """The entries of the table of NumPy's objects tj_entry_leave takes (``_numpy_objects``), as pointers."""
        return {index: self.pointer(obj) for index, obj in _numpy_objects().items()}

    def numpy_objects(self, symbol: str) -> ir.Value:
        """(A tree's stub) its table of NumPy's objects for tj_entry_leave, or NULL where NumPy is not imported
        (no value of its kinds can be in the buffer then)."""
        if not NUMPY_SCALARS:
            return ir.Constant(PTR.as_pointer(), None)
        b = self.b
        table = b.alloca(ir.ArrayType(PTR, _NUMPY_TRUE + 1), name="numpy_objects")
        zero = ir.Constant(I64, 0)
        for index, value in self.numpy_entries().items():
            b.store(value, b.gep(table, [zero, ir.Constant(I64, index)], inbounds=True))
        return b.gep(table, [zero, zero], inbounds=True)

    def build_unbox(self) -> None:
        """``i8 tj_entry_unbox(items, buffer, kinds, nslots, tags offset)``: classify and unbox every slot of a
        list's items into the buffer, with its tag; 0 as soon as one has another kind than kinds gives (0: any)."""
        fn = self.start(UNBOX, _UNBOX_FN)
        b = self.b
        items, buf, kinds, nslots, tags_offset = fn.args
        objects = b.bitcast(items, PTR.as_pointer())
        words = b.bitcast(buf, I64.as_pointer())
        tags = b.gep(buf, [tags_offset], inbounds=True)
        refused = self.block("refused")

        def unbox(j: ir.Value) -> None:
            obj = b.load(b.gep(objects, [j], inbounds=True))
            word = b.gep(words, [b.add(j, ir.Constant(I64, abi.SLOTS))], inbounds=True)
            tag = b.call(self.classify(), [obj, word])
            b.store(tag, b.gep(tags, [j], inbounds=True))
            want = b.load(b.gep(kinds, [j], inbounds=True))
            wrong = b.and_(b.icmp_unsigned("!=", want, ir.Constant(I8, 0)), b.icmp_unsigned("!=", want, tag))
            go_on = self.block("slot_ok")
            b.cbranch(wrong, refused, go_on)
            b.position_at_end(go_on)

        self.loop(nslots, "unbox", unbox)

        # every slot matched: the buffer takes a reference of its own to each int object the type map names
        # (codegen.ownership), tagged OWNED; an int past 64 bits elsewhere is an object native code only moves
        def own(j: ir.Value) -> None:
            place = b.gep(tags, [j], inbounds=True)
            with b.if_then(b.icmp_unsigned("==", b.load(place), ir.Constant(I8, int(Kind.INT_OBJECT)))):
                want = b.load(b.gep(kinds, [j], inbounds=True))
                taken = b.icmp_unsigned("==", want, ir.Constant(I8, int(Kind.INT_OBJECT)))
                with b.if_else(taken) as (then, otherwise):
                    with then:
                        word = b.load(b.gep(words, [b.add(j, ir.Constant(I64, abi.SLOTS))], inbounds=True))
                        self.capi("Py_IncRef", b.inttoptr(word, PTR))
                        b.store(ir.Constant(I8, int(Kind.INT_OBJECT) | OWNED), place)
                    with otherwise:
                        b.store(ir.Constant(I8, int(Kind.OBJECT)), place)

        self.loop(nslots, "own", own)
        b.ret(ir.Constant(I8, 1))
        b.position_at_end(refused)
        b.ret(ir.Constant(I8, 0))

    def build_leave(self) -> None:
        """``PyObject *tj_entry_leave(buffer, exit number, slots list, nslots, tags offset, wide word)``: box the
        state an exit wrote into the list (see the module docstring); the stub's result."""
        fn = self.start(LEAVE, _LEAVE_FN)
        b = self.b
        buf, exit_number, slots, nslots, tags_offset, wide_word, self.numpy_table = fn.args
        self.call_args = b.alloca(PTR, name="call_args")
        words = b.bitcast(buf, I64.as_pointer())
        tags = b.gep(buf, [tags_offset], inbounds=True)
        error = [b.alloca(PTR, name=name) for name in ("error_type", "error_value", "error_traceback")]

        def word(index: ir.Value | int) -> ir.Value:
            index = ir.Constant(I64, index) if isinstance(index, int) else index
            return b.gep(words, [index], inbounds=True)

        def tag(index: ir.Value) -> ir.Value:
            return b.gep(tags, [index], inbounds=True)

        self.capi("PyErr_Fetch", *error)  # (NULLs when no exception is set)

        # the buffer's references to int objects of slots native code did not write (tj_entry_unbox took them:
        # the list holds those very objects still)
        def release_unwritten(j: ir.Value) -> None:
            t = b.load(tag(j))
            kept = b.icmp_unsigned("==", b.and_(t, ir.Constant(I8, DIRTY | OWNED)), ir.Constant(I8, OWNED))
            with b.if_then(kept):
                self.capi("Py_DecRef", b.inttoptr(b.load(word(b.add(j, ir.Constant(I64, abi.SLOTS)))), PTR))

        self.loop(nslots, "release_unwritten", release_unwritten)
        depth = b.load(word(abi.DEPTH))
        count = b.add(depth, nslots)  # the slots, then the stack: words SLOTS + j, tags j
        boxed = b.alloca(PTR, size=count, name="boxed")
        b.call(
            self.declare_memset(),
            [b.bitcast(boxed, PTR), ir.Constant(I8, 0), b.mul(count, ir.Constant(I64, abi.WORD)), ir.Constant(I1, 0)],
        )
        fail = self.block("fail")
        high_offset = b.sub(wide_word, nslots)

        # 3. box: references first (no allocation), then numbers and methods
        def take_reference(j: ir.Value) -> None:
            t = b.load(tag(j))
            dirty = b.icmp_unsigned("!=", b.and_(t, ir.Constant(I8, DIRTY)), ir.Constant(I8, 0))
            with b.if_then(dirty):
                kind = b.and_(t, ir.Constant(I8, KIND_BITS))
                known, unknown = self.block("kind_known"), self.block("kind_unknown")
                b.cbranch(self.boxable(kind), known, unknown).set_weights([1000, 1])
                b.position_at_end(unknown)  # (a kind added since: never read its word as a pointer)
                self.capi("PyErr_SetString", self.pointer(SystemError), self.pointer_to_text(UNKNOWN_KIND))
                b.branch(fail)
                b.position_at_end(known)
                owned = b.icmp_unsigned("!=", b.and_(t, ir.Constant(I8, OWNED)), ir.Constant(I8, 0))
                value = b.load(word(b.add(j, ir.Constant(I64, abi.SLOTS))))
                b.store(self.reference(kind, value, owned), b.gep(boxed, [j], inbounds=True))

        def allocate(j: ir.Value) -> None:
            t = b.load(tag(j))
            dirty = b.icmp_unsigned("!=", b.and_(t, ir.Constant(I8, DIRTY)), ir.Constant(I8, 0))
            with b.if_then(dirty):
                kind = b.and_(t, ir.Constant(I8, KIND_BITS))
                value = b.load(word(b.add(j, ir.Constant(I64, abi.SLOTS))))
                place = b.gep(boxed, [j], inbounds=True)
                # an i128's high word (only stack entries are ever i128s; for a slot this reads some other word
                # of the buffer, unused)
                high = b.load(word(b.add(j, high_offset)))
                b.store(self.allocate(kind, value, high, b.load(place), fail), place)

        self.loop(count, "reference", take_reference)
        self.loop(count, "allocate", allocate)
        iterations = b.sub(ir.Constant(I64, abi.FUEL_START), b.load(word(abi.FUEL)))
        first = self.capi("PyLong_FromLongLong", exit_number)
        second = self.capi("PyLong_FromLongLong", iterations)
        result = self.capi("PyTuple_New", b.add(depth, ir.Constant(I64, 2)))
        all_made = b.and_(
            b.icmp_unsigned("!=", result, ir.Constant(PTR, None)),
            b.and_(
                b.icmp_unsigned("!=", first, ir.Constant(PTR, None)),
                b.icmp_unsigned("!=", second, ir.Constant(PTR, None)),
            ),
        )
        made, unmade = self.block("made"), self.block("unmade")
        b.cbranch(all_made, made, unmade).set_weights([1000, 1])
        b.position_at_end(unmade)
        for obj in (first, second, result):
            self.capi("Py_DecRef", obj)  # (NULL-safe)
        b.branch(fail)
        b.position_at_end(made)
        result_items = b.bitcast(b.gep(result, [ir.Constant(I64, abi.TUPLE_ITEMS)], inbounds=True), PTR.as_pointer())
        b.store(first, b.gep(result_items, [ir.Constant(I64, 0)], inbounds=True))
        b.store(second, b.gep(result_items, [ir.Constant(I64, 1)], inbounds=True))

        def give_stack(k: ir.Value) -> None:
            obj = b.load(b.gep(boxed, [b.add(k, nslots)], inbounds=True))
            b.store(obj, b.gep(result_items, [b.add(k, ir.Constant(I64, 2))], inbounds=True))

        self.loop(depth, "stack", give_stack)
        # 4. into the list: every new reference in place, then the old ones released
        items = b.load(self.at(slots, abi.LIST_ITEMS, PTR.as_pointer()))

        def swap(j: ir.Value) -> None:
            place = b.gep(boxed, [j], inbounds=True)
            new = b.load(place)
            with b.if_then(b.icmp_unsigned("!=", new, ir.Constant(PTR, None))):
                item = b.gep(items, [j], inbounds=True)
                b.store(b.load(item), place)
                b.store(new, item)

        def release(j: ir.Value) -> None:
            old = b.load(b.gep(boxed, [j], inbounds=True))
            with b.if_then(b.icmp_unsigned("!=", old, ir.Constant(PTR, None))):
                self.capi("Py_DecRef", old)

        self.loop(nslots, "swap", swap)
        self.loop(nslots, "release", release)
        pending = b.load(error[0])
        raised, normal = self.block("raised"), self.block("normal")
        b.cbranch(b.icmp_unsigned("!=", pending, ir.Constant(PTR, None)), raised, normal).set_weights([1, 1000])
        b.position_at_end(normal)
        b.ret(result)
        b.position_at_end(raised)
        status = self.capi("PyList_Append", slots, result)
        self.capi("Py_DecRef", result)
        appended, not_appended = self.block("appended"), self.block("not_appended")
        b.cbranch(b.icmp_signed("==", status, ir.Constant(I32, 0)), appended, not_appended)
        b.position_at_end(not_appended)
        self.capi("PyErr_Clear")  # (the state is lost: the caller sees a list of nslots items)
        b.branch(appended)
        b.position_at_end(appended)
        self.capi("PyErr_Restore", *(b.load(e) for e in error))
        b.ret(ir.Constant(PTR, None))

        # boxing failed: release what was made; leave with the pending exception, else the allocation's
        b.position_at_end(fail)
        self.loop(count, "unbox_failed", release)
        with b.if_then(b.icmp_unsigned("!=", b.load(error[0]), ir.Constant(PTR, None))):
            self.capi("PyErr_Restore", *(b.load(e) for e in error))
        b.ret(ir.Constant(PTR, None))

    def build_handoff(self) -> None:
        """``PyObject *tj_handoff(params, args, nargs)`` (``METH_FASTCALL``), a loop's hand-off from CPython
        into a tree in one call: ``handoff(values, it, iterable, spill)`` with ``values`` the tuple of the
        user's locals, ``it`` and ``iterable`` the loop's iterator and what it was made from (a comprehension
        handed over whole adds a fifth argument: the container it builds, for its accumulator slot). It builds the
        frame's slots list (the locals, every hidden slot unbound but the loop's own, which it fills as
        ``runtime.handoff.enter`` would: a range loop's from the range iterator's fields, a for loop's from a
        list or tuple iterator's index, any other's iterator as it is) and calls the tree's entry stub on it.
        Returns NotImplemented if it cannot build the list (another shape of values, a range loop over something
        else than a range and its own short iterator, a for loop whose iterator is a sequence iterator, which an
        ndarray's is: the caller hands off through Python), None if the stub
        refused the slots, else ``(the stub's result, slots, the locals as a tuple, whether one is unbound,
        ended)``, where ended says whether the loop has ended as its header would test it after the exit (a range
        loop's range, a for loop's list or tuple walked by index: ``runtime.interpreter.range_exhausted``,
        ``sequence_exhausted``; a while loop: False), None when it cannot tell without Python (ints past 64
        bits, a state only Python reads): the loop driver then asks Python.
        If the stub raised, the list (with the stub's state appended) goes into ``spill``. An entry it made (the stub
        took the slots and returned) counts itself, with its iterations, in the two counter blocks the parameters
        point to (``HANDOFF_COUNTS`` words each: the runner's totals and the tree's), so that no Python runs for
        it: the counters of ``runtime.runner`` and ``runtime.trees`` add them in."""
        fn = self.start(HANDOFF, HANDOFF_FN)
        b = self.b
        params_obj, args, nargs = fn.args
        null = ir.Constant(PTR, None)
        params = b.bitcast(b.gep(params_obj, [ir.Constant(I64, abi.BYTES_DATA)], inbounds=True), I64.as_pointer())

        def param(i: int) -> ir.Value:
            return b.load(b.gep(params, [ir.Constant(I64, i)], inbounds=True))

        def arg(i: int) -> ir.Value:
            return b.load(b.gep(args, [ir.Constant(I64, i)], inbounds=True))

        def items_of(obj: ir.Value, offset: int) -> ir.Value:
            return b.bitcast(b.gep(obj, [ir.Constant(I64, offset)], inbounds=True), PTR.as_pointer())

        def item(items: ir.Value, j: ir.Value | int) -> ir.Value:
            j = ir.Constant(I64, j) if isinstance(j, int) else j
            return b.gep(items, [j], inbounds=True)

        def take(obj: ir.Value) -> ir.Value:
            self.capi("Py_IncRef", obj)
            return obj

        stub_address, nslots, nlocals, base, kind, runner_counts, tree_counts, accumulator = (
            param(i) for i in range(8)
        )
        not_here = self.block("not_here")
        ok = self.block("args_ok")
        # (a comprehension's: a fifth argument, the empty list, set or dict it builds, for its accumulator slot)
        building = b.and_(
            b.icmp_signed("==", nargs, ir.Constant(I64, 5)), b.icmp_signed(">=", accumulator, ir.Constant(I64, 0))
        )
        b.cbranch(b.or_(b.icmp_signed("==", nargs, ir.Constant(I64, 4)), building), ok, not_here)
        b.position_at_end(ok)
        values, it, iterable, spill = (arg(i) for i in range(4))
        shaped = b.and_(
            self.is_(self.type_of(values), self.pointer(tuple)),
            b.icmp_signed("==", b.load(self.at(values, abi.OB_SIZE, I64)), nlocals),
        )
        ok = self.block("values_ok")
        b.cbranch(shaped, ok, not_here)
        b.position_at_end(ok)
        # the loop's hidden slots, new references (NULL: the slot stays unbound), by the loop's kind
        made, fail = self.block("made"), self.block("fail")
        hidden: list[tuple[ir.Block, list[ir.Value]]] = []
        none = self.pointer(None)
        switch = b.switch(kind, not_here)
        block = self.block("while_loop")
        switch.add_case(ir.Constant(I64, HANDOFF_WHILE), block)
        b.position_at_end(block)
        hidden.append((b.block, [null] * 4))
        b.branch(made)
        if abi.RANGE_ITERATOR is not None:
            block = self.block("range_loop")
            switch.add_case(ir.Constant(I64, HANDOFF_RANGE), block)
            b.position_at_end(block)
            index_at, start_at, step_at = abi.RANGE_ITERATOR
            exact = b.and_(
                self.is_(self.type_of(iterable), self.pointer(range)),
                self.is_(self.type_of(it), self.pointer(type(iter(range(0))))),
            )
            exact_block = self.block("range_ok")
            b.cbranch(exact, exact_block, not_here)
            b.position_at_end(exact_block)
            cur = b.load(self.at(it, start_at, I64))
            if index_at >= 0:  # (3.11: the start stays, an index counts the items taken)
                cur = b.add(cur, b.mul(b.load(self.at(it, index_at, I64)), b.load(self.at(it, step_at, I64))))
            cur_obj = self.capi("PyLong_FromLongLong", cur)
            boxed = self.block("cur_boxed")
            b.cbranch(b.icmp_unsigned("!=", cur_obj, null), boxed, fail)
            b.position_at_end(boxed)
            stop, step = (b.load(self.at(iterable, offset, PTR)) for offset in abi.RANGE_FIELDS[1:])
            hidden.append((b.block, [cur_obj, take(stop), take(step), take(none)]))
            b.branch(made)
        if abi.ITERATORS_OK:
            # as runtime.handoff.enter: a private iterator of an exact list or tuple gives way to the sequence
            # and its index (an exhausted one forgot its sequence: an empty tuple then); the user's own iterator
            # (no iterable) is shared as it is
            block = self.block("iter_loop")
            switch.add_case(ir.Constant(I64, HANDOFF_SEQUENCE), block)
            b.position_at_end(block)
            shared, private = self.block("shared_iterator"), self.block("private_iterator")
            b.cbranch(self.is_(iterable, none), shared, private)
            b.position_at_end(shared)
            hidden.append((b.block, [take(none), take(none), take(it), null]))
            b.branch(made)
            b.position_at_end(private)
            iterable_type, it_type = self.type_of(iterable), self.type_of(it)
            exact = b.or_(
                b.and_(self.is_(iterable_type, self.pointer(list)), self.is_(it_type, self.pointer(type(iter([]))))),
                b.and_(self.is_(iterable_type, self.pointer(tuple)), self.is_(it_type, self.pointer(type(iter(()))))),
            )
            exact_block, other = self.block("sequence_ok"), self.block("other_iterable")
            b.cbranch(exact, exact_block, other)
            # anything else tier 1 does not walk by index (a str, a dict, a set, a generator, a subclass of list):
            # its iterator goes into the loop's iterator slot, as shared; but a sequence iterator (CPython's for an
            # object with __getitem__ only, or an ndarray, which tier 1 walks by index) is the Python hand-off's
            b.position_at_end(other)
            iterator_block = self.block("other_iterator")
            b.cbranch(self.is_(it_type, self.pointer(SEQUENCE_ITERATOR)), not_here, iterator_block)
            b.position_at_end(iterator_block)
            hidden.append((b.block, [take(none), take(none), take(it), null]))
            b.branch(made)
            b.position_at_end(exact_block)
            sequence = b.load(self.at(it, abi.SEQUENCE_ITERATOR_SEQUENCE, PTR))
            ongoing = b.icmp_unsigned("!=", sequence, null)
            index = b.select(ongoing, b.load(self.at(it, abi.SEQUENCE_ITERATOR_INDEX, I64)), ir.Constant(I64, 0))
            index_obj = self.capi("PyLong_FromLongLong", index)
            boxed = self.block("index_boxed")
            b.cbranch(b.icmp_unsigned("!=", index_obj, null), boxed, fail)
            b.position_at_end(boxed)
            walked = take(b.select(ongoing, iterable, self.pointer(())))
            hidden.append((b.block, [walked, index_obj, take(none), null]))
            b.branch(made)
        b.position_at_end(made)
        objects = []
        for k in range(4):
            phi = b.phi(PTR, name=f"hidden{k}")
            for source, values_in in hidden:
                phi.add_incoming(values_in[k], source)
            objects.append(phi)
        slots = self.capi("PyList_New", nslots)
        listed = self.block("listed")
        no_list = self.block("no_list")
        b.cbranch(b.icmp_unsigned("!=", slots, null), listed, no_list)
        b.position_at_end(no_list)
        for obj in objects:
            self.capi("Py_DecRef", obj)  # (NULL-safe)
        b.branch(fail)
        b.position_at_end(listed)
        items = b.load(self.at(slots, abi.LIST_ITEMS, PTR.as_pointer()))
        value_items = items_of(values, abi.TUPLE_ITEMS)
        unbound = self.pointer(UNBOUND)
        self.loop(nlocals, "locals", lambda j: b.store(take(b.load(item(value_items, j))), item(items, j)))
        self.loop(b.sub(nslots, nlocals), "hidden", lambda j: b.store(take(unbound), item(items, b.add(j, nlocals))))
        for k, obj in enumerate(objects):
            with b.if_then(b.icmp_unsigned("!=", obj, null)):
                b.store(obj, item(items, b.add(base, ir.Constant(I64, k))))
                self.capi("Py_DecRef", unbound)
        with b.if_then(building):
            b.store(take(arg(4)), item(items, accumulator))
            self.capi("Py_DecRef", unbound)
        stub = b.inttoptr(stub_address, ENTRY_FN.as_pointer())
        result = b.call(stub, [null, slots])
        raised, returned = self.block("raised"), self.block("returned")
        b.cbranch(b.icmp_unsigned("==", result, null), raised, returned).set_weights([1, 1000])
        b.position_at_end(raised)
        error = [b.alloca(PTR, name=name) for name in ("error_type", "error_value", "error_traceback")]
        self.capi("PyErr_Fetch", *error)
        status = self.capi("PyList_Append", spill, slots)
        with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, 0))):
            self.capi("PyErr_Clear")  # (the state is lost: the caller finds nothing in spill)
        self.capi("PyErr_Restore", *(b.load(e) for e in error))
        self.capi("Py_DecRef", slots)
        b.ret(null)
        b.position_at_end(returned)
        matched, refused = self.block("matched"), self.block("refused")
        b.cbranch(self.is_(result, self.pointer(None)), refused, matched)
        b.position_at_end(refused)
        self.capi("Py_DecRef", slots)
        b.ret(result)
        b.position_at_end(matched)
        # count the entry and its iterations (the stub's result: exit number, iterations, ...): no Python does
        iterations = self.capi(
            "PyLong_AsLongLongAndOverflow", b.load(item(items_of(result, abi.TUPLE_ITEMS), 1)), self.overflow
        )
        for counts_address in (runner_counts, tree_counts):
            counts = b.inttoptr(counts_address, I64.as_pointer())
            for k, add in enumerate((ir.Constant(I64, 1), iterations)):
                word = b.gep(counts, [ir.Constant(I64, k)], inbounds=True)
                b.store(b.add(b.load(word), add), word)
        local_values = self.capi("PyTuple_New", nlocals)
        out = self.capi("PyTuple_New", ir.Constant(I64, 5))
        made_both, not_made = self.block("tuples_made"), self.block("tuples_not_made")
        both = b.and_(b.icmp_unsigned("!=", local_values, null), b.icmp_unsigned("!=", out, null))
        b.cbranch(both, made_both, not_made)
        b.position_at_end(not_made)
        for obj in (local_values, out, result, slots):
            self.capi("Py_DecRef", obj)  # (NULL-safe)
        b.ret(null)
        b.position_at_end(made_both)
        items = b.load(self.at(slots, abi.LIST_ITEMS, PTR.as_pointer()))
        local_items = items_of(local_values, abi.TUPLE_ITEMS)
        found = b.alloca(I1, name="found_unbound")
        b.store(ir.Constant(I1, 0), found)

        def copy_local(j: ir.Value) -> None:
            obj = b.load(item(items, j))
            b.store(take(obj), item(local_items, j))
            b.store(b.or_(b.load(found), self.is_(obj, unbound)), found)

        self.loop(nlocals, "out", copy_local)
        flag = take(b.select(b.load(found), self.pointer(True), self.pointer(False)))
        ended = take(self.loop_ended(kind, items, base))
        out_items = items_of(out, abi.TUPLE_ITEMS)
        for k, obj in enumerate((result, slots, local_values, flag, ended)):
            b.store(obj, item(out_items, k))
        b.ret(out)
        b.position_at_end(not_here)
        b.ret(take(self.pointer(NotImplemented)))
        b.position_at_end(fail)
        b.ret(null)

    def loop_ended(self, kind: ir.Value, items: ir.Value, base: ir.Value) -> ir.Value:
        """(In tj_handoff, after the tree ran.) True, False or None (cannot tell here): has the loop of this
        kind, whose hidden slots start at base among items (the slots list's), ended as its header tests it
        (``runtime.interpreter.range_exhausted``, ``sequence_exhausted``)? A while loop: False (no such test)."""
        b = self.b
        unknown, no = self.pointer(None), self.pointer(False)
        done = self.block("ended_known")
        answers: list[tuple[ir.Value, ir.Block]] = []

        def slot(k: int) -> ir.Value:
            return b.load(b.gep(items, [b.add(base, ir.Constant(I64, k))], inbounds=True))

        def exact_int(obj: ir.Value) -> ir.Value:
            return self.is_(self.type_of(obj), self.pointer(int))

        def answer(ended: ir.Value, ok: ir.Value) -> None:
            answers.append((b.select(ok, b.select(ended, self.pointer(True), no), unknown), b.block))
            b.branch(done)

        def test(condition: ir.Value, name: str) -> None:
            """Go on in a new block if condition holds, else answer None."""
            go_on = self.block(name)
            answers.append((unknown, b.block))
            b.cbranch(condition, go_on, done)
            b.position_at_end(go_on)

        switch = b.switch(kind, done)
        answers.append((no, b.block))  # (a while loop)
        if abi.RANGE_ITERATOR is not None:
            block = self.block("range_ended")
            switch.add_case(ir.Constant(I64, HANDOFF_RANGE), block)
            b.position_at_end(block)
            cur, stop, step = slot(0), slot(1), slot(2)
            test(b.and_(b.and_(exact_int(cur), exact_int(stop)), exact_int(step)), "range_ints")
            (cur_value, cur_ok), (stop_value, stop_ok), (step_value, step_ok) = (
                self.unbox_int(obj) for obj in (cur, stop, step)
            )
            ended = b.select(
                b.icmp_signed(">", step_value, ir.Constant(I64, 0)),
                b.icmp_signed(">=", cur_value, stop_value),
                b.icmp_signed("<=", cur_value, stop_value),
            )
            answer(ended, b.and_(b.and_(cur_ok, stop_ok), step_ok))
        if abi.ITERATORS_OK:
            block = self.block("sequence_ended")
            switch.add_case(ir.Constant(I64, HANDOFF_SEQUENCE), block)
            b.position_at_end(block)
            sequence, index, iterator = slot(0), slot(1), slot(2)
            sequence_type = self.type_of(sequence)
            by_index = b.and_(
                self.is_(iterator, self.pointer(None)),
                b.or_(self.is_(sequence_type, self.pointer(list)), self.is_(sequence_type, self.pointer(tuple))),
            )
            test(b.and_(by_index, exact_int(index)), "sequence_by_index")
            index_value, index_ok = self.unbox_int(index)
            size = b.load(self.at(sequence, abi.OB_SIZE, I64))
            answer(b.icmp_signed(">=", index_value, size), index_ok)
        b.position_at_end(done)
        out = b.phi(PTR, name="ended")
        for value, source in answers:
            out.add_incoming(value, source)
        return out

    def declare_memset(self) -> ir.Function:
        return self.declare("llvm.memset.p0i8.i64", ir.FunctionType(ir.VoidType(), [PTR, I8, I64, I1]))


def _build_holds_unbound(module: ir.Module, constant: Any) -> None:
    """``PyObject *tj_holds_unbound(PyObject *self, PyObject *values)`` (``METH_O``): True if the tuple values
    holds the unbound marker, else False. It compares pointers only (``UNBOUND in values`` would call the
    values' ``__eq__``); the loop driver asks it of the locals it hands back to CPython."""
    fn = ir.Function(module, ENTRY_FN, name=HOLDS_UNBOUND)
    incref = module.globals.get("Py_IncRef") or ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), "Py_IncRef")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    values = fn.args[1]

    def field(offset: int, ty: ir.Type) -> ir.Value:
        return b.bitcast(b.gep(values, [ir.Constant(I64, offset)], inbounds=True), ty.as_pointer())

    size = b.load(field(abi.OB_SIZE, I64))
    items = field(abi.TUPLE_ITEMS, PTR)
    start = b.block
    head, body, found, missing = (fn.append_basic_block(name) for name in ("head", "body", "found", "missing"))
    b.branch(head)
    b.position_at_end(head)
    index = b.phi(I64)
    index.add_incoming(ir.Constant(I64, 0), start)
    b.cbranch(b.icmp_signed("<", index, size), body, missing)
    b.position_at_end(body)
    item = b.load(b.gep(items, [index], inbounds=True))
    index.add_incoming(b.add(index, ir.Constant(I64, 1)), body)
    b.cbranch(b.icmp_unsigned("==", item, constant(UNBOUND)), found, head)
    for block, answer in ((found, True), (missing, False)):
        b.position_at_end(block)
        b.call(incref, [constant(answer)])
        b.ret(constant(answer))
