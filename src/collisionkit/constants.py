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

# --- the World (collisionkit.World, kernels/broadphase_*.py) -----------------------
#: Relative padding of every object's world box, times (|local centre|_1 +
#: |local half extents|_1 + |t|_1). It covers the rounding of the box arithmetic
#: (a few units of roundoff) and the narrow phase's use of R_a^T as the inverse
#: of a pose whose rotation is accepted when max|R^T R - I| <= POSE_RIGIDITY_TOL:
#: a's frame then differs from the world by up to ~5 * POSE_RIGIDITY_TOL of the
#: distances involved, so a pair the narrow phase calls intersecting always has
#: overlapping padded boxes. (1e-5 relative: far below any broad-phase margin.)
WORLD_BOX_SLACK = 64.0 * 2.0**-53 + 8.0 * POSE_RIGIDITY_TOL
#: Group and mask of an object added without them: group bit 0, every mask bit,
#: so that by default every pair is tested (Box2D's category/mask convention).
WORLD_DEFAULT_GROUP = 1
WORLD_DEFAULT_MASK = -1
