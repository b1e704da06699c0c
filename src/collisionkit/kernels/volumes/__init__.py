"""Bounding volumes: one file per kind (fit, overlap, bounds), plus the kind dispatch."""
