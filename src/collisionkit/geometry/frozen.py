"""Read-only arrays a user cannot make writable again (issue 31, "frozen means frozen").

``a.flags.writeable = False`` alone is a request, not a lock: whoever holds the array
may set the flag back (``a.flags.writeable = True``) when it owns its memory or views a
writable array, then rewrite data a World, a tree or a robot trusts. numpy refuses that
flip for a view whose base chain ends at read-only memory, so what we hand out is

* a read-only *view* of an array we own and have made read-only (no copy), or
* a read-only view of a private read-only *copy*, when the array views memory that
  someone else may still write, or
* for small geometry arrays (bounds, half-spaces, joint origins, limits, tree
  snapshots), a copy over an immutable ``bytes`` buffer (``immutable``): not even its
  ``base`` can be made writable.

Result records use ``sealed`` (no copy of large answers): their arrays are views of
private read-only arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def sealed(a: NDArray) -> NDArray:
    """``a`` read-only for good: a read-only view whose base is read-only.

    ``a`` is frozen in place (and viewed, not copied) when it owns its memory: pass only
    arrays nobody else writes (fresh results, private storage). A view of another
    array is copied first unless its whole base chain is already read-only.
    """
    if not isinstance(a, np.ndarray):
        return a
    if a.base is None:  # PERF: the common case (a fresh answer): freeze and view, no copy
        a.flags.writeable = False
        return a.view()  # a view of a read-only array is read-only
    if not a.flags.writeable and _root_locked(a):
        return a
    own = np.array(a, copy=True)
    own.flags.writeable = False
    view = own.view()
    view.flags.writeable = False
    return view


def immutable(a: NDArray) -> NDArray:
    """A copy of ``a`` over an immutable ``bytes`` buffer: numpy refuses to make it (or
    anything viewing it) writable. For arrays the kernels keep writable, what the caller
    gets is a snapshot, never the live storage."""
    a = np.ascontiguousarray(a)
    return np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)


def _root_locked(a: NDArray) -> bool:
    """Whether ``a`` cannot be made writable: it does not own its memory and the array
    (or buffer) at the end of its base chain is read-only."""
    if a.base is None:
        return False  # owns its memory: the flag can be set back
    base = a.base
    while isinstance(base, np.ndarray):
        if not base.flags.writeable and base.base is None:
            return True
        if base.base is None:
            return False
        base = base.base
    # memory of another object (bytes, memoryview, mmap): numpy asks the buffer
    try:
        return memoryview(base).readonly
    except TypeError:
        return False


__all__ = ["immutable", "sealed"]
