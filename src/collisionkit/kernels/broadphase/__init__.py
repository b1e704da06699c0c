"""Broad phases over many objects: brute force (the reference), SAP, grid, octree, tree."""
