"""State arrays that stay where they are.

The native engine holds pointers to the numpy arrays of the units' state. A semantics function that
rebinds one (``s.lane_flags = np.where(...)``) would leave the engine reading a freed array; a state
class deriving from :class:`SharedArrays` turns such an assignment into a copy into the existing array
instead (same shape; values cast as numpy assignment casts), so the Python model can keep its
functional style and both engines always see one state.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SharedArrays:
    """Mixin for the state dataclasses: assigning to an existing array attribute writes in place."""

    def __setattr__(self, name: str, value: Any) -> None:
        current = self.__dict__.get(name)
        if isinstance(current, np.ndarray):
            value = np.asarray(value)
            if value.shape != current.shape:
                raise ValueError(
                    f"{type(self).__name__}.{name} is shared with the native engine: "
                    f"shape {current.shape}, not {value.shape}"
                )
            current[...] = value
            return
        object.__setattr__(self, name, value)


def restore(target: object, fresh: object, keep: tuple[str, ...] = ()) -> None:
    """Give ``target`` the values of ``fresh`` (a new object of its class), attribute by attribute,
    but ``keep``. Arrays of the same shape and dtype are copied in place, so pointers the native
    engine holds into them stay valid; anything else is rebound (the caller re-points the engine)."""
    for name, value in vars(fresh).items():
        if name in keep:
            continue
        current = vars(target).get(name)
        if (
            isinstance(current, np.ndarray)
            and isinstance(value, np.ndarray)
            and current.shape == value.shape
            and current.dtype == value.dtype
        ):
            current[...] = value
        else:
            object.__setattr__(target, name, value)
