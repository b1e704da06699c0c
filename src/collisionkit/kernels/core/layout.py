"""Column layout of the flat arrays the kernels share (tree meta rows, stats rows)."""

from numba import types

# Per-tree meta row of a pool (int64).
META_NODE_OFF = 0  # first node of the tree in the pool's node arrays
META_TRI_OFF = 1  # first triangle of the tree in the pool's triangle arrays
META_NODES = 2
META_TRIS = 3
META_DEPTH = 4  # largest node depth (root = 0): sizes the traversal stack
META_FANOUT = 5  # most children of a node
META_FACES = 6  # faces of the mesh (encodes pair keys face_a * faces_b + face_b)
META_LEAFMAX = 7  # most triangles in a leaf
META_WIDTH = 8

# Per-task stats row (int64): the seeds' cost model t = n_v c_v + n_p c_p + n_u c_u.
STAT_BV_TESTS = 0  # n_v
STAT_TRI_TESTS = 1  # n_p
STAT_NODE_PAIRS = 2  # node pairs taken from the stack
STAT_BV_UPDATES = 3  # n_u: volumes of b moved into a's frame (0 for AABB trees)
N_STATS = 4

# numba types of a pool's arrays as the kernels take them (C-contiguous, writable): the
# declared signatures of the entries called through slots (kernels/core/lazy.py).
TOPO_T = types.Array(types.int32, 2, "C")  # node rows: first child, count (leaf flag)
BV_T = types.Array(types.float64, 2, "C")  # node volume rows
TRIS_T = types.Array(types.float64, 3, "C")  # triangles (F, 3, 3) in leaf order
IDS_T = types.Array(types.int32, 1, "C")  # face id of each leaf-order triangle
META_T = types.Array(types.int64, 2, "C")  # meta rows (above)
SCALE_T = types.Array(types.float64, 1, "C")  # largest absolute coordinate per tree
POSE_T = types.Array(types.float64, 2, "C")  # a 4x4 rigid transform
