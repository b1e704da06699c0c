"""Batch drivers that call their chunk kernel without linking it (issue 32, compile less).

numba compiles every kernel into a code library of its own and links the library of each
kernel it calls into the caller's, where LLVM optimises and generates machine code for the
whole chain again. A batch driver is a loop over chunks around one call; its own code is a
few lines, yet compiling it cost as much as its chunk kernel's whole chain, four times over
for a ``prange`` driver (the outer function, the outlined loop body and two wrappers each
link it): ``distance_parallel`` 7.6 CPU s of the 59 of the classify group, on the slower
machine of 2026-12-07 (benchmarks/results/compile_times.md).

Here the driver calls the chunk through a function pointer instead:

* ``call_unlinked(chunk, c, nchunks, args)`` (in a driver's body) loads the address of
  ``chunk``'s compiled code for those argument types from a process-wide slot, an external
  symbol named after the chunk and its types, and calls it with numba's own calling
  convention (the same call numba emits when it links the callee, minus the linking). Its
  status is checked and an exception propagated, as numba does.
* ``njit_driver(chunk, ...)`` builds the driver's dispatcher. Before the driver compiles,
  or loads from the cache, for argument types ``(*args, nchunks)``, it compiles (or loads)
  ``chunk`` for ``(int64, int64, *args)`` and publishes its address under the slot's name
  (``llvmlite.binding.add_symbol``), so a driver loaded from the cache finds it too. A
  driver must therefore call ``chunk(c, nchunks, *args)`` with its own arguments in order,
  less the trailing ``nchunks``: ``call_unlinked`` refuses, at compile time, a slot the
  driver did not publish.

A one-call entry (``robot.checker.check_one``: one configuration from Python) is a driver
too: it builds its chunk's arguments itself (the configuration as a batch of one, its output
array), so ``njit_driver(chunk, chunk_args=f)`` names them: ``f`` maps the entry's argument
types to the chunk's (less ``c`` and ``nchunks``), the slot published before it compiles or
loads. Linked, each such entry optimised and generated the chunk's whole chain once more (the
robot's ``margin_one`` 1.2 CPU s, ``check_one`` 0.6, of a first use from an empty cache).

A driver of several steps, each over chunks (``traverse.bfs.bfs_query_frontier``: a level's
volume tests, compaction and leaf pairs), names the other chunks with ``more_chunks``, each
with such a function; it publishes every slot before it compiles or loads (the bfs group
12.5-13.2 -> 11.6-12.1 CPU s, 2026-12-08).

The cost at run time: one load and an indirect call per chunk (LLVM could not inline the
chunk into the driver before either: the chunk is a function of its own in numba's IR).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from numba import types
from numba.core import sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import TypingError
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

from .jit import njit
from .slots import SLOTS, call_address, compiled_address, new_slot, slot_global, slot_name


def _type_text(t: Any) -> str:
    """A type's name, the same in every process (a dispatcher's type names its function, not
    its address: the slot's name is baked into cached code)."""
    if isinstance(t, types.Dispatcher):
        f = t.dispatcher.py_func
        return f"dispatcher({f.__module__}.{f.__qualname__})"
    if isinstance(t, types.BaseTuple):
        return f"{type(t).__name__}({', '.join(map(_type_text, t.types))})"
    return re.sub(r" at 0x[0-9a-fA-F]+", "", str(t))


def _slot_name(chunk: Any, argtypes: tuple) -> str:
    f = chunk.py_func
    return slot_name("unlinked", f"{f.__module__}.{f.__qualname__}({', '.join(map(_type_text, argtypes))})")


def _chunk_types(driver_args: tuple) -> tuple:
    """A batch driver's chunk arguments: the driver's own less the trailing ``nchunks``."""
    return driver_args[:-1]


def publish(chunk: Any, argtypes: tuple) -> None:
    """Compile (or load) ``chunk`` for ``argtypes`` and publish its address.

    Under numba's compiler lock: two threads whose first batch calls came together would
    otherwise both publish, and the second slot would replace (and free) the first while a
    driver compiled against it."""
    name = _slot_name(chunk, argtypes)
    if name in SLOTS:
        return
    with global_compiler_lock:
        if name in SLOTS:
            return
        chunk.compile(argtypes)
        new_slot(name, compiled_address(chunk, argtypes))


class DriverKernel(CPUDispatcher):
    """A batch driver's dispatcher: publishes its chunk before each compile (module notes)."""

    _chunk: Any = None
    #: the chunk's argument types from the driver's (module notes); None: ``_chunk_types``
    _chunk_args: Callable[..., tuple] | None = None
    #: further (chunk, argument types) a driver of several steps calls (``njit_driver``)
    _more_chunks: tuple[tuple[Any, Callable[..., tuple]], ...] = ()

    def compile(self, sig: Any) -> Any:
        args, _ = sigutils.normalize_signature(sig)
        chunk_args = _chunk_types(tuple(args)) if self._chunk_args is None else self._chunk_args(*args)
        publish(self._chunk, (types.int64, types.int64, *chunk_args))
        for chunk, more_args in self._more_chunks:
            publish(chunk, (types.int64, types.int64, *more_args(*args)))
        return super().compile(sig)


def njit_driver(
    chunk: Any,
    chunk_args: Callable[..., tuple] | None = None,
    *,
    more_chunks: tuple[tuple[Any, Callable[..., tuple]], ...] = (),
    **options: Any,
) -> Callable[[Callable[..., Any]], DriverKernel]:
    """``@njit(cache=True, nogil=True, **options)`` for a driver that calls ``chunk`` through
    ``call_unlinked`` (module notes). ``chunk_args``: for a one-call entry, a function from its
    argument types to the chunk's (less ``c`` and ``nchunks``); a type it gets wrong makes
    ``call_unlinked`` refuse at compile time (no published slot), never a wrong call.
    ``more_chunks``: (chunk, function) pairs of the same kind for a driver that runs several
    steps, each over chunks (the breadth-first traversal's levels: ``traverse/bfs.py``)."""

    def decorate(func: Callable[..., Any]) -> DriverKernel:
        options.setdefault("nogil", True)
        dispatcher = njit(cache=True, **options)(func)
        dispatcher.__class__ = DriverKernel  # same layout: a subclass that only adds compile
        dispatcher._chunk = chunk
        dispatcher._chunk_args = chunk_args
        dispatcher._more_chunks = tuple(more_chunks)
        return dispatcher

    return decorate


@intrinsic
def call_unlinked(typingctx: Any, chunk: Any, c: Any, nchunks: Any, args: Any) -> Any:
    """``chunk(c, nchunks, *args)`` through the slot its driver published (module notes)."""
    if not isinstance(chunk, types.Dispatcher) or not isinstance(args, types.BaseTuple):
        return None
    argtypes = (types.int64, types.int64, *args.types)
    name = _slot_name(chunk.dispatcher, argtypes)
    if name not in SLOTS:
        raise TypingError(
            f"call_unlinked: no published slot for {chunk.dispatcher.py_func.__qualname__}{argtypes}: "
            "call it from an njit_driver whose arguments are the chunk's, in order, then nchunks"
        )
    sig = types.void(chunk, c, nchunks, args)

    def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
        _, c_v, n_v, tup = llargs
        vals = [
            context.cast(builder, c_v, signature.args[1], types.int64),
            context.cast(builder, n_v, signature.args[2], types.int64),
            *(builder.extract_value(tup, i) for i in range(len(args.types))),
        ]
        call_address(context, builder, builder.load(slot_global(builder, name)), types.none, argtypes, vals)
        return context.get_dummy_value()

    return sig, codegen


__all__ = ["DriverKernel", "call_unlinked", "njit_driver", "publish"]
