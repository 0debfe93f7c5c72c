"""``[tool.openprose.run]`` / prose.toml ``run``: the model map of ``prose run``."""

from __future__ import annotations

import pytest

from openprose.config import ConfigError, config_from_table


def test_model_map_is_read_and_kept_through_command_line_selections() -> None:
    config = config_from_table("prose.toml", {"run": {"model-map": {"sonnet": " llama3.1 "}}})
    assert config.model_map == {"sonnet": "llama3.1"}
    assert config_from_table("prose.toml", {}).model_map == {}


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("fast", "`run` must be a table"),
        ({"model": "x"}, "unknown key run.model"),
        ({"model-map": {"sonnet": 3}}, "must map aliases to model ids"),
        ({"model-map": {"sonnet": " "}}, "must map aliases to model ids"),
        ({"model-map": ["sonnet=x"]}, "must map aliases to model ids"),
    ],
)
def test_a_malformed_run_table_is_a_config_error(run: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_table("prose.toml", {"run": run})


def test_allow_remote_is_a_boolean_kept_through_command_line_selections() -> None:
    from openprose.config import RuleSelection

    config = config_from_table("prose.toml", {"run": {"allow-remote": True}})
    assert config.with_selection(RuleSelection(ignore=("W",))).allow_remote is True
    assert config_from_table("prose.toml", {}).allow_remote is False
    with pytest.raises(ConfigError, match="allow-remote` must be true or false"):
        config_from_table("prose.toml", {"run": {"allow-remote": "yes"}})
