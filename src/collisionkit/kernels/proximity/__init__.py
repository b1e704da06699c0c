"""Distances and motion: BVH distance, GJK/EPA, penetration, time of impact."""
