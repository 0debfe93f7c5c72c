"""Property tests of the formatter's safety promises.

On random programs from a generator of our own (valid statements with random spacing,
indentation widths, comments and blank lines), on every file of the shared corpus, and on
arbitrary text, formatting must be idempotent, keep the token stream, keep the analyzer's
diagnostic codes and keep every comment; and it must never raise or lose text.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.format import FormatResult, compile_text, format_text, skeleton
from openprose.syntax import parse, syntax_diagnostics
from openprose.syntax import tree as t
from tests.corpus import location
from tests.corpus.malformed import SYNTAX_ERRORS
from tests.support.strategies import programs, texts

CORPUS = location.CORPUS

# ---------------------------------------------------------------- helpers


def codes(text: str) -> Counter[str]:
    return Counter(d.code for d in check_text(text))


def comments(text: str) -> list[str]:
    """Every comment's text (from ``#``, right-trimmed), in order, read from the tree."""
    found = []
    for leaf in t.iter_leaves(parse(text)):
        for line in leaf.prefix.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            if "#" in line:
                found.append(line[line.index("#") :].rstrip())
    return found


def ink(text: str) -> str:
    """The text without any whitespace: what a reader would call the program's content."""
    return "".join(text.split())


def assert_safe(text: str, *, allow_refusal: bool = False) -> FormatResult:
    """The formatter's promises on ``text``."""
    result = format_text(text)
    if result.refused is not None:
        assert allow_refusal, result.refused
        assert result.text == text
        assert not result.changed
        return result
    out = result.text
    assert result.changed == (out != text)
    again = format_text(out)
    assert again.refused is None, again.refused
    assert again.text == out, "not idempotent"
    assert not again.changed
    assert skeleton(parse(out)) == skeleton(parse(text)), "token stream changed"
    assert codes(out) == codes(text), "diagnostics changed"
    assert comments(out) == comments(text), "comments changed"
    assert ink(out) == ink(text), "text lost or added"
    return result


def assert_compiles(text: str) -> None:
    """``compile_text``: the canonical form without comments or blank lines, stable, with
    the same tokens, and the same whether or not the text was formatted first."""
    result = compile_text(text)
    assert result.refused is None, result.refused
    if result.unformatted:
        return
    out = result.text
    assert compile_text(out).text == out, "compiling is not idempotent"
    assert skeleton(parse(out)) == skeleton(parse(text)), "token stream changed"
    assert comments(out) == []
    for leaf in t.iter_leaves(parse(out)):
        breaks = leaf.prefix.count("\n") + leaf.prefix.replace("\r\n", "").count("\r")
        assert breaks <= 1, f"blank line before {leaf.value!r}"
    assert compile_text(format_text(text).text).text == out


# ---------------------------------------------------------------- generated programs


def test_generator_makes_programs_without_syntax_errors() -> None:
    """A check of the generator itself: the programs it makes parse cleanly, so the other
    properties exercise the printer rather than the verbatim path."""

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(programs())
    def run(text: str) -> None:
        diagnostics = syntax_diagnostics(parse(text))
        assert [(d.start, d.code, d.message) for d in diagnostics] == [], text

    run()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_format_safely(text: str) -> None:
    result = assert_safe(text)
    assert result.unformatted == 0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_compile_safely(text: str) -> None:
    assert_compiles(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_follow_the_layout_rules(text: str) -> None:
    out = format_text(text).text
    eol = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
    assert out.endswith(eol) and not out.endswith(eol + eol)
    # Outside `"""` strings and multi-line conditions, lines are canonical.
    in_string = False
    for line in out.split(eol):
        opened = line.count('"""') % 2 == 1 or line.count("***") % 2 == 1
        if not in_string:
            assert line == line.rstrip(), f"trailing whitespace: {line!r}"
            indent = len(line) - len(line.lstrip(" "))
            assert not line.startswith("\t")
            assert indent % 2 == 0, f"odd indentation: {line!r}"
        if opened:
            in_string = not in_string
    assert eol + eol + eol + eol not in out


# ---------------------------------------------------------------- the corpus


def corpus_files() -> list[Path]:
    return location.files()


def well_formed_corpus_files() -> list[Path]:
    """The corpus files but those known to have syntax errors (tests/corpus/malformed.py)."""
    return [p for p in corpus_files() if location.relative(p) not in SYNTAX_ERRORS]


@pytest.mark.corpus
def test_corpus_is_there() -> None:
    assert len(corpus_files()) > 400


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_files(), ids=location.relative)
def test_corpus_file_formats_safely(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert_safe(text)
    assert_compiles(text)


def reindent(text: str, factor: int) -> str:
    """``text`` with every line's indentation (outside strings and conditions, which are
    single tokens) multiplied by ``factor``: the same program, laid out wider."""
    out: list[str] = []
    for leaf in t.iter_leaves(parse(text)):
        pieces = re.split(r"(\r\n|\n|\r)", leaf.prefix)
        at_line_start = not out or out[-1].endswith(("\n", "\r"))
        for i, piece in enumerate(pieces):
            if i % 2 == 0 and (i > 0 or at_line_start):
                stripped = piece.lstrip(" ")
                piece = " " * ((len(piece) - len(stripped)) * factor) + stripped
            out.append(piece)
        out.append(leaf.value)
    return "".join(out)


def test_reindent_helper() -> None:
    text = 'parallel:\n  session "a"\n    # c\n  session """\n  x\n"""\n'
    assert (
        reindent(text, 2) == 'parallel:\n    session "a"\n        # c\n    session """\n  x\n"""\n'
    )


@pytest.mark.corpus
@pytest.mark.parametrize("path", well_formed_corpus_files(), ids=location.relative)
def test_corpus_file_layout_does_not_depend_on_indentation_width_or_line_endings(
    path: Path,
) -> None:
    text = path.read_bytes().decode("utf-8")
    result = format_text(text)
    if result.unformatted:
        pytest.skip(
            "has syntax errors: re-indenting could change how it is read "
            "(list it in tests/corpus/malformed.py SYNTAX_ERRORS, with why)"
        )
    assert format_text(reindent(text, 2)).text == result.text
    if "\r" not in text:
        crlf = format_text(text.replace("\n", "\r\n")).text
        assert crlf == result.text.replace("\n", "\r\n")


@pytest.mark.corpus
def test_programs_left_out_of_the_layout_test_still_have_syntax_errors() -> None:
    """The layout test leaves out SYNTAX_ERRORS at collection; a program that formats now
    (the parser or the program changed) must go back in."""
    formatted = [
        name
        for name in SYNTAX_ERRORS
        if not format_text((CORPUS / name).read_bytes().decode("utf-8")).unformatted
    ]
    assert formatted == []


# ---------------------------------------------------------------- arbitrary text


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_arbitrary_text_never_raises_and_never_loses_text_when_refused(text: str) -> None:
    result = format_text(text)
    if result.refused is not None:
        assert result.text == text
        assert not result.changed


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_arbitrary_text_keeps_its_content(text: str) -> None:
    result = format_text(text)
    assert ink(result.text) == ink(text)
    assert comments(result.text) == comments(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_arbitrary_text_formats_safely(text: str) -> None:
    assert_errors_kept(text)


# ---------------------------------------------------------------- statements with errors

# Pieces of strings closed early and of over-indented regions (E031, E032): the texts where
# the printer must keep a statement as written instead of laying it out.
# Built line by line (an indentation, a few pieces, a line ending), since what matters is
# which line a `"""` closes on and how the lines after it are indented.
ERROR_PIECES = ['"""', '"""', '"', "n", "s=", "x:", " ", "\\", "#"]
error_lines = st.tuples(
    st.sampled_from(["", "", " ", "  ", "\t"]),
    st.lists(st.sampled_from(ERROR_PIECES), min_size=1, max_size=3).map("".join),
    st.sampled_from(["\n", "\n", "\r\n", "\r", ""]),
).map("".join)
error_texts = st.lists(error_lines, max_size=5).map("".join)


def error_statements(module: t.Module) -> list[str]:
    """The code (prefix left out) of each top-level statement with a syntax error: an
    error node, or a syntax diagnostic starting inside it."""
    starts = [d.start for d in syntax_diagnostics(module)]
    found = []
    for statement in module.statements():
        first, end = statement.get_first_leaf().start_pos, statement.end_pos
        if isinstance(statement, t.ErrorNode) or any(first <= s < end for s in starts):
            found.append(statement.get_code(include_prefix=False))
    return found


def assert_errors_kept(text: str) -> None:
    """Formatting never refuses, and the statements with syntax errors are in the output
    byte for byte, in order."""
    result = assert_safe(text)
    at = 0
    for code in error_statements(parse(text)):
        found = result.text.find(code, at)
        assert found >= 0, f"not kept as written: {code!r}"
        at = found + len(code)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(error_texts)
@example('s="""\nn"""\n "')  # the example, so the search never misses it
@example("\n\ufeff")
def test_statements_with_errors_are_kept_as_written(text: str) -> None:
    assert_errors_kept(text)
