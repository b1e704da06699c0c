"""Dtypes, codes and tolerances: one home for every number the kernels share.

Each value carries the reason it has the value it has.
"""

from __future__ import annotations

import numpy as np

#: Coordinates, poses and volumes are float64 throughout: the exact triangle
#: predicates reason about float64 inputs, and float32 would not survive the
#: relative-pose composition of large CAD scenes.
FLOAT = np.float64
#: Node and face indices inside trees: 2**31 faces is far beyond any mesh we load.
INDEX = np.int32
#: Counts, offsets and result rows can exceed 2**31 over big batches.
COUNT = np.int64

#: The null index of flat trees and stacks (Box2D's convention).
NULL = -1

# --- triangle-triangle tests (runtime codes, see kernels/tri_tri.py) ---------
#: Guigue & Devillers 2003 with exact orientation predicates: exact on every branch.
TRI_TEST_GUIGUE = 0
#: Moller 1997 interval overlap, float64 arithmetic: inexact near degeneracy.
TRI_TEST_MOLLER = 1
TRI_TESTS = {"guigue": TRI_TEST_GUIGUE, "moller": TRI_TEST_MOLLER}

# --- bounding-volume kinds (runtime codes, see kernels/bv_*.py) --------------
BV_AABB = 0
BV_OBB = 1
BV_KINDS = {"aabb": BV_AABB, "obb": BV_OBB}
#: Floats stored per node for each kind: AABB = centre(3), half extents(3);
#: OBB = centre(3), axes as rows(9), half extents(3).
BV_WIDTH = {BV_AABB: 6, BV_OBB: 15}

# --- split rules --------------------------------------------------------------
SPLIT_SAH = 0
SPLIT_MEDIAN = 1
SPLIT_MEAN = 2
SPLIT_RULES = {"sah": SPLIT_SAH, "median": SPLIT_MEDIAN, "mean": SPLIT_MEAN}
#: Bins of the binned surface-area heuristic: 16 is within a few percent of a
#: full sweep on real meshes and keeps the build linear per level.
SAH_BINS = 16

# --- query modes ----------------------------------------------------------------
MODE_ANY = 0  # stop at the first intersecting triangle pair, return a bool
MODE_FIRST = 1  # stop at the first pair, report it
MODE_ALL = 2  # every intersecting pair (optionally capped)
MODES = {"any": MODE_ANY, "first": MODE_FIRST, "all": MODE_ALL}

# --- node flags -----------------------------------------------------------------
#: Topology rows are (first, count, flags); bit 0 of flags marks a leaf.
LEAF_FLAG = 1

# --- tolerances -------------------------------------------------------------------
#: A pose's rotation block is accepted as rigid when max|R^T R - I| <= this.
#: Rotations written with 9 significant digits (URDF, CAD exports) pass; a
#: scaled or sheared matrix (error >= 1e-6 for any useful scale) does not.
POSE_RIGIDITY_TOL = 1e-6
#: Relative slack added to every bounding-volume test so that rounding in the
#: float64 box arithmetic can only report overlap, never miss it: the errors of
#: mapping a point (three products and three sums per coordinate) and of the
#: separating-axis sums are below 32 units of roundoff of the scene's magnitude.
BV_SLACK_ULPS = 64.0

#: Poses below which a batch runs on the serial entry. A parallel launch costs
#: about 5 us; measured on env/rob (about 0.8 us a pose): serial 37 us vs parallel
#: 41 us at 32 poses, equal at 64; costlier poses break even sooner.
PARALLEL_MIN_POSES = 32
#: Result rows reserved per pose in the first pass of an all-pairs batch, plus
#: (faces_a + faces_b) / 8; poses with more pairs are rerun with exact room.
PAIRS_PER_POSE_GUESS = 64

# --- convex shapes and GJK (issue 9, kernels/gjk.py) ------------------------------
#: GJK decides a polytope pair in float64 only when its answer clears this margin,
#: relative to the scene size (scale_a + scale_b + |t|_1): about 2**13 times the
#: rounding of the support points and of the simplex depths, so a certified
#: answer is the exact one. Closer pairs go to the exact solid test.
GJK_CERTIFY_REL = 2.0**-40
#: Convergence: stop when |v|^2 - v.w <= GJK_REL_TOL * |v|^2 (van den Bergen 2003);
#: the distance is then within about GJK_REL_TOL / 2 relative of the true one.
GJK_REL_TOL = 1e-12
#: Iteration cap: polytopes converge in a few dozen rounds; curved cores
#: (cylinders) converge linearly and are stopped here (then decided by bounds).
GJK_MAX_ITERS = 128
# --- seed 000: R-trees and the overlap box (kernels/oaabb_traverse.py) ---------------
#: Query mode of strategies that know surfaces: every intersecting surface pair
#: once, a surface pair settled by its first triangle pair (seed 000's query 2).
#: Not in MODES: only ``surface_contacts`` asks for it.
MODE_SURFACE_PAIRS = 3
# --- seed 002: hybrid sphere+AABB volume, balanced split, breadth-first traversal ---
#: S-AABB (seed 002): every node holds its AABB AND a bounding sphere. Row layout
#: (11 floats): box centre(3), box half extents(3) - exactly the BV_AABB row, so the
#: default traversal reads a saabb tree as an AABB tree - then sphere centre(3),
#: sphere radius(1), and the node's sphere-to-box volume ratio divided by the median
#: ratio of its tree level (>= 1: "the box should be respected", seed 002 s.3.2).
BV_SAABB = 7
BV_KINDS["saabb"] = BV_SAABB
BV_WIDTH[BV_SAABB] = 11
#: Seed 002's balanced split: axis-aligned plane minimising
#: f(p) = |n_l - n_r| + lambda * n_c over the triangles' underlying spheres.
SPLIT_BALANCED = 7
SPLIT_RULES["balanced"] = SPLIT_BALANCED
#: lambda of f(p): the seed leaves it open; 1 makes one sphere cut by the plane cost
#: as much as one triangle of imbalance.
BALANCED_LAMBDA = 1.0
#: Breadth-first traversal (strategy "bfs"): which volumes a node pair is tested with.
BFS_VOLUMES = {"hybrid": 0, "aabb": 1, "sphere": 2}
#: Frontier (node pairs of one level) below which the parallel breadth-first traversal
#: runs the level on one thread: a parallel launch costs several microseconds, as much
#: as testing a few hundred node pairs.
BFS_PARALLEL_MIN_FRONTIER = 256
#: Node pairs per chunk of a parallel level (at most 4 chunks per thread).
BFS_CHUNK_PAIRS = 64
