"""Hover texts: keywords, properties, agents, variables, blocks, imported programs and their
inputs and outputs, interpolations, discretion conditions; and no hover where there is
nothing to say.  Programs mark the cursor with `‸`."""

from __future__ import annotations

from pathlib import Path

import pytest

from openprose.ide import analyze_document
from openprose.ide.hover import hover
from openprose.ide.types import Hover, Range
from tests.support.cursor import cursor


def hover_at(source: str, path: Path | None = None) -> Hover | None:
    """The hover at the caret of ``source`` (the caret removed)."""
    text, position = cursor(source)
    return hover(analyze_document(text, path=path), position)


def contents(source: str, path: Path | None = None) -> str:
    found = hover_at(source, path)
    assert found is not None
    return found.contents


# --------------------------------------------------------------------------- keywords

KEYWORD_PROGRAMS = {
    "session": '‸session "Hello"\n',
    "agent": "‸agent writer:\n  model: opus\n",
    "let": '‸let x = session "A"\n',
    "const": '‸const x = session "A"\n',
    "parallel": 'parallel‸:\n  session "A"\n  session "B"\n',
    "loop": '‸loop until **done** (max: 3):\n  session "A"\n',
    "until": 'loop ‸until **done** (max: 3):\n  session "A"\n',
    "while": 'loop ‸while **busy** (max: 3):\n  session "A"\n',
    "repeat": '‸repeat 2:\n  session "A"\n',
    "for": 'let xs = ["a"]\n‸for x in xs:\n  session "A"\n',
    "in": 'let xs = ["a"]\nfor x i‸n xs:\n  session "A"\n',
    "try": 'tr‸y:\n  session "A"\ncatch:\n  session "B"\n',
    "catch": 'try:\n  session "A"\n‸catch:\n  session "B"\n',
    "finally": 'try:\n  session "A"\n‸finally:\n  session "B"\n',
    "throw": 'try:\n  session "A"\ncatch:\n  ‸throw "bad"\n',
    "choice": '‸choice **best**:\n  option "A":\n    session "A"\n',
    "option": 'choice **best**:\n  ‸option "A":\n    session "A"\n',
    "if": '‸if **ok**:\n  session "A"\nelif **meh**:\n  session "B"\nelse:\n  session "C"\n',
    "elif": 'if **ok**:\n  session "A"\n‸elif **meh**:\n  session "B"\n',
    "else": 'if **ok**:\n  session "A"\n‸else:\n  session "C"\n',
    "do": '‸do:\n  session "A"\n',
    "block": '‸block b():\n  session "A"\n',
    "use": '‸use "@acme/tool"\n',
    "input": '‸input topic: "What"\n',
    "output": '‸output result = session "A"\n',
    "resume": 'agent a:\n  persist: true\n‸resume: a\n  prompt: "go"\n',
    "map": 'let xs = ["a"]\nlet ys = xs | ‸map:\n  session "A"\n',
    "filter": 'let xs = ["a"]\nlet ys = xs | filter‸:\n  session "A"\n',
    "pmap": 'let xs = ["a"]\nlet ys = xs | ‸pmap:\n  session "A"\n',
    "reduce": 'let xs = ["a"]\nlet ys = xs | ‸reduce(acc, x):\n  session "A"\n',
}


@pytest.mark.parametrize("word", sorted(KEYWORD_PROGRAMS))
def test_keywords_explain_themselves_with_an_example(word: str) -> None:
    source = KEYWORD_PROGRAMS[word]
    found = hover_at(source)
    assert found is not None
    assert found.contents.startswith(f"**`{word}`** (keyword)")
    assert "```prose\n" in found.contents
    text, (line, column) = cursor(source)
    start = text.split("\n")[line].rfind(word, 0, column + len(word))
    assert found.range == Range((line, start), (line, start + len(word)))


def test_as_is_explained_by_where_it_stands() -> None:
    assert "Names the imported program" in contents('use "@acme/tool" ‸as t\n')
    assert "iteration counter" in contents('repeat 2 ‸as i:\n  session "A"\n')
    assert "error caught" in contents('try:\n  session "A"\ncatch ‸as e:\n  session "B"\n')


def test_parallel_for_is_explained_as_a_loop() -> None:
    text = contents('let xs = ["a"]\nparal‸lel for x in xs:\n  session "A"\n')
    assert "iterations at the same time" in text


# --------------------------------------------------------------------------- properties

PROPERTY_PROGRAMS = {
    "model": "agent a:\n  ‸model: opus\n",
    "prompt": 'agent a:\n  ‸prompt: "You write"\n',
    "persist": "agent a:\n  ‸persist: project\n",
    "skills": 'agent a:\n  ‸skills: ["web"]\n',
    "permissions": "agent a:\n  ‸permissions:\n    bash: deny\n",
    "read": 'agent a:\n  permissions:\n    ‸read: ["*.md"]\n',
    "write": 'agent a:\n  permissions:\n    ‸write: ["out/"]\n',
    "execute": 'agent a:\n  permissions:\n    ‸execute: ["*.sh"]\n',
    "bash": "agent a:\n  permissions:\n    ‸bash: deny\n",
    "network": "agent a:\n  permissions:\n    ‸network: allow\n",
    "context": 'let x = session "A"\nsession "B"\n  ‸context: x\n',
    "retry": 'session "A"\n  ‸retry: 3\n',
    "backoff": 'session "A"\n  retry: 3\n  ‸backoff: linear\n',
}


@pytest.mark.parametrize("name", sorted(PROPERTY_PROGRAMS))
def test_properties_explain_themselves(name: str) -> None:
    found = hover_at(PROPERTY_PROGRAMS[name])
    assert found is not None
    assert found.contents.startswith(f"**`{name}`** (property)")
    assert "```prose\n" in found.contents
    assert found.range.end[1] - found.range.start[1] == len(name)


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ('parallel ("any", ‸count: 2):\n  session "A"\n  session "B"\n', "count"),
        ('parallel (on-f‸ail: "ignore"):\n  session "A"\n', "on-fail"),
        ('loop until **done** (‸max: 4):\n  session "A"\n', "max"),
    ],
)
def test_modifiers_explain_themselves(source: str, name: str) -> None:
    found = hover_at(source)
    assert found is not None
    assert found.contents.startswith(f"**`{name}`** (modifier)")
    assert found.range.end[1] - found.range.start[1] == len(name)


def test_known_property_values_are_explained() -> None:
    assert "most capable" in contents("agent a:\n  model: op‸us\n")
    assert "Ask the user" in contents("agent a:\n  permissions:\n    bash: prompt‸\n")
    assert "Double the delay" in contents('session "A"\n  retry: 2\n  backoff: ‸exponential\n')
    assert hover_at('agent a:\n  prompt: "x"\n  model: ‸gpt\n') is None


# --------------------------------------------------------------------------- agents

AGENT = """\
agent researcher:
  model: sonnet
  prompt: "You dig through sources and report what you find, with citations for every claim made"
  persist: true
  skills: ["web-search", "summarizer"]
  permissions:
    read: ["*.md", "docs/**"]
    bash: deny
"""


def test_agent_hover_summarises_its_definition() -> None:
    text = contents(AGENT + "let r = session: resear‸cher\n")
    assert text.startswith("**agent** `researcher`")
    assert "model: `sonnet`" in text
    assert 'prompt: "You dig through sources' in text and "…" in text
    assert "persist: `true`" in text
    assert "skills: `web-search`, `summarizer`" in text
    assert "permissions: read `*.md`, `docs/**`; bash `deny`" in text
    assert "Defined on line 1." in text


def test_agent_hover_on_its_definition_and_on_resume() -> None:
    assert contents("agent ‸researcher:\n  model: opus\n").startswith("**agent** `researcher`")
    source = AGENT + 'resume: ‸researcher\n  prompt: "again"\n'
    assert "persist: `true`" in contents(source)


def test_agent_hover_shows_the_first_line_of_a_multi_line_prompt() -> None:
    source = 'agent a:\n  prompt: """\n    First line.\n    Second line.\n  """\nsession: ‸a\n'
    assert 'prompt: "First line. …"' in contents(source)


def test_undefined_agent() -> None:
    assert "Not defined" in contents("session: gh‸ost\n")


# --------------------------------------------------------------------------- variables


def test_let_variable_from_an_agent_session() -> None:
    source = AGENT + "let ‸notes = session: researcher\n"
    text = contents(source)
    assert text.startswith("**let variable** `notes`")
    assert "Value: `session: researcher`" in text
    assert "Defined on line 9." in text


def test_variable_reassignments_are_listed() -> None:
    source = 'let d = session "Draft"\nd = session "Again"\nd = session "More"\nsession "x"\n'
    source += "  context: ‸d\n"
    text = contents(source)
    assert "Defined on line 1. Reassigned on lines 2, 3." in text


def test_const_and_output_and_prompt_sessions() -> None:
    assert "**const constant** `c`" in contents('const ‸c = session "Collect the facts"\n')
    text = contents('output ‸summary = session "Write the summary"\n')
    assert text.startswith("**output** `summary`")
    assert 'Value: `session "Write the summary"`' in text


def test_variable_from_a_block_invocation() -> None:
    source = 'block review(text, depth):\n  session "Review {text}"\nlet ‸r = do review("x", 2)\n'
    assert "Value: `do review(...)` (block)" in contents(source)


def test_parallel_branch() -> None:
    source = 'parallel:\n  ‸sec = session "Security review"\n  perf = session "Perf"\n'
    text = contents(source)
    assert text.startswith("**parallel result** `sec`")
    assert 'Parallel branch: `session "Security review"`' in text


def test_loop_and_index_variables() -> None:
    source = 'let items = ["a", "b"]\nfor item, n in items:\n  session "Look at {it‸em}"\n'
    text = contents(source)
    assert text.startswith("**loop variable** `item`")
    assert "Element of `for item, n in items`." in text
    assert "Defined on line 2." in text
    text = contents('repeat 3 as ‸k:\n  session "A"\n')
    assert "Iteration index of `repeat 3 as k`" in text


def test_input_shows_its_description() -> None:
    source = 'input topic: "The subject to research"\nsession "About {top‸ic}"\n'
    found = hover_at(source)
    assert found is not None
    assert found.contents.startswith("**input** `topic`")
    assert "Input: The subject to research" in found.contents
    # The range is the name inside the braces.
    assert found.range == Range((1, 16), (1, 21))


def test_parameter_and_error_and_pipeline_variables() -> None:
    text = contents('block review(doc, depth):\n  session "Review {doc} at {de‸pth}"\n')
    assert text.startswith("**parameter** `depth`")
    assert "Parameter of `block review(doc, depth)`." in text
    text = contents('try:\n  session "A"\ncatch as err:\n  session "B"\n    context: e‸rr\n')
    assert text.startswith("**error variable** `err`")
    source = (
        'let xs = ["a"]\nlet s = xs | reduce(acc, x):\n  session "Join"\n    context: [a‸cc, x]\n'
    )
    assert "The accumulator of `reduce(acc, x)`." in contents(source)
    source = 'let xs = ["a"]\nlet s = xs | map:\n  session "Do"\n    context: it‸em\n'
    text = contents(source)
    assert "The current element in `map`." in text
    assert "Implicit in `map` on line 2." in text


def test_dotted_interpolation_hovers_its_variable() -> None:
    source = 'let r = session "A"\nsession "Use {‸r.summary} now"\n'
    found = hover_at(source)
    assert found is not None
    assert found.contents.startswith("**let variable** `r`")
    assert found.range == Range((1, 14), (1, 15))


def test_undefined_variable() -> None:
    assert "Not defined here." in contents('session "A"\n  context: miss‸ing\n')
    source = 'for x in ["a"]:\n  let inner = session "A"\nsession "B"\n  context: inn‸er\n'
    assert "lives only inside its body" in contents(source)


# --------------------------------------------------------------------------- blocks


def test_block_signature_from_do_and_definition() -> None:
    source = 'do ‸review("a", 2)\nblock review(topic, depth):\n  session "Review {topic}"\n'
    text = contents(source)
    assert "```prose\nblock review(topic, depth)\n```" in text
    assert "Defined on line 2." in text
    assert "block review" in contents('block rev‸iew(topic):\n  session "x"\n')


# --------------------------------------------------------------------------- programs

LIBRARY = """\
input topic: "The subject to research"
input depth: "How deep to go"
let notes = session "Research {topic} to {depth}"
input angle: "An angle, asked at run time"
output findings = session "Summarise"
  context: notes
output sources = session "List the sources"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_program_contract_not_loaded_without_a_path() -> None:
    text = contents('use "./lib.prose" as lib\nlet r = l‸ib(topic: "x")\n')
    assert text.startswith("**program** `lib`, imported from `./lib.prose`")
    assert "contract not loaded" in text


def test_program_contract_from_a_local_file(tmp_path: Path) -> None:
    write(tmp_path / "lib.prose", LIBRARY)
    main = tmp_path / "main.prose"
    text = contents('use "./lib.prose" as lib\nlet r = l‸ib(topic: "x", depth: "y")\n', main)
    assert "- `topic`: The subject to research" in text
    assert "- `depth`: How deep to go" in text
    assert "- `angle` (optional: asked at run time): An angle, asked at run time" in text
    assert "Outputs: `findings`, `sources`" in text
    # On the alias and on the path too.
    assert "Outputs:" in contents('use "./lib.prose" as l‸ib\n', main)
    assert "Outputs:" in contents('use "./li‸b.prose" as lib\n', main)
    assert "Outputs:" in contents('use "./li‸b.prose"\n', main)


def test_program_contract_missing_file_and_registry(tmp_path: Path) -> None:
    main = tmp_path / "main.prose"
    text = contents('use "./nothing.prose" as n‸o\n', main)
    assert "contract not loaded" in text and "nothing.prose" in text
    text = contents('use "@acme/tool" as t‸ool\n', main)
    assert "*contract not loaded*: not in the local import cache." in text
    write(tmp_path / ".prose" / "imports" / "acme--tool" / "program.prose", LIBRARY)
    assert "Outputs: `findings`, `sources`" in contents('use "@acme/tool" as t‸ool\n', main)


def test_inputs_and_outputs_of_an_imported_program(tmp_path: Path) -> None:
    write(tmp_path / "lib.prose", LIBRARY)
    main = tmp_path / "main.prose"
    source = 'use "./lib.prose" as lib\nlet r = lib(to‸pic: "x", depth: "y")\n'
    found = hover_at(source, main)
    assert found is not None
    assert found.contents.startswith("**input** `topic` of program `lib`")
    assert "The subject to research" in found.contents
    assert found.range == Range((1, 12), (1, 17))
    source = 'use "./lib.prose" as lib\nlet r = lib(topic: "x", depth: "y")\nsession "S"\n'
    text = contents(source + "  context: r.find‸ings\n", main)
    assert text.startswith("**output** `findings` of program `lib`")
    assert 'Value: `session "Summarise"`' in text
    text = contents(source + '  prompt: "Use {r.sour‸ces}"\n', main)
    assert text.startswith("**output** `sources` of program `lib`")
    text = contents(source + "  context: r.nop‸e\n", main)
    assert "Not declared by `lib` (its outputs: `findings`, `sources`)." in text


# --------------------------------------------------------------------------- other places


def test_discretion_condition() -> None:
    found = hover_at('if **the tests ‸pass**:\n  session "Ship"\n')
    assert found is not None
    assert found.contents.startswith("**discretion condition**")
    assert "judged by the model" in found.contents
    assert found.range == Range((0, 3), (0, 21))


def test_session_label() -> None:
    assert "(session name)" in contents("agent a:\n  model: opus\nsession ana‸lysis: a\n")


@pytest.mark.parametrize(
    "source",
    [
        '  ‸  \nsession "A"\n',
        '# a comm‸ent\nsession "A"\n',
        'session "plain te‸xt here"\n',
        'session "A"  ‸  # trailing\n',
        "let x = 4‸2\n",
        'let x ‸= session "A"\n',
        "‸",
        "‸\n\n",
    ],
)
def test_no_hover_where_there_is_nothing_to_say(source: str) -> None:
    assert hover_at(source) is None


@pytest.mark.parametrize("position", [(5, 0), (0, 500), (-1, 0), (0, -3), (99, 99)])
def test_positions_outside_the_text(position: tuple[int, int]) -> None:
    analysis = analyze_document('let x = session "A"\n')
    found = hover(analysis, position)
    assert found is None or found.range.start[0] == 0


@pytest.mark.parametrize(
    "text",
    ["", "\n", "$$$ ;; @@", '"""unterminated', "agent:\n  : :\n", "\x00\ufeff", "  \t\n\r\n"],
)
def test_garbage_does_not_crash(text: str) -> None:
    analysis = analyze_document(text)
    lines = text.split("\n")
    for line in range(len(lines) + 1):
        for column in range(len(lines[line]) + 2 if line < len(lines) else 1):
            found = hover(analysis, (line, column))
            assert found is None or isinstance(found.contents, str)


def test_unicode_before_the_cursor() -> None:
    source = 'let café = session "naïve ☃ 🎉"\nsession "Résumé 🎉 of {ca‸fé}"\n'
    found = hover_at(source)
    assert found is not None
    assert found.contents.startswith("**let variable** `café`")
    # Columns count code points: "session \"Résumé 🎉 of {" is 22 of them.
    assert found.range == Range((1, 22), (1, 26))
    found = hover_at('agent a:\n  model: opus\nlet x = session "🎉🎉" -> session: ‸a\n')
    assert found is not None
    assert found.contents.startswith("**agent** `a`")
    assert found.range == Range((2, 33), (2, 34))


# --------------------------------------------------------------------------- suppression codes


def test_a_code_in_a_suppression_comment() -> None:
    found = hover_at(
        'let a = session "x"\nblock b(a):  # prose: ignore[E044, W0‸15]\n  session "{a}"\n'
    )
    assert found is not None
    assert found.contents == (
        "**W015**: Parameter shadows outer variable\n\nDefault severity: warning."
    )
    assert found.range == Range((1, 35), (1, 39))


def test_a_syntax_code_in_a_suppression_comment_says_it_cannot_be_silenced() -> None:
    assert "cannot silence it" in contents('session "a"  # prose: ignore[E0‸01]\n')


def test_no_hover_on_unknown_codes_other_comments_or_strings() -> None:
    assert hover_at('session "a"  # prose: ignore[W9‸99]\n') is None
    assert hover_at('session "a"  # see [W0‸15]\n') is None
    assert hover_at('session "# prose: ignore[W0‸15]"\n') is None
