"""Prototype (experiment, not product code): what a stencil row costs under three ways of checking a run's
floating-point events, each written by hand as vector IR (<8 x double>) and compiled by llvmlite alone, timed in
one process beside Numba's njit of ``array_kernels.stencil`` (best of 300 alternating calls).

- V0: no check and no undo log (what Numba's loop does);
- V1: today's fast copy (``codegen.function``): each store logs the element's old value first, and the status
  flags are read once where the row's run ends;
- V2: no log: a group of G vectors (8G elements) is computed into registers, the status flags are read, and
  only then are the G vectors stored (a set flag would leave with nothing of the group stored: the state at the
  group's start is exact, provided the group's loads do not read what it stores).

    python bench/runcheck_proto.py [n] [--repeats 300]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import sys
import time
from collections.abc import Callable

import llvmlite.binding as llvm
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import array_kernels  # noqa: E402

#: the JIT and its libraries, kept as long as the process (as codegen.engine keeps its own)
KEEP: list[object] = []
#: MXCSR's flags NumPy reports: invalid, division by zero, overflow, underflow
REPORTED = 0x01 | 0x04 | 0x08 | 0x10


def _kernel(variant: int, group: int) -> str:
    """IR of ``i64 k(double* a, double* out, i64 n, double* log)``: out[1:-1, 1:-1] of the n x n stencil; returns
    the or of the flags read (V1) or -1 where a group saw an event (V2)."""
    step = 8 * group
    lines = [
        "define i64 @k(double* %a, double* %out, i64 %n, double* %log) {",
        "entry:",
        "  %slot = alloca i32, align 4",
        "  %slotp = bitcast i32* %slot to i8*",
        "  %nm1 = sub i64 %n, 1",
        "  br label %row",
        "row:",
        "  %i = phi i64 [1, %entry], [%i1, %rowend]",
        "  %bad0 = phi i64 [0, %entry], [%badr, %rowend]",
        "  %rb = mul i64 %i, %n",
        "  %rup = sub i64 %rb, %n",
        "  %rdn = add i64 %rb, %n",
        "  br label %grp",
        "grp:",
        "  %jq = phi i64 [1, %row], [%jn, %grpend]",
        f"  %jlim = add i64 %jq, {step}",
        "  %fits = icmp sle i64 %jlim, %nm1",
        "  %left = icmp slt i64 %jq, %nm1",
        "  %go = or i1 %fits, %left",
        "  br i1 %go, label %gbody, label %rowend",
        "gbody:",
        # (the last group of a row overlaps the one before: it stores the same values again, out not being a)
        f"  %jt = sub i64 %nm1, {step}",
        "  %j = select i1 %fits, i64 %jq, i64 %jt",
    ]
    quarter = "<" + ", ".join(["double 2.5e-1"] * 8) + ">"
    for v in range(group):
        lines.append(f"  %j{v} = add i64 %j, {8 * v}")
        loaded = []
        for name, base, offset in (
            ("up", "%rup", 0),
            ("dn", "%rdn", 0),
            ("lf", "%rb", -1),
            ("rt", "%rb", 1),
            ("c", "%rb", 0),
        ):
            lines += [
                f"  %x_{name}{v} = add i64 {base}, %j{v}",
                f"  %o_{name}{v} = add i64 %x_{name}{v}, {offset}",
                f"  %p_{name}{v} = getelementptr double, double* %a, i64 %o_{name}{v}",
                f"  %q_{name}{v} = bitcast double* %p_{name}{v} to <8 x double>*",
                f"  %{name}{v} = load <8 x double>, <8 x double>* %q_{name}{v}, align 8",
            ]
            loaded.append(f"%{name}{v}")
        up, dn, lf, rt, c = loaded
        lines += [
            f"  %s1_{v} = fadd <8 x double> {up}, {dn}",
            f"  %s2_{v} = fadd <8 x double> %s1_{v}, {lf}",
            f"  %s3_{v} = fadd <8 x double> %s2_{v}, {rt}",
            f"  %s4_{v} = fmul <8 x double> %s3_{v}, {quarter}",
            f"  %r{v} = fsub <8 x double> %s4_{v}, {c}",
            f"  %xs{v} = add i64 %rb, %j{v}",
            f"  %po{v} = getelementptr double, double* %out, i64 %xs{v}",
            f"  %pv{v} = bitcast double* %po{v} to <8 x double>*",
        ]
    if variant == 2:
        lines += [
            "  call void @llvm.x86.sse.stmxcsr(i8* %slotp)",
            "  %w = load i32, i32* %slot",
            f"  %wf = and i32 %w, {REPORTED}",
            "  %ev = icmp ne i32 %wf, 0",
            "  br i1 %ev, label %event, label %store, !prof !0",
            "store:",
        ]
    for v in range(group):
        if variant == 1:
            lines += [
                f"  %old{v} = load <8 x double>, <8 x double>* %pv{v}, align 8",
                f"  %pl{v} = getelementptr double, double* %log, i64 %j{v}",
                f"  %ql{v} = bitcast double* %pl{v} to <8 x double>*",
                f"  store <8 x double> %old{v}, <8 x double>* %ql{v}, align 8",
            ]
        lines.append(f"  store <8 x double> %r{v}, <8 x double>* %pv{v}, align 8")
    lines += ["  br label %grpend", "grpend:", f"  %jn = add i64 %j, {step}", "  br label %grp"]
    if variant == 2:
        lines += ["event:", "  ret i64 -1"]
    lines.append("rowend:")
    if variant == 1:
        lines += [
            "  call void @llvm.x86.sse.stmxcsr(i8* %slotp)",
            "  %w1 = load i32, i32* %slot",
            f"  %wf1 = and i32 %w1, {REPORTED}",
            "  %ev1 = zext i32 %wf1 to i64",
            "  %badr = or i64 %bad0, %ev1",
        ]
    else:
        lines.append("  %badr = or i64 %bad0, 0")
    lines += [
        "  %i1 = add i64 %i, 1",
        "  %more = icmp slt i64 %i1, %nm1",
        "  br i1 %more, label %row, label %done",
        "done:",
        "  ret i64 %badr",
        "}",
        "declare void @llvm.x86.sse.stmxcsr(i8*)",
        '!0 = !{!"branch_weights", i32 1, i32 1000}',
    ]
    return "\n".join(lines) + "\n"


#: (name, variant, vectors per group)
VARIANTS = (
    ("V0 no check, no log", 0, 1),
    ("V0 unrolled x8", 0, 8),
    ("V1 log, flags per row", 1, 1),
    ("V2 flags per 32, no log", 2, 4),
    ("V2 flags per 64, no log", 2, 8),
)


def available() -> bool:
    """Can this machine run the prototype (x86-64: its MXCSR)?"""
    return platform.machine().lower() in ("x86_64", "amd64")


def measure(n: int, repeats: int) -> dict[str, float]:
    """Each variant's best time (seconds) over the interior of an n x n grid (n >= 66: a group of 64 and the
    borders), calls alternating, Numba's stencil beside them where Numba is installed; every variant's result is
    checked against the kernel's first."""
    assert n >= 66 and available()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3, jit=True
    )
    lljit = llvm.create_lljit_compiler(machine)
    KEEP.append(lljit)
    trackers = KEEP
    signature = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)
    grid, _ = array_kernels.inputs("stencil", n)
    log = np.zeros(4096)
    calls: dict[str, Callable[[], object]] = {}
    expected = array_kernels.inputs("stencil", n)[1]
    array_kernels.stencil(grid, expected)
    for name, variant, group in VARIANTS:
        module = llvm.parse_assembly(_kernel(variant, group))
        module.verify()
        tracker = llvm.JITLibraryBuilder().add_ir(module).export_symbol("k").link(lljit, f"proto{len(trackers)}")
        trackers.append(tracker)
        kernel = signature(tracker["k"])
        out = np.zeros((n, n))
        assert kernel(grid.ctypes.data, out.ctypes.data, n, log.ctypes.data) == 0
        assert np.array_equal(out, expected), name
        # (the pointers taken once: ndarray.ctypes costs a microsecond a call)
        pointers = (grid.ctypes.data, out.ctypes.data, n, log.ctypes.data)
        calls[name] = lambda kernel=kernel, pointers=pointers, out=out: kernel(*pointers)  # (out kept alive)
    try:
        import numba

        dispatcher = numba.njit(array_kernels.stencil)
        out = np.zeros((n, n))
        dispatcher(grid, out)
        calls["Numba's stencil (its check loop too)"] = lambda: dispatcher(grid, out)
    except ImportError:  # (the prototype's variants alone)
        pass
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeats):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="?", default=250)
    parser.add_argument("--repeats", type=int, default=300)
    options = parser.parse_args()
    if not available():
        raise SystemExit("the prototype reads x86-64's MXCSR: not this machine")
    for name, seconds in measure(options.n, options.repeats).items():
        print(f"{name:38s} {seconds * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
