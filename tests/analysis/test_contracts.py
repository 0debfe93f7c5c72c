"""Contracts of imported programs, across files: the loader (paths, local files, the import
cache, caching, cycles) and the rules that need it (E026-E028, E071, E072, I001), through
`check_text` and through the real `prose check` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openprose.analysis.contracts import (
    ContractLoader,
    Kind,
    Status,
    classify,
    contract_of,
    project_root_of,
    read_contract,
)
from openprose.checking import check_text
from openprose.diagnostics import Diagnostic
from openprose.syntax import parse
from tests.fifos import finishes

RESEARCH = """\
input topic: "The subject to research"
input depth: "How deep to go"
let notes = session "Research {topic} to {depth} depth"
input angle: "Any particular angle? (a runtime prompt)"
output findings = session "Summarise the research"
  context: notes
output sources = session "List the sources"
  context: notes
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def check(path: Path, text: str | None = None) -> list[Diagnostic]:
    if text is None:
        text = path.read_text(encoding="utf-8")
    else:
        write(path, text)
    return check_text(text, str(path))


def where(d: Diagnostic) -> tuple[tuple[int, int], tuple[int, int]]:
    return d.start, d.end


def codes(found: list[Diagnostic]) -> list[str]:
    return [d.code for d in found]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "lib" / "research.prose", RESEARCH)
    return tmp_path


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("", Kind.EMPTY),
        ("  ", Kind.EMPTY),
        ("@acme/research", Kind.REGISTRY),
        ("@a-b_c.d/x.y-z_1", Kind.REGISTRY),
        ("acme/research", Kind.REGISTRY),
        ("./research.prose", Kind.LOCAL),
        ("../lib/research.prose", Kind.LOCAL),
        ("lib/research.prose", Kind.LOCAL),
        ("/abs/research.prose", Kind.LOCAL),
        ("research", Kind.LOCAL),
        ("https://example.com/research.prose", Kind.URL),
        ("http://example.com/research.prose", Kind.URL),
        ("github:acme/research", Kind.SCHEME),
        ("npm:research", Kind.SCHEME),
        ("git+ssh://host/research.prose", Kind.SCHEME),
        ("@acme", Kind.INVALID),
        ("@acme/research/extra", Kind.INVALID),
        ("a/b/c", Kind.INVALID),
        ("summarise tool", Kind.INVALID),
        (" @acme/research", Kind.INVALID),
        ("@../x", Kind.INVALID),
    ],
)
def test_classify(text: str, kind: Kind) -> None:
    assert classify(text).kind is kind


def test_same_program_written_two_ways_has_one_key() -> None:
    assert classify("@acme/research").key == classify("acme/research").key
    assert classify("./helper").key == classify("./helper.prose").key


# --------------------------------------------------------------------------- contracts


def test_contract_of_a_program() -> None:
    text = RESEARCH + (
        "block helper(x):\n"
        '  input hidden: "not the program\'s"\n'
        '  output inner = session "{x}"\n'
        "if **the sources are thin**:\n"
        '  output caveat = session "Note the gaps"\n'
    )
    contract = contract_of(parse(text), Path("research.prose"))
    assert [(p.name, p.required) for p in contract.inputs] == [
        ("topic", True),
        ("depth", True),
        ("angle", False),  # after an executable statement: a runtime prompt
    ]
    assert [p.name for p in contract.outputs] == ["findings", "sources", "caveat"]
    topic = contract.input("topic")
    assert topic is not None and topic.start == (1, 6)
    findings = contract.output("findings")
    assert findings is not None and findings.end == (5, 15)


def test_agents_and_uses_do_not_end_the_header() -> None:
    text = 'use "@acme/x"\nagent a:\n  model: sonnet\n# a comment\ninput late: "still required"\n'
    contract = contract_of(parse(text), Path("p.prose"))
    assert [(p.name, p.required) for p in contract.inputs] == [("late", True)]
    assert [u.text for u in contract.uses] == ["@acme/x"]


def test_contracts_are_cached_by_modification_time(tmp_path: Path) -> None:
    file = write(tmp_path / "p.prose", 'input a: "x"\n')
    first = read_contract(file)
    assert read_contract(file) is first  # parsed once
    file.write_text('input a: "x"\ninput b: "y"\n', encoding="utf-8")
    stat = file.stat()
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = read_contract(file)
    assert second is not first
    assert [p.name for p in second.inputs] == ["a", "b"]


def test_byte_order_mark_is_allowed(tmp_path: Path) -> None:
    file = tmp_path / "p.prose"
    file.write_bytes(b"\xef\xbb\xbf" + b'input a: "x"\noutput r = session "{a}"\n')
    contract = read_contract(file)
    assert [p.name for p in contract.inputs] == ["a"]
    assert contract.inputs[0].start == (1, 6)


def test_project_root(tmp_path: Path) -> None:
    (tmp_path / ".prose").mkdir()
    nested = write(tmp_path / "a" / "b" / "p.prose", "")
    assert project_root_of(nested) == tmp_path
    lone = tmp_path.parent / f"{tmp_path.name}-lone" / "p.prose"
    write(lone, "")
    assert project_root_of(lone) == lone.parent


def test_registry_cache_layouts(tmp_path: Path) -> None:
    importer = write(tmp_path / "src" / "main.prose", "")
    runs = tmp_path / ".prose" / "runs"
    write(runs / "20260101-090000-aaaaaa/imports/acme--research/program.prose", 'input old: "x"\n')
    write(runs / "20260102-090000-bbbbbb/imports/acme--research/program.prose", 'input new: "x"\n')
    loader = ContractLoader()
    found = loader.resolve(importer, "@acme/research")
    assert found.status is Status.FOUND and found.contract is not None
    assert [p.name for p in found.contract.inputs] == ["new"]  # the most recent run's copy
    write(tmp_path / ".prose/imports/acme--research/program.prose", 'input vendored: "x"\n')
    found = ContractLoader().resolve(importer, "acme/research")
    assert found.contract is not None
    assert [p.name for p in found.contract.inputs] == ["vendored"]
    assert ContractLoader().resolve(importer, "@acme/other").status is Status.OFFLINE


def test_a_loader_lists_the_runs_once_for_its_analysis(tmp_path: Path) -> None:
    # A loader serves one analysis: the project's runs are listed once for all its
    # registry imports (a program with 80 of them listed them 80 times per keystroke); the
    # next analysis's loader sees the runs made since.
    importer = write(tmp_path / "src" / "main.prose", "")
    (tmp_path / ".prose").mkdir()
    loader = ContractLoader()
    assert loader.resolve(importer, "@acme/research").status is Status.OFFLINE
    write(
        tmp_path / ".prose/runs/20260103-090000-cccccc/imports/acme--research/program.prose",
        'input later: "x"\n',
    )
    assert loader.resolve(importer, "@acme/research").status is Status.OFFLINE
    found = ContractLoader().resolve(importer, "@acme/research")
    assert found.status is Status.FOUND and found.contract is not None
    assert [p.name for p in found.contract.inputs] == ["later"]


def test_explicit_project_root(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere/.prose/imports/acme--x/program.prose", 'input i: "x"\n')
    loader = ContractLoader(tmp_path / "elsewhere")
    assert loader.resolve(tmp_path / "main.prose", "@acme/x").status is Status.FOUND


def test_local_resolution(project: Path) -> None:
    loader = ContractLoader()
    importer = project / "main.prose"
    for text in ("./lib/research.prose", "lib/research.prose", "./lib/research"):
        assert loader.resolve(importer, text).status is Status.FOUND
    missing = loader.resolve(importer, "./nowhere")
    assert missing.status is Status.MISSING
    assert missing.file == (project / "nowhere.prose")
    assert loader.resolve(None, "./lib/research.prose").status is Status.UNRESOLVED


# --------------------------------------------------------------------------- E026-E028

CALLER = 'use "./lib/research.prose" as research\n'


@pytest.mark.parametrize(
    ("code", "text", "start", "end"),
    [
        (
            "E026",
            CALLER + 'let r = research(topic: "tides")\n',
            (2, 8),
            (2, 32),
        ),
        (
            "E027",
            CALLER + 'let r = research(topic: "tides", depth: "brief", tone: "dry")\n',
            (2, 49),
            (2, 53),
        ),
        (
            "E028",
            CALLER
            + 'let r = research(topic: "tides", depth: "brief")\n'
            + 'session "Digest"\n  context: r.summary\n',
            (4, 13),
            (4, 20),
        ),
    ],
)
def test_cross_file_bad(code: str, text: str, start: object, end: object, project: Path) -> None:
    found = check(project / "main.prose", text)
    assert [(d.code, where(d)) for d in found] == [(code, (start, end))]


GOOD_CALLS = CALLER + (
    'let r = research(topic: "tides", depth: "brief")\n'
    'let s = research(topic: "tides", depth: "brief", angle: "economic")\n'
    'session "Digest {r.findings}"\n'
    "  context: [r.sources, s.findings]\n"
)


def test_cross_file_good(project: Path) -> None:
    assert check(project / "main.prose", GOOD_CALLS) == []


def test_missing_inputs_are_listed_with_their_declarations(project: Path) -> None:
    found = check(project / "main.prose", CALLER + "research()\n")
    (d,) = found
    assert d.code == "E026"
    assert d.message == "missing required inputs `topic` and `depth` of `research`"
    assert where(d) == ((2, 0), (2, 10))
    research = str((project / "lib" / "research.prose").resolve())
    assert [(r.message, r.start, r.end, r.path) for r in d.related] == [
        ("`topic` is declared here", (1, 6), (1, 11), research),
        ("`depth` is declared here", (2, 6), (2, 11), research),
    ]


def test_positional_arguments_hint(project: Path) -> None:
    (d,) = check(project / "main.prose", CALLER + 'research("tides", "brief")\n')
    assert d.code == "E026" and "arguments are passed by name" in d.message


def test_unknown_input_suggests(project: Path) -> None:
    text = CALLER + 'research(topik: "tides", depth: "brief")\n'
    found = check(project / "main.prose", text)
    assert codes(found) == ["E026", "E027"]
    assert found[1].message.startswith(
        "`topik` is not an input of `research`: did you mean `topic`?"
    )


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # An interpolation.
        ('let r = R\nsession "Digest {r.summary}"\n', (3, 19), (3, 26)),
        # A const, in a context array.
        ('const r = R\nsession "x"\n  context: [r.findings, r.summary]\n', (4, 26), (4, 33)),
        # Destructuring.
        ("let { findings, summary } = R\n", (2, 16), (2, 23)),
        # An output of this program.
        ('output r = R\nsession "x"\n  context: r.summary\n', (4, 13), (4, 20)),
        # A named parallel branch.
        ('parallel:\n  r = R\nsession "x"\n  context: r.summary\n', (5, 13), (5, 20)),
        # Reassigned from the same program.
        ('let r = R\nr = R\nsession "{r.summary}"\n', (4, 12), (4, 19)),
    ],
)
def test_unknown_output_everywhere(text: str, start: object, end: object, project: Path) -> None:
    call = 'research(topic: "tides", depth: "brief")'
    found = check(project / "main.prose", CALLER + text.replace("R", call))
    assert [(d.code, where(d)) for d in found] == [("E028", (start, end))]
    assert found[0].message == (
        "`summary` is not an output of `research` (it declares `findings` and `sources`)"
    )


def test_output_suggestion(project: Path) -> None:
    text = CALLER + 'let r = research(topic: "t", depth: "d")\nsession "{r.finding}"\n'
    (d,) = check(project / "main.prose", text)
    assert "did you mean `findings`?" in d.message


def test_variable_rebound_to_something_else_is_not_checked(project: Path) -> None:
    text = CALLER + (
        'let r = research(topic: "t", depth: "d")\nr = session "Something else"\n'
        'session "{r.anything}"\n'
    )
    assert check(project / "main.prose", text) == []


def test_errors_inside_the_imported_program_stay_there(project: Path) -> None:
    write(
        project / "lib" / "broken.prose",
        'input topic: "x"\nsession: ghost\nlet x = session "a"\nlet x = session "b"\n',
    )
    text = 'use "./lib/broken.prose" as broken\nbroken(topic: "t")\n'
    assert check(project / "main.prose", text) == []


def test_registry_program_from_the_cache(project: Path) -> None:
    write(project / ".prose/imports/acme--research/program.prose", RESEARCH)
    sub = project / "programs" / "main.prose"
    text = 'use "@acme/research"\nresearch(topic: "tides")\n'
    (d,) = check(sub, text)
    assert d.code == "E026" and where(d) == ((2, 0), (2, 24))


def test_registry_program_not_cached(project: Path) -> None:
    text = 'use "@acme/research"\nresearch(topic: "tides")\n'
    (d,) = check(project / "main.prose", text)
    assert d.code == "I001" and where(d) == ((1, 4), (1, 20))
    assert d.message.startswith("contract of `@acme/research` not verified offline")


# --------------------------------------------------------------------------- E071, E072


def test_import_cycle(tmp_path: Path) -> None:
    a = write(tmp_path / "a.prose", 'use "./b.prose"\nsession "a"\n')
    b = write(tmp_path / "b.prose", 'use "./a.prose"\nsession "b"\n')
    (d,) = check(a)
    assert d.code == "E071" and where(d) == ((1, 4), (1, 15))
    assert d.message == "import cycle: `a.prose` -> `b.prose` -> `a.prose`"
    assert [(r.message, r.start, r.end, r.path) for r in d.related] == [
        ("`b.prose` uses `./a.prose` here", (1, 4), (1, 15), str(b.resolve()))
    ]
    assert codes(check(b)) == ["E071"]


def test_longer_cycle_through_directories(tmp_path: Path) -> None:
    a = write(tmp_path / "a.prose", 'use "./lib/b.prose" as b\nsession "a"\n')
    write(tmp_path / "lib" / "b.prose", 'use "./c.prose"\n')
    write(tmp_path / "lib" / "c.prose", 'use "../a.prose"\n')
    (d,) = check(a)
    assert d.message == "import cycle: `a.prose` -> `lib/b.prose` -> `lib/c.prose` -> `a.prose`"
    assert len(d.related) == 2


def test_cycle_elsewhere_is_not_this_programs(tmp_path: Path) -> None:
    a = write(tmp_path / "a.prose", 'use "./b.prose"\n')
    write(tmp_path / "b.prose", 'use "./c.prose"\n')
    write(tmp_path / "c.prose", 'use "./b.prose"\n')
    assert check(a) == []


def test_self_import(tmp_path: Path) -> None:
    (d,) = check(tmp_path / "a.prose", 'use "./a.prose" as me\n')
    assert d.code == "E071" and d.message == "import cycle: `./a.prose` is this program itself"


def test_missing_local_program(tmp_path: Path) -> None:
    (d,) = check(tmp_path / "main.prose", 'use "../nowhere/missing.prose" as m\nm(x: 1)\n')
    assert d.code == "E072" and where(d) == ((1, 4), (1, 30))
    assert d.message.startswith("imported program not found: `../nowhere/missing.prose`")


def test_missing_bare_name_hints_at_the_registry(tmp_path: Path) -> None:
    (d,) = check(tmp_path / "main.prose", 'use "summarise"\n')
    assert d.code == "E072" and where(d) == ((1, 4), (1, 15))
    assert "`@handle/summarise`" in d.message


def test_unreadable_program(tmp_path: Path) -> None:
    (tmp_path / "bad.prose").write_bytes(b"\xff\xfe\x00 not utf-8")
    (d,) = check(tmp_path / "main.prose", 'use "./bad.prose"\n')
    assert d.code == "E072" and "cannot be read" in d.message


needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


@needs_fifos
def test_imported_fifo_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "x.prose"
    os.mkfifo(fifo)
    (d,) = finishes(lambda: check(tmp_path / "main.prose", 'use "./x" as x\n'), fifo)
    assert d.code == "E072" and where(d) == ((1, 4), (1, 9))
    assert d.message == (
        f"imported program not found: `./x`: `{fifo.resolve()}` cannot be read: not a regular file"
    )


@needs_fifos
def test_imported_device_behind_a_link_is_not_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "zero.prose").symlink_to("/dev/zero")
    (d,) = check(tmp_path / "main.prose", 'use "./zero.prose" as z\n')
    assert d.code == "E072"
    assert d.message.endswith("`/dev/zero` cannot be read: not a regular file")


def test_imported_program_over_the_size_limit(tmp_path: Path) -> None:
    write(tmp_path / "big.prose", 'input x: "an x"\n' + "# padding\n" * 20)
    resolution = ContractLoader(max_size=100).resolve(tmp_path / "main.prose", "./big")
    assert resolution.status is Status.MISSING
    assert resolution.reason == "cannot be read: larger than 100 bytes"
    assert ContractLoader().resolve(tmp_path / "main.prose", "./big").status is Status.FOUND


def test_a_regular_file_beats_a_directory_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    write(tmp_path / "lib.prose", 'input x: "an x"\n')
    resolution = ContractLoader().resolve(tmp_path / "main.prose", "./lib")
    assert (
        resolution.status is Status.FOUND and resolution.file == (tmp_path / "lib.prose").resolve()
    )


def test_good_imports_are_clean(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "b.prose", 'input x: "an x"\noutput y = session "{x}"\n')
    a = write(
        tmp_path / "a.prose",
        'use "./lib/b.prose" as b\nlet r = b(x: "1")\nsession "{r.y}"\n',
    )
    assert check(a) == []


# --------------------------------------------------------------------------- end to end


def test_prose_check_command_end_to_end(tmp_path: Path) -> None:
    write(tmp_path / ".prose/imports/acme--research/program.prose", RESEARCH)
    write(tmp_path / "lib" / "research.prose", RESEARCH)
    write(tmp_path / "cycle" / "a.prose", 'use "./b.prose"\n')
    write(tmp_path / "cycle" / "b.prose", 'use "./a.prose"\n')
    write(
        tmp_path / "main.prose",
        'use "./lib/research.prose" as research\n'
        'use "@acme/research" as cached\n'
        'use "@acme/uncached"\n'
        'use "./missing.prose"\n'
        'let r = research(topic: "tides")\n'
        'let c = cached(topic: "tides", depth: "brief", tone: "dry")\n'
        'session "{r.summary}"\n'
        'ghost(x: "1")\n',
    )
    run = subprocess.run(
        [sys.executable, "-m", "openprose", "check", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    items = json.loads(run.stdout)
    seen = sorted(
        (Path(i["path"]).relative_to(tmp_path).as_posix(), i["line"], i["column"], i["code"])
        for i in items
    )
    assert seen == [
        ("cycle/a.prose", 1, 5, "E071"),
        ("cycle/b.prose", 1, 5, "E071"),
        ("main.prose", 3, 5, "I001"),
        ("main.prose", 4, 5, "E072"),
        ("main.prose", 5, 9, "E026"),
        ("main.prose", 6, 48, "E027"),
        ("main.prose", 7, 13, "E028"),
        ("main.prose", 8, 1, "E025"),
    ]


def test_a_directory_parses_each_imported_program_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openprose.syntax

    write(tmp_path / "lib" / "shared.prose", 'input x: "an x"\noutput y = session "{x}"\n')
    importers = [
        write(tmp_path / f"p{i}.prose", f'use "./lib/shared.prose" as s\ns(x: "{i}")\n')
        for i in range(3)
    ]
    parsed: list[str] = []
    real_parse = openprose.syntax.parse

    def counting_parse(text: str) -> object:
        parsed.append(text)
        return real_parse(text)

    monkeypatch.setattr(openprose.syntax, "parse", counting_parse)
    for importer in importers:
        assert check(importer) == []
    assert parsed.count('input x: "an x"\noutput y = session "{x}"\n') == 1
