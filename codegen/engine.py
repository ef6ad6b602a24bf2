"""LLVM in this process: one ORC JIT, a host target machine, the optimization pipeline, and linking compiled
modules as JIT libraries that import the C-API by address and each other by name.

The optimization pipeline is chosen for traces rather than LLVM's default O2 (issue 9: compile time). A trace is
one function of straight-line code with guards, in SSA form already (no allocas), calling nothing LLVM could
inline, and the IR builder hoists its loop-invariant pure computations itself (``codegen.function``). What is
left for LLVM is folding what the builder wrote naively (instcombine), merging the blocks of guards and exits
(simplifycfg) and peeling a loop's first iteration where that removes a phi: five function passes
(``TRACE_PASSES``) instead of O2's hundred-odd module, CGSCC, function and loop passes, which found nothing else
to do in a trace and took as long as the machine-code emission. Measured on the benchmark kernels' traces: the
passes take a third of O2's time, the steady state is O2's. (The list had NewGVN, LLVM's experimental value
numbering, which is not in LLVM's default pipelines: on the trace of a generated program it failed an assertion
inside LLVM and aborted the process (``tests/codegen/test_pipeline.py``). llvmlite offers no other GVN; without
it the kernels' steady state was the same, within noise, and their traces compiled 5-40% faster.) ``opt_level``
3 runs LLVM's default O3 pipeline instead, for comparison; 1 is the trace pipeline with codegen at level 1; 0
runs no passes. A loop's fast copy whose body is plain arithmetic (``codegen.function.vectorizable``) comes as a
module of its own (``VECTOR_MODULE``), optimized by the vectorizing pipeline (``VECTOR_LEVEL``) and then linked
with the trace's.

Where a trace's compile time goes (``jit.stats``: ``compile_phases_ms``; ``bench/compilephases.py``): on the
benchmark kernels about two thirds is code generation at O2 (this LLVM is built with assertions; on the loaded
2-core machine, tens of microseconds per IR instruction, and about 0.45 ms per function whatever its size), a
fifth the trace passes, the rest parsing and linking. So a tree's entry stub, run once per entry, is compiled
without optimization (``COLD``), exit paths are lowered with few blocks (``codegen.context``), and a module with
no loop to peel gets the short pipeline (``NO_PEEL``).

Measured on the benchmark kernels' first calls in process time (``bench/compilesplit.py``; this session's median
kernel: 23.5 ms per trace, of which code generation 10.7, the lowering in Python 5.5, half of it printing the
module's text, the passes 1.5 to 4 (12 on a trace whose fast copy is vectorized: instcombine, then the interleaved
vector code), parsing 1, linking 0.85), and left as they are: codegen with fast instruction selection
(``-fast-isel``: a quarter less codegen, the steady state of nested2_branchy 45% slower, of collatz, nested3 and
letter_stats 12-19%), at level 1 (the same), at level 0 (codegen five times faster, two to six times slower code
at the time; 1.1 to 28 times measured since, on every kernel: the first tier of tiering, below); the schedulers and DAG combiner options (within noise); no peeling (passes 2x faster, nested2_branchy 20%
slower); the vectorizer without interleaving, or interleaving 2 (8 ms or 4.5 ms less per vectorized trace,
nested_int 60% or 16% slower); the exits' state writers, or a tree's entry stub, moved into a second module
compiled at level 0 (the trace's function 17% smaller, but the second module costs what it saves: no gain). The
IR's text cannot be avoided (llvmlite builds IR as text only), but it is printed by ``codegen.text`` (the same
text in about half llvmlite's time), and a trace is lowered with Python's cyclic collector paused
(``codegen.compile``: the llvmlite objects of a module set off full collections of the process): the lowering
in Python and the optimizer went from 5.0 to 4.0 ms per trace, median over the benchmark kernels (README,
"Compile time"). The target machines and the pass pipelines are made once, and every trace is one module linked
into the one LLJIT as a JIT library.

Tiering (issue 9, item 4; ``jit.tiering``, option ``tier_up_threshold``, off by default). Measured in process
time on the benchmark kernels' first calls (``bench/compilesplit.py --opt-level N``, one run each, median over
kernels of the CPU ms per trace): 21.6 at level 2, 19.5 at level 1 (the trace passes, codegen at 1), 9.1 at level
0 (no passes, fast instruction selection); no passes with codegen at 1 or 2 was 17.9 and 19.1 (codegen's cost is
its instruction selection and register allocation, not what the passes leave it). So traces compile at level 0
first, and a hot tree is compiled again at its opt_level. Of the two ways out of the symbol binding (a tree calls
another by symbol, a side trace ``musttail``-jumps into its tree's root by symbol, both resolved at link time),
the second was built, without a new indirection in the code (no load per tree call, no indirect ``musttail``:
nested calls cost what they cost): a hot tree is compiled again with the trees its code may reach, each trace
from the same IR text as a new JIT library that exports the same symbols and links against the newest
library of each tree it depends on (``runtime.registry.TreeRegistry.current_library``), callees and roots first;
then the registry swaps them in at once (entries, hand-offs, the link pointers patched at run time). The old
libraries stay linked while their traces are held (``runtime.trees.CompiledTrace.retired``): a native frame may
be in one, and code compiled before the swap still calls them by symbol until it is compiled again itself. The
object cache's key has the optimization level, so each level's code is cached apart.

Compiling releases the GIL (llvmlite calls LLVM through ctypes), so other Python threads keep running; a lock
keeps one compilation at a time.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import llvmlite.binding as llvm

from codegen import capi, python_epoch

#: the function passes of a trace, in order (llvmlite's new pass manager: ``add_<name>_pass``). loop_unroll
#: unrolls nothing here (no trip count is known): it peels the first iteration of a loop whose phis only the
#: first iteration sees (the flags of slots assigned late), which makes the loop itself as tight as O2's. No
#: simplify_cfg at the end: what it merged after the last instcombine, code generation merges as well (on the
#: benchmark's 36 traces, 34 compiled to the same machine code without it, the other two within 12 instructions
#: of 11124), and it cost a fifth of the passes' time
TRACE_PASSES = (
    "simplify_cfg",
    "instruction_combine",
    "simplify_cfg",
    "loop_unroll",
    "instruction_combine",
)
#: the trace pipeline of a module with no loop whose first iteration is worth peeling (no flags of slots
#: assigned late: ``NO_PEEL`` starts its text): loop_unroll, and the instcombine that cleans up after it, changed
#: no instruction of such modules' code and cost half the passes' time (nor does a simplify_cfg after the
#: instcombine: the same machine code on each of the benchmark's traces that get this pipeline)
TRACE_PASSES_NO_PEEL = ("simplify_cfg", "instruction_combine")
#: the first line of a module text that gets ``TRACE_PASSES_NO_PEEL`` (``codegen.compile.lower_trace``)
NO_PEEL = "; tracejit: no loop to peel\n"
#: what separates a lowered trace's module text from that of its loop's fast copy where that copy is
#: vectorizable (``codegen.function.vectorizable``): the second module gets the vectorizing pipeline, then the
#: two are linked into one before machine code is emitted
VECTOR_MODULE = "\n; tracejit: the fast copy's module (vectorizing pipeline)\n"
#: the vectorizing pipeline: LLVM's default module pipeline at this speed level with its loop vectorizer on and
#: the SLP vectorizer and loop unrolling off (llvmlite offers the loop vectorizer no other way: no pass list of
#: its own), run on the fast copy's module alone. Level 1 costs the least (O1's simplification passes, then
#: the vectorizer, which interleaves) and vectorizes what 2 and 3 do: measured on nested_int's inner loop, about
#: 15 ms more per such trace (LLVM's O3 on the whole module: 170-250 ms), the loop 7x faster
VECTOR_LEVEL = 1
VECTOR_TUNING = {
    "loop_vectorization": True,
    "slp_vectorization": False,
    "loop_unrolling": False,
    "loop_interleaving": True,
}
#: the codegen optimization level of each ``opt_level`` (0: fast instruction selection and register allocation;
#: 1 is no faster to compile than 2 on traces, and its code is slower)
CODEGEN_LEVEL = {0: 0, 1: 1, 2: 2, 3: 3}
#: the attribute of a function compiled without optimization (IR passes as its module's, then ``optnone``: fast
#: instruction selection, most machine passes skipped); code that runs once per entry, not per iteration
#: (a tree's entry stub: ``codegen.entry``), where LLVM's code generation at O2 cost more than it saves
COLD = "cold"
#: the phases of compiling one module, as ``CompiledModule.phases`` and ``jit.stats`` report them: waiting for
#: the engine's lock (another compilation under way), parsing and verifying the IR text, the trace pipeline,
#: the fast copy's vectorizing pipeline (its parsing included), machine-code emission, linking
PHASES = ("wait", "parse", "passes", "vectorize", "codegen", "link")


class ObjectCache(Protocol):
    """Where a module's object code may be found, keyed by its text (or, shared, by a name it has in every
    function's cache) and optimization level (``codegen.cache.CodeCache``)."""

    def load(self, text: str, opt_level: int, shared: bool = False) -> bytes | None: ...

    def store(self, text: str, opt_level: int, obj: bytes, shared: bool = False) -> None: ...

    def reject(self, text: str, opt_level: int, shared: bool = False) -> None: ...


@dataclasses.dataclass
class CompiledModule:
    tracker: Any  # keeps the library's code alive
    addresses: dict[str, int]
    ir: str  # as generated
    opt_level: int
    code_bytes: int
    compile_ms: float  # (loading and linking only, when the object code came from a cache)
    library: str
    cached: bool = False  # its object code came from a cache (``codegen.cache``): LLVM did not run
    #: where compile_ms went, in ms (``PHASES``; phases that did not run are absent)
    phases: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def opt_ir(self) -> str:
        """The module as optimized (recomputed: only dumps ask for it)."""
        return engine().optimized_ir(self.ir, self.opt_level)


class Engine:
    def __init__(self) -> None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.triple = llvm.get_process_triple()
        target = llvm.Target.from_triple(self.triple)
        self.machines: dict[int, Any] = {}
        self.target = target
        self.jit = llvm.create_lljit_compiler(self.machine(2))
        self.data_layout = str(self.machine(2).target_data)
        self.imports = {**capi.addresses(), **python_epoch.addresses()}
        self.lock = threading.Lock()
        self.builder: Any = None  # the pass builder and the trace pipeline, made at the first compilation
        self.trace_passes: Any = None
        self.trace_passes_no_peel: Any = None
        self.vector_builder: Any = None  # (the same for the vectorizing pipeline)
        self._names = itertools.count()
        self._phases: dict[str, float] = {}  # the phases of the compilation under way (the lock held)
        self.llvm_compiles = 0  # modules LLVM optimized and compiled to object code in this process

    def machine(self, opt: int) -> Any:
        tm = self.machines.get(opt)
        if tm is None:
            tm = self.target.create_target_machine(
                cpu=llvm.get_host_cpu_name(),
                features=llvm.get_host_cpu_features().flatten(),
                opt=opt,
                reloc="pic",
                codemodel="default",
                jit=True,
            )
            self.machines[opt] = tm
        return tm

    def unique(self, prefix: str) -> str:
        return f"{prefix}{next(self._names)}"

    def compile(
        self,
        ir_text: str | Callable[[], str],
        exports: list[str],
        depends_on: list[str],
        opt_level: int,
        imports: dict[str, int] | None = None,
        cache: ObjectCache | None = None,
        shared_key: str | None = None,
    ) -> CompiledModule:
        """Optimize, compile and link one module; return its exported symbols' addresses. imports: the
        addresses of the module's own symbols (``codegen.symbols``). With a cache, the object code is looked
        up there first (then neither LLVM's passes nor its code generator run) and stored there after LLVM
        made it; by the module's text, or by shared_key, a name the module is known by in every function's
        cache (then ir_text may be a function making the text, called only if LLVM must compile it)."""
        start = time.perf_counter()
        shared = shared_key is not None
        key = shared_key if shared_key is not None else ir_text
        assert isinstance(key, str)
        obj = cache.load(key, opt_level, shared) if cache is not None else None
        cached = obj is not None
        waited = time.perf_counter()
        with self.lock:
            self._phases = phases = {"wait": (time.perf_counter() - waited) * 1e3}
            needed = self.imports  # (object code from a cache: which of them it refers to is not known here)
            if obj is None:
                ir_text = ir_text if isinstance(ir_text, str) else ir_text()
                obj, needed = self._emit(ir_text, opt_level)
            try:
                tracker, addresses, library = self._link(obj, exports, depends_on, {**needed, **(imports or {})})
            except RuntimeError:
                if not cached:
                    raise
                assert cache is not None
                cache.reject(key, opt_level, shared)  # (object code that does not link: made anew, never trusted)
                cached = False
                ir_text = ir_text if isinstance(ir_text, str) else ir_text()
                obj, needed = self._emit(ir_text, opt_level)
                tracker, addresses, library = self._link(obj, exports, depends_on, {**needed, **(imports or {})})
        if cache is not None and not cached:
            cache.store(key, opt_level, obj, shared)
        elapsed = (time.perf_counter() - start) * 1e3
        text = ir_text if isinstance(ir_text, str) else ""  # (a shared module found in the cache: never made)
        return CompiledModule(tracker, addresses, text, opt_level, len(obj), elapsed, library, cached, phases)

    def _timed(self, phase: str, since: float) -> float:
        """Add the time from since to now to phase of the compilation under way; return now."""
        now = time.perf_counter()
        self._phases[phase] = self._phases.get(phase, 0.0) + (now - since) * 1e3
        return now

    def _emit(self, ir_text: str, opt_level: int) -> tuple[bytes, dict[str, int]]:
        """The object code of ir_text (LLVM's passes and code generator), and the addresses of the process's
        symbols it refers to (the lock held)."""
        module = self._optimized(ir_text, opt_level)
        start = time.perf_counter()
        obj = bytes(self.machine(CODEGEN_LEVEL[opt_level]).emit_object(module))
        start = self._timed("codegen", start)
        self.llvm_compiles += 1
        needed = self._imports_of(module)
        self._timed("link", start)
        return obj, needed

    def _imports_of(self, module: Any) -> dict[str, int]:
        """The addresses of the C-API's and the runtime's symbols (``imports``) that module declares, and those
        code generation may call without a declaration (libgcc's 128-bit division): each symbol imported costs
        the linker a definition (all ninety-odd of them: 0.3 ms per trace, a third of linking), a module uses
        ten or so."""
        declared = [f.name for f in module.functions if f.is_declaration]
        declared += [g.name for g in module.global_variables if g.is_declaration]
        needed = dict(capi.WIDE_DIVISION_ADDRESSES)
        needed.update((name, self.imports[name]) for name in declared if name in self.imports)
        return needed

    def _link(
        self, obj: bytes, exports: list[str], depends_on: list[str], imports: dict[str, int]
    ) -> tuple[Any, dict[str, int], str]:
        """Link object code as a new JIT library: its tracker, its exports' addresses and its name (the lock
        held)."""
        start = time.perf_counter()
        library = self.unique("tracejit_lib")
        builder = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
        for name, address in imports.items():
            builder.import_symbol(name, address)
        for dependency in depends_on:
            builder.add_jit_library(dependency)
        for name in exports:
            builder.export_symbol(name)
        tracker = builder.link(self.jit, library)
        self._timed("link", start)
        return tracker, {name: tracker[name] for name in exports}, library

    def _optimized(self, ir_text: str, opt_level: int) -> Any:
        """Parse ir_text and run the optimization pipeline of opt_level on it (the lock held). A text of two
        modules (``VECTOR_MODULE``) is two modules optimized apart, the second with the vectorizing pipeline
        (at opt_level 2 and 1), then linked."""
        main_text, _, vector_text = ir_text.partition(VECTOR_MODULE)
        module = self._optimized_alone(main_text, opt_level)
        if vector_text:
            start = time.perf_counter()
            vector = llvm.parse_assembly(vector_text)
            vector.verify()
            if opt_level in (1, 2):
                if self.vector_builder is None:
                    tuning = llvm.create_pipeline_tuning_options(speed_level=VECTOR_LEVEL)
                    for name, value in VECTOR_TUNING.items():
                        setattr(tuning, name, value)
                    self.vector_builder = llvm.create_pass_builder(self.machine(2), tuning)
                # (a pass manager of its own per module: running one LLVM's default pipeline made a second time
                # failed an assertion in LLVM)
                self.vector_builder.getModulePassManager().run(vector, self.vector_builder)
            elif opt_level == 3:
                tuning = llvm.create_pipeline_tuning_options(speed_level=3)
                builder = llvm.create_pass_builder(self.machine(3), tuning)
                builder.getModulePassManager().run(vector, builder)
            module.link_in(vector)
            self._timed("vectorize", start)
        if opt_level:
            for function in module.functions:
                if not function.is_declaration and COLD in (a.decode() for a in function.attributes):
                    function.add_function_attribute("noinline")
                    function.add_function_attribute("optnone")
        return module

    def _optimized_alone(self, ir_text: str, opt_level: int) -> Any:
        """Parse the text of one module and run the pipeline of opt_level on it."""
        start = time.perf_counter()
        module = llvm.parse_assembly(ir_text)
        module.verify()
        start = self._timed("parse", start)
        if opt_level == 0:
            return module
        if self.builder is None:
            tuning = llvm.create_pipeline_tuning_options(speed_level=2)
            self.builder = llvm.create_pass_builder(self.machine(2), tuning)
            self.trace_passes, self.trace_passes_no_peel = (
                _pass_manager(TRACE_PASSES),
                _pass_manager(TRACE_PASSES_NO_PEEL),
            )
        if opt_level == 3:
            tuning = llvm.create_pipeline_tuning_options(speed_level=3)
            builder = llvm.create_pass_builder(self.machine(3), tuning)
            builder.getModulePassManager().run(module, builder)
        else:
            passes = self.trace_passes_no_peel if ir_text.startswith(NO_PEEL) else self.trace_passes
            passes.run(module, self.builder)
        self._timed("passes", start)
        return module

    def optimized_ir(self, ir_text: str, opt_level: int) -> str:
        """The text of ir_text as the pipeline of opt_level optimizes it."""
        with self.lock:
            self._phases = {}  # (not a compilation's)
            return str(self._optimized(ir_text, opt_level))

    def assembly(self, ir_text: str, opt_level: int) -> str:
        """The machine code ir_text compiles to, as assembly."""
        with self.lock:
            self._phases = {}  # (not a compilation's)
            module = self._optimized(ir_text, opt_level)
            return str(self.machine(CODEGEN_LEVEL[opt_level]).emit_assembly(module))


def _pass_manager(names: tuple[str, ...]) -> Any:
    passes = llvm.create_new_module_pass_manager()
    for name in names:
        getattr(passes, f"add_{name}_pass")()
    return passes


_engine: Engine | None = None
_engine_lock = threading.Lock()


def current() -> Engine | None:
    """The engine, if this process has made it."""
    return _engine


def engine() -> Engine:
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = Engine()
    return _engine
