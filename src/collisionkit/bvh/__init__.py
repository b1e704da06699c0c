"""Bounding-volume hierarchies: options -> build -> frozen flat arrays -> validate, and the tree cache."""

from ..options import BuildOptions
from .cache import bvh_of, tree_for
from .tree import BVH, BVHArrays, build_bvh, validate_bvh

__all__ = ["BVH", "BVHArrays", "BuildOptions", "build_bvh", "bvh_of", "tree_for", "validate_bvh"]
