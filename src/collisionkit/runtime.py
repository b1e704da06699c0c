"""Thread count and threading layer of the batched queries."""

from __future__ import annotations

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
