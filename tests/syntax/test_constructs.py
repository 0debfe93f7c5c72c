"""Every construct of the OpenProse grammar: node classes, accessors and positions."""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from openprose.syntax import (
    AgentDefinition,
    Arguments,
    ArrayLiteral,
    ArrowSequence,
    Assignment,
    Attribute,
    BinaryExpression,
    BlockDefinition,
    BooleanExpression,
    CatchClause,
    ChoiceStatement,
    Comparison,
    ConstBinding,
    Discretion,
    DoBlock,
    DoInvocation,
    ElifClause,
    ElseClause,
    EndMarker,
    FinallyClause,
    ForEach,
    IfStatement,
    ImportStatement,
    InputDeclaration,
    Keyword,
    KeywordArgument,
    LetBinding,
    Loop,
    Module,
    Name,
    Newline,
    NotExpression,
    Number,
    ObjectEntry,
    ObjectLiteral,
    OptionClause,
    OutputBinding,
    Parallel,
    Parameters,
    Pipeline,
    PipeStage,
    ProgramCall,
    Property,
    PropertyBlock,
    Repeat,
    Resume,
    Session,
    String,
    Suite,
    ThrowStatement,
    TryStatement,
    UseStatement,
    iter_leaves,
    parse,
    syntax_diagnostics,
)
from tests.support.nodes import narrow, prompt, property_value

# --------------------------------------------------------------------------- helpers

T = TypeVar("T")


def parse_clean(text: str) -> Module:
    """Parse ``text``, check it round-trips and has no syntax diagnostics."""
    module = parse(text)
    assert module.get_code() == text
    assert syntax_diagnostics(module) == []
    check_parents(module)
    return module


def check_parents(node: Any) -> None:
    for child in getattr(node, "children", ()):
        assert child.parent is node, f"{child!r} has a wrong parent"
        check_parents(child)


def single(text: str, cls: type[T]) -> T:
    """The only statement of a clean program, checked to be a ``cls``."""
    statements = parse_clean(text).statements()
    assert len(statements) == 1, statements
    statement = statements[0]
    assert type(statement) is cls, statement
    return statement


def code(node: Any) -> str:
    return node.get_code(include_prefix=False)


def leaf_at(module: Module, value: str, occurrence: int = 0) -> Any:
    """The ``occurrence``-th leaf whose value is ``value``."""
    found = [leaf for leaf in iter_leaves(module) if leaf.value == value]
    return found[occurrence]


# --------------------------------------------------------------------------- comments


def test_comments_live_in_prefixes() -> None:
    text = '# header\n\n# about the session\nsession "a"  # trailing\n# at the end\n'
    module = parse_clean(text)
    (session,) = module.statements()
    assert isinstance(session, Session)
    assert session.get_first_leaf().prefix == "# header\n\n# about the session\n"
    newline = session.get_last_leaf()
    assert isinstance(newline, Newline)
    assert newline.prefix == "  # trailing"
    assert newline.start_pos == (4, 23)
    assert isinstance(module.end_marker, EndMarker)
    assert module.end_marker.prefix == "# at the end\n"
    assert module.end_marker.start_pos == (6, 0)


def test_comment_only_program() -> None:
    module = parse_clean("# nothing to do\n# really\n")
    assert module.statements() == []
    assert module.end_marker.prefix == "# nothing to do\n# really\n"


def test_empty_program() -> None:
    module = parse_clean("")
    assert module.statements() == []
    assert module.end_marker.start_pos == (1, 0)


def test_comment_inside_block_and_between_properties() -> None:
    text = (
        "agent a:  # the agent\n"
        "  # its model\n"
        "  model: sonnet\n"
        "\n"
        "  # and its prompt\n"
        '  prompt: "p"  # trailing\n'
    )
    agent = single(text, AgentDefinition)
    model, prompt = agent.properties()
    assert model.name_leaf.prefix == "  # its model\n  "
    assert prompt.name_leaf.prefix == "\n  # and its prompt\n  "
    assert prompt.get_last_leaf().prefix == "  # trailing"
    block = agent.property_block
    assert block is not None
    assert block.children[0].prefix == "  # the agent"


def test_hash_inside_string_is_not_a_comment() -> None:
    session = single('session "issue #42"\n', Session)
    assert session.prompt is not None
    assert session.prompt.value == '"issue #42"'


# --------------------------------------------------------------------------- use / import


def test_use_statement() -> None:
    use = single('use "@alice/research"\n', UseStatement)
    assert use.path is not None
    assert use.path.value == '"@alice/research"'
    assert use.path.text == "@alice/research"
    assert use.alias is None
    assert isinstance(use.children[0], Keyword)


def test_use_statement_with_alias() -> None:
    module = parse_clean('use "@alice/research" as research\n')
    (use,) = module.statements()
    assert isinstance(use, UseStatement)
    assert use.path is not None and use.path.text == "@alice/research"
    assert use.alias is not None
    assert use.alias.value == "research"
    assert use.alias.start_pos == (1, 25)
    assert isinstance(leaf_at(module, "as"), Keyword)


def test_legacy_import_statement() -> None:
    imp = single('import "web-search" from "github:anthropic/skills"\n', ImportStatement)
    assert imp.name is not None and imp.name.text == "web-search"
    assert imp.source is not None and imp.source.text == "github:anthropic/skills"


# --------------------------------------------------------------------------- input / output


def test_input_declaration() -> None:
    decl = single('input topic: "What to research"\n', InputDeclaration)
    assert decl.name is not None and decl.name.value == "topic"
    assert isinstance(decl.description, String)
    assert decl.description.text == "What to research"
    assert decl.name.start_pos == (1, 6)


def test_output_binding_with_name() -> None:
    out = single('output summary = session "Summarize"\n', OutputBinding)
    assert out.name is not None and out.name.value == "summary"
    assert isinstance(out.value, Session)
    assert out.value.prompt is not None and out.value.prompt.text == "Summarize"


def test_output_binding_with_plain_value() -> None:
    out = single("output final = draft\n", OutputBinding)
    assert out.name is not None and out.name.value == "final"
    assert isinstance(out.value, Name) and out.value.value == "draft"


def test_output_block_result_form() -> None:
    out = single('output session "Conclude"\n', OutputBinding)
    assert out.name is None
    assert isinstance(out.value, Session)
    assert out.value.prompt is not None and out.value.prompt.text == "Conclude"


# --------------------------------------------------------------------------- agents


AGENT = """\
agent researcher:
  model: opus
  prompt: "You research things"
  persist: project
  skills: ["web-search", "summarize"]
  permissions:
    read: ["*.md"]
    bash: deny
"""


def test_agent_definition() -> None:
    agent = single(AGENT, AgentDefinition)
    assert agent.name == "researcher"
    assert agent.name_leaf is not None and agent.name_leaf.start_pos == (1, 6)
    assert [p.name for p in agent.properties()] == [
        "model",
        "prompt",
        "persist",
        "skills",
        "permissions",
    ]
    assert isinstance(agent.property_block, PropertyBlock)
    model = agent.get_property("model")
    assert model is not None
    assert isinstance(model.value, Name) and model.value.value == "opus"
    prompt = agent.get_property("prompt")
    assert prompt is not None and isinstance(prompt.value, String)
    assert prompt.value.text == "You research things"
    persist = agent.get_property("persist")
    assert persist is not None and narrow(persist.value, Name).value == "project"
    skills = agent.get_property("skills")
    assert skills is not None and isinstance(skills.value, ArrayLiteral)
    assert [narrow(e, String).text for e in skills.value.elements()] == ["web-search", "summarize"]
    assert skills.value.is_closed
    assert agent.get_property("retry") is None


def test_agent_permissions_nested_property_block() -> None:
    agent = single(AGENT, AgentDefinition)
    permissions = agent.get_property("permissions")
    assert isinstance(permissions, Property)
    assert permissions.value is None
    block = permissions.block
    assert isinstance(block, PropertyBlock)
    assert [p.name for p in block.properties()] == ["read", "bash"]
    read = block.get("read")
    assert read is not None and isinstance(read.value, ArrayLiteral)
    assert narrow(read.value.elements()[0], String).text == "*.md"
    bash = block.get("bash")
    assert bash is not None and narrow(bash.value, Name).value == "deny"
    assert bash.name_leaf.start_pos == (8, 4)


def test_agent_persist_true_and_string() -> None:
    module = parse_clean(
        'agent a:\n  persist: true\nagent b:\n  persist: ".prose/memory/b"\n  retry: 3\n'
    )
    a, b = module.statements()
    assert isinstance(a, AgentDefinition) and isinstance(b, AgentDefinition)
    assert a.name == "a" and b.name == "b"
    a_persist, b_persist = a.get_property("persist"), b.get_property("persist")
    assert a_persist is not None and narrow(a_persist.value, Name).value == "true"
    assert b_persist is not None and narrow(b_persist.value, String).text == ".prose/memory/b"
    retry = narrow(b.get_property("retry"), Property).value
    assert isinstance(retry, Number) and retry.as_int() == 3


def test_agent_with_hyphenated_name() -> None:
    agent = single("agent code-reviewer:\n  model: haiku\n", AgentDefinition)
    assert agent.name == "code-reviewer"


# --------------------------------------------------------------------------- sessions


def test_session_with_prompt() -> None:
    module = parse_clean('session "Write a poem"\n')
    (session,) = module.statements()
    assert isinstance(session, Session)
    assert isinstance(session.keyword_leaf, Keyword)
    assert session.prompt is not None and session.prompt.text == "Write a poem"
    assert session.prompt.start_pos == (1, 8)
    assert session.prompt.end_pos == (1, 22)
    assert session.agent is None
    assert session.name is None
    assert session.properties() == []
    assert session.property_block is None


def test_session_with_agent() -> None:
    session = single("session: writer\n", Session)
    assert session.prompt is None
    assert session.agent is not None and session.agent.value == "writer"
    assert session.name is None


def test_named_session_with_agent() -> None:
    session = single("session draft: writer\n", Session)
    assert session.name is not None and session.name.value == "draft"
    assert session.agent is not None and session.agent.value == "writer"
    assert session.prompt is None


def test_session_with_properties() -> None:
    text = (
        "session review: critic\n"
        "  model: opus\n"
        '  prompt: "Be harsh"\n'
        "  context: draft\n"
        "  retry: 2\n"
        "  backoff: exponential\n"
    )
    session = single(text, Session)
    assert session.name is not None and session.name.value == "review"
    assert session.agent is not None and session.agent.value == "critic"
    assert [p.name for p in session.properties()] == [
        "model",
        "prompt",
        "context",
        "retry",
        "backoff",
    ]
    assert narrow(property_value(session, "prompt"), String).text == "Be harsh"
    assert narrow(property_value(session, "backoff"), Name).value == "exponential"


def test_prompt_session_with_properties() -> None:
    session = single('session "Go"\n  model: haiku\n', Session)
    assert session.prompt is not None and session.prompt.text == "Go"
    assert narrow(property_value(session, "model"), Name).value == "haiku"


def test_session_with_only_prompt_property_is_valid() -> None:
    session = single('session\n  prompt: "from the property"\n', Session)
    assert session.prompt is None
    assert narrow(property_value(session, "prompt"), String).text == "from the property"


def test_session_with_agent_and_properties() -> None:
    session = single('session: writer\n  prompt: "Draft it"\n', Session)
    assert session.agent is not None and session.agent.value == "writer"
    assert narrow(property_value(session, "prompt"), String).text == "Draft it"


def test_triple_quoted_session_then_statement() -> None:
    text = 'session """\nLine one\nLine two\n"""\nsession "next"\n'
    module = parse_clean(text)
    first, second = module.statements()
    assert prompt(first).text == "\nLine one\nLine two\n"
    assert prompt(first).end_pos == (4, 3)
    assert prompt(second).start_pos == (5, 8)


# --------------------------------------------------------------------------- resume


def test_resume() -> None:
    resume = single("resume: captain\n", Resume)
    assert resume.agent is not None and resume.agent.value == "captain"
    assert resume.properties() == []


def test_resume_with_properties() -> None:
    resume = single('resume: captain\n  prompt: "Continue"\n  context: notes\n', Resume)
    assert resume.agent is not None and resume.agent.value == "captain"
    assert [p.name for p in resume.properties()] == ["prompt", "context"]
    assert narrow(property_value(resume, "context"), Name).value == "notes"


def test_resume_as_binding_value() -> None:
    let = single("let more = resume: captain\n", LetBinding)
    assert isinstance(let.value, Resume)
    assert narrow(let.value.agent, Name).value == "captain"


# --------------------------------------------------------------------------- bindings


def test_let_binding() -> None:
    let = single('let research = session "Research"\n', LetBinding)
    assert type(let) is LetBinding
    assert isinstance(let.target, Name) and let.target.value == "research"
    assert [n.value for n in let.target_names()] == ["research"]
    assert isinstance(let.value, Session)
    assert let.keyword == "let"


def test_const_binding() -> None:
    const = single('const config = "fast"\n', ConstBinding)
    assert isinstance(const, LetBinding)  # a subclass, with the same accessors
    assert const.keyword == "const"
    assert narrow(const.target, Name).value == "config"
    assert isinstance(const.value, String) and const.value.text == "fast"


def test_assignment() -> None:
    assignment = single('draft = session "Revise"\n', Assignment)
    assert assignment.target is not None and assignment.target.value == "draft"
    assert isinstance(assignment.value, Session)


def test_assignment_to_a_keyword_like_name() -> None:
    # Keywords are soft: a variable may be called `session` or `loop`.
    module = parse_clean('session = "x"\nloop = session "y"\n')
    first, second = module.statements()
    assert isinstance(first, Assignment) and narrow(first.target, Name).value == "session"
    assert isinstance(second, Assignment) and narrow(second.target, Name).value == "loop"
    assert isinstance(second.value, Session)


def test_let_binding_of_name_array_and_number() -> None:
    module = parse_clean('let a = b\nlet c = ["x", y]\nlet d = 42\n')
    a, c, d = module.statements()
    assert isinstance(a, LetBinding) and isinstance(c, LetBinding) and isinstance(d, LetBinding)
    assert isinstance(a.value, Name) and a.value.value == "b"
    assert isinstance(c.value, ArrayLiteral)
    assert [code(e) for e in c.value.elements()] == ['"x"', "y"]
    assert isinstance(d.value, Number) and d.value.as_int() == 42


def test_destructuring_let() -> None:
    let = single('let { findings, sources } = research(topic: "x")\n', LetBinding)
    assert isinstance(let.target, ObjectLiteral)
    assert let.target.is_shorthand
    assert let.target.is_closed
    assert [n.value for n in let.target_names()] == ["findings", "sources"]
    call = let.value
    assert isinstance(call, ProgramCall)
    assert call.name is not None and call.name.value == "research"
    assert call.arguments is not None
    (kwarg,) = call.arguments.keyword_arguments()
    assert kwarg.name.value == "topic"
    assert narrow(kwarg.value, String).text == "x"


# --------------------------------------------------------------------------- context


@pytest.mark.parametrize(
    ("value", "cls", "elements"),
    [
        ("research", Name, None),
        ("[a, b]", ArrayLiteral, ["a", "b"]),
        ("{ a, b }", ObjectLiteral, ["a", "b"]),
        ("[]", ArrayLiteral, []),
        ("{}", ObjectLiteral, []),
    ],
)
def test_context_property_forms(value: str, cls: type[Any], elements: list[str] | None) -> None:
    session = single(f'session "s"\n  context: {value}\n', Session)
    context = session.get_property("context")
    assert context is not None
    assert type(context.value) is cls
    assert code(context.value) == value
    if cls is ArrayLiteral:
        assert [code(e) for e in narrow(context.value, ArrayLiteral).elements()] == elements
    elif cls is ObjectLiteral:
        assert [code(e) for e in narrow(context.value, ObjectLiteral).entries()] == elements
        assert narrow(context.value, ObjectLiteral).is_shorthand


# --------------------------------------------------------------------------- do / block


def test_do_block() -> None:
    do = single('do:\n  session "a"\n  session "b"\n', DoBlock)
    assert isinstance(do.body, Suite)
    assert [prompt(s).text for s in do.body_statements()] == ["a", "b"]


def test_block_definition_with_parameters() -> None:
    block = single('block review(topic, depth):\n  session "Review {topic}"\n', BlockDefinition)
    assert block.name == "review"
    assert isinstance(block.parameter_list, Parameters)
    assert [p.value for p in block.parameters()] == ["topic", "depth"]
    (session,) = block.body_statements()
    assert isinstance(session, Session)
    assert block.parameters()[1].start_pos == (1, 20)


def test_block_definition_without_parameters() -> None:
    block = single('block cleanup:\n  session "Tidy up"\n', BlockDefinition)
    assert block.name == "cleanup"
    assert block.parameter_list is None
    assert block.parameters() == []


def test_do_invocation_with_arguments() -> None:
    do = single('do review(draft, "deep")\n', DoInvocation)
    assert do.name is not None and do.name.value == "review"
    assert isinstance(do.arguments, Arguments)
    assert [code(a) for a in do.arguments.items()] == ["draft", '"deep"']
    assert [code(a) for a in do.arguments.positional()] == ["draft", '"deep"']


def test_do_invocation_without_arguments() -> None:
    do = single("do cleanup\n", DoInvocation)
    assert do.name is not None and do.name.value == "cleanup"
    assert do.arguments is None


def test_do_block_as_binding_value() -> None:
    let = single('let x = do:\n  session "inner"\n', LetBinding)
    assert isinstance(let.value, DoBlock)
    assert len(let.value.body_statements()) == 1


# --------------------------------------------------------------------------- arrows


def test_arrow_sequence() -> None:
    arrow = single('session "A" -> session "B" -> session "C"\n', ArrowSequence)
    steps = arrow.steps()
    assert [type(s) for s in steps] == [Session, Session, Session]
    assert [prompt(s).text for s in steps] == ["A", "B", "C"]
    assert steps[2].start_pos == (1, 30)


def test_arrow_sequence_as_binding_value() -> None:
    let = single('let r = session "A" -> session "B"\n', LetBinding)
    assert isinstance(let.value, ArrowSequence)
    assert len(let.value.steps()) == 2


def test_arrow_sequence_continued_on_lines_at_same_indentation() -> None:
    module = parse_clean('session "A"\n-> session "B"\nsession "after"\n')
    arrow, after = module.statements()
    assert isinstance(arrow, ArrowSequence)
    assert [prompt(s).text for s in arrow.steps()] == ["A", "B"]
    assert isinstance(after, Session)


def test_arrow_sequence_continued_on_indented_lines() -> None:
    text = 'session "A"\n  -> session "B"\n  -> session "C"\nsession "after"\n'
    module = parse_clean(text)
    arrow, after = module.statements()
    assert isinstance(arrow, ArrowSequence)
    assert [prompt(s).text for s in arrow.steps()] == ["A", "B", "C"]
    assert arrow.steps()[1].start_pos == (2, 5)
    assert isinstance(after, Session)


def test_arrow_sequence_binding_continued_on_indented_line() -> None:
    module = parse_clean('let r = session "A"\n  -> session "B"\nsession "after"\n')
    let, after = module.statements()
    assert isinstance(let, LetBinding)
    assert isinstance(let.value, ArrowSequence)
    assert len(let.value.steps()) == 2
    assert isinstance(after, Session)


# --------------------------------------------------------------------------- parallel


def test_parallel_with_named_branches() -> None:
    text = 'parallel:\n  a = session "x"\n  b = session "y"\n  session "unnamed"\n'
    parallel = single(text, Parallel)
    assert parallel.modifiers is None
    first, second, third = parallel.body_statements()
    assert isinstance(first, Assignment) and narrow(first.target, Name).value == "a"
    assert isinstance(first.value, Session) and prompt(first.value).text == "x"
    assert isinstance(second, Assignment) and narrow(second.target, Name).value == "b"
    assert isinstance(third, Session)
    assert narrow(first.target, Name).start_pos == (2, 2)


def test_parallel_with_modifiers() -> None:
    text = 'parallel ("any", count: 2, on-fail: "continue"):\n  session "x"\n  session "y"\n'
    parallel = single(text, Parallel)
    modifiers = parallel.modifiers
    assert isinstance(modifiers, Arguments)
    items = modifiers.items()
    assert len(items) == 3
    assert isinstance(items[0], String) and items[0].text == "any"
    assert [k.name.value for k in modifiers.keyword_arguments()] == ["count", "on-fail"]
    assert all(isinstance(k, KeywordArgument) for k in items[1:])
    assert narrow(modifiers.keyword_arguments()[0].value, Number).as_int() == 2
    assert narrow(modifiers.keyword_arguments()[1].value, String).text == "continue"
    assert [code(p) for p in modifiers.positional()] == ['"any"']
    assert len(parallel.body_statements()) == 2


def test_parallel_assigned_to_variable() -> None:
    let = single('let results = parallel:\n  a = session "x"\n', LetBinding)
    assert isinstance(let.value, Parallel)
    (branch,) = let.value.body_statements()
    assert isinstance(branch, Assignment)


# --------------------------------------------------------------------------- loops


def test_repeat() -> None:
    repeat = single('repeat 3:\n  session "again"\n', Repeat)
    assert isinstance(repeat.count, Number) and repeat.count.as_int() == 3
    assert repeat.index is None
    assert len(repeat.body_statements()) == 1


def test_repeat_with_index() -> None:
    repeat = single('repeat 3 as i:\n  session "again {i}"\n', Repeat)
    assert narrow(repeat.count, Number).as_int() == 3
    assert repeat.index is not None and repeat.index.value == "i"
    assert repeat.index.start_pos == (1, 12)


def test_for_each() -> None:
    loop = single('for topic in topics:\n  session "Study {topic}"\n', ForEach)
    assert not loop.is_parallel
    assert loop.item is not None and loop.item.value == "topic"
    assert loop.index is None
    assert isinstance(loop.collection, Name) and loop.collection.value == "topics"
    assert len(loop.body_statements()) == 1


def test_for_each_with_index_and_inline_array() -> None:
    loop = single('for x, i in ["a", "b"]:\n  session "x"\n', ForEach)
    assert narrow(loop.item, Name).value == "x"
    assert loop.index is not None and loop.index.value == "i"
    assert isinstance(loop.collection, ArrayLiteral)
    assert [narrow(e, String).text for e in loop.collection.elements()] == ["a", "b"]


def test_parallel_for_each() -> None:
    loop = single('parallel for x in items:\n  session "x"\n', ForEach)
    assert loop.is_parallel
    assert narrow(loop.item, Name).value == "x"
    assert narrow(loop.collection, Name).value == "items"
    assert isinstance(loop.children[0], Keyword) and loop.children[0].value == "parallel"


def test_plain_loop() -> None:
    loop = single('loop:\n  session "forever"\n', Loop)
    assert loop.kind is None
    assert loop.condition is None
    assert loop.modifiers is None
    assert loop.index is None
    assert len(loop.body_statements()) == 1


def test_loop_until() -> None:
    loop = single('loop until **the draft is good**:\n  session "Improve"\n', Loop)
    assert loop.kind == "until"
    assert isinstance(loop.condition, Discretion)
    assert loop.condition.condition == "the draft is good"
    assert loop.condition.start_pos == (1, 11)


def test_loop_while_with_max_and_index() -> None:
    loop = single('loop while **more to do** (max: 5) as n:\n  session "Work"\n', Loop)
    assert loop.kind == "while"
    assert narrow(loop.condition, Discretion).condition == "more to do"
    assert isinstance(loop.modifiers, Arguments)
    (limit,) = loop.modifiers.keyword_arguments()
    assert limit.name.value == "max"
    assert narrow(limit.value, Number).as_int() == 5
    assert loop.index is not None and loop.index.value == "n"


def test_loop_with_max_only() -> None:
    loop = single('loop (max: 10):\n  session "Work"\n', Loop)
    assert loop.kind is None
    modifiers = narrow(loop.modifiers, Arguments)
    assert narrow(modifiers.keyword_arguments()[0].value, Number).as_int() == 10


# --------------------------------------------------------------------------- pipelines


@pytest.mark.parametrize("operation", ["map", "filter", "pmap"])
def test_single_stage_pipeline(operation: str) -> None:
    text = f'let out = items | {operation}:\n  session "Process"\n    context: item\n'
    let = single(text, LetBinding)
    pipeline = let.value
    assert isinstance(pipeline, Pipeline)
    assert isinstance(pipeline.source, Name) and pipeline.source.value == "items"
    (stage,) = pipeline.stages()
    assert isinstance(stage, PipeStage)
    assert isinstance(stage.operation, Keyword) and stage.operation.value == operation
    assert stage.parameter_list is None
    (session,) = stage.body_statements()
    assert isinstance(session, Session)
    context = session.get_property("context")
    assert context is not None and narrow(context.value, Name).value == "item"


def test_reduce_stage() -> None:
    let = single('let all = ideas | reduce(acc, idea):\n  session "Merge"\n', LetBinding)
    (stage,) = narrow(let.value, Pipeline).stages()
    assert narrow(stage.operation, Keyword).value == "reduce"
    assert isinstance(stage.parameter_list, Parameters)
    assert [n.value for n in stage.parameter_list.names()] == ["acc", "idea"]


def test_pipeline_from_array_source() -> None:
    let = single('let out = ["a", "b"] | map:\n  session "x"\n', LetBinding)
    assert isinstance(narrow(let.value, Pipeline).source, ArrayLiteral)


def test_chained_pipeline_on_indented_lines() -> None:
    text = (
        "let result = topics\n"
        "  | filter:\n"
        '      session "Keep?"\n'
        "  | map:\n"
        '      session "Pitch"\n'
        "        context: item\n"
        "  | reduce(all, one):\n"
        '      session "Merge"\n'
        'session "after"\n'
    )
    module = parse_clean(text)
    let, after = module.statements()
    assert isinstance(let, LetBinding)
    pipeline = let.value
    assert isinstance(pipeline, Pipeline)
    assert narrow(pipeline.source, Name).value == "topics"
    stages = pipeline.stages()
    assert [narrow(s.operation, Keyword).value for s in stages] == ["filter", "map", "reduce"]
    assert [len(s.body_statements()) for s in stages] == [1, 1, 1]
    assert [n.value for n in narrow(stages[2].parameter_list, Parameters).names()] == ["all", "one"]
    assert stages[1].start_pos == (4, 2)
    assert isinstance(after, Session) and prompt(after).text == "after"


def test_pipeline_stages_on_one_line_chain() -> None:
    text = 'let r = items | filter:\n  session "f"\n'
    let = single(text, LetBinding)
    stages = narrow(let.value, Pipeline).stages()
    assert [narrow(s.operation, Keyword).value for s in stages] == ["filter"]


# --------------------------------------------------------------------------- try / throw


def test_try_catch_finally() -> None:
    text = (
        "try:\n"
        '  session "Risky"\n'
        "catch as err:\n"
        '  session "Recover"\n'
        "    context: err\n"
        "finally:\n"
        '  session "Clean up"\n'
    )
    statement = single(text, TryStatement)
    assert len(statement.body_statements()) == 1
    (catch,) = statement.catch_clauses()
    assert isinstance(catch, CatchClause)
    assert catch.error_name is not None and catch.error_name.value == "err"
    assert catch.error_name.start_pos == (3, 9)
    assert len(catch.body_statements()) == 1
    assert isinstance(statement.finally_clause, FinallyClause)
    assert prompt(statement.finally_clause.body_statements()[0]).text == "Clean up"


def test_try_catch_without_name() -> None:
    statement = single('try:\n  session "a"\ncatch:\n  session "b"\n', TryStatement)
    (catch,) = statement.catch_clauses()
    assert catch.error_name is None
    assert statement.finally_clause is None


def test_try_finally_without_catch() -> None:
    statement = single('try:\n  session "a"\nfinally:\n  session "b"\n', TryStatement)
    assert statement.catch_clauses() == []
    assert statement.finally_clause is not None


def test_throw_statements() -> None:
    text = 'try:\n  session "a"\ncatch:\n  throw\nthrow "Something broke"\n'
    module = parse_clean(text)
    statement, throw = module.statements()
    (rethrow,) = narrow(statement, TryStatement).catch_clauses()[0].body_statements()
    assert isinstance(rethrow, ThrowStatement)
    assert rethrow.message is None
    assert isinstance(throw, ThrowStatement)
    assert throw.message is not None and throw.message.text == "Something broke"


# --------------------------------------------------------------------------- choice


def test_choice_with_options() -> None:
    text = (
        "choice **the best approach**:\n"
        '  option "Quick":\n'
        '    session "Do it fast"\n'
        '  option "Thorough":\n'
        '    session "Do it well"\n'
        '    session "Check it"\n'
    )
    choice = single(text, ChoiceStatement)
    assert isinstance(choice.criteria, Discretion)
    assert choice.criteria.condition == "the best approach"
    options = choice.options()
    assert [type(o) for o in options] == [OptionClause, OptionClause]
    assert [narrow(o.label, String).text for o in options] == ["Quick", "Thorough"]
    assert [len(o.body_statements()) for o in options] == [1, 2]
    assert narrow(options[1].label, String).start_pos == (4, 9)


def test_choice_with_multiline_criteria() -> None:
    text = 'choice ***\n  which way\n  to go\n***:\n  option "A":\n    session "a"\n'
    choice = single(text, ChoiceStatement)
    assert isinstance(choice.criteria, Discretion)
    assert choice.criteria.is_multiline
    assert choice.criteria.condition == "which way\n  to go"
    assert choice.options()[0].start_pos == (5, 2)


# --------------------------------------------------------------------------- if


def test_if_elif_else() -> None:
    text = (
        "if **tests fail**:\n"
        '  session "Fix"\n'
        "elif **tests are slow**:\n"
        '  session "Speed up"\n'
        "elif **no tests**:\n"
        '  session "Write tests"\n'
        "else:\n"
        '  session "Ship"\n'
    )
    statement = single(text, IfStatement)
    assert isinstance(statement.condition, Discretion)
    assert statement.condition.condition == "tests fail"
    elifs = statement.elif_clauses()
    assert [type(c) for c in elifs] == [ElifClause, ElifClause]
    conditions = [narrow(c.condition, Discretion).condition for c in elifs]
    assert conditions == ["tests are slow", "no tests"]
    assert isinstance(statement.else_clause, ElseClause)
    assert prompt(statement.else_clause.body_statements()[0]).text == "Ship"
    assert statement.else_clause.start_pos == (7, 0)


def test_if_alone() -> None:
    statement = single('if **c**:\n  session "x"\n', IfStatement)
    assert statement.elif_clauses() == []
    assert statement.else_clause is None


def test_if_followed_by_statement() -> None:
    module = parse_clean('if **c**:\n  session "x"\nsession "y"\n')
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    assert statement.else_clause is None
    assert isinstance(after, Session)


def test_nested_if_inside_loop() -> None:
    text = 'for x in xs:\n  if **x is big**:\n    session "big"\n  else:\n    session "small"\n'
    loop = single(text, ForEach)
    (statement,) = loop.body_statements()
    assert isinstance(statement, IfStatement)
    assert statement.else_clause is not None
    assert statement.else_clause.start_pos == (4, 2)


# --------------------------------------------------------------------------- discretion


def test_discretion_single_line() -> None:
    module = parse_clean('if **the user  agrees **:\n  session "x"\n')
    cond = narrow(module.statements()[0], IfStatement).condition
    assert isinstance(cond, Discretion)
    assert not cond.is_multiline
    assert cond.is_terminated
    assert cond.condition == "the user  agrees"
    assert cond.value == "**the user  agrees **"


def test_discretion_multiline() -> None:
    text = 'if ***\n  the plan is complete\n  and reviewed\n***:\n  session "go"\nsession "z"\n'
    module = parse_clean(text)
    statement, after = module.statements()
    assert isinstance(statement, IfStatement)
    cond = statement.condition
    assert isinstance(cond, Discretion)
    assert cond.is_multiline
    assert cond.is_terminated
    assert cond.condition == "the plan is complete\n  and reviewed"
    assert cond.start_pos == (1, 3)
    assert cond.end_pos == (4, 3)
    assert statement.body_statements()[0].start_pos == (5, 2)
    assert after.start_pos == (6, 0)


def test_discretion_with_single_star_inside() -> None:
    module = parse_clean('if **a * b**:\n  session "x"\n')
    cond = narrow(module.statements()[0], IfStatement).condition
    assert narrow(cond, Discretion).condition == "a * b"


# --------------------------------------------------------------------------- expressions


def test_program_call() -> None:
    let = single('let r = research(topic: "AI", depth: 2)\n', LetBinding)
    call = let.value
    assert isinstance(call, ProgramCall)
    assert narrow(call.name, Name).value == "research"
    kwargs = narrow(call.arguments, Arguments).keyword_arguments()
    assert [k.name.value for k in kwargs] == ["topic", "depth"]
    assert narrow(kwargs[1].value, Number).as_int() == 2


def test_program_call_as_statement() -> None:
    call = single('research(topic: "AI")\n', ProgramCall)
    assert narrow(call.name, Name).value == "research"


def test_program_call_without_arguments() -> None:
    let = single("let r = research()\n", LetBinding)
    assert isinstance(let.value, ProgramCall)
    assert narrow(let.value.arguments, Arguments).items() == []


def test_attribute_access() -> None:
    session = single('session "x"\n  context: result.findings\n', Session)
    value = property_value(session, "context")
    assert isinstance(value, Attribute)
    assert isinstance(value.base, Name) and value.base.value == "result"
    assert [n.value for n in value.attribute_names()] == ["findings"]
    assert value.dotted == "result.findings"


def test_attribute_chain_in_array() -> None:
    session = single('session "x"\n  context: [r.a.b, other]\n', Session)
    array = narrow(property_value(session, "context"), ArrayLiteral)
    first = array.elements()[0]
    assert isinstance(first, Attribute)
    assert first.dotted == "r.a.b"
    assert [n.value for n in first.attribute_names()] == ["a", "b"]


def test_attribute_as_binding_value() -> None:
    let = single("let f = result.findings\n", LetBinding)
    assert isinstance(let.value, Attribute)


def test_comparison_condition() -> None:
    statement = single('if depth <= 0:\n  session "stop"\n', IfStatement)
    cond = statement.condition
    assert isinstance(cond, Comparison)
    assert cond.operator.value == "<="
    assert code(cond) == "depth <= 0"


@pytest.mark.parametrize("op", ["==", "!=", "<", ">", "<=", ">="])
def test_comparison_operators(op: str) -> None:
    statement = single(f'if a {op} "b":\n  session "x"\n', IfStatement)
    assert isinstance(statement.condition, Comparison)
    assert statement.condition.operator.value == op


def test_not_condition() -> None:
    statement = single('if not done:\n  session "x"\n', IfStatement)
    cond = statement.condition
    assert isinstance(cond, NotExpression)
    assert isinstance(cond.children[0], Keyword) and cond.children[0].value == "not"
    assert cond.children[1].value == "done"


def test_boolean_conditions() -> None:
    statement = single('if a and b or not c:\n  session "x"\n', IfStatement)
    cond = statement.condition
    assert isinstance(cond, BooleanExpression)
    assert code(cond) == "a and b or not c"
    # `and` binds tighter than `or`.
    assert isinstance(cond.children[0], BooleanExpression)
    assert code(cond.children[0]) == "a and b"
    assert cond.children[1].value == "or"
    assert isinstance(cond.children[2], NotExpression)


def test_discretion_and_discretion() -> None:
    statement = single('if **x** and **y**:\n  session "z"\n', IfStatement)
    cond = statement.condition
    assert isinstance(cond, BooleanExpression)
    assert [type(c) for c in cond.children] == [Discretion, Keyword, Discretion]


def test_arithmetic() -> None:
    let = single("let total = a + b\n", LetBinding)
    value = let.value
    assert isinstance(value, BinaryExpression)
    assert [c.value for c in value.children] == ["a", "+", "b"]


def test_arithmetic_in_comparison() -> None:
    statement = single('if count + 1 > limit:\n  session "x"\n', IfStatement)
    cond = statement.condition
    assert isinstance(cond, Comparison)
    assert isinstance(cond.children[0], BinaryExpression)
    assert cond.operator.value == ">"


def test_object_literal_with_entries() -> None:
    let = single('let o = { name: "x", n: 2 }\n', LetBinding)
    value = let.value
    assert isinstance(value, ObjectLiteral)
    assert not value.is_shorthand
    entries = value.entries()
    assert [code(narrow(e, ObjectEntry).key) for e in entries] == ["name", "n"]
    assert narrow(narrow(entries[1], ObjectEntry).value, Number).as_int() == 2


# --------------------------------------------------------------------------- a whole program


PROGRAM = """\
# A research workflow
use "@team/search" as search
input topic: "The subject"

agent researcher:
  model: sonnet
  prompt: "You dig deep"

let { results } = search(query: topic)

parallel ("all", on-fail: "ignore"):
  notes = session: researcher
    context: results
  summary = session "Summarize {topic}"

loop until **the summary is good** (max: 3) as round:
  summary = session "Improve it"
    context: [summary, notes]

try:
  do:
    session "Publish"
catch as failure:
  throw "Could not publish"

output report = session "Final report"
  context: { summary, notes }
"""


def test_whole_program_is_clean() -> None:
    module = parse_clean(PROGRAM)
    kinds = [type(s) for s in module.statements()]
    assert kinds == [
        UseStatement,
        InputDeclaration,
        AgentDefinition,
        LetBinding,
        Parallel,
        Loop,
        TryStatement,
        OutputBinding,
    ]


def test_whole_program_positions() -> None:
    module = parse_clean(PROGRAM)
    assert leaf_at(module, "use").start_pos == (2, 0)
    assert leaf_at(module, "researcher").start_pos == (5, 6)
    assert leaf_at(module, "parallel").start_pos == (11, 0)
    assert leaf_at(module, "notes").start_pos == (12, 2)
    assert leaf_at(module, '"Summarize {topic}"').start_pos == (14, 20)
    assert leaf_at(module, "**the summary is good**").start_pos == (16, 11)
    assert leaf_at(module, "round").start_pos == (16, 47)
    assert leaf_at(module, "failure").start_pos == (23, 9)
    assert leaf_at(module, "report").start_pos == (26, 7)
    assert module.end_marker.start_pos == (28, 0)
    loop = module.statements()[5]
    assert loop.start_pos == (16, 0)
    assert loop.end_pos == (19, 0)


def test_keywords_are_marked() -> None:
    module = parse_clean(PROGRAM)
    keywords = {leaf.value for leaf in iter_leaves(module) if isinstance(leaf, Keyword)}
    assert {"use", "as", "input", "agent", "let", "parallel", "loop", "until"} <= keywords
    assert {"session", "try", "do", "catch", "throw", "output"} <= keywords
    # Property names and variables stay names.
    assert isinstance(leaf_at(module, "model"), Name)
    assert not isinstance(leaf_at(module, "model"), Keyword)
    assert not isinstance(leaf_at(module, "topic", 1), Keyword)
