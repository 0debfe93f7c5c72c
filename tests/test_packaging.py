"""The package builds, passes `twine check` and installs with pipx as a user would, offline.

What a user does is `python -m build` (an sdist, then a wheel built from that sdist), and
`pipx install dist/openprose-*.whl`. The test does the same with three changes that keep it
off the network, each with the reason:

- `build --no-isolation`: an isolated build would download setuptools; the `test` extra
  installs the setuptools the build needs into this environment instead.
- The build runs on a copy of what the sdist is made of (pyproject.toml, README.md, LICENSE,
  CHANGELOG.md, server/), so it leaves no `build/` or `*.egg-info` in the checkout.
- pipx installs from a wheelhouse instead of an index (`--no-index --find-links`): the
  runtime dependencies (parso, pygls, lsprotocol and what they need) are repacked as wheels
  from the distributions installed in this environment, file for file from their RECORD.
  Pip still resolves the wheel's `Requires-Dist` ranges against them, so a range that the
  tested versions do not satisfy fails here. pipx's shared pip comes from `ensurepip`
  (`PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE`), not from an upgrade off the index.

The installed `prose` then runs outside the checkout (no PYTHONPATH, another directory), so
it can only import the package pipx installed.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import HeaderParser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import openprose

ROOT = Path(__file__).resolve().parents[1]
# What the sdist is made of (setuptools adds the README, LICENSE and pyproject.toml itself).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md")
EXAMPLE = ROOT / "examples" / "research-brief.prose"
TIMEOUT_S = 300


def run(argv: list[str | Path], **kwargs: object) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        **kwargs,  # type: ignore[call-overload]
    )
    assert completed.returncode == 0, (
        f"{argv} exited {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    )
    return completed


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without anything that would import the checkout's package, or that
    would send pip to an index."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"}
        and not k.startswith("PIPX_")
    }
    return {**env, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", **extra}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "openprose"
    source.mkdir()
    for name in SOURCES:
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "server",
        source / "server",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    out = tmp_path_factory.mktemp("dist")
    run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source],
        env=clean_env(),
    )
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("openprose-*.whl")
    return wheel


def wheel_metadata(dist: Path) -> tuple[dict[str, list[str]], list[str]]:
    with zipfile.ZipFile(wheel_of(dist)) as archive:
        names = archive.namelist()
        (path,) = (n for n in names if n.endswith(".dist-info/METADATA"))
        message = HeaderParser().parsestr(archive.read(path).decode("utf-8"))
    fields: dict[str, list[str]] = {}
    for key, value in message.items():
        fields.setdefault(key, []).append(value)
    return fields, names


def test_build_makes_an_sdist_and_a_wheel_of_this_version(dist: Path) -> None:
    version = openprose.__version__
    assert sorted(p.name for p in dist.iterdir()) == [
        f"openprose-{version}-py3-none-any.whl",
        f"openprose-{version}.tar.gz",
    ]
    with tarfile.open(dist / f"openprose-{version}.tar.gz") as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "LICENSE", "server/openprose/__init__.py"} <= members


def test_twine_check_passes(dist: Path) -> None:
    completed = run(
        [sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())],
        env=clean_env(),
    )
    assert completed.stdout.count("PASSED") == 2, completed.stdout


def test_wheel_metadata_has_license_urls_and_ranges(dist: Path) -> None:
    fields, names = wheel_metadata(dist)
    assert fields["License-Expression"] == ["MIT"]
    assert fields["License-File"] == ["LICENSE"]
    license_path = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    with zipfile.ZipFile(wheel_of(dist)) as archive:
        assert archive.read(license_path) == (ROOT / "LICENSE").read_bytes()
    urls = {value.split(",", 1)[0] for value in fields["Project-URL"]}
    assert urls == {"Homepage", "Repository", "Documentation", "Changelog", "Issues"}
    assert "License :: OSI Approved :: MIT License" not in fields["Classifier"]  # SPDX instead
    assert any(c.startswith("Development Status ::") for c in fields["Classifier"])
    requirements = list(map(Requirement, fields["Requires-Dist"]))
    core = {canonicalize_name(r.name): r for r in requirements if r.marker is None}
    assert {"parso", "pygls", "lsprotocol"} <= set(core)
    # A library gives ranges; the exact pins are the VS Code extension's alone.
    for requirement in core.values():
        assert not any(s.operator in {"==", "==="} for s in requirement.specifier), requirement
        assert any(s.operator == "<" for s in requirement.specifier), requirement
    # The language server's dependencies are in one place: not also in an extra.
    extras = {canonicalize_name(r.name) for r in requirements if r.marker is not None}
    assert not extras & {"parso", "pygls", "lsprotocol"}, extras
    # The lsp extra stays as an empty alias, so older install commands still work.
    assert "lsp" in fields["Provides-Extra"]
    assert not any('extra == "lsp"' in str(r.marker) for r in requirements)


def test_one_license_that_the_extension_and_the_grammar_agree_with() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text("utf-8").startswith("MIT License\n")
    # vsce packages the extension's own copy (as LICENSE.txt): the same text.
    assert (ROOT / "vscode-extension" / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    for package in ("vscode-extension/package.json", "syntaxes/package.json"):
        assert json.loads((ROOT / package).read_text("utf-8"))["license"] == "MIT", package


def repack(dist: metadata.Distribution, wheelhouse: Path) -> None:
    """Writes an installed pure-Python distribution back into a wheel, from its RECORD."""
    files = dist.files or []
    (info,) = {f.parts[0] for f in files if f.parts[0].endswith(".dist-info")}
    root = Path(str(dist.locate_file(info))).parent
    wheel_file = (root / info / "WHEEL").read_text("utf-8")
    if "Root-Is-Purelib: true" not in wheel_file:
        pytest.skip(f"{info} is not pure Python: it cannot be repacked as py3-none-any")
    skipped = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json"}
    kept = [
        f
        for f in files
        if f.parts[0] != ".."
        and "__pycache__" not in f.parts
        and not (f.parts[0] == info and f.parts[-1] in skipped)
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    wheel = wheelhouse / f"{info.removesuffix('.dist-info')}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in kept:
            data = (root / entry).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            archive.writestr(entry.as_posix(), data)
            writer.writerow([entry.as_posix(), f"sha256={digest.decode()}", len(data)])
        writer.writerow([f"{info}/RECORD", "", ""])
        archive.writestr(f"{info}/RECORD", record.getvalue())


def runtime_closure(requires: list[str]) -> list[metadata.Distribution]:
    """The installed distributions that the built wheel (no extras) needs, transitively."""
    found: dict[str, metadata.Distribution] = {}
    pending = list(requires)
    while pending:
        requirement = Requirement(pending.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found[name] = metadata.distribution(requirement.name)
        pending.extend(found[name].requires or [])
    return list(found.values())


def test_pipx_installs_the_wheel_and_its_commands_work(dist: Path, tmp_path: Path) -> None:
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    fields, _ = wheel_metadata(dist)
    for distribution in runtime_closure(fields["Requires-Dist"]):
        repack(distribution, wheelhouse)
    home, bin_dir = tmp_path / "pipx", tmp_path / "bin"
    env = clean_env(
        PIPX_HOME=str(home),
        PIPX_BIN_DIR=str(bin_dir),
        PIPX_MAN_DIR=str(tmp_path / "man"),
        PIPX_DISABLE_SHARED_LIBS_AUTO_UPGRADE="1",
        PIP_FIND_LINKS=str(wheelhouse),
    )
    run(
        [
            sys.executable,
            "-m",
            "pipx",
            "install",
            "--python",
            sys.executable,
            f"--pip-args=--no-index --find-links={wheelhouse}",
            wheel_of(dist),
        ],
        env=env,
        cwd=tmp_path,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy2(EXAMPLE, elsewhere / EXAMPLE.name)

    version = run([bin_dir / "prose", "--version"], env=env, cwd=elsewhere)
    assert openprose.__version__ in version.stdout
    server = run([bin_dir / "prose-ls", "--version"], env=env, cwd=elsewhere)
    assert openprose.__version__ in server.stdout + server.stderr
    check = run([bin_dir / "prose", "check", EXAMPLE.name], env=env, cwd=elsewhere)
    assert "error" not in check.stdout, check.stdout

    # The commands import the package pipx installed, not this checkout.
    (venv_python,) = home.glob("venvs/openprose/bin/python")
    where = run(
        [venv_python, "-c", "import openprose; print(openprose.__file__)"],
        env=env,
        cwd=elsewhere,
    )
    assert Path(where.stdout.strip()).is_relative_to(home), where.stdout
