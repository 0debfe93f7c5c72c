"""Choosing a real backend: its key, base URL and model map (docs/run.md).

Keys come only from the environment or the project's ``.prose/.env``; the environment wins.
A missing key is a ``MissingKey`` raised before anything runs.  The SDK modules are not
imported here: each backend imports its own when it makes a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

REAL_BACKENDS = ("anthropic", "openai", "claude-code")

_KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "claude-code": "ANTHROPIC_API_KEY",
}
_BASE_URLS = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
    "claude-code": "ANTHROPIC_BASE_URL",
}


class MissingKey(Exception):
    pass


def read_env_file(path: Path) -> dict[str, str]:
    """``NAME=value`` lines (``export`` and quotes allowed, ``#`` comments); absent file: {}."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name.strip()] = value
    return values


def parse_model_map(items: list[str]) -> dict[str, str]:
    """``alias=id`` items of ``--model-map``; ValueError names a malformed one."""
    mapping: dict[str, str] = {}
    for item in items:
        alias, sep, model = item.partition("=")
        if not sep or not alias.strip() or not model.strip():
            raise ValueError(f"--model-map needs ALIAS=MODEL_ID, got {item!r}")
        mapping[alias.strip()] = model.strip()
    return mapping


def create_backend(
    name: str,
    *,
    environ: Mapping[str, str],
    project_root: Path,
    model_map: Mapping[str, str] | None = None,
) -> Any:
    """The backend called ``name`` (one of ``REAL_BACKENDS``), with its key and base URL."""
    settings = {**read_env_file(project_root / ".prose" / ".env"), **environ}
    key = settings.get(_KEYS[name], "").strip()
    if not key:
        raise MissingKey(
            f"the {name} backend needs {_KEYS[name]} in the environment or .prose/.env"
        )
    base_url = settings.get(_BASE_URLS[name], "").strip() or None
    if name == "anthropic":
        from openprose.vm.backends.anthropic_backend import AnthropicBackend

        return AnthropicBackend(key, base_url=base_url, model_map=model_map)
    if name == "claude-code":
        from openprose.vm.backends.claude_code_backend import ClaudeCodeBackend

        # Unattended: dontAsk, the program's permissions only (docs/run.md).
        return ClaudeCodeBackend(
            key, base_url=base_url, model_map=model_map, cwd=project_root, environ=settings
        )
    from openprose.vm.backends.openai_backend import OpenAIBackend

    return OpenAIBackend(key, base_url=base_url, model_map=model_map)
