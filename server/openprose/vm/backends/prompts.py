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
# What each kind of summary asks for (vm/context/ladder.py, compaction.py, overflow.py).
SUMMARY_TASKS = {
    "summary": "Summarise the value {name!r} to its key points",
    "essentials": "Extract only the essentials of the value {name!r}: the facts, figures, "
    "names and conclusions a later step cannot do without",
    "compaction": "Summarise these earlier turns of a session as a list of what was asked, "
    "done and decided, so that the session can continue from the summary",
    "flush": "List the decisions made, preferences discovered, key artifacts (files, "
    "names, locations) and patterns observed in these turns, one per line starting with "
    "'- '",
    "transfer": "Write what a fresh session needs to carry on from this one: its outcome "
    "so far, open questions and conclusions, not raw outputs",
}


def _context_block(context: tuple[tuple[str, str], ...]) -> str:
    parts = [f'<context name="{name}">\n{text}\n</context>' for name, text in context]
    return "\n\n".join(parts)


def _with_context(text: str, context: tuple[tuple[str, str], ...]) -> str:
    return f"{_context_block(context)}\n\n{text}" if context else text


def session_messages(request: SessionRequest) -> tuple[str | None, str]:
    """(system, user): the agent's prompt as system; the context bindings, then the task.
    A multi-turn session's earlier turns come first, as a transcript (for backends that
    take one message; the chat backends send them as turns: ``session_turns``)."""
    user = _with_context(request.prompt, request.context)
    earlier = _history_block(request)
    return request.system, f"{earlier}\n\n{user}" if earlier else user


def _history_block(request: SessionRequest) -> str:
    parts = [request.history] if request.history else []
    for turn in request.turns:
        part = f"<turn>\nAsked: {turn.prompt}\n\nAnswered: {turn.answer}"
        if turn.tools:
            part += "\n\nTool results:\n" + "\n".join(turn.tools)
        parts.append(part + "\n</turn>")
    return f"<earlier-turns>\n{chr(10).join(parts)}\n</earlier-turns>" if parts else ""


def session_turns(request: SessionRequest) -> tuple[str | None, list[dict[str, str]]]:
    """(system, messages) for a chat API: the earlier turns as user and assistant messages
    (the summary of compacted ones first, as a user message the model acknowledged), then
    the context bindings and the task."""
    messages: list[dict[str, str]] = []
    if request.history:
        messages.append({"role": "user", "content": request.history})
        messages.append({"role": "assistant", "content": "Understood."})
    for turn in request.turns:
        asked = turn.prompt
        if turn.tools:
            asked += "\n\nTool results:\n" + "\n".join(turn.tools)
        messages.append({"role": "user", "content": asked})
        messages.append({"role": "assistant", "content": turn.answer or "(no answer)"})
    messages.append({"role": "user", "content": _with_context(request.prompt, request.context)})
    return request.system, messages


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
    task = SUMMARY_TASKS.get(request.mode, SUMMARY_TASKS["summary"]).format(name=request.name)
    return f"{task}, in at most {request.limit} characters.\n\n<value>\n{request.text}\n</value>"


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
