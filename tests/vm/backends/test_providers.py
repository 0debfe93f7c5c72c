"""Choosing a real backend: keys, .prose/.env, model maps, strict answer parsing, and
that checking a program never loads a model SDK."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.vm.backends import prompts
from openprose.vm.backends.base import BackendError
from openprose.vm.backends.openai_backend import OpenAIBackend
from openprose.vm.backends.pricing import resolve_model
from openprose.vm.backends.providers import (
    MissingKey,
    create_backend,
    parse_model_map,
    read_env_file,
)


def test_a_missing_key_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(MissingKey) as raised:
        create_backend("anthropic", environ={}, project_root=tmp_path)
    assert str(raised.value) == (
        "the anthropic backend needs ANTHROPIC_API_KEY in the environment or .prose/.env"
    )


def test_keys_and_base_url_come_from_dot_env_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".prose").mkdir()
    (tmp_path / ".prose" / ".env").write_text(
        "# local server\nexport OPENAI_API_KEY='from-file'\n"
        'OPENAI_BASE_URL="http://127.0.0.1:11434/v1"\nnot a line\n',
        encoding="utf-8",
    )
    backend = create_backend("openai", environ={}, project_root=tmp_path)
    assert isinstance(backend, OpenAIBackend)
    assert (backend.api_key, backend.base_url) == ("from-file", "http://127.0.0.1:11434/v1")
    backend = create_backend(
        "openai", environ={"OPENAI_API_KEY": "from-env"}, project_root=tmp_path
    )
    assert backend.api_key == "from-env"


def test_read_env_file_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_env_file(tmp_path / "absent") == {}


def test_model_map_items() -> None:
    assert parse_model_map(["sonnet=llama3.1", " opus = qwen "]) == {
        "sonnet": "llama3.1",
        "opus": "qwen",
    }
    with pytest.raises(ValueError, match="ALIAS=MODEL_ID"):
        parse_model_map(["sonnet"])


def test_aliases_resolve_per_provider_and_ids_pass_through() -> None:
    assert resolve_model("anthropic", "haiku", {}) == "claude-haiku-4-5"
    assert resolve_model("openai", "opus", {}) == "gpt-5"
    assert resolve_model("openai", None, {}) == "gpt-5-mini"  # no model: sonnet
    assert resolve_model("openai", "llama3.1", {}) == "llama3.1"
    assert resolve_model("anthropic", "haiku", {"haiku": "my-haiku"}) == "my-haiku"


@given(st.text(max_size=20), st.integers(min_value=1, max_value=9))
def test_answer_parsing_accepts_only_the_documented_formats(answer: str, count: int) -> None:
    try:
        index = prompts.parse_choice(answer, count, "s")
    except BackendError as error:
        assert str(error).startswith("step s: ")
    else:
        assert 0 <= index < count and answer.strip(" \t\r\n\"'`*.") == str(index + 1)
    try:
        value = prompts.parse_condition(answer, "s")
    except BackendError as error:
        assert str(error).startswith("step s: ")
    else:
        assert answer.strip(" \t\r\n\"'`*.").lower() == str(value).lower()


def test_checking_a_program_and_the_language_server_never_import_a_model_sdk(
    tmp_path: Path,
) -> None:
    program = tmp_path / "main.prose"
    program.write_text('session "hello"\n', encoding="utf-8")
    script = (
        "import sys\n"
        "import openprose.cli, openprose.lsp.server\n"
        "import openprose.vm.backends.providers, openprose.vm.backends.anthropic_backend\n"
        "import openprose.vm.backends.openai_backend\n"
        "import openprose.vm.backends.claude_code_backend\n"
        f"status = openprose.cli.main(['check', {str(program)!r}])\n"
        "sdks = ('anthropic', 'openai', 'claude_agent_sdk')\n"
        "loaded = sorted(m for m in sdks if m in sys.modules)\n"
        "print(status, loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr
