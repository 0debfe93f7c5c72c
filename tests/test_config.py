"""Project configuration: discovery, rule selection, severity overrides, and `prose check`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openprose.checking import check_text
from openprose.codes import CODES, SYNTAX_CODES
from openprose.config import (
    Config,
    ConfigError,
    ConfigFinder,
    RuleSelection,
    config_from_table,
    load_config,
    parse_rate_limit,
)
from openprose.diagnostics import Severity
from tests.fifos import finishes

# One program, four diagnostics (checked against the real output of `prose check`):
#   1:1  E043 assignment to an undefined variable
#   1:20 E044 undefined variable in an interpolation
#   3:9  W015 a block parameter that shadows a top-level variable
#   5:5  E019 a duplicate `let`
PROGRAM = """\
x = session "about {missing}"
let topic = session "x"
block b(topic):
  session "about {topic}"
let topic = session "again"
"""
ALL_FOUR = ["E043", "E044", "W015", "E019"]

UNTERMINATED = 'session "Hello\n'  # E001, a syntax error


def codes(config: Config | None, text: str = PROGRAM) -> list[str]:
    return [d.code for d in check_text(text, None, config)]


def table(**keys: object) -> Config:
    return config_from_table("prose.toml", {k.replace("_", "-"): v for k, v in keys.items()})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def prose(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    environment["PYTHONIOENCODING"] = "utf-8"
    return subprocess.run(
        [sys.executable, "-m", "openprose", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=60,
    )


def test_the_program_reports_what_the_tests_assume() -> None:
    assert codes(None) == ALL_FOUR
    assert codes(Config()) == ALL_FOUR
    assert check_text(PROGRAM) == check_text(PROGRAM, None, None)  # the old signature


def test_syntax_codes_are_registered_errors() -> None:
    assert SYNTAX_CODES.issubset(CODES)
    assert all(CODES[c].severity is Severity.ERROR for c in SYNTAX_CODES)


# --------------------------------------------------------------------------- selection


def test_select_by_prefix() -> None:
    assert codes(table(select=["W"])) == ["W015"]
    assert codes(table(select=["E04"])) == ["E043", "E044"]
    assert codes(table(select=["E043", "W015"])) == ["E043", "W015"]


def test_ignore_by_code_and_prefix() -> None:
    assert codes(table(ignore=["W015"])) == ["E043", "E044", "E019"]
    assert codes(table(ignore=["E04"])) == ["W015", "E019"]
    assert codes(table(ignore=["E"])) == ["W015"]


def test_extend_select_adds_to_select() -> None:
    assert codes(table(select=["W"], extend_select=["E019"])) == ["W015", "E019"]
    # Without select, everything is already selected.
    assert codes(table(extend_select=["E019"])) == ALL_FOUR


def test_the_most_specific_selector_wins_and_ignore_wins_ties() -> None:
    assert codes(table(ignore=["E04"], select=["E043"])) == ["E043"]
    assert codes(table(select=["E04"], ignore=["E043"])) == ["E044"]
    assert codes(table(select=["E043"], ignore=["E043"])) == []


def test_command_line_selection_applies_after_the_file() -> None:
    config = table(select=["W"], ignore=["W015"])
    assert codes(config) == []
    # A later select starts again from nothing; a later ignore or extend-select edits.
    assert codes(config.with_selection(RuleSelection(select=("E04",)))) == ["E043", "E044"]
    assert codes(config.with_selection(RuleSelection(extend_select=("W015",)))) == ["W015"]
    assert codes(Config().with_selection(RuleSelection(ignore=("E",)))) == ["W015"]


def test_command_line_selection_keeps_every_other_setting() -> None:
    # with_selection used to rebuild the Config field by field and lost the later ones.
    config = config_from_table(
        "prose.toml",
        {
            "exclude": ["fixtures"],
            "extend-exclude": ["*.gen.prose"],
            "respect-gitignore": False,
            "force-exclude": True,
            "run": {
                "windows": {"llama3.1": 32000},
                "prices": {"llama3.1": [0.1, 0.2]},
                "rate-limits": {"openai": "10/30s"},
                "global-concurrency": {"branches": 64},
            },
        },
    )
    narrowed = config.with_selection(RuleSelection(ignore=("W",)))
    assert codes(narrowed) == ["E043", "E044", "E019"]
    for name in (
        "exclude",
        "extend_exclude",
        "respect_gitignore",
        "force_exclude",
        "windows",
        "prices",
        "rate_limits",
        "global_concurrency",
        "path",
    ):
        assert getattr(narrowed, name) == getattr(config, name), name


# --------------------------------------------------------------------------- file selection


def test_file_selection_defaults() -> None:
    config = Config()
    assert (config.exclude, config.extend_exclude) == (None, ())
    assert (config.respect_gitignore, config.force_exclude) == (True, False)


def test_file_selection_keys() -> None:
    config = config_from_table(
        "prose.toml",
        {
            "exclude": ["fixtures", "tests/*.prose"],
            "extend-exclude": ["old"],
            "respect-gitignore": False,
            "force-exclude": True,
        },
    )
    assert config.exclude == ("fixtures", "tests/*.prose")
    assert config.extend_exclude == ("old",)
    assert (config.respect_gitignore, config.force_exclude) == (False, True)
    # An empty exclude is not the default: it turns the default list off.
    assert config_from_table("prose.toml", {"exclude": []}).exclude == ()


# --------------------------------------------------------------------------- severity


def test_severity_override_by_code_and_prefix() -> None:
    config = table(severity={"W015": "error", "E04": "warning", "E044": "hint"})
    got = {d.code: d.severity for d in check_text(PROGRAM, None, config)}
    assert got == {
        "E043": Severity.WARNING,
        "E044": Severity.HINT,  # the more specific key wins
        "W015": Severity.ERROR,
        "E019": Severity.ERROR,
    }


def test_severity_override_does_not_select() -> None:
    assert codes(table(select=["W"], severity={"E043": "warning"})) == ["W015"]


# --------------------------------------------------------------------------- syntax errors


@pytest.mark.parametrize("selector", ["E001", "E03", "E030"])
def test_syntax_errors_cannot_be_ignored(selector: str) -> None:
    with pytest.raises(ConfigError, match="syntax errors, which cannot be ignored"):
        table(ignore=[selector])


def test_syntax_errors_cannot_be_downgraded() -> None:
    with pytest.raises(ConfigError, match=r"severity\.E001.*always errors"):
        table(severity={"E001": "warning"})
    table(severity={"E001": "error"})  # saying what is already true is fine


def test_broad_selectors_leave_syntax_errors_alone() -> None:
    # A prefix that also covers other codes applies to those only.
    for config in (
        table(ignore=["E"]),
        table(ignore=["E0"]),
        table(select=["W"]),
        table(severity={"E": "hint"}),
    ):
        [diagnostic] = check_text(UNTERMINATED, None, config)
        assert (diagnostic.code, diagnostic.severity) == ("E001", Severity.ERROR)
    assert {d.severity for d in check_text(PROGRAM, None, table(severity={"E": "hint"}))} == {
        Severity.HINT,
        Severity.WARNING,
    }


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"selct": ["E"]}, "unknown key 'selct'"),
        ({"tool": {"openprose": {}}}, "unknown key 'tool'"),
        ({"ignore": ["W999"]}, "unknown code or prefix in `ignore`: W999"),
        ({"select": ["E", "X1"]}, "unknown code or prefix in `select`: X1"),
        ({"extend-select": ["w015"]}, "unknown code or prefix in `extend-select`: w015"),
        ({"select": "E"}, "`select` must be a list"),
        ({"ignore": [15]}, "`ignore` must be a list"),
        ({"severity": {"W015": "fatal"}}, "`severity.W015` must be one of error, warning"),
        ({"severity": {"Q1": "error"}}, "unknown code or prefix in `severity`: Q1"),
        ({"severity": ["W015"]}, "`severity` must be a table"),
        ({"exclude": "fixtures"}, "`exclude` must be a list of paths or globs"),
        ({"extend-exclude": [""]}, "`extend-exclude` must be a list of paths or globs"),
        ({"respect-gitignore": "no"}, "`respect-gitignore` must be true or false"),
        ({"force-exclude": 1}, "`force-exclude` must be true or false"),
    ],
)
def test_mistakes_are_errors_that_name_them(keys: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_from_table("conf/prose.toml", keys)
    assert message in str(caught.value)
    assert str(caught.value).startswith("invalid configuration in conf/prose.toml: ")


# --------------------------------------------------------------------------- discovery


def test_discovery_walks_up_from_nested_directories(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", 'select = ["W"]\n')
    finder = ConfigFinder()
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    config = finder.for_path(str(deep / "x.prose"))
    assert config is not None
    assert config.path == str(tmp_path / "prose.toml")
    assert codes(config) == ["W015"]
    assert finder.for_directory(str(tmp_path / "a")) is config  # cached per directory


def test_nearest_configuration_wins(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", 'select = ["W"]\n')
    write(tmp_path / "sub" / "pyproject.toml", '[tool.openprose]\nselect = ["E019"]\n')
    config = ConfigFinder().for_path(str(tmp_path / "sub" / "deeper" / "x.prose"))
    assert config is not None and config.path == str(tmp_path / "sub" / "pyproject.toml")


def test_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", 'select = ["W"]\n')
    write(tmp_path / "sub" / "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\n')
    config = ConfigFinder().for_path(str(tmp_path / "sub" / "x.prose"))
    assert config is not None and config.path == str(tmp_path / "prose.toml")


def test_prose_toml_beats_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", "")  # empty: the defaults, and the search stops here
    write(tmp_path / "pyproject.toml", '[tool.openprose]\nselect = ["W"]\n')
    config = ConfigFinder().for_path(str(tmp_path / "x.prose"))
    assert config is not None and config.path == str(tmp_path / "prose.toml")
    assert codes(config) == ALL_FOUR


def test_finder_caches_until_cleared(tmp_path: Path) -> None:
    finder = ConfigFinder()
    path = write(tmp_path / "prose.toml", 'select = ["W"]\n')
    first = finder.for_directory(str(tmp_path))
    path.write_text('select = ["E"]\n', encoding="utf-8")
    assert finder.for_directory(str(tmp_path)) is first
    finder.clear()
    assert codes(finder.for_directory(str(tmp_path))) == ["E043", "E044", "E019"]


def test_malformed_files_raise_config_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.openprose\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        ConfigFinder().for_path(str(tmp_path / "x.prose"))
    write(tmp_path / "pyproject.toml", '[tool]\nopenprose = "E"\n')
    with pytest.raises(ConfigError, match=r"`tool\.openprose` must be a table"):
        ConfigFinder().for_path(str(tmp_path / "x.prose"))


needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


@needs_fifos
@pytest.mark.parametrize("name", ["prose.toml", "pyproject.toml"])
def test_a_fifo_is_an_invalid_configuration(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    reason = f"invalid configuration in {fifo}: cannot read it: not a regular file"
    with pytest.raises(ConfigError) as found:
        finishes(lambda: ConfigFinder().for_path(str(tmp_path / "x.prose")), fifo)
    assert str(found.value) == reason
    with pytest.raises(ConfigError) as named:
        finishes(lambda: load_config(str(fifo)), fifo)
    assert str(named.value) == reason


def test_a_directory_named_like_a_configuration_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "sub" / "prose.toml").mkdir(parents=True)
    write(tmp_path / "prose.toml", 'select = ["W"]\n')
    assert codes(ConfigFinder().for_path(str(tmp_path / "sub" / "x.prose"))) == ["W015"]


def test_an_oversized_configuration_is_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openprose.config

    text = 'select = ["W", "E"]\n'
    monkeypatch.setattr(openprose.config, "MAX_CONFIG_SIZE", len(text) - 1)
    write(tmp_path / "prose.toml", text)
    with pytest.raises(ConfigError, match=f"cannot read it: larger than {len(text) - 1} bytes"):
        ConfigFinder().for_path(str(tmp_path / "x.prose"))


def test_load_config_reads_either_form(tmp_path: Path) -> None:
    assert codes(load_config(str(write(tmp_path / "any.toml", 'select = ["W"]\n')))) == ["W015"]
    pyproject = write(tmp_path / "pyproject.toml", '[tool.openprose]\nselect = ["W"]\n')
    assert codes(load_config(str(pyproject))) == ["W015"]
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"no \[tool.openprose\] table"):
        load_config(str(pyproject))
    with pytest.raises(ConfigError, match="cannot read it"):
        load_config(str(tmp_path / "missing.toml"))


# --------------------------------------------------------------------------- prose check


def test_cli_finds_the_configuration_of_each_file(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", 'ignore = ["E"]\n')
    write(tmp_path / "one" / "a.prose", PROGRAM)
    write(tmp_path / "two" / "prose.toml", 'select = ["E019"]\n')
    write(tmp_path / "two" / "b.prose", PROGRAM)
    result = prose("check", "--format", "json", ".", cwd=tmp_path)
    found = [(Path(item["path"]).as_posix(), item["code"]) for item in json.loads(result.stdout)]
    assert found == [("one/a.prose", "W015"), ("two/b.prose", "E019")]
    assert result.returncode == 1


def test_cli_severity_override_changes_the_exit_status(tmp_path: Path) -> None:
    write(tmp_path / "p.prose", PROGRAM)
    assert prose("check", "p.prose", cwd=tmp_path).returncode == 1

    write(tmp_path / "prose.toml", 'severity = { E = "warning" }\n')
    result = prose("check", "--format", "json", "p.prose", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {item["severity"] for item in json.loads(result.stdout)} == {"warning"}
    assert result.stderr == "Found 4 warnings in 1 file (1 checked).\n"

    write(tmp_path / "prose.toml", 'select = ["W"]\nseverity = { W015 = "error" }\n')
    result = prose("check", "--format", "concise", "--color", "never", "p.prose", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "p.prose:3:9: error[W015] parameter `topic` shadows an outer variable"
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("select = [\n", "not valid TOML"),
        ('ignore = ["E001"]\n', "`ignore` names syntax errors, which cannot be ignored: E001"),
        ('severity = { E030 = "hint" }\n', "syntax errors are always errors"),
        ('selectt = ["E"]\n', "unknown key 'selectt'"),
    ],
)
def test_cli_invalid_configuration_is_one_line_and_status_2(
    tmp_path: Path, text: str, reason: str
) -> None:
    config = write(tmp_path / "prose.toml", text)
    write(tmp_path / "sub" / "p.prose", PROGRAM)
    result = prose("check", "sub/p.prose", "missing.prose", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"prose: error: invalid configuration in {config}: ")
    assert reason in line


def test_cli_config_option_overrides_discovery(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", 'select = ["W"]\n')
    write(tmp_path / "other.toml", 'select = ["E019"]\n')
    write(tmp_path / "p.prose", PROGRAM)
    result = prose("check", "--format", "json", "--config", "other.toml", "p.prose", cwd=tmp_path)
    assert [item["code"] for item in json.loads(result.stdout)] == ["E019"]

    result = prose("check", "--config", "nowhere.toml", "p.prose", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("prose: error: invalid configuration in nowhere.toml: ")
    assert len(result.stderr.splitlines()) == 1


def test_cli_select_and_ignore_options(tmp_path: Path) -> None:
    write(tmp_path / "prose.toml", 'select = ["W"]\n')
    write(tmp_path / "p.prose", PROGRAM)

    def run(*options: str) -> list[str]:
        result = prose("check", "--format", "json", *options, "p.prose", cwd=tmp_path)
        return [item["code"] for item in json.loads(result.stdout)]

    assert run() == ["W015"]
    assert run("--select", "E04,E019") == ["E043", "E044", "E019"]  # replaces the file's
    assert run("--select", "E04", "--select", "E019", "--ignore", "E044") == ["E043", "E019"]
    assert run("--extend-select", "E019") == ["W015", "E019"]
    assert run("--ignore", "W") == []


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (["--select", "E04,Z9"], "unknown code or prefix in `--select`: Z9"),
        (["--ignore", "E001"], "`--ignore` names syntax errors, which cannot be ignored: E001"),
    ],
)
def test_cli_bad_selection_options(tmp_path: Path, options: list[str], reason: str) -> None:
    write(tmp_path / "p.prose", PROGRAM)
    result = prose("check", *options, "p.prose", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"prose: error: invalid option: {reason}\n"


def test_cli_standard_input_uses_the_current_directory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.openprose]\nselect = ["E019"]\n')
    result = prose("check", "--format", "json", "-", cwd=tmp_path, stdin=PROGRAM)
    assert [item["code"] for item in json.loads(result.stdout)] == ["E019"]


# --------------------------------------------------------------------------- rate limits


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("50/min", (50, 60.0)),
        ("10/30s", (10, 30.0)),
        ("3000/h", (3000, 3600.0)),
        ("5/s", (5, 1.0)),
        (" 7 / 2.5s ", (7, 2.5)),
        ("off", None),
    ],
)
def test_a_rate_limit_is_starts_per_period(text: str, limit: tuple[int, float] | None) -> None:
    assert parse_rate_limit(text) == limit


@pytest.mark.parametrize("text", ["0/min", "5/0s", "5/", "5/day", "fast", ""])
def test_a_rate_limit_that_is_not_one_says_what_one_is(text: str) -> None:
    with pytest.raises(ValueError, match="rate limit"):
        parse_rate_limit(text)


def test_rate_limits_are_by_model_backend() -> None:
    config = config_from_table(
        "prose.toml", {"run": {"rate-limits": {"anthropic": "50/min", "offline": "off"}}}
    )
    assert config.rate_limits == {"anthropic": (50, 60.0), "offline": None}
    assert Config().rate_limits == {}
    with pytest.raises(ConfigError, match="unknown backend 'gemini'"):
        config_from_table("prose.toml", {"run": {"rate-limits": {"gemini": "5/s"}}})
    with pytest.raises(ConfigError, match=r"run.rate-limits.openai`: a rate limit is"):
        config_from_table("prose.toml", {"run": {"rate-limits": {"openai": 5}}})


def test_global_concurrency_caps_runs_and_branches() -> None:
    config = config_from_table(
        "prose.toml", {"run": {"global-concurrency": {"runs": 8, "branches": 64}}}
    )
    assert config.global_concurrency == {"runs": 8, "branches": 64}
    assert Config().global_concurrency == {}
    with pytest.raises(ConfigError, match="unknown key 'items'"):
        config_from_table("prose.toml", {"run": {"global-concurrency": {"items": 5}}})
    for bad in (0, "8", True, 2.5):
        with pytest.raises(ConfigError, match=r"global-concurrency\.runs` must be a whole number"):
            config_from_table("prose.toml", {"run": {"global-concurrency": {"runs": bad}}})
    with pytest.raises(ConfigError, match="must be a table"):
        config_from_table("prose.toml", {"run": {"global-concurrency": 8}})
