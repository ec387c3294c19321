"""Pause Python's cyclic garbage collector around bulk work.

Loading or building thousands of records allocates millions of small, acyclic objects
(pydantic models, their field sets, dicts, lists: about 430,000 tracked objects for 10,000
records of 5 runs). With the collector on, every 700 allocations start a young collection and
the survivors are walked again and again as they age: measured on that catalog, validation
took 1.7 s with the collector on and 0.65 s with it paused.

When the block ends, the objects it left alive are moved straight to the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()``, both a list splice) instead of being walked by the
next young collection (another 0.2 s there). Nothing is leaked: records hold no reference
cycles, so reference counting frees them, and any cyclic garbage made meanwhile is found by
the next full collection.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; nested use is fine."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def gc_paused(fn: Callable[P, T]) -> Callable[P, T]:
    """Decorator form of :func:`paused`."""

    @wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with paused():
            return fn(*args, **kwargs)

    return wrapper
