"""The quoted path of `use` and the quoted name and source of `import`: each is checked as a
string (E001, E002) or reported missing (E004) right after what precedes it."""

from __future__ import annotations

import pytest

from openprose.syntax import parse, syntax_diagnostics

USE_PATH = 'expected a program path after `use`, such as `use "@handle/slug"`'
NO_FROM = 'expected `from "source"` after the imported name'


def diagnostics(text: str) -> list[tuple[str, tuple[int, int], tuple[int, int], str]]:
    module = parse(text)
    assert module.get_code() == text
    return [(d.code, d.start, d.end, d.message) for d in syntax_diagnostics(module)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('use "@a/b"\n', []),
        ("use\n", [("E004", (1, 3), (1, 3), USE_PATH)]),
        (
            "use x\n",
            [("E004", (1, 3), (1, 3), USE_PATH), ("E004", (1, 4), (1, 5), "unexpected `x`")],
        ),
        (
            "use as y\n",
            [("E004", (1, 3), (1, 3), USE_PATH)],
        ),
        ('import "a" from "b"\n', []),
        (
            "import\n",
            # One place, one code: ordered by message.
            [
                ("E004", (1, 6), (1, 6), NO_FROM),
                ("E004", (1, 6), (1, 6), "expected a quoted name after `import`"),
            ],
        ),
        (
            'import "a" from\n',
            [("E004", (1, 15), (1, 15), 'expected a quoted source after "from"')],
        ),
        (
            'import from "b"\n',
            [("E004", (1, 6), (1, 6), "expected a quoted name after `import`")],
        ),
    ],
)
def test_missing_path_or_name(text: str, expected: list) -> None:
    assert diagnostics(text) == expected


@pytest.mark.parametrize(
    ("text", "code", "start", "end"),
    [
        ('use "@a\\q"\n', "E002", (1, 7), (1, 9)),
        ('import "a\\q" from "b"\n', "E002", (1, 9), (1, 11)),
        ('import "a" from "b\\q"\n', "E002", (1, 18), (1, 20)),
        ('use "@a/b\n', "E001", (1, 4), (1, 9)),
        ('import "a" from "b\n', "E001", (1, 16), (1, 18)),
    ],
)
def test_the_strings_are_checked(text: str, code: str, start: tuple, end: tuple) -> None:
    assert [(c, s, e) for c, s, e, _ in diagnostics(text)] == [(code, start, end)]
