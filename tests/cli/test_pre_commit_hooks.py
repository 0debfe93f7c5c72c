"""The repository's ``.pre-commit-hooks.yaml``, run by pre-commit itself on a temporary repository.

What is tested is the current tree, not the last commit: pre-commit clones a hook repository at
a revision, so the files a user's clone would hold (the top-level files and ``server/``, as they
are now, committed or not) are copied into a repository of their own and committed there.

pre-commit then makes its own virtual environment and runs ``pip install .`` in its clone. Tests
never reach the network, so pip gets ``--no-index`` and a wheelhouse made here from the
distributions already installed in this environment (all pure Python, repacked from their
installed files): the install is real and isolated, build backend included, but it proves the
dependency declarations against the versions installed here, not against what an index would
choose. A proxy on a closed loopback port stops anything that still tries to go out.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from openprose.format import format_text

CHECKOUT = Path(__file__).resolve().parents[2]
CLOSED_PORT = "http://127.0.0.1:9"  # discard: nothing listens there

UNFORMATTED = 'session   "Hello"\n\n\n\nsession "Bye"   \n'
SYNTAX_ERROR = 'session "Hello\n'
# Would fail `prose check` if it were passed: the hooks must only take .prose files.
NOT_PROSE = 'session "not a program, and never checked\n'

_DIST_INFO_SKIPPED = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _git(*args: str, cwd: Path) -> str:
    environment = {
        **os.environ,
        # The user's and the machine's git settings (signing, hooks, templates) stay out.
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=environment, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _snapshot_of_checkout(target: Path) -> str:
    """A one-commit repository of what ``pip install .`` reads; returns the commit's sha."""
    listed = _git("ls-files", "--cached", "--others", "--exclude-standard", "-z", cwd=CHECKOUT)
    for name in filter(None, listed.split("\0")):
        top = name.split("/", 1)[0]
        if ("/" not in name or top == "server") and (CHECKOUT / name).is_file():
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, destination)
    _git("init", "-q", cwd=target)
    _git("add", "-A", cwd=target)
    _git("commit", "-q", "-m", "snapshot of the checkout under test", cwd=target)
    return _git("rev-parse", "HEAD", cwd=target)


def _requirements_closure(project: Path) -> list[Distribution]:
    """The installed distributions that the package and its build backend need."""
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    pending = [
        Requirement(text)
        for text in (*pyproject["project"]["dependencies"], *pyproject["build-system"]["requires"])
    ]
    found: dict[str, Distribution] = {}
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        try:
            installed = distribution(requirement.name)
        except PackageNotFoundError:
            pytest.fail(f"{requirement} is not installed: the offline wheelhouse cannot hold it")
        assert requirement.specifier.contains(installed.version, prereleases=True), (
            f"{requirement} is wanted, {installed.version} is installed"
        )
        found[name] = installed
        pending.extend(Requirement(text) for text in installed.requires or ())
    return list(found.values())


def _repack(installed: Distribution, wheelhouse: Path) -> None:
    """A wheel of an installed pure-Python distribution, from the files its RECORD lists."""
    wheel_metadata = installed.read_text("WHEEL") or ""
    assert "Root-Is-Purelib: true" in wheel_metadata, f"{installed.name} is not pure Python"
    files = [
        path
        for path in installed.files or ()
        if path.parts[0] != ".."  # scripts: pip makes them from entry_points.txt
        and path.suffix != ".pyc"
        and not (path.parts[0].endswith(".dist-info") and path.name in _DIST_INFO_SKIPPED)
    ]
    dist_info = next(p.parts[0] for p in files if p.parts[0].endswith(".dist-info"))
    name = canonicalize_name(installed.name).replace("-", "_")
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(wheelhouse / f"{name}-{installed.version}-py3-none-any.whl", "w") as whl:
        for path in files:
            data = Path(str(path.locate())).read_bytes()
            whl.writestr(path.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            writer.writerow([path.as_posix(), f"sha256={digest.decode()}", len(data)])
        writer.writerow([f"{dist_info}/RECORD", "", ""])
        whl.writestr(f"{dist_info}/RECORD", record.getvalue())


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    checkout = tmp_path_factory.mktemp("hook-repository")
    return checkout, _snapshot_of_checkout(checkout)


@pytest.fixture(scope="module")
def pre_commit_environment(
    tmp_path_factory: pytest.TempPathFactory, hook_repository: tuple[Path, str]
) -> dict[str, str]:
    wheelhouse = tmp_path_factory.mktemp("wheelhouse")
    for installed in _requirements_closure(hook_repository[0]):
        _repack(installed, wheelhouse)
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PIP_", "VIRTUALENV_", "PRE_COMMIT")) and key != "NO_PROXY"
    }
    environment.update(
        # One cache for the module: the virtual environment is made once for both hooks.
        PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        VIRTUALENV_NO_PERIODIC_UPDATE="1",
        **{name: CLOSED_PORT for name in ("http_proxy", "https_proxy", "HTTP_PROXY")},
        **{name: CLOSED_PORT for name in ("HTTPS_PROXY", "ALL_PROXY", "all_proxy")},
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        # The hooks run `prose` inside the environment pre-commit made: none of ours leaks in.
        PYTHONPATH="",
    )
    return environment


def _user_repository(
    tmp_path: Path, hook_repository: tuple[Path, str], files: dict[str, str]
) -> Path:
    checkout, sha = hook_repository
    repository = tmp_path / "user"
    repository.mkdir()
    (repository / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {checkout}\n"
        f"    rev: {sha}\n"
        "    hooks:\n"
        "      - id: prose-check\n"
        "      - id: prose-fmt\n",
        encoding="utf-8",
    )
    for name, text in files.items():
        path = repository / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    _git("init", "-q", cwd=repository)
    _git("add", "-A", cwd=repository)
    return repository


def _pre_commit(
    repository: Path, environment: dict[str, str], hook: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--all-files", "--color", "never"],
        cwd=repository,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_prose_check_fails_on_an_error_and_skips_other_files(
    tmp_path: Path, hook_repository: tuple[Path, str], pre_commit_environment: dict[str, str]
) -> None:
    repository = _user_repository(
        tmp_path,
        hook_repository,
        {"flows/bad.prose": SYNTAX_ERROR, "flows/good.prose": 'session "Hi"\n', "a.txt": NOT_PROSE},
    )
    result = _pre_commit(repository, pre_commit_environment, "prose-check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "prose check" in result.stdout and "Failed" in result.stdout
    assert "flows/bad.prose:1:9: error[E001]" in result.stdout
    assert "a.txt" not in result.stdout

    (repository / "flows/bad.prose").write_text('session "Hello"\n', encoding="utf-8")
    result = _pre_commit(repository, pre_commit_environment, "prose-check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


def test_prose_fmt_rewrites_and_then_passes(
    tmp_path: Path, hook_repository: tuple[Path, str], pre_commit_environment: dict[str, str]
) -> None:
    repository = _user_repository(
        tmp_path, hook_repository, {"messy.prose": UNFORMATTED, "a.txt": NOT_PROSE}
    )
    result = _pre_commit(repository, pre_commit_environment, "prose-fmt")
    # pre-commit fails a hook that changed files, so that the user stages the new text.
    assert result.returncode == 1, result.stdout + result.stderr
    assert "files were modified by this hook" in result.stdout
    rewritten = (repository / "messy.prose").read_text(encoding="utf-8")
    assert rewritten == format_text(UNFORMATTED).text != UNFORMATTED
    assert (repository / "a.txt").read_text(encoding="utf-8") == NOT_PROSE

    result = _pre_commit(repository, pre_commit_environment, "prose-fmt")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_documented_configuration_names_the_hooks_we_ship() -> None:
    hooks = yaml.safe_load((CHECKOUT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    shipped = {hook["id"]: hook for hook in hooks}
    assert {hook_id: hook["entry"] for hook_id, hook in shipped.items()} == {
        # --force-exclude, as ruff's hooks: the configuration's excludes cover staged files.
        "prose-check": "prose check --force-exclude",
        "prose-fmt": "prose fmt --force-exclude",
    }
    for hook in hooks:
        matches = re.compile(hook["files"]).search
        assert matches("flows/a.prose") and not matches("a.prose.txt")
    guide = (CHECKOUT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", guide, re.S)]
    workflow, config = blocks
    steps = workflow["jobs"]["check"]["steps"]
    commands = [step["run"] for step in steps if "run" in step]
    assert any(command.startswith("prose check --format github") for command in commands)
    assert any(command.startswith("prose check --format sarif") for command in commands)
    assert any(
        step.get("uses", "").startswith("github/codeql-action/upload-sarif@") for step in steps
    )
    (documented,) = config["repos"]
    assert [hook["id"] for hook in documented["hooks"]] == list(shipped)
