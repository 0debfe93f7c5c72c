"""Document symbols (the outline) and the workspace symbol index."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from openprose.ide import analyze_document
from openprose.ide.symbols import WorkspaceIndex, document_symbols
from openprose.ide.types import Range, Symbol
from tests.fifos import finishes


def outline(text: str) -> list[Symbol]:
    return document_symbols(analyze_document(text))


def tree(symbols: tuple[Symbol, ...] | list[Symbol]) -> list[Any]:
    """(kind, name) pairs, with children nested as a list after the pair."""
    result: list[Any] = []
    for symbol in symbols:
        result.append((symbol.kind, symbol.name))
        if symbol.children:
            result.append(tree(symbol.children))
    return result


def r(l1: int, c1: int, l2: int, c2: int) -> Range:
    return Range((l1, c1), (l2, c2))


def assert_well_formed(symbols: tuple[Symbol, ...] | list[Symbol], parent: Range | None) -> None:
    for symbol in symbols:
        assert symbol.name
        rng, sel = symbol.range, symbol.selection_range
        assert rng.start <= sel.start and sel.end <= rng.end
        if parent is not None:
            assert parent.start <= rng.start and rng.end <= parent.end
        assert_well_formed(symbol.children, rng)


# --------------------------------------------------------------------------- outline

AGENT = """\
agent scout:
  model: haiku
  prompt: "You look around."
  permissions:
    read: allow
"""


def test_agent_with_properties_exact_ranges() -> None:
    [agent] = outline(AGENT)
    assert (agent.name, agent.kind, agent.detail) == ("scout", "agent", "haiku")
    assert agent.range == r(0, 0, 4, 15)
    assert agent.selection_range == r(0, 6, 0, 11)
    model, prompt, permissions = agent.children
    assert (model.name, model.kind, model.detail) == ("model", "property", "haiku")
    assert model.range == r(1, 2, 1, 14)
    assert model.selection_range == r(1, 2, 1, 7)
    assert prompt.detail == '"You look around."'
    assert permissions.range == r(3, 2, 4, 15)
    [read] = permissions.children
    assert (read.name, read.detail, read.range) == ("read", "allow", r(4, 4, 4, 15))


def test_block_parameters_and_body_definitions() -> None:
    text = """\
block audit(target, level):
  let findings = session "Audit {target}"
  if **serious**:
    const alarm = true
  output verdict = findings
"""
    [block] = outline(text)
    assert (block.name, block.kind, block.detail) == ("audit", "block", "(target, level)")
    assert block.range == r(0, 0, 4, 27)
    assert block.selection_range == r(0, 6, 0, 11)
    assert tree(block.children) == [
        ("parameter", "target"),
        ("parameter", "level"),
        ("variable", "findings"),
        ("statement", "if **serious**"),
        [("constant", "alarm")],
        ("output", "verdict"),
    ]
    target = block.children[0]
    assert target.range == target.selection_range == r(0, 12, 0, 18)
    findings = block.children[2]
    assert findings.detail == 'session "Audit {target}"'
    assert findings.range == r(1, 2, 1, 41)
    assert findings.selection_range == r(1, 6, 1, 14)


def test_declarations_inputs_outputs_imports() -> None:
    text = """\
use "@team/digest" as digest
use "@team/notes"
input subject: "What to study"
const depth = 2
let { alpha, beta } = digest(topic: subject)
output report = alpha
"""
    symbols = outline(text)
    assert [(s.kind, s.name, s.detail) for s in symbols] == [
        ("program", "digest", "@team/digest"),
        ("program", "notes", "@team/notes"),
        ("input", "subject", "What to study"),
        ("constant", "depth", "2"),
        ("variable", "alpha", "digest(topic: subject)"),
        ("variable", "beta", "digest(topic: subject)"),
        ("output", "report", "alpha"),
    ]
    assert symbols[0].selection_range == r(0, 22, 0, 28)
    assert symbols[1].selection_range == r(1, 4, 1, 17)  # no alias: the path
    assert symbols[2].range == r(2, 0, 2, 30)
    assert symbols[4].selection_range == r(4, 6, 4, 11)
    assert symbols[5].selection_range == r(4, 13, 4, 17)
    assert symbols[4].range == symbols[5].range == r(4, 0, 4, 44)


def test_sessions_named_and_anonymous() -> None:
    text = """\
session drafter: scribe
session: scribe
session "Summarise the whole thing in a handful of carefully chosen words please"
resume: scribe
session "first" -> session "second"
"""
    symbols = outline(text)
    assert [(s.kind, s.name, s.detail) for s in symbols] == [
        ("session", "drafter", "scribe"),
        ("session", "session: scribe", ""),
        ("session", "Summarise the whole thing in a handful of caref…", "session"),
        ("session", "resume: scribe", ""),
        ("session", "first", "session"),
        ("session", "second", "session"),
    ]
    assert symbols[0].selection_range == r(0, 8, 0, 15)
    assert symbols[1].selection_range == r(1, 0, 1, 7)  # the keyword
    assert symbols[5].range == r(4, 19, 4, 35)


def test_control_flow_nesting() -> None:
    text = """\
parallel:
  left = session "L"
  right = session "R"
  session "unnamed"
for doc, n in docs:
  session "read"
repeat 2:
  session "again"
loop while **more**:
  session "loop"
try:
  session "risky"
catch as failure:
  session "recover"
finally:
  session "tidy"
choice **which**:
  option "Fast":
    let quick = 1
  option "Slow":
    session "slow"
if **a**:
  session "a"
elif **b**:
  session "b"
else:
  session "c"
do:
  session "inside"
"""
    symbols = outline(text)
    assert tree(symbols) == [
        ("statement", "parallel"),
        [("variable", "left"), ("variable", "right"), ("session", "unnamed")],
        ("statement", "for doc, n in docs"),
        [("session", "read")],
        ("statement", "repeat 2"),
        [("session", "again")],
        ("statement", "loop while **more**"),
        [("session", "loop")],
        ("statement", "try"),
        [
            ("session", "risky"),
            ("statement", "catch as failure"),
            [("session", "recover")],
            ("statement", "finally"),
            [("session", "tidy")],
        ],
        ("statement", "choice **which**"),
        [
            ("option", "Fast"),
            [("variable", "quick")],
            ("option", "Slow"),
            [("session", "slow")],
        ],
        ("statement", "if **a**"),
        [
            ("session", "a"),
            ("statement", "elif **b**"),
            [("session", "b")],
            ("statement", "else"),
            [("session", "c")],
        ],
        ("statement", "do"),
        [("session", "inside")],
    ]
    parallel = symbols[0]
    assert parallel.range == r(0, 0, 3, 19)
    assert parallel.selection_range == r(0, 0, 0, 8)
    left = parallel.children[0]
    assert (left.range, left.selection_range, left.detail) == (
        r(1, 2, 1, 20),
        r(1, 2, 1, 6),
        'session "L"',
    )
    trying = symbols[4]
    assert trying.range == r(10, 0, 15, 16)
    catch = trying.children[1]
    assert catch.range == r(12, 0, 13, 19)
    assert catch.selection_range == r(12, 0, 12, 5)
    fast = symbols[5].children[0]
    assert fast.selection_range == r(17, 9, 17, 15)
    assert_well_formed(symbols, None)


def test_values_with_blocks_nest_under_their_variable() -> None:
    text = """\
let results = parallel:
  one = session "1"
  two = session "2"
let shaped = entries
  | filter:
      session "keep?"
  | reduce(total, entry):
      session "merge"
x = session "reassigned, not listed"
"""
    symbols = outline(text)
    assert tree(symbols) == [
        ("variable", "results"),
        [("statement", "parallel"), [("variable", "one"), ("variable", "two")]],
        ("variable", "shaped"),
        [
            ("statement", "filter"),
            [("session", "keep?")],
            ("statement", "reduce(total, entry)"),
            [("session", "merge")],
        ],
    ]
    shaped = symbols[1]
    assert shaped.range == r(3, 0, 7, 21)
    stage = shaped.children[0]
    assert stage.range == r(4, 2, 5, 21)
    assert stage.selection_range == r(4, 4, 4, 10)


def test_comments_and_blank_lines_are_outside_ranges() -> None:
    text = "agent a:  # trailing\n  model: opus\n  # inside\n\n# after\nlet x = 1  # note\n"
    agent, x = outline(text)
    assert agent.range == r(0, 0, 1, 13)
    assert x.range == r(5, 0, 5, 9)


def test_unicode_crlf_and_columns_in_code_points() -> None:
    text = 'let café = "naïve"\r\nagent λ:\r\n  model: opus\r\n'
    x, agent = outline(text)
    assert x.name == "café"
    assert x.range == r(0, 0, 0, 18)
    assert x.selection_range == r(0, 4, 0, 8)
    assert agent.name == "λ"
    assert agent.range == r(1, 0, 2, 13)


def test_broken_programs_give_what_they_can() -> None:
    assert outline("") == []
    assert outline("\n\n# only a comment\n") == []
    for text in ("agent", "block", "let", "let = 3", "session", "use", "  $$ ~ {", '"""\nopen'):
        assert_well_formed(outline(text), None)
    symbols = outline("agent:\n  model: opus\nblock (a):\n  session 'x'\n")
    assert [(s.kind, s.name) for s in symbols] == [("agent", "agent"), ("block", "block")]


def test_indented_region_still_outlined() -> None:
    text = "let a = 1\n    let b = 2\nlet c = 3\n"
    names = [s.name for s in outline(text)]
    assert names == ["a", "b", "c"]


def test_ten_thousand_lines() -> None:
    chunk = """\
agent worker{i}:
  model: sonnet
  prompt: "Work {{topic}}"
block step{i}(topic):
  let notes{i} = session: worker{i}
    prompt: "Go"
  if **done**:
    output out{i} = notes{i}
parallel:
  a{i} = session "A"
  b{i} = session "B"
"""
    text = "".join(chunk.format(i=i) for i in range(910))
    analysis = analyze_document(text)
    assert len(analysis.lines) > 10_000
    document_symbols(analysis)  # warm up
    symbols = document_symbols(analysis)
    assert len(symbols) == 910 * 3


# --------------------------------------------------------------------------- workspace


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def names(results: list[tuple[str, Symbol]]) -> list[str]:
    return [symbol.name for _path, symbol in results]


def test_workspace_index_directory(tmp_path: Path) -> None:
    write(
        tmp_path / "main.prose",
        'use "@x/helper" as helper\ninput goal: "g"\nagent planner:\n  model: opus\n'
        "block gather_results(src):\n  let partial = 1\n  output collected = partial\n"
        "let grand = 1\n",
    )
    write(tmp_path / "lib" / "extra.prose", "agent regular_agent:\n  model: haiku\n")
    write(tmp_path / ".hidden" / "secret.prose", "agent secret:\n  model: haiku\n")
    write(tmp_path / "notes.txt", "agent ignored:\n")
    index = WorkspaceIndex()
    calls: list[tuple[int, int]] = []
    count = index.index_directory(str(tmp_path), lambda done, total: calls.append((done, total)))
    assert count == 2
    assert calls == [(0, 2), (1, 2), (2, 2)]

    everything = index.symbols("")
    assert sorted(names(everything)) == sorted(
        [
            "helper",
            "goal",
            "planner",
            "gather_results",
            "partial",
            "collected",
            "grand",
            "regular_agent",
        ]
    )
    kinds = {symbol.name: (symbol.kind, symbol.detail) for _path, symbol in everything}
    assert kinds["helper"] == ("program", "")
    assert kinds["goal"] == ("input", "")
    assert kinds["partial"] == ("variable", "block gather_results")
    assert kinds["collected"] == ("output", "block gather_results")
    assert all(not symbol.children for _path, symbol in everything)
    assert "secret" not in names(everything)
    paths = {os.path.basename(path) for path, _symbol in everything}
    assert paths == {"main.prose", "extra.prose"}

    [(path, planner)] = [(p, s) for p, s in everything if s.name == "planner"]
    assert path == str(tmp_path / "main.prose")
    assert planner.range == r(2, 0, 3, 13)
    assert planner.selection_range == r(2, 6, 2, 13)


def test_workspace_fuzzy_order(tmp_path: Path) -> None:
    index = WorkspaceIndex()
    index.update(
        str(tmp_path / "a.prose"),
        "let regular = 1\nlet progress = 2\nlet gather_results = 3\nlet gr = 4\n"
        "let grand = 5\nlet getResult = 6\nlet unrelated = 7\n",
    )
    assert names(index.symbols("gr")) == [
        "gr",  # exact
        "grand",  # prefix
        "getResult",  # word starts
        "gather_results",
        "progress",  # inside a word
        "regular",  # scattered letters
    ]
    assert names(index.symbols("GR"))[:2] == ["gr", "grand"]
    assert names(index.symbols("res")) == ["getResult", "gather_results", "progress"]
    assert index.symbols("zzz") == []


def test_workspace_update_remove_and_limit(tmp_path: Path) -> None:
    index = WorkspaceIndex(limit=5)
    first = str(tmp_path / "one.prose")
    second = str(tmp_path / "two.prose")
    index.update(first, "agent alpha:\n  model: opus\n")
    index.update(second, "agent alpine:\n  model: opus\n")
    assert names(index.symbols("al")) == ["alpha", "alpine"]
    index.update(first, "agent omega:\n  model: opus\n")
    assert names(index.symbols("al")) == ["alpine"]
    assert names(index.symbols("om")) == ["omega"]
    index.remove(second)
    assert names(index.symbols("")) == ["omega"]
    index.remove(second)  # twice is fine
    index.update(first, "\n".join(f"let v{i} = {i}" for i in range(20)))
    assert len(index.symbols("v")) == 5


def test_editor_version_wins_over_directory_scan(tmp_path: Path) -> None:
    path = tmp_path / "open.prose"
    write(path, "let on_disk = 1\n")
    index = WorkspaceIndex()

    def progress(done: int, total: int) -> None:
        if done == 0:  # the editor sends its buffer while the scan runs
            index.update(str(path), "let in_editor = 1\n")

    index.index_directory(str(tmp_path), progress)
    assert names(index.symbols("")) == ["in_editor"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_workspace_index_skips_files_that_are_not_regular(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fifo = tmp_path / "a_pipe.prose"
    os.mkfifo(fifo)
    # (/dev/zero behind a link is tested on the server, whose memory the test caps.)
    write(tmp_path / "c_real.prose", "agent after_them:\n  model: haiku\n")
    index = WorkspaceIndex()
    calls: list[tuple[int, int]] = []
    with caplog.at_level(logging.DEBUG, logger="openprose"):
        count = finishes(
            lambda: index.index_directory(str(tmp_path), lambda *call: calls.append(call)), fifo
        )
    assert count == 1
    assert names(index.symbols("")) == ["after_them"]
    assert calls[-1] == (2, 2)
    skipped = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any("a_pipe.prose" in m and "not a regular file" in m for m in skipped), skipped


def test_workspace_index_is_thread_safe(tmp_path: Path) -> None:
    for i in range(30):
        write(tmp_path / f"f{i}.prose", f"agent a{i}:\n  model: opus\nlet v{i} = {i}\n")
    index = WorkspaceIndex(limit=1000)
    errors: list[BaseException] = []

    def query() -> None:
        try:
            for _ in range(50):
                index.symbols("a")
                index.update(str(tmp_path / "extra.prose"), "let a_extra = 1\n")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=query) for _ in range(3)]
    for thread in threads:
        thread.start()
    index.index_directory(str(tmp_path))
    for thread in threads:
        thread.join()
    assert not errors
    assert len(index.symbols("")) == 61
