"""The TextMate grammar for OpenProse: syntaxes/prose.tmLanguage.json (scope ``source.prose``).

Two halves, both needing Node.js and ``npm ci --prefix syntaxes``:

- the assertion tests in syntaxes/tests/*.test.prose (our own programs with ``# ^^^ scope``
  comments), run by vscode-tmgrammar-test, plus a check that they assert every construct;
- the official programs of ../shared/corpus (examples, common, lib), read where they lie and
  never copied: tokenized the way VS Code does (vscode-textmate and vscode-oniguruma, through
  syntaxes/tools/tokenize.js) and checked against invariants, the main one being that the
  grammar finds exactly the strings, conditions and comments the project's own lexer finds,
  character for character.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest
from parso.tree import Leaf

from openprose.syntax import parse
from openprose.syntax.tree import Discretion, String
from tests.corpus import location
from tests.editors.editor_tools import unavailable

ROOT = Path(__file__).resolve().parents[2]
SYNTAXES = ROOT / "syntaxes"
GRAMMAR = SYNTAXES / "prose.tmLanguage.json"
TEST_DIR = SYNTAXES / "tests"
TOKENIZE = SYNTAXES / "tools" / "tokenize.js"
CORPUS = location.CORPUS
CORPUS_DIRS = ("examples", "common", "lib")

INSTALL_HINT = (
    "the grammar tests need vscode-tmgrammar-test: run `npm ci --prefix syntaxes` "
    "in the repository root (Node.js and npm must be installed)"
)

LINE_BREAK = re.compile(r"\r\n|\n|\r")

# Scopes the assertion tests must assert somewhere, and words each must be asserted on.
KEYWORD_SCOPES = {
    "keyword.control.prose": (
        "if elif else loop until while repeat for in parallel try catch finally throw "
        "choice option do"
    ),
    "storage.type.prose": "agent block let const input output",
    "keyword.other.prose": "use import session resume as",
    "constant.language.prose": (
        "sonnet opus haiku none linear exponential allow deny prompt true project"
    ),
    "support.function.builtin.prose": "map filter pmap reduce",
    "keyword.operator.arrow.prose": "->",
    "keyword.operator.pipe.prose": "|",
    "keyword.operator.assignment.prose": "=",
}
ASSERTED_SCOPES = {
    "comment.line.number-sign.prose",
    "punctuation.definition.comment.prose",
    "entity.name.type.class.prose",
    "entity.name.function.prose",
    "variable.parameter.prose",
    "support.type.property-name.prose",
    "string.quoted.double.prose",
    "string.quoted.triple.prose",
    "punctuation.definition.string.begin.prose",
    "punctuation.definition.string.end.prose",
    "constant.character.escape.prose",
    "meta.interpolation.prose",
    "variable.other.prose",
    "punctuation.section.interpolation.begin.prose",
    "punctuation.section.interpolation.end.prose",
    "string.regexp.discretion.prose",
    "punctuation.definition.discretion.begin.prose",
    "punctuation.definition.discretion.end.prose",
    "constant.numeric.prose",
}

# Inside a string, a condition or a comment only these scopes may be added.
ALLOWED_INSIDE_TEXT = (
    "punctuation.definition.",
    "constant.character.escape.prose",
    "invalid.illegal.unknown-escape.prose",
    "meta.interpolation.prose",
    "punctuation.section.interpolation.",
    "variable.other.prose",
)


# ------------------------------------------------------------------------- node and npm


def node_modules_or_fail() -> None:
    if not (SYNTAXES / "node_modules" / "vscode-tmgrammar-test" / "package.json").is_file():
        unavailable(f"{SYNTAXES / 'node_modules'} is missing: {INSTALL_HINT}")


def executable(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        unavailable(f"`{name}` is not on PATH: {INSTALL_HINT}")
    return found


# ------------------------------------------------------------------- the grammar file


def test_grammar_file_is_consistent() -> None:
    grammar = json.loads(GRAMMAR.read_text(encoding="utf-8"))
    assert grammar["scopeName"] == "source.prose"
    assert grammar["fileTypes"] == ["prose"]
    repository = grammar["repository"]

    def includes(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            if isinstance(node.get("include"), str):
                yield node["include"]
            for value in node.values():
                yield from includes(value)
        elif isinstance(node, list):
            for value in node:
                yield from includes(value)

    used = set()
    for include in includes(grammar):
        assert include.startswith("#"), f"external include {include}"
        assert include[1:] in repository, f"unknown include {include}"
        used.add(include[1:])
    assert set(repository) == used, f"unused rules: {sorted(set(repository) - used)}"

    def names(node: object) -> Iterator[str]:
        if isinstance(node, dict):
            for key in ("name", "contentName"):
                if isinstance(node.get(key), str):
                    yield node[key]
            for value in node.values():
                yield from names(value)
        elif isinstance(node, list):
            for value in node:
                yield from names(value)

    for name in names(grammar):
        if name != "OpenProse":  # the grammar's display name
            assert name.endswith(".prose"), name


# ------------------------------------------------------------------- assertion tests


@dataclass
class Assertion:
    text: str  # the source text the assertion covers
    required: list[str]
    excluded: list[str]


def read_assertions(path: Path) -> list[Assertion]:
    """The assertions of a vscode-tmgrammar-test file, with the source text each covers."""
    lines = path.read_text(encoding="utf-8").split("\n")
    assert re.match(r'^# SYNTAX TEST "source\.prose"', lines[0]), f"{path}: bad header"
    result = []
    source = ""
    for line in lines[1:]:
        body = line[1:]
        if not (line.startswith("#") and re.match(r"^\s*(\^|<~*-)", body)):
            source = line
            continue
        scopes, _, excluded = re.sub(r"^[\s^<~-]*", "", body).partition(" - ")
        if body.lstrip().startswith("<"):
            m = re.match(r"^\s*<(~*)(-+)", body)
            assert m is not None
            spans = [(len(m[1]), len(m[1]) + len(m[2]))]
        else:
            spans = [(m.start() + 1, m.end() + 1) for m in re.finditer(r"\^+", body)]
        for start, end in spans:
            result.append(Assertion(source[start:end], scopes.split(), excluded.split()))
    return result


def test_assertion_tests_cover_every_construct() -> None:
    assertions = [a for p in sorted(TEST_DIR.glob("*.test.prose")) for a in read_assertions(p)]
    asserted = {scope for a in assertions for scope in a.required}
    assert asserted >= ASSERTED_SCOPES, sorted(ASSERTED_SCOPES - asserted)
    for scope, words in KEYWORD_SCOPES.items():
        covered = {a.text for a in assertions if scope in a.required}
        assert set(words.split()) <= covered, f"{scope}: {sorted(set(words.split()) - covered)}"
    # Keywords inside names are asserted not to be keywords.
    negated = {a.text for a in assertions if "keyword.control.prose" in a.excluded}
    assert {"reloaded", "do-it", "option-a"} <= negated
    assert "my-session-name" in {a.text for a in assertions if "keyword.other.prose" in a.excluded}


def test_assertion_tests_pass() -> None:
    node_modules_or_fail()
    files = sorted(p.name for p in TEST_DIR.glob("*.test.prose"))
    assert len(files) >= 6
    result = subprocess.run(
        [
            executable("npx"),
            "--no",
            "--",
            "vscode-tmgrammar-test",
            "--grammar",
            GRAMMAR.name,
            "tests/*.test.prose",
        ],
        cwd=SYNTAXES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for name in files:
        assert f"tests/{name} run successfuly" in output, output  # sic: the tool's spelling


# ------------------------------------------------------------------------ the corpus


def corpus_files() -> list[Path]:
    return location.files(*CORPUS_DIRS)


def corpus_id(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def characters(line: int, column: int, text: str) -> Iterator[tuple[int, int, int]]:
    """(index in `text`, line, column) of every character of `text` written from (line,
    column), line breaks left out; lines count from 0."""
    index = 0
    for piece in re.split(r"(\r\n|\n|\r)", text):
        if LINE_BREAK.fullmatch(piece):
            line, column = line + 1, 0
        else:
            for offset in range(len(piece)):
                yield index + offset, line, column + offset
            column += len(piece)
        index += len(piece)


def lexical_class(scopes: tuple[str, ...]) -> str:
    for scope in scopes:
        if scope.startswith("comment."):
            return "c"
        if scope.startswith("string.regexp.discretion."):
            return "d"
        if scope.startswith("string.quoted.triple."):
            return "t"
        if scope.startswith("string.quoted.double."):
            return "s"
    return "."


def utf16_to_characters(line: str) -> list[int]:
    """Indexed by UTF-16 offset (vscode-textmate's columns): the character column."""
    table = []
    for column, char in enumerate(line):
        table.extend([column] * (2 if ord(char) > 0xFFFF else 1))
    table.append(len(line))
    return table


@dataclass
class Tokenized:
    """One program: its lines, and the grammar's tokens with columns in characters."""

    path: Path
    text: str
    lines: list[str]
    tokens: list[list[tuple[int, int, tuple[str, ...]]]] = field(default_factory=list)

    @cached_property
    def scopes(self) -> list[list[tuple[str, ...]]]:
        """The scopes of every character, line by line."""
        result = []
        for line, tokens in zip(self.lines, self.tokens, strict=True):
            chars: list[tuple[str, ...]] = [()] * len(line)
            for start, end, scopes in tokens:
                chars[start:end] = [scopes] * (end - start)
            result.append(chars)
        return result

    @cached_property
    def lexical_classes(self) -> list[str]:
        """Per line, a letter per character from the grammar: s (a "string"), t (a
        \"\"\"string\"\"\"), d (a **condition**), c (a comment) or . (anything else)."""
        return ["".join(lexical_class(s) for s in line) for line in self.scopes]

    @cached_property
    def leaves(self) -> list[Any]:
        """The leaves of the project's parse tree."""
        result = []
        leaf: Leaf | None = parse(self.text).get_first_leaf()
        while leaf is not None:
            result.append(leaf)
            leaf = leaf.get_next_leaf()
        return result

    def parser_classes(self) -> list[str]:
        """The same letters from the project's own lexer and parser."""
        classes = [["."] * len(line) for line in self.lines]
        for leaf in self.leaves:
            # Comments are in the prefix (whitespace, line breaks, comments) of the next leaf.
            comments = [range(*m.span()) for m in re.finditer(r"#[^\r\n]*", leaf.prefix)]
            if comments:
                line, column = leaf.get_start_pos_of_prefix()
                for index, n, c in characters(line - 1, column, leaf.prefix):
                    if any(index in comment for comment in comments):
                        classes[n][c] = "c"
            if isinstance(leaf, String):
                letter = "t" if leaf.is_triple else "s"
            elif isinstance(leaf, Discretion):
                letter = "d"
            else:
                continue
            for _, n, c in characters(leaf.line - 1, leaf.column, leaf.value):
                classes[n][c] = letter
        return ["".join(line) for line in classes]


@pytest.fixture(scope="module")
def corpus() -> dict[Path, Tokenized]:
    node_modules_or_fail()
    files = corpus_files()
    result = subprocess.run(
        [executable("node"), str(TOKENIZE), "--stdin-list"],
        input="\n".join(str(p) for p in files),
        cwd=SYNTAXES,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    tokenized = {}
    for entry in json.loads(result.stdout)["files"]:
        path = Path(entry["path"])
        text = path.read_bytes().decode("utf-8-sig")
        lines = LINE_BREAK.split(text)
        program = Tokenized(path, text, lines)
        for line, tokens in zip(lines, entry["lines"], strict=True):
            table = utf16_to_characters(line)
            program.tokens.append([(table[s], table[e], tuple(sc)) for s, e, sc in tokens])
        tokenized[path] = program
    assert sorted(tokenized) == files
    return tokenized


def agent_definitions(program: Tokenized) -> list[tuple[int, int, int, str]]:
    """(line, column of `agent`, column of the name, name) of every `agent NAME:` line whose
    `agent` is code (not inside a string or a condition); lines count from 0."""
    found = []
    for number, (line, classes) in enumerate(
        zip(program.lines, program.lexical_classes, strict=True)
    ):
        m = re.match(r"^([ \t]*)agent[ \t]+([^\W\d]\w*(?:-\w+)*)[ \t]*:", line)
        if m and classes[len(m[1])] == ".":
            found.append((number, len(m[1]), m.start(2), m[2]))
    return found


def report(problems: list[str]) -> str:
    shown = "\n".join(problems[:20])
    more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
    return f"{len(problems)} problems:\n{shown}{more}"


@pytest.mark.corpus
def test_corpus_is_there(corpus: dict[Path, Tokenized]) -> None:
    assert len(corpus) > 70
    definitions = sum(len(agent_definitions(p)) for p in corpus.values())
    triple_strings = sum(
        1
        for p in corpus.values()
        for leaf in p.leaves
        if isinstance(leaf, String) and leaf.is_triple
    )
    assert definitions > 200, definitions
    assert triple_strings > 200, triple_strings


@pytest.mark.corpus
def test_every_line_is_tokenized(corpus: dict[Path, Tokenized]) -> None:
    problems = []
    for program in corpus.values():
        if len(program.tokens) != len(program.lines):
            problems.append(f"{corpus_id(program.path)}: {len(program.tokens)} lines tokenized")
            continue
        for number, (line, tokens) in enumerate(zip(program.lines, program.tokens, strict=True)):
            where = f"{corpus_id(program.path)}:{number + 1}"
            if not tokens or tokens[0][0] != 0 or tokens[-1][1] != len(line):
                problems.append(f"{where}: the tokens do not cover the line")
            elif any(end != start for (_, end, _), (start, _, _) in itertools.pairwise(tokens)):
                problems.append(f"{where}: a gap or an overlap between tokens")
            elif any(scopes[0] != "source.prose" for _, _, scopes in tokens):
                problems.append(f"{where}: a token outside source.prose")
    assert not problems, report(problems)


@pytest.mark.corpus
def test_strings_conditions_and_comments_are_the_parsers(corpus: dict[Path, Tokenized]) -> None:
    problems = []
    for program in corpus.values():
        expected = program.parser_classes()
        for number, (got, want) in enumerate(zip(program.lexical_classes, expected, strict=True)):
            if got != want:
                problems.append(
                    f"{corpus_id(program.path)}:{number + 1}: the grammar (first) and the parser"
                    f" (second) disagree (s string, t triple-quoted string, d condition,"
                    f" c comment)\n  {program.lines[number]}\n  {got}\n  {want}"
                )
    assert not problems, report(problems)


@pytest.mark.corpus
def test_agent_names_get_the_class_scope(corpus: dict[Path, Tokenized]) -> None:
    problems = []
    for program in corpus.values():
        for line, keyword, column, name in agent_definitions(program):
            where = f"{corpus_id(program.path)}:{line + 1}: agent {name}"
            if "storage.type.prose" not in program.scopes[line][keyword]:
                problems.append(f"{where}: `agent` is {program.scopes[line][keyword]}")
            for scopes in program.scopes[line][column : column + len(name)]:
                if "entity.name.type.class.prose" not in scopes:
                    problems.append(f"{where}: the name is {scopes}")
                    break
    assert not problems, report(problems)


@pytest.mark.corpus
def test_no_keyword_scope_inside_strings(corpus: dict[Path, Tokenized]) -> None:
    problems = []
    for program in corpus.values():
        for number, tokens in enumerate(program.tokens, 1):
            for start, end, scopes in tokens:
                text = [i for i, s in enumerate(scopes) if s.startswith(("string.", "comment."))]
                if not text:
                    continue
                bad = [s for s in scopes[text[0] + 1 :] if not s.startswith(ALLOWED_INSIDE_TEXT)]
                if bad:
                    problems.append(
                        f"{corpus_id(program.path)}:{number}:{start + 1}: "
                        f"{program.lines[number - 1][start:end]!r} is {scopes}"
                    )
    assert not problems, report(problems)


@pytest.mark.corpus
def test_triple_strings_end_at_their_closing(corpus: dict[Path, Tokenized]) -> None:
    """Each \"\"\" string the parser finds is one string scope in the grammar, from its opening
    quotes to its closing ones (the last three of a run of quotes), and no further."""
    begin = "punctuation.definition.string.begin.prose"
    close = "punctuation.definition.string.end.prose"
    problems = []
    for program in corpus.values():
        for leaf in program.leaves:
            if not (isinstance(leaf, String) and leaf.is_triple):
                continue
            where = f"{corpus_id(program.path)}:{leaf.line}:{leaf.column + 1}"
            positions = [(n, c) for _, n, c in characters(leaf.line - 1, leaf.column, leaf.value)]
            scopes = [program.scopes[n][c] for n, c in positions]
            if not all("string.quoted.triple.prose" in s for s in scopes):
                problems.append(f"{where}: not one string scope")
            elif not all(begin in s for s in scopes[:3]):
                problems.append(f"{where}: the opening quotes are not the string's beginning")
            elif not leaf.is_terminated:  # then it runs to the end of the file
                if positions[-1][0] != len(program.lines) - 1:
                    problems.append(f"{where}: unterminated but stops before the end")
            elif not all(close in s for s in scopes[-3:]):
                problems.append(f"{where}: the closing quotes are not the string's end")
            elif any(close in s for s in scopes[3:-3]):
                problems.append(f"{where}: the string scope closes early")
            else:
                n, c = positions[-1]
                after = program.scopes[n][c + 1 : c + 2]
                if after and "string.quoted.triple.prose" in after[0] and begin not in after[0]:
                    problems.append(f"{where}: the string goes on after its closing quotes")
    assert not problems, report(problems)
