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

    def __init__(self, module: ir.Module | None, prefix: str, fixed: tuple[object, ...] | None = None) -> None:
        self.module = module
        self.prefix = prefix
        self.addresses: dict[str, int] = {}  # symbol -> its address in this process (the linker's imports)
        self.keepalive: list[Any] = []  # the objects symbols point to (the code holds no reference of its own)
        self._objects: dict[int, ir.GlobalVariable] = {}  # id(obj) -> its symbol
        # fixed: the objects the module may refer to, given in advance, each bound to the symbol of its index
        # whether the module uses it or not (so the bindings are known without making the module)
        self._fixed: dict[int, int] | None = None
        if fixed is not None:
            self._fixed = {id(obj): index for index, obj in enumerate(fixed)}
            self.keepalive.extend(fixed)
            self.addresses.update({self._name(index): id(obj) for index, obj in enumerate(fixed)})

    def pointer(self, obj: object) -> ir.Value:
        """An ``i8*`` to obj, kept alive as long as this table is."""
        known = self._objects.get(id(obj))
        if known is None:
            if self._fixed is None:
                self.keepalive.append(obj)
                index = len(self._objects)
                self.addresses[self._name(index)] = id(obj)
            else:
                index = self._fixed[id(obj)]  # (KeyError: an object missing from the table given)
            assert self.module is not None
            known = self._objects[id(obj)] = ir.GlobalVariable(self.module, I8, self._name(index))
        return known

    def address(self, name: str, address: int) -> ir.GlobalVariable:
        """An ``i8*`` to code or data at address in this process, outside Python's objects (a C function, a
        library's static data), named for what it is: the same name must mean the same thing in every process
        (one symbol per name)."""
        full = f"{self.prefix}_{name}"
        if full in self.addresses:
            assert self.addresses[full] == address, full
            known = self.module.get_global(full) if self.module is not None else None
            assert isinstance(known, ir.GlobalVariable)
            return known
        return self._declare(full, I8, address)

    def _name(self, index: int) -> str:
        return f"{self.prefix}_o{index}"

    def variable(self, name: str, ty: ir.Type, address: int) -> ir.GlobalVariable:
        """A ``ty*`` to a variable at address in this process (owned by the caller, which keeps it alive)."""
        return self._declare(f"{self.prefix}_{name}", ty, address)

    def _declare(self, name: str, ty: ir.Type, address: int) -> ir.GlobalVariable:
        assert name not in self.addresses, name
        assert self.module is not None
        variable = ir.GlobalVariable(self.module, ty, name)  # (no initializer: an external declaration)
        self.addresses[name] = address
        return variable
