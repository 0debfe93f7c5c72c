"""The formatter's self-check parses again only what changed, and stays as safe.

Each safety test breaks one rule of the printer for one token (a string changed, a comment
dropped, a block's indentation lost), in a statement at the top level, inside a block, at
the file's start and at its end, and checks that formatting refuses; a companion test
shows each broken rule really would have changed the program, so the refusal is the
check's doing.  Property tests compare the incremental check with a full one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.format import check, format_text, skeleton
from openprose.format.printer import Printer, line_ending
from openprose.syntax import parse

STEPS = "".join(f'session "Step {n}"\n\n' for n in range(12))
# A canonical program: formatting leaves it as it is.
PROGRAM = (
    "# the first comment\n"
    "agent writer:\n"
    "  model: sonnet\n"
    '  prompt: "You write."\n'
    "\n" + STEPS + "block review(topic):\n"
    '  session "Read {topic}"\n'
    "  if **the topic is urgent**:\n"
    '    session "Escalate {topic}"  # keep me\n'
    '    session "Notify {topic}"\n'
    "  else:\n"
    "    loop until **done** (max: 3):\n"
    '      session "Polish {topic}"\n'
    '  session "File {topic}"\n'
    "\n" + STEPS.replace("Step", "Later step") + 'do review("notes")\n'
    "\n"
    'session "Wrap up"\n'
    "# the last comment\n"
)


def printed(text: str) -> tuple[Any, str, list[int]]:
    module = parse(text)
    printer = Printer(line_ending(text, module))
    printer.module(module)
    out, starts = printer.text_and_starts()
    return module, out, starts


def counted(text: str) -> check.Checked:
    module, out, starts = printed(text)
    return check.verify_counted(module, text, out, starts, True)


# ---------------------------------------------------------------- broken printer rules


def change_string(target: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The printer writes the string token ``target`` with a word added."""

    def install(monkeypatch: pytest.MonkeyPatch) -> None:
        leaf = Printer.leaf

        def broken(self: Printer, node: Any, indent: str) -> None:
            leaf(self, node, indent)
            if self.out and self.out[-1] == target:
                self.out[-1] = target[:-1] + ' now"'

        monkeypatch.setattr(Printer, "leaf", broken)
        monkeypatch.setattr(Printer, "inline_tokens", frozenset())  # every token via leaf

    return install


def drop_trailing_comment(target: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The printer drops the comment ``target`` at the end of a line."""

    def install(monkeypatch: pytest.MonkeyPatch) -> None:
        trailing = Printer.trailing_comment

        def broken(self: Printer, prefix: str) -> str:
            return "" if target in prefix else trailing(self, prefix)

        monkeypatch.setattr(Printer, "trailing_comment", broken)

    return install


def drop_own_line_comment(target: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The printer drops the comment ``target`` on a line of its own."""

    def install(monkeypatch: pytest.MonkeyPatch) -> None:
        policy = Printer.policy

        def broken(self: Printer, lines: list[str], indent: str, leaf: Any) -> str:
            return policy(self, [line for line in lines if target not in line], indent, leaf)

        monkeypatch.setattr(Printer, "policy", broken)

    return install


def flatten_block(header: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The printer writes the block after the header ``header`` at the header's level,
    which moves its statements out of it."""

    def install(monkeypatch: pytest.MonkeyPatch) -> None:
        block = Printer.block

        def broken(self: Printer, node: Any, header_indent: str, step: str = "  ") -> None:
            if header in "".join(self.out[-30:]):
                step = ""
            block(self, node, header_indent, step)

        monkeypatch.setattr(Printer, "block", broken)

    return install


FAULTS = {
    # A statement in the middle of the top level.
    "top-level string": change_string('"Step 7"'),
    "top-level structure": flatten_block("agent writer"),
    # Inside a block, two levels down.
    "string in a block": change_string('"Escalate {topic}"'),
    "comment in a block": drop_trailing_comment("keep me"),
    "structure in a block": flatten_block("**done**"),
    # The file's first statement and the comment before it.
    "first string": change_string('"You write."'),
    "first comment": drop_own_line_comment("the first comment"),
    # The file's last statement and the comment after it.
    "last string": change_string('"Wrap up"'),
    "last comment": drop_own_line_comment("the last comment"),
}


def same_program(a: str, b: str) -> bool:
    return skeleton(parse(a)) == skeleton(parse(b)) and check.comments(parse(a)) == check.comments(
        parse(b)
    )


def test_the_program_is_canonical() -> None:
    result = format_text(PROGRAM)
    assert result.refused is None
    assert not result.changed


@pytest.mark.parametrize("fault", FAULTS)
def test_each_broken_rule_would_change_the_program(
    fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    FAULTS[fault](monkeypatch)
    unchecked = format_text(PROGRAM, verify=False)
    assert unchecked.changed
    assert not same_program(unchecked.text, PROGRAM)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("layout", ["canonical", "touched"])
def test_a_broken_rule_is_refused(fault: str, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # "touched": other statements change too (stray spaces the printer removes), so the
    # broken statement is one changed part among several.
    text = PROGRAM if layout == "canonical" else touched(PROGRAM)
    FAULTS[fault](monkeypatch)
    result = format_text(text)
    assert result.refused is not None
    assert "would have changed the program" in result.refused
    assert result.text == text
    assert not result.changed


def touched(text: str) -> str:
    """``text`` with stray spaces ending every fifth line."""
    lines = text.split("\n")
    for i in range(2, len(lines) - 1, 5):
        lines[i] += "   "
    return "\n".join(lines)


# ---------------------------------------------------------------- what is parsed again


def test_an_unchanged_program_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check, "verify_counted", pytest.fail)
    assert not format_text(PROGRAM).changed


def test_a_change_at_the_top_level_parses_its_neighbourhood_only() -> None:
    text = PROGRAM.replace('session "Step 7"\n', 'session   "Step 7"\n', 1)
    checked = counted(text)
    assert checked.problem is None
    assert not checked.full
    assert checked.characters < len(text) // 8


def test_a_change_inside_a_block_parses_part_of_the_block() -> None:
    text = PROGRAM.replace('    session "Notify {topic}"\n', '    session "Notify {topic}"  \n')
    checked = counted(text)
    assert checked.problem is None
    assert not checked.full
    block = PROGRAM[PROGRAM.index("block review") : PROGRAM.index("do review")]
    assert checked.characters < len(block) // 2


def test_changes_at_both_ends_are_checked_without_a_full_parse() -> None:
    text = "# the first comment  \n" + PROGRAM.split("\n", 1)[1] + "\n\n\n"
    checked = counted(text)
    assert checked.problem is None
    assert not checked.full


def test_a_program_mostly_changed_is_checked_whole() -> None:
    review = PROGRAM[PROGRAM.index("block review") : PROGRAM.index('session "Later')]
    checked = counted((review + 'do review("notes")\n').replace("\n  ", "\n    "))
    assert checked.problem is None
    assert checked.full


@pytest.fixture
def always_incremental(monkeypatch: pytest.MonkeyPatch) -> None:
    """The incremental check even where a full parse would be cheaper."""
    monkeypatch.setattr(check._Check, "full_share", 2.0)
    monkeypatch.setattr(check._Check, "diff_share", 2.0)


@pytest.mark.usefixtures("always_incremental")
def test_every_line_changed_is_still_checked_incrementally() -> None:
    checked = counted(PROGRAM.replace("\n  ", "\n    "))
    assert checked.problem is None
    assert not checked.full


@pytest.mark.usefixtures("always_incremental")
@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_rule_is_refused_by_the_incremental_path(
    fault: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = PROGRAM.replace("\n  ", "\n    ")
    FAULTS[fault](monkeypatch)
    module, out, starts = printed(text)
    assert check.verify_counted(module, text, out, starts, True).problem is not None


# ---------------------------------------------------------------- properties


def layouts(text: str, data: st.DataObject) -> str:
    """``text`` with random stray spaces, blank lines and deeper indentation."""
    lines = text.split("\n")
    out = []
    for line in lines:
        choice = data.draw(st.sampled_from(["same"] * 6 + ["spaces", "blank", "deeper"]))
        if choice == "spaces":
            line += "  "
        elif choice == "blank" and line.strip():
            out.append("")
        elif choice == "deeper" and line.startswith("  "):
            line = "  " + line
        out.append(line)
    return "\n".join(out)


def sources() -> Iterator[str]:
    yield PROGRAM
    yield PROGRAM.replace("\n", "\r\n")
    yield "\ufeff" + PROGRAM


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(sources())), st.data())
def test_the_incremental_check_accepts_only_what_a_full_check_accepts(
    source: str, data: st.DataObject
) -> None:
    text = layouts(source, data)
    module, out, starts = printed(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(check._Check, "full_share", 2.0)
        monkeypatch.setattr(check._Check, "diff_share", 2.0)
        checked = check.verify_counted(module, text, out, starts, True)
    assert (checked.problem is None) == same_program(out, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(sources())), st.data())
def test_a_token_broken_anywhere_is_refused(source: str, data: st.DataObject) -> None:
    text = layouts(source, data)
    count = sum(1 for leaf in _leaves(text) if leaf.value.strip())
    victim = data.draw(st.integers(0, count - 1))
    seen = [0]
    leaf = Printer.leaf

    def broken(self: Printer, node: Any, indent: str) -> None:
        leaf(self, node, indent)
        if node.value.strip():
            if seen[0] == victim:
                self.out[-1] += "x"
            seen[0] += 1

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(Printer, "leaf", broken)
        monkeypatch.setattr(Printer, "inline_tokens", frozenset())  # every token via leaf
        monkeypatch.setattr(Printer, "optimistic", False)  # each token printed once
        result = format_text(text)
    if seen[0] > victim:
        assert result.refused is not None
        assert result.text == text
    else:  # the token is in a statement kept as written: nothing was broken
        assert result.refused is None


def _leaves(text: str) -> Iterator[Any]:
    from openprose.syntax import tree as t

    module = parse(text)
    for leaf in t.iter_leaves(module):
        if not isinstance(leaf, t.Newline | t.EndMarker):
            yield leaf


def test_a_statement_moved_out_of_the_end_of_its_block_is_refused() -> None:
    # The node types in order are the same (the statement, then `else` as a misplaced
    # clause), so the check must see where each node ends.
    moved = PROGRAM.replace('    session "Notify {topic}"\n', '  session "Notify {topic}"\n')
    assert check.full_check(parse(PROGRAM), moved, True) is not None
    assert skeleton(parse(moved)) != skeleton(parse(PROGRAM))


@given(st.text(alphabet="ab \r\n\x0b\x0c\u2028#", max_size=40))
def test_line_starts_are_where_the_parser_starts_lines(text: str) -> None:
    # Split on LF alone when the text has no CR; the other line separators Python knows
    # (form feed, U+2028, ...) start no line for the parser.
    expected = [0]
    for i, c in enumerate(text):
        if c == "\n" and text[i - 1 : i] != "\r":
            expected.append(i + 1)
        elif c == "\r":
            expected.append(i + 2 if text[i + 1 : i + 2] == "\n" else i + 1)
    assert check.line_starts(text) == expected
