"""Model backends behind one protocol (``base.Backend``); ``offline`` is the default."""

from openprose.vm.backends.base import (
    Backend,
    BackendError,
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

__all__ = [
    "Backend",
    "BackendError",
    "ChoiceRequest",
    "ChoiceResult",
    "ConditionRequest",
    "ConditionResult",
    "OfflineBackend",
    "SessionRequest",
    "SessionResult",
    "SummaryRequest",
    "SummaryResult",
    "Usage",
]
