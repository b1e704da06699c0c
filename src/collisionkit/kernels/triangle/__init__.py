"""Triangle-level geometry: exact triangle tests, distances, segments, point in mesh."""
