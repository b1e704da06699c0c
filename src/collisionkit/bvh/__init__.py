"""Bounding-volume hierarchies: options -> build -> frozen flat arrays -> validate."""

from .options import BuildOptions
from .tree import BVH, BVHArrays, build_bvh, validate_bvh

__all__ = ["BVH", "BVHArrays", "BuildOptions", "build_bvh", "validate_bvh"]
