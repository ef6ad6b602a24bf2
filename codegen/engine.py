"""LLVM in this process: one ORC JIT, a host target machine, the optimization pipeline, and linking compiled
modules as JIT libraries that import the C-API by address and each other by name.

Compiling releases the GIL (llvmlite calls LLVM through ctypes), so other Python threads keep running; a lock
keeps one compilation at a time.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from typing import Any

import llvmlite.binding as llvm

from codegen import capi


@dataclasses.dataclass
class CompiledModule:
    tracker: Any  # keeps the library's code alive
    addresses: dict[str, int]
    opt_ir: str
    code_bytes: int
    compile_ms: float
    library: str


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
        self.imports = capi.addresses()
        self.lock = threading.Lock()
        self._names = itertools.count()

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

    def compile(self, ir_text: str, exports: list[str], depends_on: list[str], opt_level: int) -> CompiledModule:
        """Optimize, compile and link one module; return its exported symbols' addresses."""
        with self.lock:
            start = time.perf_counter()
            module = llvm.parse_assembly(ir_text)
            module.verify()
            machine = self.machine(opt_level)
            if opt_level > 0:
                tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
                passes = llvm.create_pass_builder(machine, tuning)
                passes.getModulePassManager().run(module, passes)
            opt_ir = str(module)
            obj = machine.emit_object(module)
            library = self.unique("tracejit_lib")
            builder = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
            for name, address in self.imports.items():
                builder.import_symbol(name, address)
            for dependency in depends_on:
                builder.add_jit_library(dependency)
            for name in exports:
                builder.export_symbol(name)
            tracker = builder.link(self.jit, library)
            addresses = {name: tracker[name] for name in exports}
            elapsed = (time.perf_counter() - start) * 1e3
            return CompiledModule(tracker, addresses, opt_ir, len(obj), elapsed, library)

    def assembly(self, opt_ir: str, opt_level: int) -> str:
        with self.lock:
            return str(self.machine(opt_level).emit_assembly(llvm.parse_assembly(opt_ir)))


_engine: Engine | None = None
_engine_lock = threading.Lock()


def engine() -> Engine:
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = Engine()
    return _engine
