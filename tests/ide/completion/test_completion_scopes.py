"""The variables completion offers are those visible at the cursor: defined before it, in a
scope enclosing it (blocks, loops, pipelines, catch), exported block outputs anywhere."""

from __future__ import annotations

from tests.ide.completion.completion_support import (
    item,
    labels,
)


def test_only_names_defined_before_the_position() -> None:
    source = 'let early = session "a"\nsession "x"\n  context: ‸\nlet late = session "b"\n'
    found = labels(source)
    assert "early" in found
    assert "late" not in found


def test_a_binding_does_not_see_itself() -> None:
    assert "r" not in labels('let a = session "x"\nlet r = ‸')
    assert "r" not in labels('let a = session "x"\nlet r = session "y"\n  context: ‸')


def test_exported_block_outputs_are_visible_anywhere() -> None:
    source = 'session "x"\n  context: ‸\nblock auth:\n  output token = session "t"\n'
    assert "token" in labels(source)


def test_block_parameters_inside_the_block_only() -> None:
    source = 'block review(topic):\n  session "x"\n    context: ‸\n'
    found = item(source, "topic")
    assert found.kind == "parameter"
    assert found.detail == "parameter · block review"
    assert "topic" not in labels('block review(topic):\n  session "x"\nsession "y"\n  context: ‸')


def test_loop_variables_inside_the_loop_only() -> None:
    inside = 'let xs = ["a"]\nfor x, i in xs:\n  session "{‸}"\n'
    assert {"x", "i", "xs"} <= set(labels(inside))
    after = 'let xs = ["a"]\nfor x in xs:\n  session "a"\nsession "b"\n  context: ‸'
    assert "x" not in labels(after)
    on_blank_line = 'let xs = ["a"]\nfor x in xs:\n  session "a"\n  let y = ‸'
    assert "x" in labels(on_blank_line)


def test_loop_lets_do_not_leak_after_the_loop() -> None:
    source = 'repeat 3:\n  let inner = session "a"\nsession "b"\n  context: ‸'
    assert "inner" not in labels(source)


def test_catch_error_variable() -> None:
    source = 'try:\n  session "a"\ncatch as err:\n  session "b"\n    context: ‸'
    assert item(source, "err").detail.startswith("error variable")


def test_pipeline_variables() -> None:
    source = 'let xs = ["a"]\nlet r = xs | map:\n  session "{‸}"'
    assert "item" in labels(source)
    reduce = 'let xs = ["a"]\nlet r = xs | reduce(acc, x):\n  session "{‸}"'
    assert {"acc", "x"} <= set(labels(reduce))
