"""Queries on a pair of shapes; one module per question."""

from .pair import contacts, intersects, query_stats
from .results import Contacts, Stats

__all__ = ["Contacts", "Stats", "contacts", "intersects", "query_stats"]
