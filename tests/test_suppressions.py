"""Suppression comments: `# prose: ignore[CODE]` on a line, `# prose: ignore-file[CODE]`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from openprose.checking import check_text
from openprose.config import Config, config_from_table
from openprose.suppressions import find_suppressions
from openprose.syntax import parse

# Line 1 has two diagnostics (E043 at column 1, E044 at column 20), line 3 one (W015).
ASSIGN = 'x = session "about {missing}"'
SHADOW = 'let topic = session "x"\nblock b(topic):\n  session "about {topic}"\n'


def found(text: str, config: Config | None = None) -> list[tuple[str, int]]:
    return [(d.code, d.start[0]) for d in check_text(text, None, config)]


def test_the_programs_report_what_the_tests_assume() -> None:
    assert found(f"{ASSIGN}\n{SHADOW}") == [("E043", 1), ("E044", 1), ("W015", 3)]


def test_one_code_on_the_same_line() -> None:
    assert found(f"{ASSIGN}  # prose: ignore[E044]\n{SHADOW}") == [("E043", 1), ("W015", 3)]
    shadow = SHADOW.replace("(topic):", "(topic):  # prose: ignore[W015]")
    assert found(f"{ASSIGN}\n{shadow}") == [("E043", 1), ("E044", 1)]


def test_several_codes() -> None:
    assert found(f"{ASSIGN}  # prose: ignore[E043, E044]\n{SHADOW}") == [("W015", 3)]
    assert found(f"{ASSIGN}  # prose: ignore[E043,E044,W015]\n") == []


def test_all_codes() -> None:
    assert found(f"{ASSIGN}  # prose: ignore\n{SHADOW}") == [("W015", 3)]
    assert found(f"{ASSIGN}  #prose:ignore -- reviewed\n") == []


def test_a_suppression_does_not_hide_a_different_code() -> None:
    assert found(f"{ASSIGN}  # prose: ignore[W015]\n{SHADOW}") == [
        ("E043", 1),
        ("E044", 1),
        ("W015", 3),
    ]


def test_only_the_line_of_the_comment() -> None:
    # A comment on its own line applies to that line, not the next (no statement there).
    text = f"# prose: ignore[E043]\n{ASSIGN}\n{SHADOW}"
    assert found(text) == [("E043", 2), ("E044", 2), ("W015", 4)]
    # The line where a diagnostic starts counts: W015 starts on the `block` line.
    shadow = SHADOW.replace('"about {topic}"', '"about {topic}"  # prose: ignore[W015]')
    assert found(shadow) == [("W015", 2)]


def test_hash_inside_a_string_is_not_a_comment() -> None:
    text = 'x = session "about {missing} # prose: ignore"\n'
    assert found(text) == [("E043", 1), ("E044", 1)]
    text = 'x = session """about {missing}\n# prose: ignore\n"""\n'
    assert [code for code, _ in found(text)] == ["E043", "W034"]


def test_directive_after_other_comment_text() -> None:
    assert found(f"{ASSIGN}  # the model fills it in  # prose: ignore[E044]\n") == [("E043", 1)]
    # Not a directive: the marker must follow a `#`.
    assert len(found(f"{ASSIGN}  # see prose: ignore[E044]\n")) == 2
    assert len(found(f"{ASSIGN}  # prose: ignored\n")) == 2
    # An empty list names nothing (and says so: W036).
    assert found(f"{ASSIGN}  # prose: ignore[]\n") == [("E043", 1), ("E044", 1), ("W036", 1)]


def test_multi_line_string_is_suppressed_where_it_ends() -> None:
    text = 'session """about\n{missing}\n"""  # prose: ignore[W034]\n'
    assert found(text.replace("  # prose: ignore[W034]", "")) == [("W034", 2)]
    assert found(text) == []


def test_file_level_ignore() -> None:
    text = f"# Drafting helpers.\n# prose: ignore-file[W015, E044]\n\n{ASSIGN}\n{SHADOW}"
    assert found(text) == [("E043", 4)]
    assert found(f"# prose: ignore-file\n{ASSIGN}\n{SHADOW}") == []


def test_file_level_ignore_only_before_the_first_statement() -> None:
    # Too late to count, and reported as having no effect (W036).
    text = f"{ASSIGN}\n# prose: ignore-file[W015]\n{SHADOW}"
    assert found(text) == [("E043", 1), ("E044", 1), ("W036", 2), ("W015", 4)]
    text = f"{ASSIGN}  # prose: ignore-file[E043]\n"
    assert found(text) == [("E043", 1), ("E044", 1), ("W036", 1)]


def test_syntax_errors_are_never_suppressed() -> None:
    assert found('session "Hello  # prose: ignore[E001]\n') == [("E001", 1)]
    assert found('session "a" $  # prose: ignore\n') == [("E042", 1)]
    text = 'let draft = session "a"\nsession "Hi"\n  context: [draft  # prose: ignore[E030]\n'
    assert found(text) == [("E030", 3), ("W036", 3)]  # W036: naming a syntax error
    assert found('# prose: ignore-file\nsession "Hello\n') == [("E001", 2)]


def test_unknown_codes_in_a_comment_suppress_nothing_and_are_reported() -> None:
    assert found(f"{ASSIGN}  # prose: ignore[W999, E044]\n") == [("E043", 1), ("W036", 1)]


def test_crlf_line_endings() -> None:
    text = f"{ASSIGN}  # prose: ignore[E043]\r\n{SHADOW}".replace("\n", "\r\n")
    assert found(text.replace("\r\r\n", "\r\n")) == [("E044", 1), ("W015", 3)]


def test_suppressions_apply_after_severity_overrides() -> None:
    config = config_from_table("prose.toml", {"severity": {"E044": "hint"}, "ignore": ["W"]})
    got = check_text(f"{ASSIGN}  # prose: ignore[E043]\n{SHADOW}", None, config)
    assert [(d.code, d.severity.label) for d in got] == [("E044", "hint")]


def test_find_suppressions_reads_leaf_prefixes() -> None:
    module = parse('# prose: ignore-file[W1]\nsession "a"  # prose: ignore[W2]\n# prose: ignore\n')
    suppressions = find_suppressions(module)
    assert suppressions.file == {"W1"}
    assert suppressions.by_line == {2: {"W2"}, 3: None}


def test_cli_honours_suppressions(tmp_path: Path) -> None:
    (tmp_path / "p.prose").write_text(f"{ASSIGN}  # prose: ignore[E043, E044]\n{SHADOW}")
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    result = subprocess.run(
        [sys.executable, "-m", "openprose", "check", "--format", "concise", "p.prose"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**environment, "PYTHONIOENCODING": "utf-8"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "p.prose:3:9: warning[W015] parameter `topic` shadows an outer variable"
    ]


def problems(text: str, config: Config | None = None) -> list[tuple[int, str, str]]:
    """The W036 reports: (line, the text under the range, message)."""
    lines = text.split("\n")
    return [
        (d.start[0], lines[d.start[0] - 1][d.start[1] : d.end[1]], d.message)
        for d in check_text(text, None, config)
        if d.code == "W036"
    ]


def test_unknown_codes_and_syntax_codes_in_a_directive_are_reported_where_they_stand() -> None:
    text = f"{ASSIGN}  # prose: ignore[E043, E44, E001,]\n"
    assert problems(text) == [
        (1, "E44", "unknown code `E44` in a suppression comment"),
        (1, "E001", "`E001` is a syntax error, and syntax errors cannot be suppressed"),
    ]
    # The known code still works, and the mistyped one suppresses nothing.
    assert [c for c, _ in found(text) if c != "W036"] == ["E044"]


def test_a_prefix_is_not_a_code_in_a_directive() -> None:
    assert problems(f"{ASSIGN}  # prose: ignore[E04]\n") == [
        (1, "E04", "unknown code `E04` in a suppression comment")
    ]


def test_an_empty_list_and_a_late_ignore_file_are_reported() -> None:
    text = f'session "a"\n{ASSIGN}  # prose: ignore[]\n# prose: ignore-file[W015]\n'
    assert [(line, under) for line, under, _ in problems(text)] == [
        (2, "# prose: ignore[]"),
        (3, "# prose: ignore-file[W015]"),
    ]


def test_directives_that_work_are_not_reported() -> None:
    text = f"# prose: ignore-file[W015]\n{ASSIGN}  # prose: ignore[E043, E044]\n{SHADOW}"
    assert found(text) == []
    assert problems(f"{ASSIGN}  # prose: ignore\n") == []


def test_w036_follows_the_configuration_and_can_itself_be_suppressed() -> None:
    text = f"{ASSIGN}  # prose: ignore[E043, E044, W999]\n"
    assert found(text) == [("W036", 1)]
    assert found(text, config_from_table("test", {"ignore": ["W036"]})) == []
    assert found(f"{ASSIGN}  # prose: ignore[E043, E044, W999, W036]\n") == []


def test_a_directive_after_code_on_a_line_with_wide_characters() -> None:
    # Columns count code points, as every other range does.
    text = 'session "café ☕"  # prose: ignore[W0001]\n'
    assert problems(text) == [(1, "W0001", "unknown code `W0001` in a suppression comment")]
