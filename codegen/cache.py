"""The persistent code cache of ``@jit(cache=True)``: the object code LLVM made of a trace's module, on disk, so
that another process running the same function skips LLVM's passes and code generator for it.

What is cached, and what still runs. A process that calls a cached function still records, optimizes and
lowers its traces (Python code, about a millisecond per trace); what it skips is LLVM: parsing, the
optimization passes and machine-code generation (most of a trace's compile time). It looks the module's text up
and links the object code it finds as a fresh compilation's would be (``codegen.engine``). The module's text
refers to objects and runtime variables only through symbols (``codegen.symbols``), bound when the code is
linked, in the process that links it; so the object code is a function of that text and of LLVM alone, and a
module of the same text, in any process, compiles to the same object code. That makes the cache exact.

The key of an entry is a SHA-256 digest of everything the object code may depend on:
- the module's text (which holds the trace: its uops as lowered, its entry type map, the buffer layout, the
  names and exits of the trees it calls or jumps into) and the optimization level;
- the function: its source text, its CPython code object (``marshal``), its tier-1 code, its options;
- tracejit: a digest of its own source files (its version, and more: any change of tracejit's is a new key);
- CPython: ``sys.implementation.cache_tag``, the version and build, ``ABIFLAGS``, ``SOABI``, ``Py_DEBUG``,
  ``Py_GIL_DISABLED``;
- LLVM: its version, llvmlite's, the target triple, the host CPU's name and features, the pass pipeline.
Only an entry whose key equals the module's is ever loaded; a change of anything above is a different key, so
a miss (the old entry stays on disk, unused). One module is shared by every function: the entry stubs' support
library (``codegen.entry.support``), compiled once per process. Its text is decided by tracejit's source, the
CPython build and llvmlite, all in the key, so its entry is keyed by its name instead (``tracejit-<key>.tjc``,
no function's context in the key), and a process that finds it never builds the module (tens of milliseconds
of Python); the objects it refers to are bound by a fixed table.

Storage: one file per entry, ``<module>.<qualname>-<key digest>.tjc``, in ``__pycache__/tracejit/`` next to
the function's source file, or ``tracejit/`` in the user's cache directory (``$XDG_CACHE_HOME``, else
``~/.cache``) if that is not writable or the function has no source file; ``TRACEJIT_CACHE_DIR`` overrides both.
A file is a header (magic, format version, payload length, the full key digest, the payload's SHA-256) then the
object code. It is written to a temporary file in the same directory and renamed over the entry (``os.replace``,
atomic), so a reader sees a whole entry or none, and processes that store the same entry at once each write a
whole, identical one. An entry with another magic, format, key, length or checksum (truncated, damaged, or
written by something else) is rejected: compiled anew and overwritten, never trusted; so is one whose object
code does not link. A module whose text holds a constant address (which lowering never writes) is never
cached: counted as uncacheable. Failing to read or write the directory only costs the cache: the code is compiled as
without it. The cache runs code it finds in that directory: it must not be writable by anyone you would not let
change your source files (as for ``.pyc`` files).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import marshal
import os
import re
import secrets
import struct
import sys
import sysconfig
import threading
import types
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from codegen import engine as engine_module
from jit import environment as environment_variables

MAGIC = b"TJCODE\r\n"
FORMAT = 1
SUFFIX = ".tjc"
# magic, format, payload length, key digest, payload digest
_HEADER = struct.Struct("<8sIQ32s32s")
SHARED = "tracejit"  # the file name prefix of the entries of shared modules
ENVIRONMENT_VARIABLE = environment_variables.CACHE_DIRECTORY
_PACKAGES = ("jit", "codegen", "runtime")


class CodeCache:
    """The code cache of one jitted function: where its entries are, what their keys hold besides a module's
    text (``context``: the function and its options), and counters of what happened (``jit.stats``)."""

    def __init__(self, name: str, context: bytes, directory: str | None = None, source_file: str = "") -> None:
        self.name = name  # the entries' file name prefix
        self.context = context
        self._directory = directory  # (None: found on first use, from source_file)
        self._source_file = source_file
        self._lock = threading.Lock()
        self.hits = 0  # modules whose object code came from the cache
        self.misses = 0  # modules with no entry
        self.rejects = 0  # entries found unusable (damaged, another key, not linkable): compiled anew
        self.stores = 0  # entries written
        self.errors = 0  # entries that could not be written (the directory is not writable, the disk is full...)
        self.uncacheable = 0  # modules holding an address of this process (never cached: see holds_an_address)

    @classmethod
    def for_function(cls, func: types.FunctionType, tier1: Any, options: Any) -> CodeCache:
        """The cache of a jitted function, from its Python function, its tier-1 code and its options."""
        code = func.__code__
        return cls(
            name=_file_name(f"{func.__module__}.{func.__qualname__}"),
            context=function_context(func, tier1, options),
            source_file=code.co_filename,
        )

    @property
    def used_directory(self) -> str | None:
        """The directory, once an entry was looked up (None before: finding it may create it)."""
        return self._directory

    @property
    def directory(self) -> str:
        if self._directory is None:
            self._directory = cache_directory(self._source_file)
        return self._directory

    # --- what the engine calls (codegen.engine.ObjectCache) --------------------------------------------
    def load(self, text: str, opt_level: int, shared: bool = False) -> bytes | None:
        """The object code of the entry for the module of this text (shared: of this name, in every function's
        cache), or None (a miss, or an entry rejected)."""
        if not shared and holds_an_address(text):
            self._count("uncacheable")
            return None
        key = self.key(text, opt_level, shared)
        try:
            with open(self.path(key, shared), "rb") as file:
                data = file.read()
        except OSError:  # (none, or an unreadable directory: then storing fails too, and is counted)
            self._count("misses")
            return None
        payload = read_entry(data, key)
        self._count("hits" if payload is not None else "rejects")
        return payload

    def store(self, text: str, opt_level: int, obj: bytes, shared: bool = False) -> None:
        """Write the entry of this module (atomically; a failure is only counted)."""
        if not shared and holds_an_address(text):
            return  # (counted by load)
        key = self.key(text, opt_level, shared)
        try:
            write_entry(self.path(key, shared), key, obj)
        except OSError:
            self._count("errors")
        else:
            self._count("stores")

    def reject(self, text: str, opt_level: int, shared: bool = False) -> None:
        """The object code load gave would not link: count it as rejected, not as a hit (it is compiled anew and
        stored over the entry)."""
        with self._lock:
            self.hits -= 1
            self.rejects += 1

    # --- keys and files --------------------------------------------------------------------------------
    def key(self, text: str, opt_level: int, shared: bool = False) -> bytes:
        """The digest of everything the object code of the module of this text (or shared: name) may depend on."""
        digest = hashlib.sha256()
        context = b"shared" if shared else self.context
        for part in (b"tracejit code cache", environment(), context, str(opt_level).encode(), text.encode()):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.digest()

    def path(self, key: bytes, shared: bool = False) -> str:
        return os.path.join(self.directory, f"{SHARED if shared else self.name}-{key.hex()}{SUFFIX}")

    def counts(self) -> dict[str, int]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "rejects": self.rejects,
            "stores": self.stores,
            "errors": self.errors,
            "uncacheable": self.uncacheable,
        }

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)


#: a constant address: an integer other than 0 turned into a pointer, as an instruction or a constant expression
_ADDRESS = re.compile(r"\binttoptr \(?i64 (?!0 )-?\d")


def holds_an_address(ir_text: str) -> bool:
    """Does a module's text hold a pointer made from a constant integer (an address of this process)? Lowering
    makes none (objects are symbols: ``codegen.symbols``); a module that did would mean something else in
    another process, so the cache never stores nor loads one (a safety net for lowerings written later)."""
    return _ADDRESS.search(ir_text) is not None


def read_entry(data: bytes, key: bytes) -> bytes | None:
    """The payload of an entry's bytes if it is whole and its key is key, else None."""
    if len(data) < _HEADER.size:
        return None
    magic, version, length, entry_key, checksum = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != MAGIC or version != FORMAT or entry_key != key or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != checksum:
        return None
    return payload


def write_entry(path: str, key: bytes, payload: bytes) -> None:
    """Write an entry: a new temporary file in the same directory (its mode as the umask allows, like a
    ``.pyc`` file), renamed over path (atomic)."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, f".tmp-{os.getpid()}-{secrets.token_hex(8)}{SUFFIX}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(_entry_bytes(key, payload))
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _entry_bytes(key: bytes, payload: bytes) -> bytes:
    return _HEADER.pack(MAGIC, FORMAT, len(payload), key, hashlib.sha256(payload).digest()) + payload


def cache_directory(source_file: str) -> str:
    """Where a function defined in source_file keeps its entries (see the module docstring)."""
    override = environment_variables.cache_directory()
    if override:
        return os.path.abspath(os.path.expanduser(override))
    if source_file and os.path.isfile(source_file):
        beside = os.path.join(os.path.dirname(os.path.abspath(source_file)), "__pycache__", "tracejit")
        if _writable(beside):
            return beside
    return os.path.join(environment_variables.user_cache_directory(), "tracejit")


def _writable(directory: str) -> bool:
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK)


def _file_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._" else "_" for c in text)[:100]


def function_context(func: types.FunctionType, tier1: Any, options: Any) -> bytes:
    """What a key holds about the function: its source, its code object, its tier-1 code and its options."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        source = ""
    parts = {
        "source": source,
        "code": hashlib.sha256(marshal.dumps(func.__code__)).hexdigest(),
        "tier1": hashlib.sha256(_tier1_text(tier1).encode()).hexdigest(),
        "options": repr(options),
    }
    return json.dumps(parts, sort_keys=True).encode()


def _tier1_text(tier1: Any) -> str:
    """The tier-1 code as text with no address in it (its operands as values where they are plain data)."""
    args = [_plain(arg) for arg in tier1.args]
    return repr((tier1.ops, args, tier1.lines, tier1.slot_names, tier1.nlocals, tier1.nparams, tier1.max_stack))


def _plain(value: Any) -> str:
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value)
    if isinstance(value, (tuple, list, frozenset)):
        return f"{type(value).__name__}({', '.join(sorted(map(_plain, value)) if isinstance(value, frozenset) else map(_plain, value))})"
    return type(value).__qualname__  # (an object: the code refers to it through a symbol, bound in this process)


@functools.cache
def environment() -> bytes:
    """What a key holds about tracejit, CPython and LLVM in this process (computed once)."""
    machine = engine_module.engine()
    parts = {
        "tracejit": source_digest(),
        "cache_tag": sys.implementation.cache_tag,
        "python": sys.version,
        "hexversion": sys.hexversion,
        "abiflags": sysconfig.get_config_var("ABIFLAGS") or getattr(sys, "abiflags", ""),
        "soabi": sysconfig.get_config_var("SOABI"),
        "py_debug": sysconfig.get_config_var("Py_DEBUG"),
        "gil_disabled": sysconfig.get_config_var("Py_GIL_DISABLED"),
        "llvm": list(llvm.llvm_version_info),
        "llvmlite": llvmlite.__version__,
        "triple": machine.triple,
        "cpu": llvm.get_host_cpu_name(),
        "features": llvm.get_host_cpu_features().flatten(),
        "passes": list(engine_module.TRACE_PASSES),
        "passes_no_peel": [engine_module.NO_PEEL, *engine_module.TRACE_PASSES_NO_PEEL],
        "cold": engine_module.COLD,
        "vector_pipeline": [engine_module.VECTOR_LEVEL, sorted(engine_module.VECTOR_TUNING.items())],
        "codegen_levels": sorted(engine_module.CODEGEN_LEVEL.items()),
    }
    return json.dumps(parts, sort_keys=True, default=str).encode()


@functools.cache
def source_digest() -> str:
    """A digest of tracejit's own source files (every ``.py`` file of its packages)."""
    digest = hashlib.sha256()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for package in _PACKAGES:
        for directory, subdirectories, files in os.walk(os.path.join(root, package)):
            subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    digest.update(os.path.relpath(path, root).encode() + b"\0")
                    with open(path, "rb") as file:
                        digest.update(file.read())
    return digest.hexdigest()
