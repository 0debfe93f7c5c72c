"""Calling code that might block on a FIFO, without letting a regression hang the suite.

Opening a FIFO for reading blocks until a writer comes; reading one blocks until the writer
leaves.  ``finishes`` runs the call in a daemon thread and, if it is still running after the
timeout, opens each FIFO for writing and closes it again, which lets a blocked reader see an
empty file and return, so the thread does not outlive the failed test.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

TIMEOUT = 10.0  # seconds; a correct call takes milliseconds


def release(fifo: Path) -> None:
    """Let a reader blocked on ``fifo`` (in open or in read) reach the end of the file."""
    try:
        # Non-blocking: fails with ENXIO when nobody reads it, instead of waiting.
        descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(descriptor)


def finishes(call: Callable[[], T], *fifos: Path, timeout: float = TIMEOUT) -> T:
    """``call()``'s result; AssertionError if it has not returned within ``timeout``."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # re-raised in the test's thread
            failure.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        for _ in range(50):  # it may open the next FIFO after the first is released
            for fifo in fifos:
                release(fifo)
            thread.join(0.1)
            if not thread.is_alive():
                break
        raise AssertionError(f"still blocked after {timeout} s (on a FIFO?)")
    if failure:
        raise failure[0]
    return outcome[0]
