"""Semantic tokens: classification, modifiers, splitting, positions and range filtering."""

from __future__ import annotations

from openprose.ide import analyze_document
from openprose.ide.semantic_tokens import semantic_tokens
from openprose.ide.types import Range, SemanticToken

Row = tuple[int, int, str, str, tuple[str, ...]]


def rows(text: str, range: Range | None = None) -> list[Row]:
    """(line, start, text, type, sorted modifiers) for every token, checked for sanity."""
    analysis = analyze_document(text)
    tokens = semantic_tokens(analysis, range)
    check(analysis.lines, tokens)
    return [
        (
            tok.line,
            tok.start,
            analysis.lines[tok.line][tok.start : tok.start + tok.length],
            tok.type,
            tuple(sorted(tok.modifiers)),
        )
        for tok in tokens
    ]


def check(lines: list[str], tokens: list[SemanticToken]) -> None:
    previous_end = (-1, -1)
    for tok in tokens:
        assert tok.length > 0
        assert tok.start + tok.length <= len(lines[tok.line])  # never spans lines
        assert (tok.line, tok.start) >= previous_end  # sorted, no overlap
        previous_end = (tok.line, tok.start + tok.length)


def by_text(found: list[Row]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {text: (kind, modifiers) for _line, _start, text, kind, modifiers in found}


def test_agent_and_session_exact() -> None:
    text = 'agent critic:\n  model: opus\nsession: critic\n  prompt: "Go {topic}!"\n'
    assert rows(text) == [
        (0, 0, "agent", "keyword", ()),
        (0, 6, "critic", "agent", ("declaration",)),
        (1, 2, "model", "property", ()),
        (2, 0, "session", "keyword", ()),
        (2, 9, "critic", "agent", ()),
        (3, 2, "prompt", "property", ()),
        (3, 10, '"Go ', "string", ()),
        (3, 14, "{topic}", "interpolation", ()),
        (3, 21, '!"', "string", ()),
    ]


def test_variables_and_modifiers() -> None:
    text = """\
input subject: "s"
const cap = 3
let draft = session "d"
draft = session "again"
for entry, idx in [1, 2]:
  session "x"
  loop as round:
    session "y"
output result = draft
"""
    found = rows(text)
    assert (0, 6, "subject", "variable", ("declaration", "readonly")) in found
    assert (1, 6, "cap", "variable", ("declaration", "readonly")) in found
    assert (2, 4, "draft", "variable", ("declaration",)) in found
    assert (3, 0, "draft", "variable", ()) in found  # a reassignment
    assert (4, 4, "entry", "variable", ("declaration", "readonly")) in found
    assert (4, 11, "idx", "variable", ("declaration", "readonly")) in found
    assert (6, 10, "round", "variable", ("declaration", "readonly")) in found
    assert (8, 7, "result", "variable", ("declaration",)) in found
    assert (8, 16, "draft", "variable", ()) in found
    assert (4, 19, "1", "number", ()) in found
    assert (2, 10, "=", "operator", ()) in found


def test_blocks_parameters_programs_and_pipelines() -> None:
    text = """\
use "@lab/summarize" as summarize
block polish(text, tone):
  let out = session "Polish {text}"
  output polished = out
do polish("a", "b")
let s = summarize(source: cap)
let total = items
  | reduce(sum, piece):
      session "add {piece}"
let best = items
  | map:
      session "{item}"
"""
    found = rows(text)
    assert (0, 24, "summarize", "program", ("declaration",)) in found
    assert (1, 6, "polish", "block", ("declaration",)) in found
    assert (1, 13, "text", "parameter", ("declaration", "readonly")) in found
    assert (1, 19, "tone", "parameter", ("declaration", "readonly")) in found
    assert (2, 28, "{text}", "interpolation", ()) in found
    assert (3, 20, "out", "variable", ()) in found
    assert (4, 3, "polish", "block", ()) in found
    assert (5, 8, "summarize", "program", ()) in found
    assert (5, 18, "source", "parameter", ()) in found
    assert (5, 26, "cap", "variable", ()) in found  # undefined: still a variable
    assert (7, 4, "reduce", "keyword", ()) in found
    assert (7, 11, "sum", "variable", ("declaration", "readonly")) in found
    assert (7, 16, "piece", "variable", ("declaration", "readonly")) in found
    assert (7, 2, "|", "operator", ()) in found
    assert (10, 4, "map", "keyword", ()) in found  # not the implicit `item`
    assert (11, 15, "{item}", "interpolation", ()) in found


def test_parameter_references_are_readonly_parameters() -> None:
    text = "block b(topic):\n  session: helper\n    context: topic\n"
    found = rows(text)
    assert (2, 13, "topic", "parameter", ("readonly",)) in found


def test_properties_attributes_and_modifiers_in_parentheses() -> None:
    text = """\
let res = session "r"
session "use"
  context: { res }
let deep = res.findings.first
loop until **done** (max: 3):
  session "z"
"""
    found = rows(text)
    assert (2, 2, "context", "property", ()) in found
    assert (2, 13, "res", "variable", ()) in found
    assert (3, 11, "res", "variable", ()) in found
    assert (3, 15, "findings", "property", ()) in found
    assert (3, 24, "first", "property", ()) in found
    assert (4, 11, "**done**", "discretion", ()) in found
    assert (4, 21, "max", "property", ()) in found
    assert (4, 26, "3", "number", ()) in found


def test_comments_come_from_prefixes_not_strings() -> None:
    text = '# top\nlet x = "not # a comment"  # real\n  # indented\n'
    found = rows(text)
    assert [r for r in found if r[3] == "comment"] == [
        (0, 0, "# top", "comment", ()),
        (1, 27, "# real", "comment", ()),
        (2, 2, "# indented", "comment", ()),
    ]
    assert (1, 8, '"not # a comment"', "string", ()) in found


def test_multiline_string_split_per_line() -> None:
    text = 'session "s"\n  prompt: """\n    Line {alpha}\n\n    end\n  """\n'
    found = rows(text)
    assert [r for r in found if r[3] in ("string", "interpolation")] == [
        (0, 8, '"s"', "string", ()),
        (1, 10, '"""', "string", ()),
        (2, 0, "    Line ", "string", ()),
        (2, 9, "{alpha}", "interpolation", ()),
        (4, 0, "    end", "string", ()),  # the empty line gives no token
        (5, 0, '  """', "string", ()),
    ]


def test_multiline_condition_split_per_line() -> None:
    text = 'if ***\n  all good\n***:\n  session "ok"\n'
    found = rows(text)
    assert [r for r in found if r[3] == "discretion"] == [
        (0, 3, "***", "discretion", ()),
        (1, 0, "  all good", "discretion", ()),
        (2, 0, "***", "discretion", ()),
    ]


def test_unicode_columns_are_code_points() -> None:
    text = 'let café = "naïve {café} 🎉"\nagent λ:\n  model: opus\n'
    found = rows(text)
    assert (0, 4, "café", "variable", ("declaration",)) in found
    assert (0, 11, '"naïve ', "string", ()) in found
    assert (0, 18, "{café}", "interpolation", ()) in found
    assert (0, 24, ' 🎉"', "string", ()) in found
    assert (1, 6, "λ", "agent", ("declaration",)) in found
    analysis = analyze_document(text)
    lengths = [(t.start, t.length) for t in semantic_tokens(analysis) if t.line == 0]
    assert lengths[-1] == (24, 3)


def test_crlf_line_endings() -> None:
    text = (
        'agent a:\r\n  model: opus\r\n# note\r\nsession "x"\r\n  prompt: """\r\n    hi\r\n  """\r\n'
    )
    found = rows(text)
    assert (2, 0, "# note", "comment", ()) in found
    assert (3, 0, "session", "keyword", ()) in found
    assert (4, 10, '"""', "string", ()) in found
    assert (5, 0, "    hi", "string", ()) in found
    assert (6, 0, '  """', "string", ()) in found


def test_range_filtering() -> None:
    text = """\
# header
agent a:
  model: opus
# between one
# between two
let x = \"\"\"
  one
  two
\"\"\"
session "last"
"""
    everything = rows(text)
    for start, end in [
        ((0, 0), (11, 0)),
        ((3, 0), (5, 0)),
        ((6, 1), (7, 3)),
        ((1, 6), (1, 7)),
        ((9, 0), (9, 3)),
    ]:
        window = Range(start, end)
        expected = [
            r for r in everything if (r[0], r[1] + len(r[2])) > start and (r[0], r[1]) < end
        ]
        assert rows(text, window) == expected
    assert rows(text, Range((3, 0), (5, 0))) == [
        (3, 0, "# between one", "comment", ()),
        (4, 0, "# between two", "comment", ()),
    ]
    assert rows(text, Range((6, 0), (7, 9))) == [
        (6, 0, "  one", "string", ()),
        (7, 0, "  two", "string", ()),
    ]


def test_no_crash_on_empty_and_garbage() -> None:
    for text in (
        "",
        "\n",
        "#",
        "agent",
        "  $$ ~ {[(",
        '"""\nunterminated {x}',
        "***\nopen",
        "if **unclosed:\n  y",
        "let = = =",
        "\ufeff# bom\nlet a = 1",
        "x\ry\rz",
        "session name:",
    ):
        rows(text)
        rows(text, Range((0, 0), (1, 0)))


def test_ten_thousand_lines() -> None:
    chunk = """\
# part {i}
agent worker{i}:
  model: sonnet
block step{i}(topic):
  let notes{i} = session: worker{i}
    prompt: "Look at {{topic}} closely"
  output out{i} = notes{i}
do step{i}("x")
"""
    text = "".join(chunk.format(i=i) for i in range(1260))
    analysis = analyze_document(text)
    semantic_tokens(analysis)  # builds the model once
    tokens = semantic_tokens(analysis)
    assert len(tokens) > 10 * 1260
    window = semantic_tokens(analysis, Range((5000, 0), (5050, 0)))
    assert window and all(5000 <= t.line <= 5050 for t in window)
