"""Context windows by model id (documented in docs/context.md).

A session's budget is laid out under its model's window.  The table holds the windows the
providers publish for the models the backends' aliases resolve to; a model that is not in
it (a local model behind an OpenAI-compatible server, say) gets ``DEFAULT_WINDOW``, and
``prose run --window MODEL=TOKENS`` or ``[run] windows`` in the configuration set any.
Prefixes match too, so a dated id (``claude-sonnet-4-5-20250929``) finds its family.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_WINDOW = 128_000
# What the VM keeps free for the answer: the longest answer a backend asks for
# (vm/backends/chat.py SESSION_MAX_TOKENS), the same for every backend so that budgets
# compare across them.
RESERVE = 8_192

WINDOWS: dict[str, int] = {
    "claude-opus-4-8": 1_000_000,
    "claude-opus-4-5": 200_000,
    "claude-opus-4-1": 200_000,
    "claude-sonnet-4-6": 200_000,
    "claude-sonnet-4-5": 200_000,
    "claude-haiku-4-5": 200_000,
    "claude-3-5-haiku": 200_000,
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}


def window_for(model: str) -> int:
    """The context window of ``model`` (an id, as the backend resolved it), in tokens."""
    if model in WINDOWS:
        return WINDOWS[model]
    # The longest known id the model starts with: "gpt-5-mini-2025..." is gpt-5-mini's.
    best = ""
    for known in WINDOWS:
        if model.startswith(known + "-") and len(known) > len(best):
            best = known
    return WINDOWS[best] if best else DEFAULT_WINDOW


def parse_window(text: str) -> tuple[str, int]:
    """``MODEL=TOKENS``, as ``prose run --window`` takes it; ValueError naming what is wrong."""
    model, sep, figure = text.partition("=")
    if not sep or not model.strip():
        raise ValueError(f"--window needs MODEL=TOKENS, got {text!r}")
    try:
        tokens = int(figure.strip().replace("_", "").replace(",", ""))
    except ValueError:
        raise ValueError(f"--window {text!r}: the window is a whole number of tokens") from None
    if tokens < 1_000:
        raise ValueError(f"--window {text!r}: a window is at least 1000 tokens")
    return model.strip(), tokens


def set_windows(windows: Mapping[str, int]) -> None:
    """Windows that replace or add to the table for this process."""
    WINDOWS.update(windows)
