"""Shared low-level pieces: poses and small linear algebra, exact predicates, array layouts."""
