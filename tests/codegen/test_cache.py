"""The persistent code cache (``@jit(cache=True)``, ``codegen.cache``): a second process links the object code the
first stored and runs no LLVM compilation; a damaged entry, or one for another key, is never trusted; a change
of source or options misses; ``cache=False`` touches no file. Results are compared with plain CPython and native
execution is asserted through ``jit.stats``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import TEST_OPTIONS, assert_native, check

from codegen import cache as cache_module
from jit import jit

ROOT = Path(__file__).resolve().parent.parent.parent

KERNELS = '''
from jit import jit

def nested(n):
    """Nested loops (a tree call), ints and floats, a branch (a side trace)."""
    total = 0
    acc = 0.0
    for i in range(n):
        for j in range(n):
            total += (i ^ j) & 7
        if i % 3 == 0:
            acc += i * 0.5
        else:
            acc -= 1.25
    return total, acc

def words(n):
    """Strings, a dict and a list: objects the code refers to (symbols bound in each process)."""
    counts = {}
    names = ["a", "bb", "a", "ccc"]
    for i in range(n):
        name = names[i % 4]
        counts[name] = counts.get(name, 0) + len(name)
        if i % 5 == 0:  # (a side trace)
            counts[name] += 1
    return counts
'''

SCRIPT = """
import json, sys
sys.path.insert(0, {directory!r})
import kernels
from jit import jit
from codegen import engine

out = {{}}
for name, arg in (("nested", 60), ("words", 500)):
    plain = getattr(kernels, name)
    f = jit(cache=True, **{options!r})(plain)
    results = [f(arg), f(arg)]
    stats = jit.stats(f)
    out[name] = {{
        "same": all(r == plain(arg) for r in results),
        "traces": stats["traces_compiled"],
        "llvm": stats["llvm_compiles"],
        "native": stats["native_entries"] > 0 and stats["native_iterations"] > 0,
        "cache": stats["cache"],
    }}
out["engine_llvm"] = engine.engine().llvm_compiles
print(json.dumps(out))
"""


def _kernels(tmp_path: Path, source: str = KERNELS) -> Path:
    directory = tmp_path / "src"
    directory.mkdir(exist_ok=True)
    (directory / "kernels.py").write_text(source)
    return directory


def _run(directory: Path, cache_dir: Path | None = None, options: dict | None = None) -> dict:
    script = directory / "run.py"
    script.write_text(textwrap.dedent(SCRIPT.format(directory=str(directory), options=options or TEST_OPTIONS)))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop(cache_module.ENVIRONMENT_VARIABLE, None)
    if cache_dir is not None:
        env[cache_module.ENVIRONMENT_VARIABLE] = str(cache_dir)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{cache_module.SUFFIX}"))


def _assert_ran(run: dict) -> None:
    for name in ("nested", "words"):
        assert run[name]["same"], run
        assert run[name]["native"], run


@pytest.mark.slow
def test_a_second_process_links_the_stored_code_and_runs_no_llvm(tmp_path):
    source = _kernels(tmp_path)
    first = _run(source)
    _assert_ran(first)
    entries = _entries(source / "__pycache__" / "tracejit")  # (the default: next to the source file)
    for name in ("nested", "words"):
        stats = first[name]
        assert stats["traces"] > 0 and stats["llvm"] == stats["traces"]
        assert stats["cache"]["hits"] == 0 and stats["cache"]["stores"] == stats["cache"]["misses"] > 0
        assert stats["cache"]["directory"] == str(source / "__pycache__" / "tracejit")
    # every trace, and the entry stubs' support library once
    assert len(entries) == first["nested"]["traces"] + first["words"]["traces"] + 1
    assert first["engine_llvm"] == len(entries)

    second = _run(source)
    _assert_ran(second)
    assert second["engine_llvm"] == 0  # nothing went through LLVM's passes or code generator in this process
    for name in ("nested", "words"):
        stats = second[name]
        assert stats["traces"] == first[name]["traces"] and stats["llvm"] == 0
        assert stats["cache"]["hits"] == first[name]["cache"]["stores"]
        assert stats["cache"]["misses"] == stats["cache"]["rejects"] == stats["cache"]["stores"] == 0
    assert _entries(source / "__pycache__" / "tracejit") == entries


@pytest.mark.slow
def test_processes_storing_at_once_leave_whole_entries(tmp_path):
    source = _kernels(tmp_path)
    store = tmp_path / "store"
    script = source / "run.py"
    script.write_text(textwrap.dedent(SCRIPT.format(directory=str(source), options=TEST_OPTIONS)))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env[cache_module.ENVIRONMENT_VARIABLE] = str(store)
    runs = [
        subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(3)
    ]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        _assert_ran(json.loads(out.strip().splitlines()[-1]))
    assert [p.name for p in store.iterdir() if not p.name.endswith(cache_module.SUFFIX) or p.name.startswith(".")] == []
    after = _run(source, store)
    _assert_ran(after)
    assert after["engine_llvm"] == 0
    assert all(after[name]["cache"]["rejects"] == after[name]["cache"]["misses"] == 0 for name in ("nested", "words"))


def _damage(entries: list[Path]) -> None:
    """Damage every entry a different way: a flipped payload byte, truncation, another key, another format,
    object code that is not object code (with a correct checksum), an empty file."""
    header = cache_module._HEADER
    for index, path in enumerate(entries):
        data = bytearray(path.read_bytes())
        way = index % 6
        if way == 0:
            data[-10] ^= 0x40
        elif way == 1:
            data = data[: len(data) // 2]
        elif way == 2:
            data[header.size - 40] ^= 1  # (in the key digest)
        elif way == 3:
            data[8] += 1  # (the format)
        elif way == 4:
            key = header.unpack_from(data)[3]
            data = bytearray(cache_module._entry_bytes(key, b"not object code" * 10))
        else:
            data = bytearray()
        path.write_bytes(bytes(data))


@pytest.mark.slow
def test_damaged_entries_are_rejected_compiled_anew_and_overwritten(tmp_path):
    source = _kernels(tmp_path)
    store = tmp_path / "store"
    first = _run(source, store)
    entries = _entries(store)
    assert len(entries) >= 6  # (every way of damaging one is tried)
    _damage(entries)

    second = _run(source, store)
    _assert_ran(second)
    assert second["engine_llvm"] == len(entries)  # every damaged entry compiled anew
    rejects = sum(second[name]["cache"]["rejects"] for name in ("nested", "words"))
    assert rejects == len(entries)
    for name in ("nested", "words"):
        stats = second[name]["cache"]
        assert stats["hits"] == 0 and stats["stores"] == stats["rejects"]

    third = _run(source, store)  # the entries were overwritten with good ones
    _assert_ran(third)
    assert third["engine_llvm"] == 0
    for name in ("nested", "words"):
        assert third[name]["cache"]["hits"] == first[name]["cache"]["stores"]
        assert third[name]["cache"]["rejects"] == 0


def test_an_entry_is_read_only_if_whole_and_of_its_key():
    key, other = b"k" * 32, b"o" * 32
    payload = b"\x7fELF object code"
    data = cache_module._entry_bytes(key, payload)
    assert cache_module.read_entry(data, key) == payload
    assert cache_module.read_entry(data, other) is None
    assert cache_module.read_entry(data[:-1], key) is None
    assert cache_module.read_entry(data + b"x", key) is None
    assert cache_module.read_entry(data[:10], key) is None
    flipped = bytearray(data)
    flipped[-1] ^= 1
    assert cache_module.read_entry(bytes(flipped), key) is None
    assert cache_module.read_entry(b"XXXXXXXX" + data[8:], key) is None


def test_writing_an_entry_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "d" / f"f-1{cache_module.SUFFIX}"
    cache_module.write_entry(str(path), b"k" * 32, b"one")
    cache_module.write_entry(str(path), b"k" * 32, b"two")  # (replaced whole)
    assert os.listdir(tmp_path / "d") == [path.name]
    assert cache_module.read_entry(path.read_bytes(), b"k" * 32) == b"two"


# --- in one process: a new jit(f) finds what another stored (the support library is compiled once anyway) ------


def loops(n):
    total = 0
    for i in range(n):
        total += i * 3 % 7
    return total


def _cached(func, **options):
    return jit(cache=True, **{**TEST_OPTIONS, **options})(func)


def test_a_new_instance_hits_and_the_results_match_cpython(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    first = check(loops, 50, 300, options={"cache": True}, native=True)
    assert jit.stats(first)["cache"]["stores"] > 0
    again = check(loops, 50, 300, options={"cache": True}, native=True)
    for f in (again, again.cpython_baseline):
        stats = jit.stats(f)
        assert stats["cache"]["hits"] == stats["traces_compiled"] > 0
        assert stats["cache"]["misses"] == 0 and stats["llvm_compiles"] == 0
        # linked only: LLVM neither parsed, optimized nor compiled anything
        assert {"parse", "passes", "codegen"}.isdisjoint(stats["compile_phases_ms"]) and "link" in stats[
            "compile_phases_ms"
        ]
        hits = stats["cache"]["hits"]
        assert (
            f"code cache ({tmp_path}): {hits} module(s) found, 0 not found, 0 rejected, 0 stored; LLVM compiled 0"
            in (jit.explain(f))
        )


def test_changed_options_or_source_miss(tmp_path, monkeypatch):
    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    f = _cached(loops)
    assert f(200) == loops(200)
    assert jit.stats(f)["cache"]["stores"] > 0
    other_options = _cached(loops, max_side_traces=31)  # (the code is the same: only the key differs)
    assert other_options(200) == loops(200)
    stats = jit.stats(other_options)
    assert stats["cache"]["hits"] == 0 and stats["llvm_compiles"] == stats["traces_compiled"] > 0

    # the same code with a comment added: the same module text, but another source
    namespace: dict = {}
    text = "def loops(n):\n    total = 0  # a comment\n    for i in range(n):\n        total += i * 3 % 7\n    return total\n"
    path = tmp_path / "changed.py"
    path.write_text(text)
    exec(compile(text, str(path), "exec"), namespace)
    changed = _cached(namespace["loops"])
    assert changed(200) == loops(200)
    assert_native(changed)
    stats = jit.stats(changed)
    assert stats["cache"]["hits"] == 0 and stats["cache"]["misses"] > 0


def test_without_the_option_no_file_is_touched(tmp_path, monkeypatch):
    store = tmp_path / "store"
    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(store))
    opened = []
    monkeypatch.setattr(cache_module, "write_entry", lambda *args: opened.append(args))
    f = jit(**TEST_OPTIONS)(loops)
    assert f(300) == loops(300)
    assert_native(f)
    stats = jit.stats(f)
    assert stats["cache"] == {
        "hits": 0,
        "misses": 0,
        "rejects": 0,
        "stores": 0,
        "errors": 0,
        "uncacheable": 0,
        "directory": None,
    }
    assert not store.exists() and opened == []


def test_a_module_refers_to_no_address(tmp_path, monkeypatch):
    """Every object and runtime variable is a symbol: no constant address in the IR, and two functions' modules
    (fresh instances, each binding its own objects) are the same text."""
    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    texts = []
    for _ in range(2):
        f = _cached(loops)
        f(300)
        ir = jit.dump(f, "ir")
        assert re.findall(r"inttoptr \(i64 [1-9]", ir) == []
        # (the entry stub's counter of calls in progress: a runtime variable; the stub refers to no object since it
        # jumps to the support library's tj_entry_run, codegen.entry)
        assert re.search(r"@\"?tj_loops_root0_0_[0-9a-f]{4}_active\"? = external global i64", ir), ir[:3000]
        texts.append(ir)
    assert texts[0] == texts[1]


def test_a_module_holding_an_address_is_never_cached(tmp_path):
    assert cache_module.holds_an_address("  %p = inttoptr i64 140000123 to i8*")
    assert cache_module.holds_an_address("  store i64 1, i64* inttoptr (i64 94000 to i64*)")
    assert cache_module.holds_an_address("  %p = inttoptr i64 -5 to i8*")
    assert not cache_module.holds_an_address("  %p = inttoptr i64 0 to i8*")
    assert not cache_module.holds_an_address("  %p = inttoptr i64 %x to i8*")
    store = cache_module.CodeCache("f", b"context", directory=str(tmp_path))
    text = "define i8* @f() {\n  ret i8* inttoptr (i64 94000 to i8*)\n}\n"
    assert store.load(text, 2) is None
    store.store(text, 2, b"object code")
    assert os.listdir(tmp_path) == [] and store.load(text, 2) is None
    assert store.counts()["uncacheable"] == 2 and store.counts()["misses"] == 0


def test_an_unwritable_directory_costs_only_the_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(blocker / "below"))  # (a file cannot hold a directory)
    f = _cached(loops)
    assert f(300) == loops(300)
    assert_native(f)
    stats = jit.stats(f)
    assert stats["cache"]["errors"] == stats["traces_compiled"] > 0 and stats["cache"]["stores"] == 0


def test_numpy_ufunc_loops_are_symbols_too(tmp_path, monkeypatch):
    """NumPy's inner loops and the C library's floating-point status functions are reached through symbols
    (named for what they are), so a trace calling them is cached and found again."""
    np = pytest.importorskip("numpy")
    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    namespace = {"np": np}
    text = "def waves(a):\n    total = 0.0\n    for i in range(len(a)):\n        total += np.sin(a[i]) + np.exp(a[i])\n    return total\n"
    path = tmp_path / "waves.py"
    path.write_text(text)
    exec(compile(text, str(path), "exec"), namespace)
    waves = namespace["waves"]
    data = np.linspace(0.0, 3.0, 300)
    counts = []
    for _ in range(2):
        f = _cached(waves)
        assert repr(f(data)) == repr(waves(data))
        assert_native(f)
        ir = jit.dump(f, "ir")
        assert "_NP_UFUNC_LOOP" in jit.dump(f, "uops")
        assert re.findall(r"inttoptr \(?i64 [1-9]", ir) == []
        assert re.search(r"@\"?tj_waves_root0_0_[0-9a-f]{4}_np_sin_d\"? = external global i8", ir)
        counts.append(jit.stats(f)["cache"])
    assert counts[0]["stores"] > 0 and counts[0]["uncacheable"] == 0
    assert counts[1]["hits"] == counts[0]["stores"] and counts[1]["misses"] == 0


def test_background_compilation_uses_the_cache(tmp_path, monkeypatch):
    from jit import background

    monkeypatch.setenv(cache_module.ENVIRONMENT_VARIABLE, str(tmp_path))
    made = []
    for _ in range(2):
        f = _cached(loops, sync_compile=False)
        for _ in range(5):
            assert f(300) == loops(300)
        assert background.compiler().drain()
        for _ in range(3):  # (now with the installed code)
            assert f(300) == loops(300)
        made.append(jit.stats(f))
    first, second = made
    # (the support library, if this process had not compiled it yet, is stored as well)
    assert first["cache"]["stores"] >= first["llvm_compiles"] == first["traces_compiled"] > 0
    assert first["cache"]["hits"] == first["cache"]["rejects"] == 0
    assert second["cache"]["hits"] > 0 and second["cache"]["rejects"] == 0
    assert second["llvm_compiles"] == second["traces_compiled"] - second["cache"]["hits"]
    assert first["native_entries"] > 0 and second["native_entries"] > 0
