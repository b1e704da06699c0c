"""Build options: the frozen record that names a hierarchy (and keys its cache)."""

from __future__ import annotations

from dataclasses import dataclass

from ..constants import BV_KINDS, SPLIT_RULES


@dataclass(frozen=True)
class BuildOptions:
    """How a mesh's bounding-volume hierarchy is built.

    Parameters
    ----------
    bv : {"aabb", "obb", "saabb"}
        Bounding-volume kind of the nodes. "aabb" (default) is tested against a
        rotated box by the 15-axis separating-axis test with the query's fixed
        relative rotation, so b's boxes never need updating; "obb" fits each
        node by the area-weighted covariance of its triangles (Gottschalk).
        "saabb" (seed 002's S-AABB): the AABB plus a bounding sphere per node;
        the default traversal reads it as an AABB tree, strategy "bfs" uses both.
    split : {"sah", "median", "mean", "balanced"}
        Top-down split rule: binned surface-area heuristic (default), object
        median, or centroid mean, on the axis of largest centroid spread;
        "balanced": seed 002's plane minimising |n_l - n_r| + lambda n_c over the
        triangles' bounding spheres.
    leaf_size : int
        Most triangles per leaf (>= 1). 2-4 measured best; default 4.

    Examples
    --------
    >>> BuildOptions(bv="obb", split="median", leaf_size=2)
    BuildOptions(bv='obb', split='median', leaf_size=2)
    """

    bv: str = "aabb"
    split: str = "sah"
    leaf_size: int = 4

    def __post_init__(self) -> None:
        if self.bv not in BV_KINDS:
            raise ValueError(f"unknown bounding volume {self.bv!r}; choose one of {sorted(BV_KINDS)}")
        if self.split not in SPLIT_RULES:
            raise ValueError(f"unknown split rule {self.split!r}; choose one of {sorted(SPLIT_RULES)}")
        if isinstance(self.leaf_size, bool) or not isinstance(self.leaf_size, int) or self.leaf_size < 1:
            raise ValueError(f"leaf_size must be an int >= 1, got {self.leaf_size!r}")

    @property
    def bv_code(self) -> int:
        return BV_KINDS[self.bv]

    @property
    def split_code(self) -> int:
        return SPLIT_RULES[self.split]
