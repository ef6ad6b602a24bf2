"""The function object ``@jit`` returns.

It is a real Python function, made from the decorated function's globals, defaults and closure, whose code
tracejit swaps as it learns about the function: the decorated function's own code (it runs as plain
CPython), a trampoline that runs the front end at the first call, the instrumented code of
``jit.frontend.instrument``, or a forwarder into the tier-1 interpreter (``interpreter=True``). CPython
itself binds the arguments, so the signature, defaults (assignable after decoration), keyword and
positional-only rules and error messages are the function's own; it binds as a method, pickles by reference
like any function, and ``inspect`` sees what it sees for the plain function.

Trampoline and forwarder have the function's exact signature and pass the bound arguments on, positional
parameters positionally and keyword-only ones by keyword, to a method of an object that enters their code
as a constant (placeholders replaced in ``co_consts``, as for the instrumented code): no names in the user's
globals, no free variables, so ``__code__`` can be swapped freely.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types
import weakref
from typing import Any

_PLACEHOLDER = "\x00tracejit placeholder TARGET"  # only ever an attribute's owner: CPython keeps it a constant


class _WeakTarget:
    """A forwarder's constant: its target, reached through a weak reference. CPython's garbage collector does
    not see a code object's constants (code objects are not tracked), and the target holds the function that
    runs the forwarder, so a strong reference made a cycle no collection could free: every ``@jit`` function
    lived as long as the process. (Hashable, unlike ``weakref.proxy``: CPython hashes a code's constants.)"""

    __slots__ = ("_target",)

    base_exception = BaseException
    recursion_error = RecursionError

    def __init__(self, target: Any) -> None:
        self._target = weakref.ref(target)

    def __getattr__(self, name: str) -> Any:
        # (a frame holds its function, and the function its target: alive whenever the forwarder runs)
        return getattr(self._target(), name)


def make_wrapper(func: types.FunctionType) -> types.FunctionType:
    """A new function like func (same code, globals, defaults, closure, name, doc, __dict__...), with
    ``__wrapped__`` = func."""
    wrapper = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    wrapper.__kwdefaults__ = copy.copy(func.__kwdefaults__)
    functools.update_wrapper(wrapper, func)
    return wrapper


def forwarder(func: types.FunctionType, target: Any, method: str) -> types.CodeType:
    """Code with func's signature that returns ``target.<method>(arguments...)``. An exception leaving it
    goes through ``target.clean_traceback()``, called in the except clause: it drops this forwarder's own
    traceback entry (the head) and tracejit's frames. The code holds target weakly (``_WeakTarget``, which also
    gives it ``base_exception`` and ``recursion_error``: the user's globals may rebind these names)."""
    code = func.__code__
    npos = code.co_argcount
    nkw = code.co_kwonlyargcount
    names = code.co_varnames[: npos + nkw]
    star = code.co_varnames[npos + nkw] if code.co_flags & inspect.CO_VARARGS else None
    starstar = code.co_varnames[npos + nkw + (star is not None)] if code.co_flags & inspect.CO_VARKEYWORDS else None
    params = list(names[:npos])
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if star is not None:
        params.append(f"*{star}")
    elif nkw:
        params.append("*")
    params.extend(names[npos:])
    if starstar is not None:
        params.append(f"**{starstar}")
    forward = list(names[:npos]) + ([f"*{star}"] if star is not None else [])
    forward += [f"{n}={n}" for n in names[npos:]] + ([f"**{starstar}"] if starstar is not None else [])
    # a closure's forwarder takes the function's free variables (the wrapper keeps its cells): it is compiled
    # inside a function binding them, and names them in a block the compiler never emits (no cost at run time)
    cells = ", ".join(code.co_freevars)
    source = (
        f"def forward({', '.join(params)}):\n"
        + (f"    if False:\n        ({cells},)\n" if cells else "")
        + f"    try:\n"
        f"        return @T@.{method}({', '.join(forward)})\n"
        f"    except @T@.base_exception:\n"
        f"        try:\n"
        f"            @T@.clean_traceback()\n"
        f"        except @T@.recursion_error:\n"
        f"            pass\n"
        f"        raise\n"
    ).replace("@T@", repr(_PLACEHOLDER))
    if cells:
        body = "".join(f"    {line}\n" for line in source.splitlines())
        source = f"def enclosing():\n    {cells} = {', '.join(['None'] * len(code.co_freevars))}\n{body}"
    made = compile(source, f"<tracejit {func.__qualname__}>", "exec")
    while made.co_name != "forward":  # (the module's code, then the enclosing function's)
        made = next(c for c in made.co_consts if isinstance(c, types.CodeType))
    assert made.co_freevars == code.co_freevars, (made.co_freevars, code.co_freevars)
    held = _WeakTarget(target)
    consts = tuple(held if c == _PLACEHOLDER else c for c in made.co_consts)
    return made.replace(co_consts=consts, co_name=code.co_name, co_qualname=func.__qualname__)
