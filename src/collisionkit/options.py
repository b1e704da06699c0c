"""Build options: the frozen record that names a hierarchy (and keys its cache)."""

from __future__ import annotations

from dataclasses import dataclass

from .constants import BUILDS, BV_KINDS, OBB_FITS, SPHERE_FITS, SPLIT_RULES

#: ``BuildOptions.bv`` that resolves per mesh (``bvh.auto``).
AUTO_BV = "auto"


@dataclass(frozen=True)
class BuildOptions:
    """How a mesh's bounding-volume hierarchy is built.

    Parameters
    ----------
    bv : {"auto", "aabb", "obb", "sphere", "kdop6", "kdop14", "kdop18", "kdop26", ...}
        Bounding-volume kind of the nodes (``constants.BV_KINDS`` lists all).
        "auto" (default): "obb" for meshes whose small patches are much thinner
        than their axis-aligned boxes (curved or oblique surfaces: gears, shafts,
        tubes, scans), else "aabb"; a pair of "auto" meshes runs as OBB trees when
        either prefers them (``bvh.auto``: the measure, its threshold and the
        measured cases; ``query_stats(...).volume`` and ``collisionkit bv-report``
        show the choice). "aabb" is tested against a rotated box by the 15-axis
        separating-axis test with the query's fixed relative rotation, so b's
        boxes never need updating; "obb" fits each node by ``obb_fit``;
        "sphere" by ``sphere_fit``; "kdopK" keeps K/2 slabs over fixed normals
        and recomputes b's k-DOP from stored points when b is rotated
        "saabb" (seed 002's S-AABB): the AABB plus a bounding sphere per node;
        the default traversal reads it as an AABB tree, strategy "bfs" uses both
        (docs/bounding-volumes.md compares them all).
    split : {"sah", "median", "mean", "longest", "minsum", "minmax", "splatter", ...}
        Top-down split rule (``constants.SPLIT_RULES``): binned surface-area
        heuristic (default), object median or centroid mean on the axis of
        largest centroid spread; longest box side, min-sum / min-max of the
        children's volumes, largest centroid variance (seed 001's k-DOP-tree
        rules, cut at the centroid mean); "balanced": seed 002's plane minimising
        |n_l - n_r| + lambda n_c over the triangles' bounding spheres. Ignored by the bottom-up and
        incremental builds.
    leaf_size : int
        Most triangles per leaf (>= 1). 2-4 measured best; default 4.
    build : {"topdown", "bottomup", "incremental"}
        Construction (seed 001): top-down splitting (default); bottom-up
        agglomerative clustering of the nearest boxes; incremental insertion of
        one triangle at a time. Subtrees of at most ``leaf_size`` triangles
        become leaves.
    obb_fit : {"triangles", "hull_points", "hull_triangles", "best"}
        OBB axes: area-weighted covariance of the node's triangles (default),
        PCA of its convex hull's vertices, area-weighted covariance of the
        hull's triangles, or per node the smallest box of the three.
    sphere_fit : {"minimal", "ritter"}
        Minimal enclosing sphere (default, Welzl) or Ritter's fast sphere.

    Examples
    --------
    >>> BuildOptions(bv="obb", split="median", leaf_size=2)
    BuildOptions(bv='obb', split='median', leaf_size=2)
    >>> BuildOptions().bv
    'auto'
    """

    bv: str = AUTO_BV
    split: str = "sah"
    leaf_size: int = 4
    build: str = "topdown"
    obb_fit: str = "triangles"
    sphere_fit: str = "minimal"

    def __post_init__(self) -> None:
        if self.bv not in BV_KINDS and self.bv != AUTO_BV:
            raise ValueError(f"unknown bounding volume {self.bv!r}; choose one of {sorted([*BV_KINDS, AUTO_BV])}")
        if self.split not in SPLIT_RULES:
            raise ValueError(f"unknown split rule {self.split!r}; choose one of {sorted(SPLIT_RULES)}")
        if isinstance(self.leaf_size, bool) or not isinstance(self.leaf_size, int) or self.leaf_size < 1:
            raise ValueError(f"leaf_size must be an int >= 1, got {self.leaf_size!r}")
        if self.build not in BUILDS:
            raise ValueError(f"unknown build {self.build!r}; choose one of {sorted(BUILDS)}")
        if self.obb_fit not in OBB_FITS:
            raise ValueError(f"unknown obb_fit {self.obb_fit!r}; choose one of {list(OBB_FITS)}")
        if self.sphere_fit not in SPHERE_FITS:
            raise ValueError(f"unknown sphere_fit {self.sphere_fit!r}; choose one of {list(SPHERE_FITS)}")

    @property
    def bv_code(self) -> int:
        """The kernels' code of ``bv``; "auto" has none (a tree's options name its resolved kind)."""
        if self.bv == AUTO_BV:
            raise ValueError('bv="auto" is resolved per mesh (collisionkit.bvh.auto); it has no kernel code')
        return BV_KINDS[self.bv]

    @property
    def split_code(self) -> int:
        return SPLIT_RULES[self.split]

    @property
    def build_code(self) -> int:
        return BUILDS[self.build]

    @property
    def fit_code(self) -> int:
        """The kernel's fit variant: spheres 0 = minimal, 1 = Ritter (others ignore it)."""
        return SPHERE_FITS.index(self.sphere_fit)
