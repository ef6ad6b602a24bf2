"""The Recorder: the abstract frame, snapshots, emitting uops, closing and nesting traces, and the table of
instruction handlers (filled by ``@_handles`` in the other modules of ``jit.recorder``)."""

from __future__ import annotations

import dataclasses
import traceback
import types
import weakref
from collections.abc import Callable
from typing import Any, NoReturn

from jit import inline, instances, specialize
from jit.aborts import Abort, Reason
from jit.arrays import ArraySpec
from jit.frontend import instructions as I
from jit.frontend.instructions import LoopInfo, LoopKind
from jit.interfaces import ExitView, RecordingHost, TreeView
from jit.kinds import MAY_BE_OWNED, Kind, kind_of
from jit.resume import FrameState, Hold, Snapshots, exit_resume, prewritten
from jit.trace import NO_CONST, ExitPoint, Snapshot, Trace, TraceEnd, TraceKind, Value, WhenHot
from jit.uops import UOPS, Callee, SlotKind, TreeCall, TreeExit
from runtime.frame import UNBOUND, Frame

#: the kinds of owned references a slot may hold (codegen.ownership)
OWNED_SLOT_KINDS = frozenset({Kind.INT_OBJECT})
#: the kinds of a slot that a parent's exit or the back-edge may make hold an owned reference, as far as linking a
#: side trace into a tree and handing a tree call's state over are concerned (``owned_slots``; those of
#: MAY_BE_OWNED: a str or dict the trace carries across the back-edge goes into an inner tree's call owned too)
LINKED_OWNED_KINDS = MAY_BE_OWNED
#: what may run while a method is bound and not called yet (jit.recorder.generic.PendingMethod): its arguments'
#: loads and pure operations, calls that run no Python code (a str method: jit.recorder.pure_methods; a builtin's
#: uops; an inlined function), slices and f-strings (a barrier, a change, a store or a branch among them: recorded
#: again without fusing)
_WHILE_METHOD_PENDING = frozenset(
    {I.LOAD_FAST, I.LOAD_CONST, I.LOAD_GLOBAL, I.LOAD_ATTR, I.BINARY_OP, I.UNARY_OP, I.COMPARE_OP}
    | {I.BINARY_SUBSCR, I.BUILD_TUPLE, I.BUILD_LIST, I.CALL, I.CALL_KW, I.NOP}
    | {I.BUILD_SLICE, I.FORMAT_VALUE, I.BUILD_STRING}
)


#: the most tier-1 instructions an inner loop unrolled into its outer trace may have over all its iterations (its
#: body's times its trips: 16 iterations of a one-line body such as ``total += (i ^ j) & 7``, 9 instructions):
#: a tree call per outer iteration costs 5 to 15 ns, which so short an inner loop does not win back
UNROLL_BUDGET = 160


#: the classes a site's traces may be specialized on; past them, the site takes the generic path (may_specialize)
MAX_SITE_CLASSES = 4


def _made_anew(seen: type | None, klass: type) -> bool:
    """Is klass, met at a site where seen (None: since freed) was met before, a class made again by the code that
    made seen (the same module and qualified name, another object)?"""
    if seen is None:
        return True
    return seen is not klass and (seen.__qualname__, seen.__module__) == (klass.__qualname__, klass.__module__)


class Recorder:
    def __init__(
        self,
        host: RecordingHost,
        frame: Frame,
        loop: LoopInfo,
        start_pc: int,
        parent: ExitView | None = None,
        entry: dict[int, Kind] | None = None,
    ) -> None:
        self.host = host  # the monitor, seen through jit.interfaces
        self.code = frame.code
        # (a peer root tree's recording: jit.monitor.Monitor.wants_peer) the exit that asked for it, linked to it
        self.peer_of: Any = None
        self.trace = Trace(TraceKind.SIDE if parent else TraceKind.ROOT, loop, start_pc)
        # the abstract frame (slot -> value, operand stack), and the snapshots taken of it (jit.resume)
        self.abstract = FrameState(start_pc)
        self.snapshots = Snapshots([self.abstract])
        self.virtual_ranges: dict[int, tuple[Value, Value, Value]] = {}
        # (dict value id, str key value id) whose entry the trace read as a number, None or missing, since the
        # last uop that could change a dict (a store over it then needs no check of what it replaces)
        self.plain_entries: set[tuple[int, int]] = set()
        self.entry_objects: dict[tuple[int, int], Value] = {}  # (likewise) the int or float object read there
        self.bound_dicts: dict[int, Value] = {}  # `d.get` value id -> d
        self.bound_method_sites: dict[int, int] = {}  # `d.get` or `lst.append` value id -> the pc of its LOAD_ATTR
        # the items of an enumerate or a zip, about to be unpacked (value id -> the items): never built
        self.virtual_tuples: dict[int, tuple[Value, ...]] = {}
        # iterators the trace made for an inner loop (jit.recorder.iteration): before their GET_ITER, and (a dict
        # view's) before the CALL of the method that gives the view
        self.made_iterators: set[int] = set()
        self.view_calls: set[int] = set()
        self.wide_bounds: dict[int, int] = {}  # (jit.specialize) the largest magnitude of each i128 value
        self.owned_values: set[int] = set()  # the ids of the values uops declared `owns` made
        # the instances the outermost inlined call made (_NEW_INSTANCE), which nothing else holds yet: id -> the
        # values stored into their attributes so far, by name (jit.recorder.attributes)
        self.fresh: dict[int, dict[str, Value]] = {}
        # the ids of the objects the trace holds without a reference of their own that an owned value keeps alive
        # (an item read out of a list the trace built, a guard's result on it: codegen.ownership)
        self.dependent_values: set[int] = set()
        # the ids of the owned values whose contents another object holds too (``UopDef.shared``: a builtin
        # iterator's items, held by the iterable); a barrier that may drop those keeps the slots alive anyway
        # (jit.recorder.generic._keep_alive)
        self.shared_values: set[int] = set()
        self.kept_alive: dict[int, Value] = {}  # boxed value id -> the reference the trace took to it (_NEW_REF)
        self.array_specs: dict[int, ArraySpec] = {}  # arrays guarded so far (value id -> spec)
        self.writeable_arrays: set[int] = set()  # (jit.specialize_numpy.ArrayEmitter)
        self.errstate_guarded: set[frozenset[str]] = set()  # (jit.specialize_numpy.ignored_events)
        # (the function is called under changing error states as a rule: its traces ignore no event, guard none)
        self.errstate_stable = host.errstate_changes < 2
        self.array_headers: dict[int, tuple[Value, list[Value], list[Value]]] = {}  # (specialize_numpy.header)
        self.virtual_shapes: dict[int, Value] = {}  # `a.shape` about to be subscripted (value id -> the array)
        # array subscripts being evaluated: `a[i]` of a multi-dimensional array, a key `(i, j)` (never built)
        self.array_indices: dict[int, _ArrayIndex] = {}
        self.resume_override: Snapshot | None = None  # where guards resume while an array subscript completes
        # (jit.recorder.generic) `obj.m` not bound yet, to be called as one method call: value id -> PendingMethod
        self.pending_methods: dict[int, Any] = {}
        self.pending_tree: TreeView | None = None
        # a barrier was recorded (jit.recorder.generic): its result (a Value), or the values it left on the stack
        # (an unpacking's items, the first on top), or True if it has none; checked at the start of the next
        # instruction
        self.after_barrier: Value | tuple[Value, ...] | bool | None = None
        # the value after_barrier types ran no Python code (a list's pop): no check of the hoisted guards
        self.ran_no_code = False
        # results of calls of a generator function whose code, guarded, has no try, with or finally
        # (jit.recorder.generic.call): releasing such a generator runs no Python code of its own
        self.plain_generators: set[int] = set()
        self.pending_next: Any = None  # a generic FOR_ITER's next(), its outcome unseen (jit.recorder.generic)
        self.pending_branch: Any = None  # a branch on a Python __bool__'s answer, unseen (jit.recorder.generic)
        # some trace of the function has a barrier: borrowed pointers slots carry into a tree are given
        # references of their own where a trace ends (jit.recorder.generic.keep_carried)
        self.host_has_barriers = bool(getattr(host, "has_barriers", False))
        self.generalized = False  # an attribute site went megamorphic in this recording (jit.recorder.attributes)
        # inner loops whose tree left in the middle of an iteration: the trace records the rest of that
        # iteration, and its back-edge to the header (where the tree is called again) is allowed once
        self.finishing_inner: set[int] = set()
        if parent is not None:  # (a side trace from inside an inner loop's iteration, one it unrolled: the same)
            for inner in self.code.loops:
                if inner.index != loop.index and loop.contains(inner.header_pc) and inner.header_pc < start_pc:
                    if start_pc < inner.body_end:
                        self.finishing_inner.add(inner.index)
        # short inner range loops recorded through (unrolled, ``unroll``): loop index -> (slot of the range's
        # bound, the value the trace read it as at its start), or None for a constant bound
        self.unrolled: dict[int, tuple[int, Value] | None] = {}
        self.peeled: set[int] = set()  # inner loops whose first iteration is recorded through (``peel``)
        self.inlined: list[inline.InlinedCall] = []  # the calls whose bodies are being recorded (jit.inline)
        self.site_snapshot: Any = None  # the state at the CALL being inlined (taken before its arguments go)
        # globals the function stores: read from the dict each time, not pinned by a guard; and the values this
        # trace stored last (until a tree call, which may store them too)
        self.globals = frame.function.globals
        # (and those rebound as a rule by code it calls: read from the dict at each use like those it stores)
        self.stored_globals = _stored_globals(self.code) | host.volatile_globals
        self.global_values: dict[str, Value] = {}
        # globals whose value in the dict the trace knows frees running no Python code (it read an int, float or
        # bool there, or stored a number, None or a str): storing over it needs no check of the old value
        self.number_globals: set[str] = set()
        # globals a hoisted _GUARD_GLOBAL_NUMBER keeps a number while the trace runs (checked again after barriers
        # and signal handlers; a trace storing anything else there is recorded without it, and native code stores
        # nothing there but numbers, None and strs without a barrier): every store over them frees running no
        # Python code
        self.numbers_throughout: set[str] = set()
        self.pc = start_pc
        self.frame: Frame | None = None  # the frame whose instruction is being recorded
        self.line = self.code.lines[start_pc]
        self.limit = host.options.max_trace_length
        self.depth = 0  # nesting depth of the trees this trace calls
        self.finished = False
        # a root trace: what the frame's slots held where it starts (the kind of a slot it assigns an int object
        # without reading it first becomes part of its entry type map: codegen.ownership)
        self.start_slots = list(frame.slots) if parent is None else []
        self.parent_borrowed: frozenset[int] = frozenset()  # (a side trace) ExitView.borrowed_slots of its exit
        if parent is None:
            self.snapshots.begin(start_pc)
            self.emit("_CHECK_PERIODIC")
            self.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]
            for slot in entry or ():  # (a root for a trace's end that no tree took: Monitor.wants_root)
                self.read_slot(frame, slot)
        else:
            self.trace.parent_exit = parent
            self.trace.known_kinds = dict(parent.known_kinds)
            self.trace.owned_entry_stack = frozenset(parent.owned_stack)
            self.parent_borrowed = frozenset(parent.borrowed_slots)
            self.trace.entry_borrowed = self.parent_borrowed
            for index, kind in enumerate(parent.stack_kinds):
                if index in parent.stack_consts:  # a constant where the parent left: still that constant
                    value = self.const(parent.stack_consts[index])
                else:
                    value = self.trace.new_value(kind)
                    self.trace.entry_stack[index] = value
                self.abstract.push(value)
            self.trace.start_stack = list(self.abstract.stack())
            self.snapshots.begin(start_pc)
            if start_pc == loop.header_pc + 1:
                # from a hoisted guard's exit at a root's entry (before its periodic check): this side trace does
                # the whole iteration, and its tail-jump into a tree's entry fails that guard again, so each
                # iteration comes back here; the fuel it counts down is the iterations run, and Ctrl-C is seen
                self.emit("_CHECK_PERIODIC")
                self.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]

    # --- the trace hook ----------------------------------------------------------------------------------
    def __call__(self, frame: Frame, pc: int) -> None:
        try:
            self.record(frame, pc)
        except Abort as exc:
            self.abort(exc, frame)
        except Exception as exc:  # a recorder bug must never break the user's program
            self.abort(_internal_error(exc), frame)

    def abort(self, abort: Abort, frame: Frame | None = None) -> None:
        if self.finished:
            return
        self.finished = True
        if frame is not None:
            frame.trace_hook = None
        if (self.unrolled or self.peeled) and not abort.retry:
            # (a loop unrolled or peeled into this trace may be why: too long a trace, something only its own
            # trace takes; the next recording calls its tree instead)
            self.code.not_unrolled.update(self.unrolled, self.peeled)
        self.host.recording_aborted(self, abort)

    def finish(self, frame: Frame) -> None:
        changed = [
            u.operand.klass
            for u in self.trace.uops
            if u.name == "_GUARD_CLASS_VERSION" and instances.version_of(u.operand.klass) != u.operand.version
        ]
        if changed:  # (a class the loop changes at every iteration: `Money.calls += 1` in a method it runs)
            self.host.unstable_classes.update(changed)
            raise Abort(Reason.CLASS_CHANGED, name=changed[0].__qualname__)
        self.finished = True
        frame.trace_hook = None
        self.host.recording_finished(self, self.trace)

    def inline_call(
        self,
        frame: Frame,
        target: types.FunctionType,
        args: list[Value],
        n: int,
        method: Any = None,
        held: Value | None = None,
        receiver: Any = NO_CONST,
        specialize_receiver: Callable[[Value], Value] | None = None,
        keywords: tuple[str, ...] = (),
        constructs: instances.ClassAttr | None = None,
        pure: bool = False,
    ) -> Value:
        """Record the body of a call of target (the interpreter is at the caller's CALL, with target's
        arguments on the stack) into the trace; the call's result. The callee runs here, once (jit.inline).
        method: the pending method (``jit.recorder.generic.PendingMethod``) of a call `obj.m(...)` of a method
        target: args start with obj, the interpreter's stack holds the bound method and the other n arguments,
        and the exits resume at the method's LOAD_ATTR (the arguments in between are computed again there).
        held: the value of the trace holding target where the call is not of a constant (a function a variable
        holds), guarded to be a function with target's code and globals; or, with receiver (the object it was
        bound to when recorded), a bound method of target a variable holds, guarded to be a bound method, whose
        function is guarded so and whose receiver, guarded and unboxed by specialize_receiver, is target's first
        argument. keywords: the names of the last len(keywords) arguments, given by keyword (a call CALL_KW).
        constructs: (a call `klass(...)`: ``jit.instances.find_constructor``, target klass's __init__) the new
        instance, made by ``_NEW_INSTANCE``, is target's first argument and the call's result; until the
        outermost inlined call returns, nothing else holds it (``fresh``: its stores are no change Python code
        could see). pure: the body may change nothing (``inline.InlinedCall.pure``)."""
        options = self.host.options
        name = target.__qualname__
        if len(self.inlined) >= options.max_inline_depth:
            why = f"calls nested deeper than max_inline_depth ({options.max_inline_depth})"
            raise Abort(Reason.NOT_INLINED, name=name, why=why)
        if any(call.function is target for call in self.inlined):
            raise Abort(Reason.NOT_INLINED, name=name, why="recursion")
        actual = list(frame.stack[len(frame.stack) - n :]) if n else []
        if method is not None:
            actual.insert(0, method.actual)
        if receiver is not NO_CONST:
            actual.insert(0, receiver)
        made = NO_CONST
        if constructs is not None:  # (the dry run's instance, made as CPython's type call makes it)
            made = constructs.klass.__new__(constructs.klass)
            actual.insert(0, made)
        code = inline.callee_code(target, len(actual), keywords)
        self._read_stored_globals(target, code)
        given = inline.parameters(target, len(actual), keywords)
        slots = inline.initial_slots(target, code, actual, given)
        site = self.inlined[0] if self.inlined else None
        callee_frame = FrameState(0)
        outer = self.method_resume() if site is None else None
        if site is not None:
            where = (site.site, site.site_pc, site.site_line)
        elif outer is not None:  # (a call computing an argument of a method not bound yet: before the binding)
            where = (outer, outer.pc, self.code.lines[outer.pc])
        elif method is not None:
            where = (method.snapshot, method.pc, self.code.lines[method.pc])
        else:
            where = (self.site_snapshot, self.pc, self.line)
        call = inline.InlinedCall(
            function=target,
            code=code,
            abstract=callee_frame,
            site=where[0],
            site_pc=where[1],
            site_line=where[2],
            saved=(self.code, self.abstract, self.pc, self.line),
            held=held,
            pure=pure and site is None,
        )
        self.inlined.append(call)
        self.code, self.abstract = code, callee_frame
        try:
            if receiver is not NO_CONST:  # (a bound method: its class, then its function and its receiver)
                assert held is not None and specialize_receiver is not None
                self.emit("_GUARD_CLASS", (held,), operand=types.MethodType)
                bound_to = self.emit("_METHOD_SELF", (held,))
                held = call.held = self.emit("_METHOD_FUNCTION", (held,))
                args = [specialize_receiver(bound_to), *args]
            if constructs is not None:
                self.guard_class_version(constructs)
                instance = self.emit("_NEW_INSTANCE", operand=constructs)
                self.fresh[instance.id] = {}
                args = [instance, *args]
            for slot, index in enumerate(given):  # (None: a default, which the guard below pins)
                callee_frame.set(slot, args[index] if index is not None else self.const(slots[slot]))
            if held is None:
                self.emit("_GUARD_CALLEE", operand=Callee(target, target.__code__, target.__defaults__))
            else:  # (its defaults matter only where the call takes some)
                defaults = target.__defaults__ if None in given else None
                self.emit("_GUARD_CALLEE_VALUE", (held,), operand=Callee(target, target.__code__, defaults))
            hook = _InlinedHook(self)
            try:
                done: inline.Returns | inline.Raises = inline.Returns(self.host.run_inlined(target, code, slots, hook))
            except Abort:
                raise
            except Exception as exc:
                if not self.inlined[0].changed:  # (nothing visible happened: the call is made for real)
                    why = f"it raised {type(exc).__name__} while recorded"
                    raise Abort(Reason.NOT_INLINED, name=name, why=why) from None
                done, hook.stopped = inline.Raises(exc), Abort(Reason.NOT_INLINED, name=name, why="it raised")
        finally:
            self.inlined.pop()
            self.code, self.abstract, self.pc, self.line = call.saved
            if not self.inlined:
                self.fresh.clear()  # (returned, the instances are the caller's: its stores are seen)
        if constructs is not None and isinstance(done, inline.Returns):
            if done.value is not None:  # (CPython's type call raises TypeError)
                if not call.changed:
                    raise Abort(Reason.NOT_INLINED, name=name, why="it returned a value")
                why = f"__init__() should return None, not '{type(done.value).__name__}'"
                done, hook.stopped = inline.Raises(TypeError(why)), Abort(Reason.NOT_INLINED, name=name, why=why)
            else:
                done = inline.Returns(made)
        frame.stack[len(frame.stack) - n - 1] = done  # the caller's CALL gets the result (or the exception)
        if hook.stopped is not None:  # (after its effect: the call happened, once; it is recorded generically)
            raise hook.stopped
        if call.result is None:
            raise Abort(Reason.NOT_INLINED, name=name, why="it did not return")
        result = call.result if constructs is None else args[0]
        if not self.inlined:
            self._store_deferred(call)
            if result.kind == Kind.OBJECT and self._popped(result):
                # (an item a list's pop gave the call: typed at the caller's next instruction, jit.recorder.generic)
                self.after_barrier, self.ran_no_code = result, True
        return result

    def guard_class(self, obj: Value, klass: type, where: instances.ClassAttr | None = None) -> None:
        """obj is exactly of klass (unless a guard since the last uop that may have run Python code, which may assign
        its `__class__`, says so already), and, where given, that class's version is as recorded (once per class:
        hoisted)."""
        if not self._class_known(obj, klass):
            self.emit("_GUARD_CLASS", (obj,), operand=klass)
        if where is not None:
            self.guard_class_version(where)

    def _class_known(self, obj: Value, klass: type) -> bool:
        for uop in reversed(self.trace.uops):
            if uop.op.barrier:
                return False
            if uop.name == "_GUARD_CLASS" and uop.operand is klass and uop.args[0].id == obj.id:
                return True
            if uop.name == "_NEW_INSTANCE" and uop.operand.klass is klass and uop.out.id == obj.id:  # type: ignore[union-attr]
                return True
            if uop.name == "_NEW_EMPTY" and uop.operand is klass and uop.out.id == obj.id:  # type: ignore[union-attr]
                return True
        return False

    def guard_class_version(self, where: instances.ClassAttr) -> None:
        """where.klass's version tag is as recorded: once per class (hoisted, checked again after barriers)."""
        klass = where.klass
        if not any(u.name == "_GUARD_CLASS_VERSION" and u.operand.klass is klass for u in self.trace.uops):
            self.emit("_GUARD_CLASS_VERSION", operand=where)

    def _popped(self, value: Value) -> bool:
        """Was value made by a list's pop (``_LIST_POP``), untyped (in an inlined call: no guard after it)?"""
        made = self.trace.made_by(value)
        return made is not None and made.name == "_LIST_POP"

    def _read_stored_globals(self, target: types.FunctionType, code: Any) -> None:
        """The globals of the trace's function that target, to be inlined, stores (a helper's `global count`):
        from now on every trace of the function reads them at each use (``volatile_globals``), as it reads the
        ones the function stores itself, for its stores are made natively (``jit.recorder.names``). Where this
        trace pinned one by a guard before (a read of it as a constant), abort: recorded again, reading it."""
        if target.__globals__ is not self.globals:
            return
        new = _stored_globals(code) - self.stored_globals
        if not new:
            return
        self.host.volatile_globals.update(new)
        for uop in self.trace.uops:
            operand = uop.operand
            if uop.name in ("_GUARD_GLOBAL", "_CHECK_GLOBAL"):
                pinned = operand.name in new and operand.namespace in (None, self.globals)
            elif uop.name == "_GUARD_MODULE_ATTR":
                pinned = operand.name in new and operand.module.__dict__ is self.globals
            else:
                continue
            if pinned:
                raise Abort(Reason.INLINED_STORES_PINNED_GLOBAL, name=target.__qualname__, glob=operand.name)
        self.stored_globals = self.stored_globals | new

    def _store_deferred(self, call: inline.InlinedCall) -> None:
        """The attribute stores and appends of the outermost inlined call (each store checked where it was), made
        at its return, after its last exit (``jit.inline``): raising at the call's line where memory runs out."""
        for name, args, operand in call.deferred.values():
            exit = ExitPoint(call.site, call.site_line)
            self.trace.emit(name, args, operand=operand, pc=call.site_pc, line=call.site_line, exit=exit)
        if call.deferred:
            self.plain_entries.clear()
            self.entry_objects.clear()

    def record(self, frame: Frame, pc: int) -> None:
        inside = self.trace.loop.contains(pc)
        if not inside and self.trace.kind is TraceKind.ROOT:  # the loop ended (condition false, break)
            raise Abort(Reason.LOOP_ENDED)
        self.line = self.code.lines[pc]
        self.snapshots.begin(pc)
        if self.after_barrier is not None:
            self.pc, self.frame = pc, frame
            _AFTER_BARRIER[0](self, frame)
        if not inside:
            self.pc = pc
            self.end_with_exit(frame, leaves_loop=True)  # a side trace that ends the loop (a `break`)
            return
        self.record_instruction(frame, pc)

    def record_instruction(self, frame: Frame, pc: int) -> None:
        """Record the instruction at pc of the code being recorded (the trace's, or an inlined callee's)."""
        if len(self.trace.uops) > self.limit:
            raise Abort(Reason.TOO_LONG, limit=self.limit)
        self.pc = pc
        self.frame = frame
        op = self.code.ops[pc]
        handler = _HANDLERS.get(op)
        if handler is None:
            raise Abort(Reason.NOT_COMPILED, instruction=I.OPS[op].name)
        if self.pending_methods and op not in _WHILE_METHOD_PENDING and not self.inlined:
            # (an inlined callee's instructions: its locals are the trace's only, its exits resume before the
            # binding, and what it may not do there, a barrier, a change, aborts it: jit.inline)
            self.unfuse()
        handler(self, frame, self.code.args[pc])

    # --- building blocks -----------------------------------------------------------------------------------
    def may_specialize(self, klass: type) -> bool:
        """May the site being recorded (an attribute load or store, a truth test, a generic operation's result or a
        container's item whose class would be guarded) be specialized on klass? Not once ``MAX_SITE_CLASSES`` other
        classes were seen there: the site is megamorphic from then on, and takes the generic path, guarding no class
        (``Recorder.generalized`` says this recording made it so). So is a site that meets a class made anew: one
        of the same module and qualified name as a class seen there before (or a site one of whose classes is
        gone). A function that makes its classes at each call (a ``class`` statement in it, ``namedtuple(...)``)
        meets a new class there at each call: without this, each call recorded and compiled a trace anew, 8 to 10
        times slower than plain CPython; counting classes only, its first MAX_SITE_CLASSES calls still did."""
        if klass in self.host.unstable_classes:  # (its version guards kept failing: Monitor._count_class_change)
            return False
        frame = self.frame
        code = frame.code if frame is not None else self.code  # (an inlined callee's code, or the function's)
        sites = self.host.site_classes
        key = (id(code), self.pc)
        seen = sites.setdefault(key, {})
        if seen is None:
            return False
        known = seen.get(id(klass))
        if known is not None and known() is klass:
            return True
        if len(seen) >= MAX_SITE_CLASSES or any(_made_anew(ref(), klass) for ref in seen.values()):
            sites[key] = None
            self.generalized = True
            return False
        seen[id(klass)] = weakref.ref(klass)
        return True

    def emit(
        self,
        name: str,
        args: tuple[Value, ...] = (),
        *,
        kind: Kind | None = None,
        operand: Any = None,
        leaves_loop: bool = False,
        propagate: bool = False,
    ) -> Value:
        exit = None
        op = UOPS[name]
        pc, line = self.pc, self.line
        if self.inlined:  # (jit.inline) every exit of an inlined body makes the outermost call again
            site = self.inlined[0]
            callee = self.inlined[-1].function.__qualname__
            if op.mutates and site.pure:
                raise Abort(Reason.NOT_INLINED, name=site.function.__qualname__, why="it changes memory")
            if op.mutates and (name not in inline.ONE_EFFECT or op.barrier):
                raise Abort(Reason.INLINED_MUTATES, name=callee)
            if (op.is_guard or op.mutates) and site.effect is not None:  # (the call again would redo the effect)
                raise Abort(Reason.INLINED_EXIT_AFTER_EFFECT, name=callee, uop=name, effect=site.effect)
            for kinds, change, allowed in _CHANGED_CONTAINERS:  # (it could read a container a change goes into)
                if (
                    name != allowed
                    and any(a.kind in kinds for a in args)
                    and any(k[0] == change for k in site.deferred)
                ):
                    raise Abort(Reason.INLINED_EXIT_AFTER_EFFECT, name=callee, uop=name, effect=change)
            pc, line = site.site_pc, site.site_line
            if op.is_guard:  # (before its own effect, if it has one)
                exit = ExitPoint(site.site, line, propagate=propagate)
            if op.mutates:
                site.effect = name
        else:
            pending = self.pending_subscript()
            if self.pending_methods and (op.mutates or any(a.id in self.pending_methods for a in args)):
                self.unfuse()
            if pending is None and self.pending_methods:  # (the interpreter binds the method again)
                pending = self.method_resume()
            # (a barrier checks for itself: jit.recorder.generic.barrier; it, _SET_ADD and _LIST_POP may resume at a method's
            # binding, jit.recorder.generic.call_method)
            if (
                pending is not None
                and op.mutates
                and name not in ("_ARRAY_STORE", "_SET_ADD", "_LIST_POP")
                and not op.barrier
            ):
                raise Abort(Reason.ARRAY_INDEX_MUTATES, name=name)
            if op.is_guard:
                snapshot = pending if pending is not None else self.snapshots.take()
                if self.pending_methods and any(
                    v.id in self.pending_methods for f in snapshot.frames for v in f.stack
                ):  # (an array subscript's state, with the method on its stack)
                    self.unfuse()
                exit = ExitPoint(snapshot, line, leaves_loop=leaves_loop, propagate=propagate)
        if op.mutates or name == "_CALL_TREE":
            self.plain_entries.clear()
            self.entry_objects.clear()
        out = self.trace.emit(name, args, kind=kind, operand=operand, pc=pc, line=line, exit=exit)
        if op.owns and out is not None:
            self.owned_values.add(out.id)
            if op.shared:
                self.shared_values.add(out.id)
        elif out is not None and out.kind.is_pointer and not out.is_const:
            if any(
                (a.id in self.owned_values and a.id not in self.shared_values) or a.id in self.dependent_values
                for a in args
            ):
                self.dependent_values.add(out.id)
        return out  # type: ignore[return-value]

    def unfuse(self) -> NoReturn:
        """A method bound by a LOAD_ATTR not called right away as one (``jit.recorder.generic.PendingMethod``):
        this recording aborts, and the next one binds it there."""
        pending = next(iter(self.pending_methods.values()))
        (pending.code or self.code).unfused_methods.add(pending.pc)
        raise Abort(Reason.METHOD_NOT_CALLED, name=pending.name)

    def bind_apart(self, value: Value) -> NoReturn:
        """A `lst.append` or `d.get` held natively as its list or dict (``_BIND_APPEND``, ``_BIND_DICT_GET``) used
        as a value rather than called (`max(d, key=d.get)`, `map(out.append, xs)`): this recording aborts, and the
        next binds it where it is loaded as CPython does, a bound method object."""
        site = self.bound_method_sites[value.id]
        self.code.unfused_methods.add(site)
        if value.kind == Kind.DICT_GET_METHOD:
            self.code.generic_dict_gets.add(site)
        raise Abort(Reason.METHOD_NOT_CALLED, name=value.kind.short.rpartition(".")[2])

    def closure_owner(self, frame: Frame) -> Value:
        """The function whose cells the current instruction reads (``LOAD_FREE``, a method's class cell): the inlined
        callee (held, or the constant its call guarded), else the jitted function itself, which the trace keeps."""
        if not self.inlined:
            return self.const(frame.function.py_func)
        call = self.inlined[-1]
        return call.held if call.held is not None else self.const(call.function)

    def method_resume(self) -> Snapshot | None:
        """While methods are bound and not called yet (``jit.recorder.generic.PendingMethod``), the state before
        the outermost one's LOAD_ATTR: every guard until its call resumes there (the instructions since computed
        its arguments, changing nothing anyone can see: the interpreter binds the method and computes them again).
        None where no method waits."""
        if not self.pending_methods:
            return None
        return min(self.pending_methods.values(), key=lambda pending: pending.pc).snapshot

    def pending_subscript(self) -> Snapshot | None:
        """While an array subscript is being evaluated (a virtual `a[i]` or `(i, j)` on the stack), the state
        its first part started from: every guard until it completes resumes there (nothing visible has
        happened since: what came after is redone)."""
        if self.resume_override is not None:
            return self.resume_override
        if self.array_indices:
            for value in self.abstract.stack():
                index = self.array_indices.get(value.id)
                if index is not None:
                    return index.snapshot
        return None

    def const(self, value: Any, kind: Kind | None = None) -> Value:
        if kind is None:
            kind = Kind.UNBOUND if value is UNBOUND else kind_of(value)
        pc, line = (self.inlined[0].site_pc, self.inlined[0].site_line) if self.inlined else (self.pc, self.line)
        return self.trace.emit("_LOAD_CONST_INLINE", kind=kind, operand=value, pc=pc, line=line, const=value)  # type: ignore[return-value]

    def virtual_range(self, start: Value, stop: Value, step: Value) -> Value:
        value = self.trace.new_value(Kind.RANGE)
        self.virtual_ranges[value.id] = (start, stop, step)
        return value

    def push(self, value: Value) -> None:
        self.abstract.push(value)

    def pop(self, objects: bool = False, stored: bool = False) -> Value:
        """The value on top of the operand stack. An int past 64 bits (an int object or an i128) is narrowed to
        an int (a guard that it fits in 64 bits) unless the consumer takes `objects` (int arithmetic), or it is
        `stored` into a local and does not fit in 64 bits as recorded: then it is an int object there (owned:
        codegen.ownership), which a guard narrows again where it is next used as an int."""
        value = self.abstract.pop()
        # (a virtual range is pushed only right before the RANGE_SETUP that takes it: calls._call; else it is made)
        assert value.kind != Kind.RANGE, "a virtual range used as a value"
        if value.id in self.pending_methods:
            self.unfuse()
        if value.kind in specialize.BEYOND_64_BITS and not objects:
            depth = len(self.abstract.stack())
            stack = self.frame.stack if self.frame is not None else []
            actual = stack[depth] if depth < len(stack) else None
            if stored and not specialize.fits_int64(actual):  # (an inlined callee's local too: trace-only)
                return specialize.as_int_object(self, value)
            if value.is_const and not specialize.fits_int64(value.const):
                return self.const(value.const)  # (an object native code only moves, as any other constant)
            return specialize.narrow(self, value, actual, "this use of an int")
        if value.kind == Kind.ARRAY_INDEX:
            raise Abort(Reason.ARRAY_VIEW_USED)
        return value

    def read_slot(self, frame: Frame, slot: int, unbound: bool = False) -> Value:
        """The value of a slot, read at the trace's start if the trace did not write it. unbound: an unbound
        slot is no error (a tree's entry type map names it unbound: an inner loop's iterator slot its trace
        fills)."""
        value = self.abstract.get(slot)
        if value is not None:
            return value
        if self.inlined:  # an inlined callee's local not assigned yet
            return self.const(UNBOUND)
        kind = self.slot_kind(frame.slots[slot], slot)
        if kind == Kind.UNBOUND and not unbound:
            raise Abort(Reason.UNBOUND_READ)
        trace = self.trace
        if trace.kind is TraceKind.SIDE:
            known = trace.known_kinds.get(slot)
            if known is None:
                self.emit("_GUARD_SLOT_KIND", operand=SlotKind(slot, kind))
            elif known != kind:
                raise Abort(Reason.SLOT_KIND_CHANGED, slot=slot, kind=kind.short, known=known.short)
        value = trace.new_value(kind)
        trace.entry_slots[slot] = value
        self.abstract.set(slot, value)
        return value

    def enter_owned_slots(self) -> None:
        """At a root's end: every slot that carries an owned reference into the next iteration (a value a uop
        made, or one that came in through another slot that does: `a, b = b, []`) becomes part of the entry
        type map (an exit early in the next iteration gives the interpreter that value, which the back-edge
        keeps: codegen.ownership), with the kind it had where the trace started."""
        trace = self.trace
        owned = {v.id for v in self.abstract.slots().values() if self.is_owned(v) and not v.is_const}
        grown = True
        while grown:
            grown = False
            for slot in sorted(trace.written):
                end = self.abstract.get(slot)
                if end is None or end.id not in owned:
                    continue
                entry = trace.entry_slots.get(slot)
                if entry is None:
                    kind = self.slot_kind(self.start_slots[slot], slot)
                    entry = trace.entry_slots[slot] = trace.new_value(kind)
                    trace.carried_only.add(slot)
                if entry.id not in owned:
                    owned.add(entry.id)
                    grown = True

    def slot_kind(self, actual: Any, slot: int) -> Kind:
        """The kind of a slot's value as the buffer tags it where the trace starts: an int past 64 bits is an
        int object the buffer owns (Kind.INT_OBJECT) in a root trace's entry type map, or where the parent
        exit left one; elsewhere an object native code only moves (Kind.OBJECT)."""
        kind = kind_of(actual)
        if type(actual) is int:
            trace = self.trace
            if trace.kind is TraceKind.ROOT:
                return Kind.INT_OBJECT if kind == Kind.OBJECT else kind
            if trace.known_kinds.get(slot) == Kind.INT_OBJECT:
                return Kind.INT_OBJECT
        return kind

    def write_slot(self, slot: int, value: Value) -> None:
        assert value.kind != Kind.RANGE, "a virtual range stored"  # (RANGE_SETUP stores its parts)
        if value.kind == Kind.ARRAY_INDEX:
            raise Abort(Reason.ARRAY_VIEW_USED)
        trace = self.trace
        if value.id in self.dependent_values and not self.inlined:
            # a variable holds a reference of its own: the owned value keeping the object alive may go first
            value = self.emit("_KEEP_ALIVE", (value,), kind=value.kind)
        if self.is_owned(value) and trace.kind is TraceKind.ROOT and not self.inlined and slot not in trace.entry_slots:
            # a loop-carried owned reference must be in the entry type map (never assigned late, where an exit
            # would find the previous iteration's value: codegen.ownership keeps no such references)
            kind = self.slot_kind(self.start_slots[slot], slot)
            trace.entry_slots[slot] = trace.new_value(kind)
            trace.carried_only.add(slot)
        self.abstract.set(slot, value)
        if not self.inlined:  # (an inlined callee's locals live only in the trace)
            self.trace.written.add(slot)

    def guard_branch(self, condition: Value, truth: bool, alternative_pc: int) -> None:
        """Guard that condition (a bool value) stays as observed; alternative_pc is where the other
        direction would go."""
        if condition.is_const:
            return
        leaves = not self.trace.loop.contains(alternative_pc)
        self.emit("_GUARD_IS_TRUE_POP" if truth else "_GUARD_IS_FALSE_POP", (condition,), leaves_loop=leaves)

    # --- loop headers: closing, nesting ---------------------------------------------------------------------
    def close_at_header(self, frame: Frame) -> None:
        """The interpreter is back at the header of the trace's loop."""
        trace = self.trace
        self.check_unrolled()
        _AT_END[0](self)
        if trace.kind is TraceKind.ROOT:
            self.enter_owned_slots()
        trace.end_snapshot = self.snapshots.take(empty_stack=True)
        if trace.kind is TraceKind.ROOT:
            stable = all(self.abstract.get(s).kind == v.kind for s, v in trace.entry_slots.items())
            if stable:
                trace.end = TraceEnd.LOOP
                self.emit("_JUMP_TO_TOP")
            else:
                self.end_with_link(frame)
        else:
            self.end_with_link(frame)
        self.finish(frame)

    def end_with_exit(self, frame: Frame, *, leaves_loop: bool = False, when_hot: WhenHot = WhenHot.NEVER) -> None:
        """End the trace by leaving to the interpreter at the current pc, with the operand stack as it is (a
        side trace leaving its loop, a `return`): for the tree, one more way out, which trees calling it
        follow (``record_tree_result``)."""
        trace = self.trace
        trace.end = TraceEnd.EXIT
        trace.end_snapshot = self.snapshots.take()
        self.emit("_EXIT_TRACE", operand=self.pc, leaves_loop=leaves_loop)
        trace.uops[-1].exit.when_hot = when_hot  # type: ignore[union-attr]
        self.finish(frame)

    def end_with_link(self, frame: Frame) -> None:
        """End at a loop header by jumping into a tree whose entry kinds match (else into one whose map differs
        only in how an int is held: converted), else by exiting."""
        trace = self.trace
        trees = self.host.trees_at(trace.loop.index)
        owned = self.owned_slots()
        for converting in (False, True):
            for tree in trees:
                if converting:
                    conversions = self.link_conversions(frame, tree, owned)
                    if conversions is None:
                        continue
                    for slot, kind in conversions.items():
                        value = self.read_slot(frame, slot)
                        self.write_slot(slot, self.entry_kind(value, kind, frame.slots[slot], slot))
                    self.snapshots.begin(self.pc)  # (the state the jump hands over: the same values, converted)
                    trace.end_snapshot = self.snapshots.take(empty_stack=True)
                    owned = self.owned_slots()
                # (an owned reference goes into a slot of the tree's entry type map, whose traces know its kind, or
                # into one its root never assigns: it passes through the tree to the states of its exits, which
                # the interpreter or a trace calling the tree takes; a side trace writing an object over it, or
                # clearing it, releases it: codegen.context.LowerContext.buffer_may_own)
                written = tree.root.trace.written
                takes = all(slot in tree.entry_kinds or self._passes_through(frame, slot, written) for slot in owned)
                if takes and self.matches_entry(frame, tree.entry_kinds):
                    for slot, kind in tree.entry_kinds.items():  # the jump reads the tree's live-in slots
                        self.read_slot(frame, slot, unbound=kind == Kind.UNBOUND)
                    trace.end = TraceEnd.TREE
                    trace.end_tree = tree
                    self.emit("_JUMP_TO_TREE", operand=tree)
                    return
                assert not converting, "a conversion for a link that does not match"
        trace.end = TraceEnd.EXIT
        self.emit("_EXIT_TRACE", operand=self.pc)
        # not a side trace from here (it would end at this header again, as this one: a chain of side traces),
        # but a root tree whose entry type map takes this state (the monitor records it, then links the exit)
        trace.uops[-1].exit.when_hot = WhenHot.ROOT  # type: ignore[union-attr]
        wanted = {}
        for slot in sorted(owned):
            value = self.abstract.get(slot)
            wanted[slot] = value.kind if value is not None else self.slot_kind(frame.slots[slot], slot)
        trace.wanted_entry = wanted

    def link_conversions(self, frame: Frame, tree: TreeView, owned: set[int]) -> dict[int, Kind] | None:
        """The slots to convert for the state here to enter tree (slot -> the kind its map gives), if the state
        differs from its entry type map only in how ints are held: an int boxed as an int object, an int object
        (or an int past 64 bits a side trace holds as an object) that fits narrowed (a guard) and, once
        converted, every owned reference in a slot the map names; else None."""
        conversions = {}
        for slot, kind in tree.entry_kinds.items():
            value = self.abstract.get(slot)
            have = value.kind if value is not None else self.slot_kind(frame.slots[slot], slot)
            if have == kind:
                continue
            actual = frame.slots[slot]
            if type(actual) is not int:
                return None
            if (have, kind) in ((Kind.INT, Kind.INT_OBJECT), (Kind.OBJECT, Kind.INT_OBJECT)) or (
                have == Kind.INT_OBJECT and kind == Kind.INT and specialize.fits_int64(actual)
            ):
                conversions[slot] = kind
            else:
                return None
        after = {slot for slot in owned if conversions.get(slot) != Kind.INT} | set(conversions)
        if not conversions or not all(slot in tree.entry_kinds for slot in after):
            return None
        return conversions

    def is_owned(self, value: Value) -> bool:
        """Does value hold a reference of the trace's own (an int object, a list the trace built)?"""
        return value.kind in OWNED_SLOT_KINDS or value.id in self.owned_values

    def may_own_later(self) -> bool:
        """(A root trace, at an inner tree's call) may a slot the trace has not touched yet turn out to hold an
        owned reference here: an int object it reads later (its entry value, which the call's state hands over
        as it is: codegen.ownership), or a list, tuple or object it assigns later and carries across the
        back-edge (then its entry value is a phi the trace owns)?"""
        if self.trace.kind is not TraceKind.ROOT:
            return False  # (a side trace knows the kinds its parent's exit may hand over: owned_slots)
        touched = self.abstract.slots()
        return any(
            slot not in touched and self.slot_kind(actual, slot) in LINKED_OWNED_KINDS
            for slot, actual in enumerate(self.start_slots)
        )

    def owned_slots(self) -> set[int]:
        """The slots that may hold an owned reference here: assigned one, or (a side trace) holding where it
        started what the parent's exit may have handed over (an int object, a list or a tuple), or holding the
        value they started with that a root's back-edge may make owned (codegen.ownership)."""
        trace = self.trace
        out = {
            slot
            for slot, kind in trace.known_kinds.items()
            if kind in LINKED_OWNED_KINDS and slot not in self.parent_borrowed
        }
        for slot, value in self.abstract.slots().items():
            if self.is_owned(value) or (trace.entry_slots.get(slot) is value and value.kind in LINKED_OWNED_KINDS):
                out.add(slot)
            else:
                out.discard(slot)
        return out

    def borrowed_slots(self, snapshot: Snapshot) -> frozenset[int]:
        """The slots the state at snapshot writes with a value the trace holds no reference of its own to (not
        made by a uop that owns it, not the trace's entry value, which a looping root may own): written to the
        buffer, their tags say the buffer owns nothing (``ExitView.borrowed_slots``)."""
        (state,) = exit_resume(self.trace, snapshot)
        entry = {v.id for v in self.trace.entry_slots.values()} | {v.id for v in self.trace.entry_stack.values()}
        return frozenset(
            s.slot
            for s in state.slots
            if s.hold is Hold.VALUE and s.value is not None and not self.is_owned(s.value) and s.value.id not in entry
        )

    def _passes_through(self, frame: Frame, slot: int, written: set[int]) -> bool:
        """May an owned object in slot pass through a tree whose root does not name it (it assigns slots written)?
        Where the root never assigns the slot, and it holds no int object (which the trees of a loop take in
        their entry type maps: ``Tree.owned_entry_slots``)."""
        if slot in written:
            return False
        value = self.abstract.get(slot)
        kind = value.kind if value is not None else self.slot_kind(frame.slots[slot], slot)
        return kind != Kind.INT_OBJECT

    def matches_entry(self, frame: Frame, entry_kinds: dict[int, Kind]) -> bool:
        for slot, kind in entry_kinds.items():
            value = self.abstract.get(slot)
            have = value.kind if value is not None else self.slot_kind(frame.slots[slot], slot)
            if have != kind:
                return False
        return True

    def inner_header(self, frame: Frame, loop: LoopInfo) -> None:
        """The interpreter reached the header of a loop nested in the trace's loop."""
        if not self.host.options.nesting:
            raise _EndHere()
        unrolled = loop.index in self.unrolled or self.unroll(frame, loop)
        tree = None if unrolled else self.host.tree_for(loop.index, frame)
        if tree is not None and self.host.compiling(loop.index):
            # a side trace of its trees is on its way from the background compiler: compiled synchronously, it
            # would be there before this recording, and calling the tree now would record a way out of it (the
            # exit that side trace takes) and grow a side trace of this loop's own from there. Record this loop
            # once it is installed (jit.background)
            raise Abort(Reason.INNER_COMPILING, line=loop.line, loop=loop.index)
        if unrolled or (tree is not None and self.peel(loop, tree)):
            # (its iterations, or its first, are recorded, its back-edges allowed: control._jump_backward). Each
            # visit of its header counts in the fuel, as its tree's would: the native iterations the pay policy
            # (min_native_iterations) and jit.stats see include the unrolled ones
            self.emit("_UNROLLED_HEADER")
            self.trace.uops[-1].exit.when_hot = WhenHot.NEVER  # type: ignore[union-attr]
            return
        if tree is None:
            why = self.host.why_no_tree(loop.index)
            if why is Reason.INNER_COMPILING or why is Reason.INNER_BUSY:
                # its tree will be there in a moment: record this loop then, calling it (not inlining it)
                raise Abort(why, line=loop.line, loop=loop.index)
            # recorded on: if the inner loop runs an iteration, its back-edge aborts the recording (it runs none:
            # nothing to call)
            return
        if tree.depth + 1 > self.host.options.max_nesting_depth:
            raise Abort(Reason.TOO_DEEP, limit=self.host.options.max_nesting_depth)
        if any(value.kind in specialize.BEYOND_64_BITS for value in self.abstract.stack()):
            raise Abort(Reason.INT_OBJECT_ACROSS_LOOP)  # (native code owns it: the inner tree could not)
        converted = False
        for slot, kind in tree.entry_kinds.items():
            value = self.read_slot(frame, slot, unbound=kind == Kind.UNBOUND)
            if value.kind != kind:  # (tree_for chose by the value: an int object that fits, an int that does not)
                self.write_slot(slot, self.entry_kind(value, kind, frame.slots[slot], slot))
                converted = True
        if converted:  # (the call's state is the header's with the values converted: the same values)
            self.snapshots.begin(self.pc)
        self.pending_tree = tree

    def unroll(self, frame: Frame, loop: LoopInfo) -> bool:
        """Record an inner ``for`` over a range through, unrolled, instead of calling its tree? Only a range
        with at most ``unroll_max_trips`` iterations now, of constant start and step and a bound that is a
        constant or a variable as the trace read it at its start (checked again where the trace closes: the
        outer loop must not change it, ``check_unrolled``). A tree call per outer iteration (entry checks,
        values written to the buffer and read back) costs more than a few iterations; each unrolled iteration
        keeps the guard that its range goes on, so another trip count leaves through an exit."""
        limit = self.host.options.unroll_max_trips
        if limit <= 0 or loop.kind != LoopKind.RANGE or loop.index in self.code.not_unrolled:
            return False
        base = loop.hidden[0]
        actual = frame.slots[base : base + 3]
        if not all(type(x) is int for x in actual):
            return False
        cur, stop, step = (self.abstract.get(base + k) for k in range(3))
        if cur is None or stop is None or step is None:
            return False
        trips = len(range(*actual))
        if not (cur.is_const and step.is_const and stop.kind == Kind.INT) or trips > limit:
            return False
        if trips * (loop.body_end - loop.body_pc) > UNROLL_BUDGET:
            return False  # (a long body: one tree call costs little next to its iterations)
        bound: tuple[int, Value] | None = None
        if not stop.is_const:
            hidden = {slot for other in self.code.loops for slot in other.hidden}
            slots = [s for s, v in self.trace.entry_slots.items() if v is stop and s not in hidden]
            if not slots:
                return False  # (a value the trace computed: it may change every outer iteration)
            bound = (slots[0], stop)
        self.unrolled[loop.index] = bound
        return True

    def peel(self, loop: LoopInfo, tree: TreeView) -> bool:
        """Record the inner loop's first iteration through instead of calling tree, whose root runs that iteration
        alone and jumps into its loop's tree for the kinds it leaves (``TreeView.is_bridge``: `s = 0.0` before
        `s += a[k] * b[k]`)? Then the header's next visit calls that tree: one call, not a call of the bridge
        and its jump (two entries, the state through the buffer twice). Once per loop and recording; a
        recording that gives up with a loop peeled calls its tree the next time (``not_unrolled``)."""
        if loop.index in self.peeled or loop.index in self.code.not_unrolled or not tree.is_bridge():
            return False
        self.peeled.add(loop.index)
        self.finishing_inner.add(loop.index)  # (its back-edge, once)
        return True

    def check_unrolled(self) -> None:
        """Where the trace closes: a loop it unrolled has a bound the outer loop left unchanged; else the loop
        is not unrolled again (this recording is retried, calling its tree)."""
        for index, bound in self.unrolled.items():
            if bound is not None and self.abstract.get(bound[0]) is not bound[1]:
                self.code.not_unrolled.add(index)
                raise Abort(Reason.UNROLLED_BOUND_CHANGES, line=self.code.loops[index].line)

    def entry_kind(self, value: Value, kind: Kind, actual: Any, slot: int) -> Value:
        """value as the kind a tree's entry type map gives its slot: an int object narrowed to an int (a guard
        that it fits), an int boxed as an int object; any other difference is not compiled."""
        if value.kind == Kind.INT_OBJECT and kind == Kind.INT:
            return specialize.narrow(self, value, actual, "an int passed to an inner loop")
        if value.kind in (Kind.INT, Kind.BOOL) and kind == Kind.INT_OBJECT:
            return specialize.as_int_object(self, value)
        if value.kind == Kind.OBJECT and kind == Kind.INT_OBJECT and type(actual) is int:
            return self.int_object_of(value, actual)
        raise Abort(Reason.SLOT_KIND_CHANGED, slot=slot, kind=value.kind.short, known=kind.short)

    def int_object_of(self, value: Value, actual: Any) -> Value:
        """value as an int object if it is an int past 64 bits held as a plain object (what a side trace reads
        where its parent did not know the slot: borrowed, the buffer tags it an object; or a constant), with a
        reference of the trace's own, as a root holds one; any other value as it is."""
        if value.kind != Kind.OBJECT or type(actual) is not int:
            return value
        if value.is_const:
            return self.const(value.const, Kind.INT_OBJECT)
        checked = self.emit("_GUARD_TYPE", (value,), operand=Kind.INT, kind=Kind.OBJECT)
        return self.emit("_NEW_INT_OBJECT_REF", (checked,))

    def at_loop_header(self, frame: Frame, loop: int, pc: int) -> int:
        """The interpreter's loop-header hook while recording: run a pending inner tree, record the call."""
        tree = self.pending_tree
        if tree is None or tree.loop.index != loop:
            return pc + 1
        self.pending_tree = None
        self.emit("_CALL_TREE", operand=TreeCall(tree, self.snapshots.take()))
        self.global_values.clear()  # (the inner loop may store the globals this trace stored)
        self.number_globals.clear()
        exit, resume_pc = self.host.run_tree_while_recording(frame, tree)
        try:
            self.record_tree_result(frame, tree, exit, pc)
            if tree.runs_python():
                self.after_python_ran()
        except Abort as exc:
            self.abort(exc, frame)
        except Exception as exc:
            self.abort(_internal_error(exc), frame)
        return resume_pc

    def after_python_ran(self) -> None:
        """Python code may have run (a barrier, or a call of a tree with one): forget what the trace knew of
        globals and arrays, and check the hoisted guards again at the next instruction (``_CHECK_BARRIER``)."""
        self.global_values.clear()  # (the code may store the globals the trace stored)
        self.number_globals.clear()
        # (it may reshape an array, swap its data or make it read-only: what the trace knows of arrays it made or
        # checked in the loop's body is checked again at their next use; hoisted checks: _CHECK_BARRIER)
        self.array_specs.clear()
        self.array_headers.clear()
        self.writeable_arrays.clear()
        if self.after_barrier is None:
            self.after_barrier = True

    def record_tree_result(self, frame: Frame, tree: TreeView, exit: ExitView, pc: int) -> None:
        """After an inner tree ran: guard that it left through the exit it took (its loop's end, a `break`, a
        `return`, a guard in the middle of an iteration), read back what it wrote, and go on recording from
        there. At run time, the tree leaving its loop another way is an exit of this trace (which may grow a
        side trace); any other exit is handed to the interpreter as the inner tree left it."""
        if not exit.follows_from(tree):
            raise Abort(Reason.INNER_EXIT)
        self.depth = max(self.depth, tree.depth)
        trace = self.trace
        self.pc = pc
        self.line = self.code.lines[pc]
        self.emit("_GUARD_TREE_EXIT", operand=TreeExit(tree, exit.id), propagate=True)
        guard = trace.uops[-1]
        alternatives = []
        snapshot = self.snapshots.take()
        for other in tree.loop_exits():
            if other.id == exit.id:
                continue
            point = ExitPoint(snapshot, self.line)
            point.prewritten = prewritten(
                snapshot,
                other.id,
                other.pc,
                other.stack_kinds,
                tree.writes_at(other),
                other.owned_stack,
                self.borrowed_slots(snapshot),
            )
            alternatives.append(point)
        guard.alternatives = tuple(alternatives)
        written = {}
        for slot, (kind, certain) in tree.writes_at(exit).items():
            actual = _written_kind(frame.slots[slot], kind)
            if not certain:
                self.emit("_GUARD_SLOT_KIND", operand=SlotKind(slot, actual), propagate=True)
            elif actual != kind:
                raise Abort(Reason.INNER_WROTE_KIND)
            written[slot] = actual
        handed = bool(self.owned_slots()) or self.may_own_later()
        for slot, actual in written.items():
            # what the inner tree assigned: an int object, or a list, tuple or object its exit may hand over with
            # a reference of the buffer's own, gets one of the trace's own (codegen.ownership)
            # (an int object is always an owned value of the trace: one the exit borrowed, an element of a list
            # the inner loop read, gets a new reference)
            owned = actual == Kind.INT_OBJECT or (actual in MAY_BE_OWNED and slot not in exit.borrowed_slots)
            name = "_RELOAD_SLOT_OWNED" if owned else "_RELOAD_SLOT"
            value = trace.emit(name, kind=actual, operand=slot, pc=pc, line=self.line)
            if owned:
                self.owned_values.add(value.id)  # type: ignore[union-attr]
            self.write_slot(slot, value)  # type: ignore[arg-type]
        if handed:
            # (after the guards that hand the buffer's state over as it is, and the reloads, which may take over
            # the buffer's reference to what the trace handed over: codegen.context.LowerContext.take_back)
            self.emit("_TAKE_BACK")
        stack = []
        for index, kind in enumerate(exit.stack_kinds):
            if index in exit.stack_consts:  # a constant the inner trace did not write (a builtin to call, ...)
                stack.append(self.const(exit.stack_consts[index]))
            elif kind == Kind.INT_OBJECT:  # (always an owned value of the trace: codegen.ownership)
                value = trace.emit("_RELOAD_STACK_OWNED", kind=kind, operand=index, pc=pc, line=self.line)
                self.owned_values.add(value.id)  # type: ignore[union-attr]
                stack.append(value)
            else:
                stack.append(trace.emit("_RELOAD_STACK", kind=kind, operand=index, pc=pc, line=self.line))
        self.abstract.replace_stack(stack)  # type: ignore[arg-type]
        own = trace.loop.index
        for loop in self.code.loops:  # the inner loops (the tree's, or deeper) whose iteration the exit left
            if loop.index != own and loop.contains(exit.pc) and trace.loop.contains(loop.header_pc):
                self.finishing_inner.add(loop.index)


def _written_kind(actual: Any, kind: Kind | None) -> Kind:
    """The kind of what an inner tree's exit wrote in a slot, as the buffer tags it: an int object where the exit
    says so or the int is past 64 bits."""
    if type(actual) is int and (kind == Kind.INT_OBJECT or not specialize.fits_int64(actual)):
        return Kind.INT_OBJECT
    return kind_of(actual)


#: the containers an inlined call's deferred changes go into: the kinds of their values (a list's bound append, a
#: dict's bound get: the same pointer), the change (jit.inline.InlinedCall.deferred), and the one uop that may take
#: one meanwhile (binding an append reads nothing; the check of another dict store reads what it replaces, which a
#: deferred store there leaves a number as well)
_CHANGED_CONTAINERS = (
    (frozenset({Kind.LIST, Kind.APPEND_METHOD}), "append", "_BIND_APPEND"),
    (frozenset({Kind.DICT, Kind.DICT_GET_METHOD}), "dict", "_CHECK_STORE_SUBSCR_DICT_STR"),
)


def _internal_error(exc: Exception) -> Abort:
    detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return Abort(Reason.RECORDER_ERROR, detail=detail)


class _InlinedHook:
    """The trace hook of an inlined callee's frame: its instructions go to the recorder of the trace. An
    abort raises out of the callee's dry run (the instruction does not run) to the call's recorder, which makes
    the call generically instead; once the dry run changed memory (``jit.inline``) it is kept in stopped
    instead, and the dry run goes on unrecorded to its end: the call has begun, and happens once."""

    __slots__ = ("recorder", "stopped")

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.stopped: Abort | None = None

    def __call__(self, frame: Frame, pc: int) -> None:
        if self.stopped is not None:
            return
        try:
            self.recorder.record_instruction(frame, pc)
            return
        except Abort as abort:
            stop = abort
        except Exception as exc:  # (a recorder bug: never an exception of the callee's, which its CALL would raise)
            stop = _internal_error(exc)
        if not self.recorder.inlined[0].changed:
            raise stop
        self.stopped = stop

    def abort(self, abort: Abort) -> None:
        pass  # (the exception that stopped the dry run reaches Recorder.inline_call, which decides)


class _EndHere(Exception):
    """Nesting is off: the outer trace ends at the inner loop's header and leaves to the interpreter."""


Handler = Callable[[Recorder, Frame, Any], None]
_HANDLERS: dict[int, Handler] = {}
# what the instruction after a barrier records first (jit.recorder.generic.after_barrier, registered there)
_AFTER_BARRIER: list[Callable[[Recorder, Frame], None]] = []
# what a trace ending at a loop header does first (jit.recorder.generic.keep_carried, registered there)
_AT_END: list[Callable[[Recorder], None]] = []


def _handles(*ops: int) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for op in ops:
            _HANDLERS[op] = fn
        return fn

    return register


def _stored_globals(code: Any) -> frozenset[str]:
    """The globals any instruction of the function stores or deletes. Not only its loop's: a loop's trees run
    inside the trees of the loops around it, whose stores would fail an identity guard hoisted to the inner
    tree's entry at every call (and invalidate it), and a name stored before the loop (a table built per
    call) would fail it at every call."""
    return frozenset(arg for op, arg in zip(code.ops, code.args) if op in (I.STORE_GLOBAL, I.DELETE_GLOBAL))


@dataclasses.dataclass
class _ArrayIndex:
    """A virtual value: `a[i]` of an array with more dimensions (array set), or a key `(i, j)` (array None: the
    array is below it on the stack); with the index values, their actual values, and the state at the start of
    the subscript's first part (its guards resume there)."""

    array: Value | None
    actual_array: Any
    items: list[Value]
    actual: list[Any]
    snapshot: Snapshot


def _subscript_snapshot(r: Recorder) -> Snapshot:
    pending = r.pending_subscript()
    return pending if pending is not None else r.snapshots.take()
