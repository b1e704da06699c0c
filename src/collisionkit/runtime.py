"""Thread count and threading layer of the batched queries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numba


def set_num_threads(n: int) -> None:
    """Default thread count of batched queries in this Python thread (1..cores)."""
    numba.set_num_threads(int(n))


def threading_layer() -> str:
    """Name of numba's threading layer ("tbb", "omp" or "workqueue"), starting it if needed."""
    try:
        return numba.threading_layer()
    except ValueError:
        # No parallel kernel has run yet: run a trivial one to start the layer.
        from .kernels.core.runtime_probe import probe

        probe(4)
        return numba.threading_layer()


@contextmanager
def using_threads(n: int) -> Iterator[None]:
    """Run the parallel kernels launched inside with ``n`` threads, then restore the count.

    numba's thread count is per Python thread, so concurrent queries with different
    ``threads=`` do not disturb each other.
    """
    previous = numba.get_num_threads()
    numba.set_num_threads(int(n))
    try:
        yield
    finally:
        numba.set_num_threads(previous)
