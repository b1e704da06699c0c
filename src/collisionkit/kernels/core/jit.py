"""``njit_internal``: kernels that only other kernels call (issue 32, compile less).

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
  once), the per-call descent's helpers that return arrays, the robot checker's per-configuration helpers, the intersection descent's box
  and triangle tests (intersects 1-4% slower as LLVM copies, with those above).

numba hands ``forceinline`` on to every kernel compiled inside a forceinline kernel's compile
that leaves the option unset (and on down): tried so, the first ``intersects`` had not finished
compiling after 7 minutes. So ``njit_internal`` sets it (False unless given), and
``tests/test_compile_less.py`` checks that every kernel a forceinline kernel calls sets it or
is inlined by numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numba import njit
from numba.core.registry import CPUDispatcher


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
        dispatcher = njit(cache=True, no_cpython_wrapper=True, **options)(func)
        dispatcher.__class__ = InternalKernel  # same layout: a subclass that only adds __call__
        return dispatcher

    return decorate
