"""E074: a `session` whose properties are indented under it without `:`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openprose.checking import check_text
from tests.analysis.rule_checks import found, only

PROPS = '  prompt: "Summarize the notes"\n  model: haiku\n'


@pytest.mark.parametrize(
    ("header", "keyword"),
    [
        ("session\n", ((1, 0), (1, 7))),
        ("let summary = session\n", ((1, 14), (1, 21))),
        ("const summary = session\n", ((1, 16), (1, 23))),
        ("session  # the notes\n", ((1, 0), (1, 7))),
    ],
)
def test_bare_session_with_properties_is_an_error_on_the_keyword(
    header: str, keyword: tuple[tuple[int, int], tuple[int, int]]
) -> None:
    diagnostic = only(header + PROPS, "E074")
    assert (diagnostic.start, diagnostic.end) == keyword
    assert "`session:`" in diagnostic.message
    assert '`session "prompt"`' in diagnostic.message


def test_nested_bare_session_is_reported_once_and_not_as_an_indent() -> None:
    text = 'if **the notes are long**:\n  session\n    prompt: "Summarize"\n'
    codes = [d.code for d in check_text(text)]
    assert codes == ["E074"]


@pytest.mark.parametrize(
    "header",
    [
        "session:\n",
        'session "Summarize the notes"\n',
        "let summary = session:\n",
    ],
)
def test_the_written_forms_are_fine(header: str) -> None:
    assert check_text(header + PROPS) == []


def test_a_bare_session_without_a_prompt_is_only_e003() -> None:
    text = "session\n  model: haiku\n"
    assert [d.code for d in check_text(text)] == ["E003"]


def test_resume_without_colon_stays_the_parsers_e004() -> None:
    text = 'agent a:\n  persist: true\n  prompt: "p"\nsession: a\nresume\n  prompt: "again"\n'
    assert found(text, "E074") == []
    assert [d.code for d in check_text(text)].count("E004") == 1


_HEADERS = ["session", "let x = session", "session:", 'session "p"', "resume", "resume: a"]
_LINES = ['prompt: "p"', "model: haiku", "context: x", 'session "q"', "-> session", "| map:"]


@given(
    st.sampled_from(_HEADERS),
    st.lists(st.sampled_from(_LINES), max_size=3),
    st.sampled_from(["  ", "    ", "\t"]),
)
def test_headers_with_any_block_never_raise_and_report_once(
    header: str, lines: list[str], indent: str
) -> None:
    text = header + "\n" + "".join(indent + line + "\n" for line in lines)
    diagnostics = check_text(text)
    e074 = [d for d in diagnostics if d.code == "E074"]
    assert len(e074) <= 1
    if e074:
        assert not any(d.code == "E031" for d in diagnostics)
        assert not any(d.code == "E003" and d.start == e074[0].start for d in diagnostics)
        assert header in ("session", "let x = session")
        assert 'prompt: "p"' in lines
