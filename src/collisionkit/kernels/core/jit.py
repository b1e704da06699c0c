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
        dispatcher = njit(cache=True, no_cpython_wrapper=True, **options)(func)
        dispatcher.__class__ = InternalKernel  # same layout: a subclass that only adds __call__
        return dispatcher

    return decorate
