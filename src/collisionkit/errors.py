"""Exceptions raised at the API edge, so that bad input never reaches a kernel."""

from __future__ import annotations


class CollisionKitError(Exception):
    """Base class of every error collisionkit raises on purpose."""


class InvalidMeshError(CollisionKitError, ValueError):
    """The vertices, faces or file given for a mesh cannot describe a triangle mesh."""


class InvalidPoseError(CollisionKitError, ValueError):
    """A pose is not a finite rigid world-from-object transform.

    ``index`` is the position of the offending pose in its batch (0 for a single pose).
    """

    def __init__(self, message: str, index: int = 0) -> None:
        super().__init__(message)
        self.index = index

    def __reduce__(self) -> tuple:
        # NOTE: the default pickles ``args`` only (the message): ``index`` must survive
        # the trip back from a Dask worker
        return (type(self), (str(self), self.index))


class InvalidRobotError(CollisionKitError, ValueError):
    """A robot description that is not what it says: a malformed or refused URDF, a joint
    whose origin, axis or limits are not finite or not consistent (the message names
    the file and the joint)."""


class UnsupportedPairError(CollisionKitError, TypeError):
    """No query is implemented for this combination of shapes or strategy."""


class UnsupportedQueryError(UnsupportedPairError):
    """This query does not answer this pair of shape kinds (README: "Which query answers which shapes").

    Raised only for the cells that table lists, with the reason; every other cell answers.
    """


class UnsupportedOptionError(CollisionKitError, ValueError):
    """An option was set that the handler answering this query for these shapes does not act on.

    Raised instead of ignoring the option; the message names it and lists the
    options that pair does support (``query/registry.py``).
    """
