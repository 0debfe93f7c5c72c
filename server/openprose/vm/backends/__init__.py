"""Model backends behind one protocol (``base.Backend``); ``offline`` is the default."""

from openprose.vm.backends.base import (
    Backend,
    BackendError,
    BackendFatal,
    ChoiceRequest,
    ChoiceResult,
    ConditionRequest,
    ConditionResult,
    SessionRequest,
    SessionResult,
    SummaryRequest,
    SummaryResult,
    Usage,
)
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.backends.replay import RecordingBackend, ReplayBackend

__all__ = [
    "Backend",
    "BackendError",
    "BackendFatal",
    "ChoiceRequest",
    "ChoiceResult",
    "ConditionRequest",
    "ConditionResult",
    "OfflineBackend",
    "RecordingBackend",
    "ReplayBackend",
    "SessionRequest",
    "SessionResult",
    "SummaryRequest",
    "SummaryResult",
    "Usage",
]
