"""Whether a task's model exchanges come in an order its program alone decides.

A run's statements take their steps one after another, so the n-th exchange of a run (or of
an item executed on its own) is the same exchange each time the run is executed.  The
branches of a block and the items of a fan-out that run as tasks of one process take theirs
in the order their answers come back, which differs from one execution to the next.  An
engine that checkpoints exchanges by their position (dbos_steps) asks this before making one
a checkpoint: a concurrent task's exchanges stay answered by the journal alone, which keys
them by step.
"""

from __future__ import annotations

from contextvars import ContextVar

_CONCURRENT: ContextVar[bool] = ContextVar("openprose_concurrent_task", default=False)


def enter_concurrent_task() -> None:
    """Marks the running task (and the tasks it starts) as one of several running at once:
    called first thing in such a task, whose context is its own copy."""
    _CONCURRENT.set(True)


def in_program_order() -> bool:
    """Whether the running task's exchanges come in the order its program decides."""
    return not _CONCURRENT.get()
