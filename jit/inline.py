"""Calls traced through: a call of a plain Python function (or of another ``@jit`` function) from a trace
being recorded is recorded into the trace, its body inlined, when the callee fits the way inlined exits work.

An inlined call has no frame in native code. Every guard in its body leaves to the interpreter at the
caller's CALL instruction (the outermost one, when inlined calls nest), with the callee and its arguments on
the stack, so that the interpreter makes the call for real: CPython runs it, and its exceptions and
tracebacks are CPython's. That is exact because the inlined body does nothing Python code could see before
such a guard. So a body changes memory only after its last way out:

* its stores of a number, a str or None into instance attributes that hold one (what every counter, total and
  flag holds) are checked where they are (``_CHECK_STORE_ATTR_INSTANCE``) and made at the outermost call's return,
  in their order (``_STORE_ATTR_INSTANCE_CHECKED``, `InlinedCall.deferred`), where no exit follows: `self.total
  += x; self.count += 1` is inlined, both adds' overflow checks before either store. A read of such an
  attribute before the return gets the value stored (the instance's memory still holds the old one), and one
  of the same name on another object (which could be the same instance) is not inlined;
* its appends are made there too (``_CALL_LIST_APPEND_CHECKED``): `self.log.append(x); self.count += 1` is
  inlined. Until then nothing may read a list (any uop taking one, but binding its append): it could be one
  appended to. Likewise its stores into dicts under str keys (``_CHECK_STORE_SUBSCR_DICT_STR`` where they are,
  ``_STORE_SUBSCR_DICT_STR_CHECKED`` at the return, in their order): `self.counts[w] = self.counts.get(w, 0) +
  1; self.total += 1` is inlined, and after such a store nothing may read a dict;
* its stores of a number or None into a global of the trace's function's module (`global count; count += 1`)
  likewise (``_CHECK_STORE_GLOBAL`` where they are, ``_STORE_GLOBAL_CHECKED`` at the return); every trace of
  the function reads such a global at each use from then on (the monitor's ``volatile_globals``), and one that had
  pinned it by a guard is recorded again. A helper of another module storing its own globals is not inlined;
* its stores into its closure's cells (`nonlocal count; count += 1`, a helper of the jitted function counting), where
  the cell holds nothing, a number or None, likewise (``_CHECK_STORE_CELL`` where they are, ``_STORE_CELL_CHECKED``
  at the return); a read of such a cell before the return gets the value stored, and a read of a cell of another
  function's closure (which could be the same cell) is not inlined;
* what it makes is no change Python code could see until the call returns: a list or tuple it builds, and an
  instance of an ordinary class (`Vec(x, y)`: ``jit.instances.find_constructor``), which native code makes
  through the class's tp_new (``_NEW_INSTANCE``) before inlining its ``__init__`` on it; stores into such an
  instance (``Recorder.fresh``) are made where they are (``_STORE_ATTR_FRESH``), with exits after them (the
  instance is released there);
* any other change is one uop of `ONE_EFFECT` (a list item or instance attribute store, a list's pop, whose own checks come
  before its effect, as every DEOPT guard's), after which nothing in the inlined calls may leave (another
  check, an overflow check, a guard of any kind): `row[i] = x` is inlined, `row[i] = x; return x + 1` is one
  generic call.

Only running out of memory while boxing a deferred store's number, or growing a list or dict, leaves after a
change: the call's MemoryError is raised at the caller's line, with the changes before it made. Other uops
that change memory or may run Python code (a barrier, a global store of another module) are never inlined.
Callees with loops, recursion, star arguments, keyword-only parameters left to their defaults, ``del`` of a
``nonlocal`` variable, closures of their own, generators, and functions the front end refuses are not inlined either: the call is
made generically, through the C-API. A closure that reads its enclosing function's variables is inlined
(``LOAD_FREE``: its cell, read at every call), and so is a lambda.

The callee is a constant (a global, a method of a class: ``_GUARD_CALLEE``) or a value of the trace, a function a
variable holds (a helper defined in the jitted function, or passed to it: ``_GUARD_CALLEE_VALUE``, its code and
globals, and the defaults where the call takes some).

While the caller is recorded, the callee runs once in the tier-1 interpreter under the recorder's hook (each
instruction is recorded before it runs), and its result is handed to the caller's CALL instead of calling the
function a second time, so the call happens exactly once. A recording that fails inside the body before any
store stops the dry run there (nothing visible happened: the interpreter makes the call for real); one that
fails after a store, deferred or not, lets the dry run finish unrecorded (`InlinedCall.changed`), and hands
its result, or the exception it raised, to the caller's CALL all the same (`Returns`, `Raises`): the call is
then recorded as a generic one, and still made once.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import linecache
import types
import weakref
from typing import Any

from jit.aborts import Abort, Reason
from jit.frontend import Unsupported, compile_to_tier1
from jit.frontend.instructions import T1Code
from jit.resume import FrameState
from jit.trace import Snapshot, Value
from runtime.frame import UNBOUND

_REFUSED_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR | inspect.CO_COROUTINE
_REFUSED_FLAGS |= inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE

# function -> (its code object when compiled, its tier-1 code or why it cannot be inlined)
_compiled: weakref.WeakKeyDictionary[types.FunctionType, tuple[types.CodeType, T1Code | str]] = (
    weakref.WeakKeyDictionary()
)


def cell_owner(owner: Value) -> Any:
    """What tells the function an inlined closure's cells belong to: the constant itself, else the value of the
    trace holding it (``InlinedCall.cells``)."""
    return ("const", id(owner.const)) if owner.is_const else ("value", owner.id)


@dataclasses.dataclass
class InlinedCall:
    """One call being recorded into the trace: the callee's abstract frame replaces the caller's while its
    body is recorded (``saved`` holds the caller's), and ``result`` is what its RETURN_VALUE returned."""

    function: types.FunctionType
    code: T1Code
    abstract: FrameState
    site: Snapshot  # the state at the outermost call: where every exit of an inlined body resumes
    site_pc: int
    site_line: int
    saved: tuple[Any, FrameState, int, int]  # the caller's code, abstract frame, pc and line
    result: Value | None = None
    # (the outermost call) the uop of ONE_EFFECT its body, or a call it makes, recorded: no exit may follow
    effect: str | None = None
    # (the outermost call) the changes made at its return, in order: (instance id, name) of an attribute store,
    # ("append", n) or ("dict", n), -> the uop that makes it, its inputs and its operand
    deferred: dict[tuple[Any, Any], tuple[str, tuple[Value, ...], Any]] = dataclasses.field(default_factory=dict)
    # the value of the trace holding the function, where a variable holds it (else the function is a constant)
    held: Value | None = None
    # (the outermost call) may its body change nothing at all (an operator method: jit.recorder.operator_methods)?
    # Then a change aborts the recording before it is made, and the dry run has changed nothing
    pure: bool = False
    # (the outermost call) the cells its body assigned (`nonlocal`: stored at its return, deferred), by the function
    # whose closure holds them (``cell_owner``) and index -> the value stored: what reads of them get until then
    cells: dict[tuple[Any, int], Value] = dataclasses.field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """(The outermost call) has its dry run changed memory (each change recorded runs right after)? A
        recording that fails from here on lets it finish, and never makes the call again."""
        return self.effect is not None or bool(self.deferred)

    def defer(self, key: tuple[Any, Any], uop: str, args: tuple[Value, ...], operand: Any = None) -> None:
        """Make a change (uop on args) at the call's return, after the changes deferred so far: key names what it
        changes (the same key again moves that change last: of two stores there, the later stands)."""
        if self.pure:
            raise Abort(Reason.NOT_INLINED, name=self.function.__qualname__, why="it changes memory")
        self.deferred.pop(key, None)
        self.deferred[key] = (uop, args, operand)


#: the uops an inlined body may record once, as its last way out (see above): each changes memory only after
#: every check it makes (a DEOPT guard leaves before its effect) and runs no Python code
ONE_EFFECT = frozenset(
    {
        "_STORE_SUBSCR_LIST_INT",
        "_STORE_SUBSCR_LIST_OBJECT",
        "_STORE_ATTR_INSTANCE",
        "_LIST_POP",
    }
)


def target_of(fn: Any) -> types.FunctionType | None:
    """The plain function a call of fn runs: fn itself, or the function a ``@jit`` wrapper decorates (with
    the wrapper's defaults, which may have been assigned after decoration)."""
    if type(fn) is not types.FunctionType:
        return None
    if hasattr(fn, "__tracejit__"):
        inner = getattr(fn, "__wrapped__", None)
        if type(inner) is not types.FunctionType:
            return None
        if inner.__defaults__ != fn.__defaults__ or inner.__kwdefaults__ != fn.__kwdefaults__:
            return None  # (rare: defaults reassigned on the wrapper; not worth a copy of the function)
        return inner
    return fn


# dataclass -> (the __init__ it had, the stand-in made for it or None) (``dataclass_init``)
_stand_ins: weakref.WeakKeyDictionary[type, tuple[Any, types.FunctionType | None]] = weakref.WeakKeyDictionary()
_stand_in_count = itertools.count()


def dataclass_init(klass: type) -> types.FunctionType | None:
    """A stand-in for the ``__init__`` dataclasses generated for klass, whose source (an ``exec`` of a text they do
    not keep) the front end cannot read: the same parameters and defaults and the same stores, `self.f = f` for
    each field in order, written where ``linecache`` finds it, so that a call of klass is made natively and this
    ``__init__`` inlined (the class's version guard keeps klass's own ``__init__`` the generated one). Only where
    every field is taken by the ``__init__`` as it is: by position, no default_factory, no ``InitVar``, no
    ``__post_init__``, not frozen; else None (a generic call)."""
    init = klass.__dict__.get("__init__")
    cached = _stand_ins.get(klass)
    if cached is not None and cached[0] is init:  # (another __init__ assigned to the class since: looked at anew)
        return cached[1]
    made = None
    params = getattr(klass, "__dataclass_params__", None)
    if params is not None and params.init and not params.frozen and type(init) is types.FunctionType:
        code = init.__code__
        fields = dataclasses.fields(klass)
        names = tuple(f.name for f in fields)
        plain = all(f.init and not f.kw_only and f.default_factory is dataclasses.MISSING for f in fields)
        if (
            plain
            and code.co_filename == "<string>"
            and code.co_kwonlyargcount == 0
            and code.co_varnames[1 : code.co_argcount] == names
            and len(code.co_varnames) == code.co_argcount
            and not hasattr(klass, "__post_init__")
            and all(name.isidentifier() and not name.startswith("__") for name in names)
        ):
            made = _stand_in(klass, init, names)
    _stand_ins[klass] = (init, made)
    return made


def _stand_in(klass: type, init: types.FunctionType, names: tuple[str, ...]) -> types.FunctionType:
    defaults = init.__defaults__ or ()
    first_default = len(names) - len(defaults)
    signature = ", ".join(["self", *(name if i < first_default else f"{name}=None" for i, name in enumerate(names))])
    body = "".join(f"    self.{name} = {name}\n" for name in names) or "    pass\n"
    text = f"def __init__({signature}):\n{body}"
    filename = f"<tracejit: {klass.__qualname__}.__init__ of a dataclass, {next(_stand_in_count)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), namespace)
    stand_in = namespace["__init__"]
    stand_in.__defaults__ = init.__defaults__
    stand_in.__qualname__ = f"{klass.__qualname__}.__init__"
    return stand_in


def parameters(fn: types.FunctionType, nargs: int, keywords: tuple[str, ...] = ()) -> tuple[int | None, ...]:
    """For a call of fn with nargs arguments, the last len(keywords) of them by keyword: for each parameter of fn
    (the positional ones, then the keyword-only ones: the first slots of its frame) the index of the argument
    that gives it, or None where its default does. Abort where CPython would raise TypeError (the call is made
    generically and raises it) or where the default would be a keyword-only one (``__kwdefaults__``, a dict
    that no guard pins)."""
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    given: list[int | None] = [None] * len(names)
    npositional = nargs - len(keywords)
    why = None
    if npositional > code.co_argcount:
        why = "it is called with a wrong number of arguments"
    given[:npositional] = range(npositional)
    for index, keyword in enumerate(keywords, npositional):
        slot = names.index(keyword) if keyword in names else -1
        if slot < code.co_posonlyargcount or given[slot] is not None:
            why = why or f"no parameter takes the keyword {keyword!r} (or it is given twice)"
            continue
        given[slot] = index
    first_default = code.co_argcount - len(fn.__defaults__ or ())
    if why is None and any(given[slot] is None for slot in range(first_default)):
        why = "it is called with a wrong number of arguments"
    if why is None and any(given[slot] is None for slot in range(code.co_argcount, len(names))):
        why = "a keyword-only parameter left to its default"
    if why is not None:
        raise Abort(Reason.NOT_INLINED, name=fn.__qualname__, why=why)
    return tuple(given)


def callee_code(fn: types.FunctionType, nargs: int, keywords: tuple[str, ...] = ()) -> T1Code:
    """fn's tier-1 code, if a call of fn with nargs arguments (the last len(keywords) by keyword) can be
    inlined; else Abort."""
    name = fn.__qualname__
    code = fn.__code__
    why = None
    if code.co_flags & _REFUSED_FLAGS:
        why = "a generator, coroutine, or *args/**kwargs function"
    elif code.co_cellvars:
        why = "it makes closures of its own"
    else:
        parameters(fn, nargs, keywords)
    if why is None:
        cached = _compiled.get(fn)
        if cached is None or cached[0] is not code:
            try:
                compiled: T1Code | str = compile_to_tier1(fn, inlined=True)
            except Unsupported as exc:
                compiled = f"the front end refuses it: {exc}"
            except Exception as exc:  # (no source: a lambda made by exec, a builtin-like function...)
                compiled = f"the front end cannot read it ({type(exc).__name__})"
            else:
                if compiled.loops:
                    compiled = "it has a loop"
            cached = (code, compiled)
            _compiled[fn] = cached
        if isinstance(cached[1], str):
            why = cached[1]
        else:
            return cached[1]
    raise Abort(Reason.NOT_INLINED, name=name, why=why)


def initial_slots(fn: types.FunctionType, code: T1Code, args: list[Any], given: tuple[int | None, ...]) -> list[Any]:
    """The callee frame's slots for a call with args bound to its parameters as given says (``parameters``):
    parameters (an argument or a default), then unbound."""
    defaults = fn.__defaults__ or ()
    first_default = fn.__code__.co_argcount - len(defaults)
    slots = [args[index] if index is not None else defaults[slot - first_default] for slot, index in enumerate(given)]
    slots.extend([UNBOUND] * (code.nslots - len(slots)))
    return slots


class Returns:
    """Stands in for the callee on the caller's stack once the dry run computed the call's result: the
    caller's CALL instruction calls it and gets that result, so the function runs once."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        return self.value


class Raises:
    """Stands in for the callee on the caller's stack once a dry run that changed memory raised: the caller's
    CALL instruction calls it and raises that exception, so the function runs once."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __call__(self, *args: Any, **keywords: Any) -> Any:
        raise self.error


class CalleeFunction:
    """What the tier-1 interpreter needs of a function to run an inlined callee's code (it has no loops)."""

    def __init__(self, fn: types.FunctionType, exec_args: tuple[Any, ...]) -> None:
        self.globals = fn.__globals__
        self.builtins = fn.__builtins__  # type: ignore[attr-defined]
        self.closure = fn.__closure__ or ()  # (its cells: LOAD_FREE)
        self.exec_args = exec_args
        self.backedge_counts: list[int] = []
        self.hot_loops: list[Any] = []
        self.hot_threshold = 0


__all__ = [
    "ONE_EFFECT",
    "CalleeFunction",
    "InlinedCall",
    "Raises",
    "Returns",
    "callee_code",
    "initial_slots",
    "parameters",
    "target_of",
]
