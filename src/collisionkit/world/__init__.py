"""The World: many named objects, their poses, a broad phase, exact pair queries."""

from .broadphases import BROADPHASES
from .nearest import NearestPair
from .records import FramePairs, Pairs, WorldContacts
from .world import World

__all__ = ["BROADPHASES", "FramePairs", "NearestPair", "Pairs", "World", "WorldContacts"]
