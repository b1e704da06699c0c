"""``njit``, ``njit_internal``: how every kernel is compiled (issue 32, compile less).

``njit`` is numba's, less the C-callable wrapper: for every function it compiles numba also
builds a ``cfunc`` wrapper (a plain C entry point, for numba's first-class function values
and ``@cfunc``-style callers). collisionkit never takes a kernel's C address that way (its
slots call the native function: ``core/slots.py``), and building that wrapper cost about 6% of a
first edge check's compile from an empty cache (first-robot-motion-free 16.0 -> 15.1 CPU s,
means of three interleaved runs, 2026-12-08). ``no_cfunc_wrapper=True`` drops it for every collisionkit kernel;
every kernel module imports ``njit`` from here (``tests/test_compile_less.py`` checks both).

For every function it compiles, numba also builds a CPython wrapper that unboxes the
arguments and boxes the result, so that Python can call it. A helper that only compiled
code calls never runs that wrapper, yet building it cost about an eighth of a first
query's compile (the first ``intersects`` from an empty cache: 13.6 -> 11.9 CPU s with
no wrapper for the helpers). ``no_cpython_wrapper=True`` drops it. Such a function called
from Python would jump into the missing wrapper and crash the process, so its dispatcher
refuses Python calls with a ``TypeError`` instead (``.py_func`` still runs its Python body,
which may call other internal kernels). ``tests/test_compile_less.py`` checks that no Python
code names one.

Two ways to inline a helper, each only with a measured reason written beside it:

* ``forceinline=True`` (LLVM's ``alwaysinline``): numba types and lowers the helper once, as a
  function of its own, and LLVM copies its optimised code into each caller. The distance and
  time-of-impact bounds use it (``proximity/distance.py``, ``volumes/access.py``): as numba
  copies they were typed and lowered again inside every kernel that inlined them (issue 32:
  the time-of-impact group 32.5 -> 21.4 CPU s from an empty cache, distance queries no slower).
* ``inline="always"``: numba copies the helper's IR into the caller before typing. Kept where
  LLVM's copy measured slower: helpers that take an array keep its refcount operations as
  LLVM copies (time of impact's per-node-pair steps ran 17-20% slower per motion so, until they
  read the motion's context as tuples: now LLVM copies, 8-16% faster than numba's, and typed
  once), the per-call descent's helpers that return arrays, the robot checker's
  per-configuration helpers, the intersection descent's box and triangle tests (intersects
  1-4% slower as LLVM copies, with those above).

numba hands ``forceinline`` on to every kernel compiled inside a forceinline kernel's compile
that leaves the option unset (and on down): tried so, the first ``intersects`` had not finished
compiling after 7 minutes. So ``njit_internal`` sets it (False unless given), and
``tests/test_compile_less.py`` checks that every kernel a forceinline kernel calls sets it or
is inlined by numba.

``njit_borrowing``: helpers that only read the arrays they are given. numba increfs an array
argument when a function starts and decrefs it when it ends (atomic operations on the
array's refcount); inlined by LLVM (``forceinline``) those calls stay, once per call. For the
distance and threshold node tests, called per node pair, that was 9-13% of a distance query
and 20-40% of an ``intersects`` with a margin (issue 32, 2026-12-07). Compiled without NRT
(numba's ``_nrt=False``), a function emits no refcount operations at all: it borrows the
caller's references. That is safe only while it allocates nothing (numba refuses that at
compile time) and returns no array (the caller would take the borrowed reference as its own:
a refcount underflow), so ``BorrowingKernel`` refuses a signature whose result holds an array.
numba hands ``_nrt`` on as it does ``forceinline``, so ``njit_internal`` sets it (True unless
given) and ``tests/test_compile_less.py`` checks that every kernel a borrowing kernel calls
sets it or is inlined by numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import njit as _numba_njit
from numba.core import sigutils
from numba.core.registry import CPUDispatcher, cpu_target


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit`` (``@njit`` or ``@njit(...)``) with ``no_cfunc_wrapper=True`` unless
    given (module docstring)."""
    options.setdefault("no_cfunc_wrapper", True)
    return _numba_njit(*args, **options)


class InternalKernel(CPUDispatcher):
    """A dispatcher compiled without a CPython wrapper: callable from kernels only."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        f = self.py_func
        raise TypeError(
            f"{f.__module__}.{f.__qualname__} is called from compiled kernels only (njit_internal): "
            "call a kernel that uses it, or decorate it with @njit to call it from Python"
        )


def njit_internal(**options: Any) -> Callable[[Callable[..., Any]], InternalKernel]:
    """``@njit(cache=True, **options)`` without the CPython wrapper (module docstring)."""

    def decorate(func: Callable[..., Any]) -> InternalKernel:
        options.setdefault("forceinline", False)  # never inherited from a caller (module docstring)
        options.setdefault("_nrt", True)  # nor is NRT (njit_borrowing)
        dispatcher = njit(cache=True, no_cpython_wrapper=True, **options)(func)
        dispatcher.__class__ = InternalKernel  # same layout: a subclass that only adds __call__
        return dispatcher

    return decorate


def _holds_refcounted(ty: Any) -> bool:
    """Does a value of numba type ``ty`` carry an NRT reference (an array, a list, a tuple
    holding one, ...)?"""
    return bool(cpu_target.target_context.data_model_manager[ty].contains_nrt_meminfo())


class BorrowingKernel(CPUDispatcher):
    """A dispatcher compiled without NRT (``njit_borrowing``) that refuses, at compile time, a
    signature whose result would hand a borrowed array back as the caller's own."""

    def compile(self, sig: Any) -> Any:
        entry = super().compile(sig)
        args, _ = sigutils.normalize_signature(sig)
        result = self.overloads[tuple(args)].signature.return_type
        if _holds_refcounted(result):
            f = self.py_func
            raise TypeError(
                f"{f.__module__}.{f.__qualname__} returns {result}: a kernel compiled by njit_borrowing "
                "(no refcounts) may not return an array; use @njit or njit_internal"
            )
        return entry


def njit_borrowing(**options: Any) -> Callable[[Callable[..., Any]], BorrowingKernel]:
    """``@njit(cache=True, **options)`` without NRT, for a helper that only reads the arrays it
    is passed: it allocates nothing and returns scalars or tuples of them (module docstring)."""

    def decorate(func: Callable[..., Any]) -> BorrowingKernel:
        options.setdefault("forceinline", False)
        dispatcher = njit(cache=True, _nrt=False, **options)(func)
        dispatcher.__class__ = BorrowingKernel  # same layout: a subclass that only adds the check
        return dispatcher

    return decorate
