"""Exceptions raised at the API edge, so that bad input never reaches a kernel.

One hierarchy: every error collisionkit raises on purpose subclasses ``CollisionKitError``
and the standard-library error that fits it (``ValueError`` for a bad value, ``TypeError``
for shapes no query takes), so ``except ValueError`` keeps working beside
``except collisionkit.CollisionKitError``. All of them are exported from ``collisionkit``.

::

    CollisionKitError
    ├── InvalidMeshError (ValueError)
    ├── InvalidPoseError (ValueError)
    ├── InvalidRobotError (ValueError)
    ├── InvalidBVHError (ValueError)
    ├── SceneError (ValueError)
    └── UnsupportedError
        ├── UnsupportedPairError (TypeError)
        │   └── UnsupportedQueryError
        └── UnsupportedOptionError (ValueError)
"""

from __future__ import annotations

import os


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


class InvalidBVHError(CollisionKitError, ValueError):
    """A hierarchy's arrays break an invariant ``validate_bvh`` checks (the message names it)."""


class SceneError(CollisionKitError, ValueError):
    """A scene or trajectory file that cannot be used; names the file and line."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, message: str):
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple:
        # NOTE: rebuilt from the finished message (path and line already in it)
        return (_scene_error, (self.path, self.line, str(self)))


def _scene_error(path: str, line: int | None, text: str) -> SceneError:
    err = SceneError(path, line, "")
    err.args = (text,)
    return err


class UnsupportedError(CollisionKitError):
    """A combination collisionkit does not answer: shapes no query takes, a query that has
    no answer for two shape kinds, or an option the answering handler does not act on."""


class UnsupportedPairError(UnsupportedError, TypeError):
    """No query is implemented for this combination of shape kinds (an argument that is not
    a shape collisionkit knows)."""


class UnsupportedQueryError(UnsupportedPairError):
    """This query does not answer this pair of shape kinds (README: "Which query answers which shapes").

    Raised only for the cells that table lists, with the reason; every other cell answers.
    """


class UnsupportedOptionError(UnsupportedError, ValueError):
    """An option was set that the handler answering this query for these shapes does not act
    on (a strategy that does not walk these shapes included).

    Raised instead of ignoring the option; the message names it and lists the
    options that pair does support (``query/registry.py``).
    """


__all__ = [
    "CollisionKitError", "InvalidBVHError", "InvalidMeshError", "InvalidPoseError", "InvalidRobotError", "SceneError",
    "UnsupportedError", "UnsupportedOptionError", "UnsupportedPairError", "UnsupportedQueryError",
]  # fmt: skip
