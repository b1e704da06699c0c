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

# --- triangle-triangle tests (runtime codes, see kernels/triangle/tri_tri.py) ---------
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

#: Power-of-two prescaling of the proximity queries (distance, penetration, classify,
#: time of impact; ``query/scaling.py``): a pair whose extent (largest mesh
#: coordinate or pose translation) lies in [2**-SCALE_BAND_EXP, 2**SCALE_BAND_EXP]
#: runs as given; any other is first multiplied by an exact power of two that brings
#: its extent into [0.5, 1). The kernels raise lengths to at most the sixth power
#: (``kernels/proximity/distance.plane_gap2``: squared cross products times squared
#: dots), and 6 * 64 = 384 keeps such products normal, with 600 binary orders to
#: spare for the pair's own small features, between 2**-1022 and 2**1023.
SCALE_BAND_EXP = 64
#: Poses below which a batch runs on the serial entry. A parallel launch costs
#: about 5 us; measured on env/rob (about 0.8 us a pose): serial 37 us vs parallel
#: 41 us at 32 poses, equal at 64; costlier poses break even sooner.
PARALLEL_MIN_POSES = 32
#: One large pose on all cores (issue 15 item 2, ``query/engine.split_pose``): a single
#: pose's descent runs serially for SPLIT_WORK work units (node pairs taken + triangle
#: tests, ``kernels/traverse/descent.collide_task``), about 0.25-0.4 ms; one that is not
#: done by then hands the node pairs it left to the threads. Small queries never pay
#: for the split: the expansion of the front (~100-160 ns a node pair, 3-5 descent
#: steps), the launch (about 5 us, above) and, for contacts, 20-40 us of set-up in
#: Python. At 2,048 units, queries of 3,000-6,000 units (gears, thin links) ran up to
#: 2x slower split; a large one loses at most this much to the serial start.
SPLIT_WORK = 8192
#: Node pairs a split pose's front holds per thread before its tasks run. The threads
#: claim them dynamically (``kernels/traverse/descent._run_chunk``), so a finer front
#: evens out skewed subtrees; the expansion that makes it is serial, one node pair a step.
FRONT_PER_THREAD = 64
#: ``budget`` of a descent that never stops before it is done.
NO_BUDGET = 2**62
#: Result rows reserved per pose in the first pass of an all-pairs batch, plus
#: (faces_a + faces_b) / 8; poses with more pairs are rerun with exact room.
PAIRS_PER_POSE_GUESS = 64

# --- convex shapes and GJK (issue 9, kernels/proximity/gjk.py) ------------------------------
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
# --- seed 000: R-trees and the overlap box (kernels/traverse/oaabb.py) ---------------
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
#: Volume kinds of the descent kernels' common-case specialisation (Guigue's test on box
#: trees; ``query.strategies.descent.descent_tri``): a saabb row starts with its AABB row.
DESCENT_BOX_KINDS = frozenset({BV_AABB, BV_OBB, BV_SAABB})
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
# --- issue 3: every bounding volume and split rule of the seeds ---------------------
# (kernels/volumes/sphere.py, kernels/volumes/kdop.py, kernels/build/split.py, kernels/build/bottomup.py)
#: Sphere: centre(3), radius(1). Ritter 1990 or the minimal enclosing sphere (Welzl 1991).
BV_SPHERE = 2
#: k-DOPs (Klosowski et al. 1998) over fixed integer normals shared by every node:
#: 6 = the axes, 14 = + the 4 cube diagonals, 18 = + the 6 edge diagonals,
#: 26 = all 13. Row: k/2 minima, k/2 maxima, point count, KDOP_POINTS[k] points
#: (the node's triangle vertices when few, else the k-DOP's own vertices) from
#: which the k-DOP is recomputed in a rotated frame (seed 001, "Dynamisches Szenario").
BV_KDOP6 = 3
BV_KDOP14 = 4
BV_KDOP18 = 5
BV_KDOP26 = 6
BV_KINDS.update({"sphere": BV_SPHERE, "kdop6": BV_KDOP6, "kdop14": BV_KDOP14, "kdop18": BV_KDOP18, "kdop26": BV_KDOP26})
#: Points stored per k-DOP node: 2k - 4 bounds the vertices of a 3-polytope with
#: k faces (Euler: V <= 2F - 4), so a k-DOP's own vertices always fit.
KDOP_POINTS = {6: 8, 14: 24, 18: 32, 26: 48}
BV_WIDTH.update({BV_SPHERE: 4})
BV_WIDTH.update({code: k + 1 + 3 * KDOP_POINTS[k] for k, code in ((6, BV_KDOP6), (14, BV_KDOP14), (18, BV_KDOP18), (26, BV_KDOP26))})
#: Rectangle swept sphere (Larsen et al. 1999; kernels/volumes/rss.py, the kind added through
#: the volume contract of kernels/volumes/dispatch.py): centre(3), axes as rows(9), the
#: rectangle's half lengths(2), radius(1).
BV_RSS = 8
BV_KINDS["rss"] = BV_RSS
BV_WIDTH[BV_RSS] = 15

#: Longest side of the node's box; cut at the centroid mean (seed 001, k-DOP trees).
SPLIT_LONGEST = 3
#: The axis whose mean cut minimises the sum of the children's box volumes (Klosowski "min sum").
SPLIT_MINSUM = 4
#: ... minimises the larger of the two children's box volumes (Klosowski "min max").
SPLIT_MINMAX = 5
#: The axis of largest centroid variance, cut at the mean (Klosowski "splatter").
SPLIT_SPLATTER = 6
SPLIT_RULES.update({"longest": SPLIT_LONGEST, "minsum": SPLIT_MINSUM, "minmax": SPLIT_MINMAX, "splatter": SPLIT_SPLATTER})

#: Tree construction (BuildOptions.build): top-down splitting (default),
#: bottom-up agglomerative clustering, incremental insertion (seed 001).
BUILD_TOPDOWN = 0
BUILD_BOTTOMUP = 1
BUILD_INCREMENTAL = 2
BUILDS = {"topdown": BUILD_TOPDOWN, "bottomup": BUILD_BOTTOMUP, "incremental": BUILD_INCREMENTAL}
#: OBB axes (BuildOptions.obb_fit): area-weighted covariance of the node's
#: triangles (default), PCA of its convex hull's vertices (seed 001),
#: area-weighted covariance of the hull's triangles (Gottschalk 1996), or the
#: smallest-volume box of the three.
OBB_FITS = ("triangles", "hull_points", "hull_triangles", "best")
#: Sphere fits (BuildOptions.sphere_fit): the minimal enclosing sphere (Welzl
#: 1991, move-to-front) or Ritter's fast approximation (Ritter 1990, up to ~5-20% larger).
SPHERE_FITS = ("minimal", "ritter")
#: Window (clusters on each side in Morton order) searched for the nearest
#: cluster by the bottom-up build (PLOC, Meister & Bittner 2018: 8-16 is within a
#: few percent of full agglomerative clustering's SAH cost).
BOTTOMUP_RADIUS = 12
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

#: Most mesh-pair tasks one World narrow-phase kernel call takes. Compiled code
#: never sees signals, so long work is cut into calls of bounded size and Ctrl-C
#: (KeyboardInterrupt) lands between them.
WORLD_TASKS_PER_CALL = 1 << 14
