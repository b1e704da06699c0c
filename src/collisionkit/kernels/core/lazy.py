"""Cold paths compiled on their first call (issue 32, compile less).

numba compiles a kernel together with every kernel it calls, before its first run: the
first ``intersects`` compiled the exact predicates' expansion arithmetic and the triangle
test's degenerate and coplanar cases (about 4 of its 18 CPU s on 2026-12-07), and every
query family that tests triangles linked them into its kernels again, although generic
poses of generic meshes never reach them.

``njit_lazy(signature)`` makes such a cold path's entry a call through a slot:

* At import it creates, per entry, one process-wide slot (an int64 published to LLVM under
  a name made of the entry's module, name and signature, the same in every process) and
  compiles nothing.
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
import hashlib
import inspect
import sys
import traceback
from collections.abc import Callable
from typing import Any

from llvmlite import binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.errors import TypingError
from numba.core.extending import _Intrinsic

#: the callback kernels call for an entry whose slot is still zero (module notes)
RESOLVER_SYMBOL = "collisionkit_lazy_resolve"

#: address of an entry's slot -> the entry
_BY_SLOT: dict[int, LazyKernel] = {}
#: every entry, in the order they were declared
ENTRIES: list[LazyKernel] = []


def _resolve(slot_address: int) -> int:
    """The ctypes callback: compile the entry whose slot lives at ``slot_address``."""
    try:
        return _BY_SLOT[slot_address].publish()
    except BaseException:  # noqa: BLE001 - a callback must not raise; the kernel raises instead
        traceback.print_exc(file=sys.stderr)
        return 0


_RESOLVER = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(_resolve)
llvm.add_symbol(RESOLVER_SYMBOL, ctypes.cast(_RESOLVER, ctypes.c_void_p).value)


class LazyKernel(_Intrinsic):
    """A cold path's entry: typed from its declared signature, compiled on first call."""

    dispatcher: Any
    signature: Any
    slot: ctypes.c_int64
    slot_name: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.dispatcher(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy kernel {self._name}{self.signature}>"

    @property
    def py_func(self) -> Callable[..., Any]:
        return self.dispatcher.py_func

    def compiled(self) -> bool:
        """Whether this process has compiled (or loaded) the entry and published it."""
        return self.slot.value != 0

    def publish(self) -> int:
        """Compile (or load from the cache) the entry for its signature; publish its address.

        Under numba's compiler lock, so that two threads meeting the cold path at once
        compile it once."""
        if self.slot.value:
            return self.slot.value
        with global_compiler_lock:
            if not self.slot.value:
                args = tuple(self.signature.args)
                self.dispatcher.compile(self.signature)
                cres = self.dispatcher.overloads[args]
                if cres.signature.return_type != self.signature.return_type:
                    # compiled earlier from Python, where the result type is inferred: the
                    # kernels' calls would read a result of another type
                    raise TypeError(
                        f"{self._name} returns {cres.signature.return_type}, declared "
                        f"{self.signature.return_type} (njit_lazy)"
                    )
                address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
                if not address:  # pragma: no cover - numba always exposes a compiled function
                    raise RuntimeError(f"no compiled code for {self._name}{self.signature}")
                self.slot.value = address
        return self.slot.value


def _slot_name(func: Callable[..., Any], signature: Any) -> str:
    text = f"{func.__module__}.{func.__qualname__}{signature}"
    return "collisionkit.lazy." + hashlib.sha256(text.encode()).hexdigest()[:32]


def _typer(kernel_ref: list[LazyKernel]) -> Callable[..., Any]:
    def typer(typingctx: Any, *args: Any) -> Any:
        kernel = kernel_ref[0]
        sig = kernel.signature
        if len(args) != len(sig.args) or not all(
            typingctx.can_convert(a, d) is not None for a, d in zip(args, sig.args, strict=False)
        ):
            raise TypingError(
                f"{kernel._name}: called with ({', '.join(map(str, args))}); it is declared "
                f"{sig} (njit_lazy, kernels/core/lazy.py)"
            )

        def codegen(context: Any, builder: Any, signature: Any, llargs: Any) -> Any:
            module = builder.module
            i64 = ir.IntType(64)
            slot = module.globals.get(kernel.slot_name)
            if slot is None:
                slot = cgutils.add_global_variable(module, i64, kernel.slot_name)  # resolved at load
            address = builder.load(slot)
            with cgutils.if_unlikely(builder, cgutils.is_null(builder, address)):
                resolve = cgutils.get_or_insert_function(module, ir.FunctionType(i64, [i64]), RESOLVER_SYMBOL)
                builder.call(resolve, [builder.ptrtoint(slot, i64)])
            address = builder.load(slot)
            with cgutils.if_unlikely(builder, cgutils.is_null(builder, address)):
                context.call_conv.return_user_exc(
                    builder, RuntimeError, (f"{kernel._name} could not be compiled (see the traceback above)",)
                )
            fnty = context.call_conv.get_function_type(sig.return_type, sig.args)
            fn = builder.inttoptr(address, fnty.as_pointer())
            status, result = context.call_conv.call_function(builder, fn, sig.return_type, sig.args, llargs)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return result

        return sig, codegen

    return typer


def njit_lazy(signature: Any, **options: Any) -> Callable[[Callable[..., Any]], LazyKernel]:
    """``@njit(cache=True, **options)`` for a cold path's entry, compiled on its first call
    from a kernel or from Python (module notes). ``signature``: a numba signature such as
    ``types.float64(types.float64, types.float64)``, the one the entry compiles for."""

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
        kernel.signature = signature
        kernel.slot = ctypes.c_int64(0)
        kernel.slot_name = _slot_name(func, signature)
        ref.append(kernel)
        kernel._register()
        llvm.add_symbol(kernel.slot_name, ctypes.addressof(kernel.slot))
        _BY_SLOT[ctypes.addressof(kernel.slot)] = kernel
        ENTRIES.append(kernel)
        return kernel

    return decorate


def compile_all() -> None:
    """Compile (or load) every cold path's entry and publish it (the warm-up's last step)."""
    for kernel in ENTRIES:
        kernel.publish()


__all__ = ["ENTRIES", "LazyKernel", "compile_all", "njit_lazy", "types"]
