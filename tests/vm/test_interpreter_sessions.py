"""Sessions, agents, bindings, inputs and outputs, interpolation, context passing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openprose.vm.interpreter import MissingInput, Options

# Every test here runs on both engines (tests/vm/conftest.py).
pytestmark = pytest.mark.both_engines


def test_agent_properties_are_the_defaults_a_session_overrides(run_prose: Any) -> None:
    run = run_prose(
        """\
        agent writer:
          model: opus
          prompt: "You write clearly"

        session "Plain"
        session: writer
        let draft = session: writer
          model: haiku
          prompt: "Draft the intro"
        """
    )
    assert run.result.status == "success"
    plain, agent_only, overridden = run.backend.sessions
    assert (plain.prompt, plain.agent, plain.model, plain.system) == ("Plain", None, None, None)
    # With no prompt of its own, the session's task is the agent's prompt.
    assert (agent_only.agent, agent_only.model, agent_only.prompt) == (
        "writer",
        "opus",
        "You write clearly",
    )
    assert agent_only.system == "You write clearly"
    assert (overridden.model, overridden.prompt, overridden.system) == (
        "haiku",
        "Draft the intro",
        "You write clearly",
    )
    assert run.binding("draft") == "[dry run] Draft the intro (agent: writer; model: haiku)"


def test_let_const_and_reassignment_are_narrated_and_written(run_prose: Any) -> None:
    run = run_prose(
        """\
        let draft = session "First draft"
        const style = "plain"
        draft = session "Revise"
          context: [draft, style]
        """
    )
    lines = [line for line in run.text.splitlines() if line.startswith("[Binding]")]
    assert lines == [
        '[Binding] let draft = "[dry run] First draft (agent: -; model: default)" (mutable)',
        '[Binding] const style = "plain" (immutable)',
        '[Binding] draft = "[dry run] Revise (agent: -; model: default; context: draft, style)"'
        ' (reassignment, was: "[dry run] First draft (agent: -; model: default)")',
    ]
    assert run.state() == ["1→ draft ✓", "2→ style ✓", "3→ draft ✓", run.state()[-1]]
    assert run.state()[-1].startswith("---end 2027-01-15T")
    assert run.binding("draft").startswith("[dry run] Revise")


def test_inputs_come_from_the_caller_and_outputs_return(run_prose: Any) -> None:
    run = run_prose(
        """\
        input topic: "What to research"
        let notes = session "Research {topic}"
        output summary = session "Summarise"
          context: notes
        """,
        {"topic": "bees"},
    )
    assert run.prompts == ["Research bees", "Summarise"]
    assert run.result.outputs == {
        "summary": "[dry run] Summarise (agent: -; model: default; context: notes)"
    }
    assert '[Input] Inputs received:\n   topic = "bees" (from caller)' in run.text
    assert "[Output] output summary = " in run.text
    binding = (run.run_dir / "bindings" / "topic.md").read_text(encoding="utf-8")
    assert binding == (
        '# topic\n\nkind: input\n\nsource:\n```prose\ninput topic: "What to research"\n```\n\n'
        "---\n\nbees\n"
    )


def test_a_missing_input_stops_before_anything_runs(run_prose: Any) -> None:
    with pytest.raises(MissingInput) as missing:
        run_prose('input topic: "t"\nsession "Go {topic}"\n')
    assert missing.value.name == "topic"


def test_interpolation_reads_variables_attributes_and_escapes(run_prose: Any) -> None:
    run = run_prose(
        """\
        let name = "Ada"
        let r = parallel:
          first = session "One"
          second = session "Two"
        session "Hello {name}, \\{literal\\} {r.second}"
        """
    )
    assert run.prompts[-1] == ("Hello Ada, {literal} [dry run] Two (agent: -; model: default)")


@pytest.mark.parametrize(
    ("form", "names"),
    [
        ("context: a", ["a"]),
        ("context: [a, b]", ["a", "b"]),
        ("context: { a, b }", ["a", "b"]),
        ("context: []", []),
    ],
)
def test_context_forms(run_prose: Any, form: str, names: list[str]) -> None:
    run = run_prose(f'let a = "alpha"\nlet b = "beta"\nsession "Use"\n  {form}\n')
    request = run.backend.sessions[-1]
    assert [name for name, _ in request.context] == names
    assert [text for _, text in request.context] == [{"a": "alpha", "b": "beta"}[n] for n in names]


def test_a_long_context_value_is_summarised_first(run_prose: Any) -> None:
    run = run_prose(
        'let a = session "Long"\nsession "Use"\n  context: a\n',
        options=Options(verbatim_below=10, jitter=False),
    )
    assert run.calls == [("session", "Long"), ("summarise", "a"), ("session", "Use")]
    assert run.backend.sessions[-1].context[0][0] == "a"


def test_anonymous_sessions_get_numbered_bindings(run_prose: Any) -> None:
    run = run_prose('session "One"\nsession "Two"\n')
    assert sorted(p.name for p in (run.run_dir / "bindings").iterdir()) == [
        "anon_001.md",
        "anon_002.md",
    ]
    assert run.state()[:2] == ["1→ ✓", "2→ ✓"]


def test_the_narration_follows_the_seed_markers(run_prose: Any) -> None:
    run = run_prose('let research = session "Research the topic"\n')
    lines = run.text.splitlines()
    assert lines[0] == "[Program] OpenProse Program Start: main.prose"
    assert lines[2:] == [
        '[Position] Executing: let research = session "Research the topic"',
        '[Success] Session complete: "[dry run] Research the topic (agent: -; model: default)"',
        '[Binding] let research = "[dry run] Research the topic (agent: -; model: default)"'
        " (mutable)",
        "[Program] Program complete",
    ]


def test_step_keys_are_distinct_and_stable_across_runs(run_prose: Any) -> None:
    source = """\
    block twice(x):
      repeat 2 as i:
        session "In {x}"
    parallel:
      a = session "Branch"
      b = session "Branch"
    do twice("p")
    for y in ["u", "v"]:
      session "Loop"
    """
    # Sorted: parallel branches may ask in either order (on the dbos engine each branch is
    # a workflow, started by whichever queue thread takes it first); their keys may not vary.
    first = sorted(s.step for s in run_prose(source).backend.sessions)
    second = sorted(s.step for s in run_prose(source).backend.sessions)
    assert first == second
    assert len(set(first)) == len(first) == 6


def test_success_events_carry_usage_and_the_session_reference(run_prose: Any) -> None:
    run = run_prose('session "Hello"\n')
    success = next(e for e in run.events if e.kind == "success")
    assert success.to_json()["session_ref"] == "offline-1"
    assert success.to_json()["output_tokens"] > 0
    assert run.result.usage.output_tokens == success.to_json()["output_tokens"]


def test_a_failure_names_the_innermost_statement(run_prose: Any) -> None:
    run = run_prose('let text = "plain"\nlet { a } = text\n')
    assert run.result.status == "error"
    assert run.result.error == "no attribute 'a'"
    assert run.result.failed_statement == "let { a } = text"


def test_a_permissions_block_reaches_the_backend_as_json(run_prose: Any) -> None:
    run = run_prose(
        """\
        agent writer:
          prompt: "You write"
          permissions:
            write: ["notes/"]
            bash: deny

        session: writer
          prompt: "Write"
        """
    )
    [request] = run.backend.sessions
    properties = dict(request.properties)
    assert json.loads(properties["permissions"]) == {"bash": "deny", "write": ["notes/"]}
