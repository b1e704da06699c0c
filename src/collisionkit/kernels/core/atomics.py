"""An atomic counter for kernels whose threads hand out work among themselves.

numba has no atomic operations on the CPU; ``fetch_add`` emits LLVM's ``atomicrmw add``
on one element of an int64 array (sequentially consistent). It is plain IR, so a kernel
that uses it is cached like any other (unlike numba's thread-count functions, which
embed the address of a ctypes global).

Used for dynamic scheduling (``kernels/traverse/descent._run_chunk``): each worker of a
``prange`` claims the next task with ``fetch_add(shared, i, 1)`` until none is left, so a
few expensive tasks (one pose's front near contact, colliding poses in a batch) no longer
leave the other threads idle as numba's static split of the iteration space does.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def fetch_add(typingctx, arr, index, value):
    """``old = arr[index]; arr[index] += value; return old``, atomically (int64, 1-D, C).

    No bounds check: callers pass an index they own (0 or 1 of a small shared array).
    """
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.int64):
        return None
    sig = types.int64(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

    return sig, codegen


__all__ = ["fetch_add"]
