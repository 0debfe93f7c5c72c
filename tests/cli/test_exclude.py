"""Which files a directory search leaves out (issue 13, item 4), end to end through ``prose``:
``exclude`` / ``extend-exclude`` in configuration and on the command line, ``.gitignore``,
``--force-exclude``; ruff's semantics where the issue is silent."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cli.fixture_types import RunProse, WriteSource

# One error per file, so the concise report lists every file that was checked.
FLAGGED = 'session "about {missing}"\n'
LINE = re.compile(r"^(.+?):\d+:\d+: ", re.MULTILINE)


def checked(prose: RunProse, *args: str, cwd: Path | None = None) -> list[str]:
    result = prose("check", "--format", "concise", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return sorted(Path(p).as_posix() for p in LINE.findall(result.stdout))


def tree(source: WriteSource, *relatives: str) -> None:
    for relative in relatives:
        source(relative, FLAGGED)


def git_init(directory: Path) -> None:
    subprocess.run(["git", "init", "-q", str(directory)], check=True, timeout=60)


@pytest.fixture(autouse=True)
def own_repository(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    # Each test is its own repository, so that the .gitignore of one around the temporary
    # directory (under CI, .ci/run puts it inside the checkout) cannot change the answer.
    if "outside_a_repository" not in request.node.name:
        git_init(tmp_path)


# ------------------------------------------------------------------ default excludes


def test_tool_and_build_directories_are_left_out_by_default(
    prose: RunProse, source: WriteSource
) -> None:
    tree(
        source,
        "src/a.prose",
        "node_modules/pkg/b.prose",
        ".venv/lib/c.prose",
        "venv/d.prose",
        "build/e.prose",
        "dist/f.prose",
        "__pycache__/g.prose",
        ".git/h.prose",
        ".prose/runs/1/i.prose",
        "src/node_modules/j.prose",
    )
    assert checked(prose, ".") == ["src/a.prose"]
    assert checked(prose) == ["src/a.prose"]


def test_exclude_replaces_the_default_list(prose: RunProse, source: WriteSource) -> None:
    tree(source, "src/a.prose", "node_modules/b.prose", "fixtures/c.prose")
    assert checked(prose, "--exclude", "fixtures") == ["node_modules/b.prose", "src/a.prose"]


def test_extend_exclude_adds_to_the_default_list(prose: RunProse, source: WriteSource) -> None:
    tree(source, "src/a.prose", "node_modules/b.prose", "fixtures/c.prose", "src/x.gen.prose")
    assert checked(prose, "--extend-exclude", "fixtures,*.gen.prose") == ["src/a.prose"]
    # Repeated options add up too.
    assert checked(prose, "--extend-exclude", "fixtures", "--extend-exclude", "*.gen.prose") == [
        "src/a.prose"
    ]


def test_a_glob_with_a_slash_is_a_path_from_the_current_directory(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    tree(source, "tests/fixtures/a.prose", "docs/fixtures/b.prose", "tests/c.prose")
    assert checked(prose, "--extend-exclude", "tests/fixtures") == [
        "docs/fixtures/b.prose",
        "tests/c.prose",
    ]
    assert checked(prose, "--extend-exclude", "*/fixtures") == ["tests/c.prose"]
    # From tests/, the same words name tests/tests/fixtures, which does not exist.
    assert checked(prose, "--extend-exclude", "tests/fixtures", cwd=tmp_path / "tests") == [
        "c.prose",
        "fixtures/a.prose",
    ]


# ------------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("prose.toml", 'extend-exclude = ["tests/fixtures", "*.gen.prose"]\n'),
        (
            "pyproject.toml",
            '[tool.openprose]\nextend-exclude = ["tests/fixtures", "*.gen.prose"]\n',
        ),
    ],
)
def test_configured_globs_are_relative_to_the_configuration(
    prose: RunProse, source: WriteSource, tmp_path: Path, name: str, text: str
) -> None:
    source(name, text)
    tree(source, "tests/fixtures/a.prose", "tests/b.prose", "tests/c.gen.prose", "d.prose")
    assert checked(prose) == ["d.prose", "tests/b.prose"]
    # Run from a subdirectory, the globs still name the same paths.
    assert checked(prose, cwd=tmp_path / "tests") == ["b.prose"]


def test_configured_exclude_replaces_the_defaults_and_the_command_line_replaces_it(
    prose: RunProse, source: WriteSource
) -> None:
    source("prose.toml", 'exclude = ["fixtures"]\n')
    tree(source, "fixtures/a.prose", "node_modules/b.prose", "c.prose")
    assert checked(prose) == ["c.prose", "node_modules/b.prose"]
    assert checked(prose, "--exclude", "node_modules") == ["c.prose", "fixtures/a.prose"]


def test_configured_and_command_line_extensions_add_up(
    prose: RunProse, source: WriteSource
) -> None:
    source("prose.toml", 'extend-exclude = ["one"]\n')
    tree(source, "one/a.prose", "two/b.prose", "c.prose")
    assert checked(prose, "--extend-exclude", "two") == ["c.prose"]


def test_a_nested_configuration_governs_its_directory(prose: RunProse, source: WriteSource) -> None:
    source("prose.toml", 'extend-exclude = ["generated"]\n')
    source("vendor/prose.toml", "exclude = []\n")
    tree(source, "generated/a.prose", "vendor/generated/b.prose", "vendor/build/c.prose")
    assert checked(prose) == ["vendor/build/c.prose", "vendor/generated/b.prose"]


def test_the_config_option_anchors_globs_at_the_current_directory(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source("conf/settings.toml", 'extend-exclude = ["tests/fixtures"]\n')
    tree(source, "tests/fixtures/a.prose", "tests/b.prose")
    assert checked(prose, "--config", "conf/settings.toml") == ["tests/b.prose"]


def test_an_invalid_exclude_is_a_configuration_error(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    # Found while searching (sub/ is only reached by the walk): still the only message.
    config = source("sub/prose.toml", 'exclude = "fixtures"\n')
    tree(source, "a.prose", "sub/b.prose")
    for command in (["check"], ["fmt", "--check"]):
        result = prose(*command, ".")
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr == (
            f"prose: error: invalid configuration in {config}: `exclude` must be a list of "
            'paths or globs, such as ["fixtures", "*.gen.prose"]\n'
        )


# ------------------------------------------------------------------ .gitignore


def test_gitignore_is_respected_in_a_repository(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source(".gitignore", "fixtures/\n*.gen.prose\n")
    tree(source, "fixtures/a.prose", "src/b.prose", "src/c.gen.prose")
    assert checked(prose, ".") == ["src/b.prose"]
    assert checked(prose, "--no-respect-gitignore", ".") == [
        "fixtures/a.prose",
        "src/b.prose",
        "src/c.gen.prose",
    ]


def test_respect_gitignore_false_in_configuration(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source(".gitignore", "fixtures/\n")
    source("prose.toml", "respect-gitignore = false\n")
    tree(source, "fixtures/a.prose", "b.prose")
    assert checked(prose) == ["b.prose", "fixtures/a.prose"]
    assert checked(prose, "--respect-gitignore") == ["b.prose"]


def test_gitignore_outside_a_repository_is_not_read(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    # git, ruff and ripgrep agree: without a repository, .gitignore is just a file. The
    # ceiling keeps out a repository around the temporary directory (under CI, the checkout).
    source(".gitignore", "fixtures/\n")
    tree(source, "fixtures/a.prose", "b.prose")
    result = prose("check", "--format", "concise", GIT_CEILING_DIRECTORIES=str(tmp_path.parent))
    assert sorted(Path(p).as_posix() for p in LINE.findall(result.stdout)) == [
        "b.prose",
        "fixtures/a.prose",
    ]


def test_nested_gitignore_files_and_negation_agree_with_git(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source(".gitignore", "*.gen.prose\n!keep.gen.prose\nout/\n")
    source("pkg/.gitignore", "*\n!*.prose\n!*/\nlocal.prose\n")
    source("pkg/sub/.gitignore", "!local.prose\n")
    source("other/.gitignore", "/top.prose\n")
    source(".git/info/exclude", "secret.prose\n")
    files = [
        "a.prose",
        "x.gen.prose",
        "keep.gen.prose",
        "out/b.prose",
        "deep/out/c.prose",
        "pkg/d.prose",
        "pkg/local.prose",
        "pkg/sub/local.prose",
        "pkg/sub/e.gen.prose",
        "other/top.prose",
        "other/nested/top.prose",
        "secret.prose",
        "other/secret.prose",
    ]
    tree(source, *files)
    ignored = subprocess.run(
        ["git", "ls-files", "--others", "--ignored", "--exclude-standard", "-z"],
        cwd=tmp_path,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    ignored_by_git = {p for p in ignored.split("\0") if p}
    expected = sorted(set(files) - ignored_by_git)
    assert checked(prose, ".") == expected
    # The tree above is not trivial: each rule decides something.
    assert {"x.gen.prose", "out/b.prose", "deep/out/c.prose", "pkg/local.prose"} <= ignored_by_git
    assert {"other/top.prose", "secret.prose", "other/secret.prose"} <= ignored_by_git
    assert {"keep.gen.prose", "pkg/sub/local.prose", "other/nested/top.prose"} <= set(expected)


# ------------------------------------------------------------------ paths named explicitly


def test_paths_named_explicitly_are_checked(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source(".gitignore", "fixtures/\n")
    tree(source, "node_modules/a.prose", "fixtures/b.prose", "fixtures/c.gen.prose")
    assert checked(prose, "node_modules/a.prose") == ["node_modules/a.prose"]
    assert checked(prose, "node_modules") == ["node_modules/a.prose"]
    assert checked(prose, "fixtures/b.prose") == ["fixtures/b.prose"]
    # A directory git ignores, named explicitly, is searched (the rules above it would
    # leave out all of it), still under the default excludes.
    assert checked(prose, "fixtures") == ["fixtures/b.prose", "fixtures/c.gen.prose"]


def test_force_exclude_applies_the_exclusions_to_named_paths(
    prose: RunProse, source: WriteSource
) -> None:
    tree(source, "node_modules/a.prose", "src/b.prose", "gen/c.prose")
    assert checked(prose, "--force-exclude", "node_modules/a.prose", "src/b.prose") == [
        "src/b.prose"
    ]
    # Excluded through a parent directory, and through the configuration.
    assert checked(prose, "--force-exclude", "--extend-exclude", "gen", "gen/c.prose") == []
    source("prose.toml", 'extend-exclude = ["gen"]\nforce-exclude = true\n')
    assert checked(prose, "gen/c.prose", "src/b.prose") == ["src/b.prose"]
    assert checked(prose, "--no-force-exclude", "gen/c.prose") == ["gen/c.prose"]


def test_force_exclude_leaves_gitignore_to_the_search(prose: RunProse, source: WriteSource) -> None:
    # ruff's semantics: a git-ignored file named explicitly is checked even then.
    source(".gitignore", "scratch/\n")
    tree(source, "scratch/a.prose")
    assert checked(prose, "--force-exclude", "scratch/a.prose") == ["scratch/a.prose"]
    # Searched, the directory is left out: nothing to check.
    assert prose("check", "--force-exclude", ".").returncode == 2


def test_only_excluded_files_named_is_not_a_failure(prose: RunProse, source: WriteSource) -> None:
    # pre-commit passes the changed files; when all are excluded, the hook must pass.
    tree(source, "node_modules/a.prose")
    for command in (["check"], ["fmt", "--check"]):
        result = prose(*command, "--force-exclude", "node_modules/a.prose")
        assert result.returncode == 0, result.stderr
        assert "warning" not in result.stderr


def test_force_exclude_does_not_look_above_the_project(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    # The project lives under a directory named like a default exclude. Its configuration
    # makes it the project root (else the root is the current directory, tested in
    # test_exclusion.py): a configuration around the temporary directory must not count.
    source("build/project/prose.toml", "")
    tree(source, "build/project/a.prose")
    project = tmp_path / "build" / "project"
    assert checked(prose, "--force-exclude", "a.prose", cwd=project) == ["a.prose"]
    assert checked(prose, cwd=project) == ["a.prose"]


# ------------------------------------------------------------------ prose fmt


def test_fmt_leaves_excluded_files_alone(
    prose: RunProse, source: WriteSource, tmp_path: Path
) -> None:
    source(".gitignore", "fixtures/\n")
    messy = 'session  "a"\n'
    for relative in ("fixtures/a.prose", "node_modules/b.prose", "src/c.prose"):
        source(relative, messy)
    result = prose("fmt", ".")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "1 file reformatted."
    assert (tmp_path / "fixtures/a.prose").read_text(encoding="utf-8") == messy
    assert (tmp_path / "node_modules/b.prose").read_text(encoding="utf-8") == messy
    assert (tmp_path / "src/c.prose").read_text(encoding="utf-8") == 'session "a"\n'
