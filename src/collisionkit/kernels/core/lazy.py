"""Kernels called through a slot, compiled on their first call (issue 32, compile less).

numba compiles a kernel together with every kernel it calls, before its first run: the
first ``intersects`` compiled the exact predicates' expansion arithmetic and the triangle
test's degenerate and coplanar cases (about 4 of its 18 CPU s on 2026-12-07), and every
query family that tests triangles linked them into its kernels again, although generic
poses of generic meshes never reach them.

``njit_lazy(signature)`` makes such a cold path's entry a call through a slot
(``kernels/core/slots.py``):

* At import it creates, per entry and declared signature, one process-wide slot (an int64
  published to LLVM under a name made of the entry's module, name and signature, the same
  in every process) and compiles nothing.
* A kernel that calls the entry loads the slot. While it is zero (the entry never compiled
  in this process) the kernel calls back into Python (a ctypes callback, which takes the
  GIL), and the callback compiles the entry, or loads it from numba's cache, and writes its
  address into the slot. Then, as on every later call, the kernel calls that address with
  numba's own calling convention (the call numba emits when it links a callee, minus the
  linking) and propagates the entry's exceptions.
* Callers are typed against the declared signature, never the entry's body, so compiling a
  caller compiles nothing of the cold path. Arguments are converted to the declared types
  as numba converts them for any call; one that cannot convert is a typing error naming
  the entry.
* From Python the entry runs as an ordinary ``@njit`` kernel.

The same call serves a hot kernel that many callers share (``cold=False``): the descent of
one (tree a, tree b) task (``descent.collide_task``) and its distance twin
(``distance.distance_task``), called once per task by the batch chunks, the per-call
entries, the robot checker and time of impact. Linked, each caller optimised and generated
their code again (2.4 of the classify group's 31 CPU s, 2026-12-07). Such an entry may
declare several signatures (options by type: ``collide_task``'s triangle test ``None`` or a
code); a call takes the first one its arguments match exactly, else the first they convert
to. The indirect call costs nothing next to a descent. A hot kernel that only some inputs
reach is one too: the intersection segment (``tri_segment.tri_tri_segment``), which every
contact row calls but a distance query only for meshes that intersect, so a first distance
of separate shapes compiles nothing of it.

The callback takes the GIL, so a thread that holds the GIL must never wait for a kernel
that reaches a cold path on another thread: every ``parallel=True`` kernel of the package
is ``nogil`` (``tests/test_lazy.py`` checks it). ``compile_all()`` compiles every entry
(the warm-up does, so that shipped kernels include them).

The cost at run time: one load and a compare before the call, and an indirect call in
place of a direct one, on paths that already run exact arithmetic.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import sys
import traceback
from collections.abc import Callable
from typing import Any

from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import TypingError
from numba.core.extending import _Intrinsic

from .jit import njit
from .slots import call_address, compiled_address, new_slot, slot_global, slot_name

#: the callback kernels call for an entry whose slot is still zero (module notes)
RESOLVER_SYMBOL = "collisionkit_lazy_resolve"

#: address of a slot -> (the entry, the index of its signature)
_BY_SLOT: dict[int, tuple[LazyKernel, int]] = {}
#: every entry, in the order they were declared
ENTRIES: list[LazyKernel] = []


def _resolve(slot_address: int) -> int:
    """The ctypes callback: compile the entry whose slot lives at ``slot_address``."""
    try:
        kernel, i = _BY_SLOT[slot_address]
        return kernel.publish(i)
    except BaseException:  # noqa: BLE001 - a callback must not raise; the kernel raises instead
        traceback.print_exc(file=sys.stderr)
        return 0


_RESOLVER = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(_resolve)
llvm.add_symbol(RESOLVER_SYMBOL, ctypes.cast(_RESOLVER, ctypes.c_void_p).value)


class LazyKernel(_Intrinsic):
    """An entry called through slots: typed from its declared signatures, compiled on first call."""

    dispatcher: Any
    signatures: tuple[Any, ...]
    slots: tuple[ctypes.c_int64, ...]
    slot_names: tuple[str, ...]
    #: a cold path (compiled only where the input needs it), not a shared hot kernel
    cold: bool

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.dispatcher(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy kernel {self._name}{', '.join(map(str, self.signatures))}>"

    @property
    def py_func(self) -> Callable[..., Any]:
        return self.dispatcher.py_func

    def compiled(self) -> bool:
        """Whether this process has compiled (or loaded) the entry for any of its signatures."""
        return any(slot.value != 0 for slot in self.slots)

    def publish(self, i: int = 0) -> int:
        """Compile (or load from the cache) the entry for its ``i``-th signature; publish its
        address.

        Under numba's compiler lock, so that two threads meeting the entry at once compile
        it once."""
        slot, sig = self.slots[i], self.signatures[i]
        if slot.value:
            return slot.value
        with global_compiler_lock:
            if not slot.value:
                args = tuple(sig.args)
                self.dispatcher.compile(sig)
                returned = self.dispatcher.overloads[args].signature.return_type
                if returned != sig.return_type:
                    # compiled earlier from Python, where the result type is inferred: the
                    # kernels' calls would read a result of another type
                    raise TypeError(f"{self._name} returns {returned}, declared {sig.return_type} (njit_lazy)")
                slot.value = compiled_address(self.dispatcher, args)
        return slot.value

    def publish_all(self) -> None:
        """Compile (or load) the entry for every declared signature."""
        for i in range(len(self.signatures)):
            self.publish(i)


def _match(typingctx: Any, args: tuple, signatures: tuple) -> int:
    """The signature a call takes: the first its argument types equal, else the first they
    convert to; -1 for none."""
    fits = [
        i for i, sig in enumerate(signatures)
        if len(args) == len(sig.args) and all(typingctx.can_convert(a, d) is not None for a, d in zip(args, sig.args, strict=True))
    ]  # fmt: skip
    exact = [i for i in fits if tuple(args) == tuple(signatures[i].args)]
    return (exact or fits or [-1])[0]


def _typer(kernel_ref: list[LazyKernel]) -> Callable[..., Any]:
    def typer(typingctx: Any, *args: Any) -> Any:
        kernel = kernel_ref[0]
        i = _match(typingctx, args, kernel.signatures)
        if i < 0:
            raise TypingError(
                f"{kernel._name}: called with ({', '.join(map(str, args))}); it is declared "
                f"{' or '.join(map(str, kernel.signatures))} (njit_lazy, kernels/core/lazy.py)"
            )
        sig, name = kernel.signatures[i], kernel.slot_names[i]

        def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
            i64 = ir.IntType(64)
            slot = slot_global(builder, name)
            address = builder.load(slot)
            with cgutils.if_unlikely(builder, cgutils.is_null(builder, address)):
                module = builder.module
                resolve = cgutils.get_or_insert_function(module, ir.FunctionType(i64, [i64]), RESOLVER_SYMBOL)
                builder.call(resolve, [builder.ptrtoint(slot, i64)])
            address = builder.load(slot)
            with cgutils.if_unlikely(builder, cgutils.is_null(builder, address)):
                context.call_conv.return_user_exc(
                    builder, RuntimeError, (f"{kernel._name} could not be compiled (see the traceback above)",)
                )
            return call_address(context, builder, address, sig.return_type, sig.args, llargs)

        return sig, codegen

    return typer


def njit_lazy(*signatures: Any, cold: bool = True, **options: Any) -> Callable[[Callable[..., Any]], LazyKernel]:
    """``@njit(cache=True, **options)`` for an entry called through slots, compiled on its
    first call from a kernel or from Python (module notes). ``signatures``: one or more numba
    signatures such as ``types.float64(types.float64, types.float64)``, the ones the entry
    compiles for. ``cold``: a path generic inputs never reach (False: a hot kernel shared by
    many callers, kept out of their code)."""
    if not signatures:
        raise TypeError("njit_lazy: declare at least one signature")

    def decorate(func: Callable[..., Any]) -> LazyKernel:
        ref: list[LazyKernel] = []
        typer = _typer(ref)
        # numba reads the call's parameters from the typer's signature: the entry's own,
        # so that calls pass them one by one (not as one *args tuple)
        positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter("typingctx", positional)]
        params += [inspect.Parameter(n, positional) for n in inspect.signature(func).parameters]
        typer.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        kernel = LazyKernel(func.__name__, typer)
        functools.update_wrapper(kernel, func)  # the entry's name, module and docstring
        kernel.dispatcher = njit(cache=True, **options)(func)
        kernel.signatures = tuple(signatures)
        kernel.cold = cold
        kernel.slot_names = tuple(slot_name("lazy", f"{func.__module__}.{func.__qualname__}{sig}") for sig in signatures)
        kernel.slots = tuple(new_slot(name) for name in kernel.slot_names)
        ref.append(kernel)
        kernel._register()
        for i, slot in enumerate(kernel.slots):
            _BY_SLOT[ctypes.addressof(slot)] = (kernel, i)
        ENTRIES.append(kernel)
        return kernel

    return decorate


def compile_all() -> None:
    """Compile (or load) every entry for every signature and publish it (the warm-up's step)."""
    for kernel in ENTRIES:
        kernel.publish_all()


__all__ = ["ENTRIES", "LazyKernel", "compile_all", "njit_lazy"]
