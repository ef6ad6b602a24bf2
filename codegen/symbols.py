"""Objects and process data that generated code refers to, as symbols of its module rather than addresses.

Generated code reaches every Python object it uses (type objects, None and the bools, constants, a function's
globals dict, the names it looks up) and every variable of the runtime's (a counter of calls in progress) through
an external global of its module, ``@<prefix>_o<n>`` or ``@<prefix>_<name>``, which linking binds to the
object's address in this process (``codegen.engine``: an absolute symbol of the module's JIT library). The
module's text, and so the machine code LLVM makes of it, then holds no address of this process: it is the same
in every process that lowers the same trace, which is what lets a persistent cache (``codegen.cache``) reuse it.
One object, one symbol: the aliasing between the objects a module refers to is part of its text. The code
loads each address from the library's table of addresses (the GOT), once per use or hoisted out of loops by
LLVM; no fixed address needs to lie within reach of the code.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir

from codegen.capi import I8


class ObjectSymbols:
    """The symbols of one module: made on first use, with the addresses linking binds them to."""

    def __init__(self, module: ir.Module, prefix: str) -> None:
        self.module = module
        self.prefix = prefix
        self.addresses: dict[str, int] = {}  # symbol -> its address in this process (the linker's imports)
        self.keepalive: list[Any] = []  # the objects symbols point to (the code holds no reference of its own)
        self._objects: dict[int, ir.GlobalVariable] = {}  # id(obj) -> its symbol

    def pointer(self, obj: object) -> ir.Value:
        """An ``i8*`` to obj, kept alive as long as this table is."""
        known = self._objects.get(id(obj))
        if known is None:
            name = f"{self.prefix}_o{len(self._objects)}"
            known = self._objects[id(obj)] = self._declare(name, I8, id(obj))
            self.keepalive.append(obj)
        return known

    def variable(self, name: str, ty: ir.Type, address: int) -> ir.GlobalVariable:
        """A ``ty*`` to a variable at address in this process (owned by the caller, which keeps it alive)."""
        return self._declare(f"{self.prefix}_{name}", ty, address)

    def _declare(self, name: str, ty: ir.Type, address: int) -> ir.GlobalVariable:
        assert name not in self.addresses, name
        variable = ir.GlobalVariable(self.module, ty, name)  # (no initializer: an external declaration)
        self.addresses[name] = address
        return variable
