"""The margin proof of the formatter's self-check (format/margins.py).

It accepts an output without reading its tokens when only spaces at the ends of lines
changed and one strictly increasing map takes the input's indentation widths to the
output's.  These tests show it proves the common messy inputs (re-indented, stray spaces),
refuses each change that keeps the lines' text but not the program (a multi-line token's
own spaces changed, depths merged or turned around, a lone CR hiding a line), and, as a
property, never accepts an output whose full parse differs from the input's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from openprose import format as fmt
from openprose.format import check, format_text, tokens
from openprose.format.margins import _long_tokens, same_but_margins, token_group
from openprose.syntax import parse
from openprose.syntax.issues import iter_issues
from openprose.syntax.tokenizer import _TOKEN
from tests.format.test_check import PROGRAM
from tests.format.test_tokens import broken_printer
from tests.support.strategies import programs, texts

# Multi-line tokens whose lines the messy form re-indents, and three quotes outside them.
LONG = (
    "agent planner:\n"
    "  model: sonnet\n"
    '  prompt: """  \n'
    "  Plan the work.  \n"
    "    Step by step.\n"
    '  """\n'
    "\n"
    "if ***the plan\n"
    "  is ready***:\n"
    '  session "Go"\n'
    "  if **urgent**:\n"
    '    session "Hurry"\n'
    'session "a"  # three quotes: """\n'
    'session """\n'
    "  Hello\n"
    '"""\n'
    'session "b"  # and again: """\n'
)
# A string whose lines, taken for code, would fit the indentation's map.
QUOTED = (
    'session "a"  # three quotes: """\n'
    "if **x**:\n"
    '  session """\n'
    "  Hello\n"
    '"""\n'
    'session "b"  # and again: """\n'
)


def messy(text: str) -> str:
    return text.replace("\n  ", "\n    ")


def same_program(before: str, after: str) -> bool:
    return check.full_check(parse(before), after, True) is None


@pytest.mark.parametrize("source", [PROGRAM, LONG, QUOTED])
def test_a_reindented_program_is_proven_by_its_margins(source: str) -> None:
    text = messy(source)
    out = format_text(text, verify=False).text
    assert out != text
    assert same_but_margins(text, out)
    assert same_program(text, out)


def test_stray_spaces_ending_lines_are_proven() -> None:
    text = LONG.replace('"Go"\n', '"Go"   \n').replace("sonnet\n", "sonnet \n")
    out = format_text(text, verify=False).text
    assert out == LONG
    assert same_but_margins(text, out)


def test_a_messy_program_is_formatted_without_reading_its_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fmt, "verify", pytest.fail)
    monkeypatch.setattr(tokens, "text_stream", pytest.fail)
    monkeypatch.setattr(tokens, "tree_stream", pytest.fail)
    for source in (PROGRAM, LONG):
        result = format_text(messy(source))
        assert result.refused is None
        assert result.text == format_text(messy(source), verify=False).text


# ---------------------------------------------------------------- changes it must reject

# Each: the formatted messy LONG (or PROGRAM) changed only in spaces at lines' ends, in a
# way that changes the program.  Lines as in ``messy(LONG)``, which the printer keeps
# inside multi-line tokens.
FAULTS: dict[str, tuple[str, Callable[[str], str]]] = {
    "a string's line re-indented": (
        LONG,
        lambda s: s.replace("\n      Step by step.", "\n    Step by step."),
    ),
    "a string's closing line re-indented": (
        LONG,
        lambda s: s.replace('step.\n    """', 'step.\n  """'),
    ),
    "the spaces ending a string's first line dropped": (
        LONG,
        lambda s: s.replace('prompt: """  \n', 'prompt: """\n'),
    ),
    "a discretion's line re-indented": (
        LONG,
        lambda s: s.replace("\n    is ready***", "\n  is ready***"),
    ),
    # The quotes in the comments are no token: a reading pairing them with the string's
    # would take its line for code and its new indentation for the program's.
    "a string after quotes in a comment re-indented": (
        LONG,
        lambda s: s.replace("\n    Hello\n", "\n  Hello\n"),
    ),
    "a string's line taken for code re-indented": (
        QUOTED,
        lambda s: s.replace("\n    Hello\n", "\n  Hello\n"),
    ),
    "the spaces ending a string's inner line dropped": (
        LONG,
        lambda s: s.replace("work.  \n", "work.\n"),
    ),
    # Depth 1 stays at 2 and depth 2 goes to 1: a map, one to one, not increasing.
    "nesting turned around": (
        PROGRAM,
        lambda s: re.sub(r"(?m)^    (?=\S)", " ", s),
    ),
    # Every line two spaces in: the top level, width 0, is no other width.
    "the whole program indented": (
        PROGRAM,
        lambda s: re.sub(r"(?m)^(?=.)", "  ", s),
    ),
    # Depths 1 and 2 both at 2: increasing but not strictly.
    "two depths made one": (
        PROGRAM,
        lambda s: re.sub(r"(?m)^    (?=\S)", "  ", s),
    ),
}


def faulty(name: str) -> tuple[str, str, str]:
    """The input, its output and the output with the fault."""
    source, change = FAULTS[name]
    text = messy(source)
    out = format_text(text, verify=False).text
    return text, out, change(out)


@pytest.mark.parametrize("name", FAULTS)
def test_a_fault_is_a_change_of_meaning_in_the_margins_only(name: str) -> None:
    text, out, changed = faulty(name)
    assert changed != out
    assert same_but_margins(text, out)  # so the proof is the one asked
    assert [line.strip(" ") for line in changed.split("\n")] == [
        line.strip(" ") for line in out.split("\n")
    ]
    assert not same_program(text, changed)


@pytest.mark.parametrize("name", FAULTS)
def test_a_change_in_the_margins_of_meaning_is_not_proven(name: str) -> None:
    text, _, changed = faulty(name)
    assert not same_but_margins(text, changed)


@pytest.mark.parametrize("name", FAULTS)
def test_a_printer_making_the_margin_change_is_refused(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, change = FAULTS[name]
    broken_printer(change)(monkeypatch)
    text = messy(source)
    result = format_text(text)
    assert result.refused is not None, name
    assert result.text == text


def test_a_lone_cr_is_a_line_break_the_lines_do_not_show() -> None:
    # Split at LF only, `session "b"` would seem to be the line of `session "a"`.
    text = 'if **x**:\n  session "a"\r  session "b"\n  session "c"\n'
    changed = 'if **x**:\n    session "a"\r  session "b"\n    session "c"\n'
    assert same_program(text, text.replace("\n  ", "\n    ").replace("\r  ", "\r    "))
    assert not same_program(text, changed)
    assert not same_but_margins(text, changed)


# ---------------------------------------------------------------- the long tokens


def test_the_token_groups_are_the_tokenizer_s() -> None:
    for name in ("str", "disc"):
        group = token_group(_TOKEN.pattern, name)
        assert group.startswith(f"(?P<{name}>") and group in _TOKEN.pattern
        re.compile(group, _TOKEN.flags)
    assert token_group(r"a(?P<x>[)\]](b)|\)c)d", "x") == r"(?P<x>[)\]](b)|\)c)"


def tokenizer_tokens(text: str) -> list[tuple[int, int]]:
    """Where the strings and discretions are, as the tokenizer's pattern reads the text
    from its start."""
    kinds = {_TOKEN.groupindex["str"], _TOKEN.groupindex["disc"]}
    spans = []
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break  # a comment ending the text: see tokens.text_stream
        pos = m.end()
        if m.lastindex in kinds:
            spans.append(m.span(m.lastindex))
    return spans


def assert_long_tokens(text: str) -> None:
    found = _long_tokens(text)
    expected = tokenizer_tokens(text)
    if found is None:  # one runs to the end of the text
        assert any(end == len(text) for _, end in expected)
    else:
        assert found == [(a, b) for a, b in expected if "\n" in text[a:b]]


@pytest.mark.parametrize(
    "text",
    [
        LONG,
        messy(LONG),
        '# """\nsession """\na\n"""\n# """\n',
        'session "x\\"""\nsession "y"\n',
        "if ****:\n  session\n*** a\nb *** c ***\nd***\n",
        'x * ** y ** """\n"""',
        'x = """ one line """ + """\ntwo\n"""\n',
    ],
)
def test_the_long_tokens_are_the_tokenizer_s(text: str) -> None:
    assert_long_tokens(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='"*#\\\n a:', max_size=60))
def test_the_long_tokens_of_any_text_are_the_tokenizer_s(text: str) -> None:
    assert_long_tokens(text)


# ---------------------------------------------------------------- soundness


def margins(text: str, data: st.DataObject) -> str:
    """``text`` with spaces added or taken at the ends of a few lines, or every line
    re-indented."""
    lines = text.split("\n")
    if data.draw(st.booleans()):
        width = data.draw(st.sampled_from([1, 3, 4]))
        lines = [
            " " * (width * ((len(x) - len(x.lstrip(" "))) // 2)) + x.lstrip(" ") for x in lines
        ]
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        edit = data.draw(st.sampled_from(["indent", "dedent", "trail", "untrail"]))
        n = data.draw(st.integers(1, 3))
        if edit == "indent":
            lines[i] = " " * n + lines[i]
        elif edit == "dedent":
            lines[i] = lines[i][n:] if lines[i].startswith(" " * n) else lines[i]
        elif edit == "trail":
            lines[i] += " " * n
        else:
            lines[i] = lines[i].rstrip(" ")
    return "\n".join(lines)


def assert_sound(before: str, after: str) -> None:
    if same_but_margins(before, after):
        assert same_program(before, after)


def without_issues(text: str) -> bool:
    """What the caller asks of the input (an unclosed string or ``**`` would take the
    spaces ending its line)."""
    return not any(iter_issues(parse(text)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.data())
def test_what_it_proves_a_full_parse_confirms(text: str, data: st.DataObject) -> None:
    out = format_text(text, verify=False).text
    assert_sound(text, out)
    assert_sound(text, margins(out, data))
    assert_sound(text, margins(text, data))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.data())
def test_what_it_proves_on_any_text_a_full_parse_confirms(text: str, data: st.DataObject) -> None:
    assume(without_issues(text))
    assert_sound(text, margins(text, data))
    assert_sound(text, margins(format_text(text, verify=False).text, data))
