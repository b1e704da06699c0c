"""Bounding-volume hierarchies: options -> build -> frozen flat arrays -> validate, and the tree cache."""

from ..options import BuildOptions
from .auto import VolumeChoice, choose_volume, mesh_volume, pair_volume
from .cache import bvh_of, pair_trees, tree_for
from .tree import BVH, BVHArrays, build_bvh, build_tree, validate_bvh

__all__ = [
    "BVH", "BVHArrays", "BuildOptions", "VolumeChoice", "build_bvh", "build_tree", "bvh_of", "choose_volume", "mesh_volume",
    "pair_trees", "pair_volume", "tree_for", "validate_bvh",
]  # fmt: skip
