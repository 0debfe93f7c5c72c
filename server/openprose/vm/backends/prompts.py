"""What the real backends send a model, and how they read its constrained answers.

Shared by every provider so the same program asks the same questions everywhere.  The
answer formats are documented in docs/run.md; an answer outside them is a ``BackendError``
naming the step, never a guess.
"""

from __future__ import annotations

import re

from openprose.vm.backends.base import (
    BackendError,
    ChoiceRequest,
    ConditionRequest,
    SessionRequest,
    SummaryRequest,
)

CONDITION_SYSTEM = (
    "You judge one condition of a running program. Answer with exactly one word, "
    "true or false, and nothing else."
)
CHOICE_SYSTEM = (
    "You choose one option for a running program. Answer with only the number of the "
    "chosen option, and nothing else."
)
SUMMARY_SYSTEM = (
    "You summarise a value so that a later step can use it as context. Keep every fact "
    "a later step may need. Answer with the summary only."
)


def _context_block(context: tuple[tuple[str, str], ...]) -> str:
    parts = [f'<context name="{name}">\n{text}\n</context>' for name, text in context]
    return "\n\n".join(parts)


def _with_context(text: str, context: tuple[tuple[str, str], ...]) -> str:
    return f"{_context_block(context)}\n\n{text}" if context else text


def session_messages(request: SessionRequest) -> tuple[str | None, str]:
    """(system, user): the agent's prompt as system; the context bindings, then the task."""
    return request.system, _with_context(request.prompt, request.context)


def condition_message(request: ConditionRequest) -> str:
    return _with_context(
        f"Condition ({request.purpose}): {request.condition}\n\nIs it true? Answer true or false.",
        request.context,
    )


def choice_message(request: ChoiceRequest) -> str:
    options = "\n".join(f"{number}. {text}" for number, text in enumerate(request.options, 1))
    return _with_context(
        f"Criteria: {request.criteria}\n\nOptions:\n{options}\n\n"
        f"Answer with the number of one option (1 to {len(request.options)}).",
        request.context,
    )


def summary_message(request: SummaryRequest) -> str:
    return (
        f"Summarise the value {request.name!r} in at most {request.limit} characters.\n\n"
        f"<value>\n{request.text}\n</value>"
    )


# A model may wrap a one-word answer in spaces, quotes, backticks or a final full stop;
# anything more is not an answer in the documented format.
_WRAPPING = " \t\r\n\"'`*."


def parse_condition(answer: str, step: str) -> bool:
    word = answer.strip(_WRAPPING).lower()
    if word in ("true", "false"):
        return word == "true"
    raise BackendError(
        f"step {step}: the model's answer to a condition is not true or false: {_shown(answer)}"
    )


_NUMBER = re.compile(r"[0-9]{1,6}")


def parse_choice(answer: str, count: int, step: str) -> int:
    """The 0-based index of the option the model named by its 1-based number."""
    word = answer.strip(_WRAPPING)
    if _NUMBER.fullmatch(word) and 1 <= int(word) <= count:
        return int(word) - 1
    raise BackendError(
        f"step {step}: the model's answer to a choice is not an option number from 1 to "
        f"{count}: {_shown(answer)}"
    )


def _shown(answer: str) -> str:
    text = answer.strip()
    return repr(text if len(text) <= 80 else text[:77] + "...")
