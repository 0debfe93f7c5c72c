"""Bundle the language server and its dependencies into bundled/libs for the VSIX.

    python3 scripts/bundle-server.py        # from vscode-extension/ (npm run bundle-server)

The extension runs ``<python> -m openprose.lsp`` with ``PYTHONPATH=<extension>/bundled/libs``,
so the user's Python needs nothing installed. Steps:

1. the pinned dependencies of server-requirements.txt, as wheels, with ``pip install --target
   bundled/libs --no-deps``;
2. the repository's own package, built from a copy of its sources (so the build leaves no
   ``build/`` or ``*.egg-info`` in the checkout), the same way;
3. checks: the pins agree with pyproject.toml, every requirement of every bundled distribution
   (on any Python from 3.11 on) is met inside bundled/libs, and everything is pure Python;
4. bytecode for every module (``compile_bytecode``), so that the server's first start does
   not compile some 200 modules: about half of its start-up time otherwise.

The bytecode is for the Python that runs this script (its ``cpython-3XX`` tag). A user whose
Python is another version gets no benefit: that Python ignores the shipped files and, as
before, compiles the modules on first start and caches them next to the sources if it can.

Uses the Python that runs it (3.11 or later, for tomllib; with pip) and the package index pip
is configured with. Exits non-zero with a message on any problem.
"""

from __future__ import annotations

import compileall
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path

try:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # pip always carries a copy
    from pip._vendor.packaging.markers import Marker  # type: ignore[no-redef]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]

EXTENSION = Path(__file__).resolve().parent.parent
REPOSITORY = EXTENSION.parent
REQUIREMENTS = EXTENSION / "server-requirements.txt"
TARGET = EXTENSION / "bundled" / "libs"
PACKAGE = "openprose"
# The Python versions the extension accepts (it refuses anything older than 3.11).
PYTHONS = ("3.11", "3.12", "3.13", "3.14", "3.15")
# What the package's build needs from the checkout; everything else stays out of the copy.
SOURCES = ("pyproject.toml", "setup.cfg", "setup.py", "MANIFEST.in", "README.md", "LICENSE")


class BundleError(Exception):
    pass


def pins() -> dict[str, str]:
    """server-requirements.txt as {canonical name: version}."""
    result = {}
    for number, raw in enumerate(REQUIREMENTS.read_text("utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line)
        if not match:
            raise BundleError(f"{REQUIREMENTS.name}:{number}: not an exact pin `name==version`")
        result[canonicalize_name(match[1])] = match[2]
    return result


def check_against_pyproject(pinned: dict[str, str]) -> None:
    """Every runtime dependency of the package is pinned here, within its range."""
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text("utf-8"))["project"]
    if project["name"] != PACKAGE:
        raise BundleError(f"{REPOSITORY / 'pyproject.toml'} is not the {PACKAGE} project")
    for text in project.get("dependencies", []):
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name not in pinned:
            raise BundleError(f"pyproject.toml needs {text}; pin it in {REQUIREMENTS.name}")
        if not requirement.specifier.contains(pinned[name], prereleases=True):
            raise BundleError(
                f"pyproject.toml needs {text}, but {REQUIREMENTS.name} pins {name}=={pinned[name]}"
            )


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--quiet"]
    command += ["--no-input", "--target", str(TARGET), "--no-deps", "--no-compile", *args]
    print("+", " ".join(command[2:]), flush=True)
    if subprocess.run(command).returncode != 0:
        raise BundleError("pip install failed (see above)")


def install(pinned: dict[str, str]) -> None:
    shutil.rmtree(TARGET.parent, ignore_errors=True)
    TARGET.mkdir(parents=True)
    pip("--only-binary", ":all:", *(f"{name}=={version}" for name, version in pinned.items()))
    with tempfile.TemporaryDirectory(prefix="prose-bundle-") as scratch:
        source = Path(scratch) / PACKAGE
        source.mkdir()
        for name in SOURCES:
            if (REPOSITORY / name).is_file():
                shutil.copy2(REPOSITORY / name, source / name)
        shutil.copytree(
            REPOSITORY / "server",
            source / "server",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
        )
        pip(str(source))
    # Console scripts (prose, prose-ls) name the build's Python; the extension uses `-m`.
    shutil.rmtree(TARGET / "bin", ignore_errors=True)
    # pip's record of where it installed from: a temporary directory of this machine.
    for record in TARGET.glob("*.dist-info/direct_url.json"):
        record.unlink()
    for cache in list(TARGET.rglob("__pycache__")):
        shutil.rmtree(cache)


def check_closure(pinned: dict[str, str]) -> None:
    """Each bundled distribution's requirements are met by the bundle, on every accepted Python."""
    found = {
        canonicalize_name(dist.metadata["Name"]): dist
        for dist in metadata.distributions(path=[str(TARGET)])
    }
    expected = {**pinned, PACKAGE: None}
    if set(found) != set(expected):
        raise BundleError(f"bundled {sorted(found)}, expected {sorted(expected)}")
    for name, dist in found.items():
        if pinned.get(name, dist.version) != dist.version:
            raise BundleError(f"bundled {name} {dist.version}, pinned {pinned[name]}")
        for text in dist.requires or []:
            requirement = Requirement(text)
            needed = requirement.marker is None or any(
                _applies(requirement.marker, python) for python in PYTHONS
            )
            if not needed:
                continue
            other = found.get(canonicalize_name(requirement.name))
            if other is None:
                raise BundleError(
                    f"{name} {dist.version} needs {text}, which is not bundled: "
                    f"add a pin to {REQUIREMENTS.name}"
                )
            if not requirement.specifier.contains(other.version, prereleases=True):
                raise BundleError(
                    f"{name} {dist.version} needs {text}, but {other.version} is pinned"
                )


def _applies(marker: Marker, python: str) -> bool:
    return marker.evaluate({"python_version": python, "python_full_version": f"{python}.0"})


def check_pure() -> None:
    for wheel in TARGET.glob("*.dist-info/WHEEL"):
        if "Root-Is-Purelib: true" not in wheel.read_text("utf-8"):
            raise BundleError(f"{wheel.parent.name} is not a pure-Python distribution")
    binaries = [p for p in TARGET.rglob("*") if p.suffix in {".so", ".pyd", ".dll", ".dylib"}]
    if binaries:
        raise BundleError(f"compiled files in the bundle: {binaries[:5]}")


def compile_bytecode(target: Path) -> None:
    """Writes ``__pycache__/*.cpython-3XX.pyc`` for every module under ``target``.

    Unchecked-hash bytecode: Python loads it without looking at the source's modification
    time, which the VSIX does not keep (a zip stores local times to 2 s, and the installed
    files get whatever time they were extracted at), so timestamp bytecode would be found
    stale on the user's machine and compiled again on every start from a read-only install.
    The bundle never changes once installed, so checking the source (checked-hash) would
    only cost a read and a hash of every module. Optimisation level 0, as the extension runs
    Python without -O. The build's path is stripped from the code objects (Python sets the
    real one when it loads them), so the VSIX does not depend on where it was built.
    """
    compiled = compileall.compile_dir(
        target,
        quiet=1,
        stripdir=str(target),
        optimize=0,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    if not compiled:
        raise BundleError("compileall failed (see above)")


def main() -> int:
    try:
        pinned = pins()
        check_against_pyproject(pinned)
        install(pinned)
        check_closure(pinned)
        check_pure()
        compile_bytecode(TARGET)
    except BundleError as error:
        print(f"bundle-server: {error}", file=sys.stderr)
        return 1
    files = [p for p in TARGET.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(
        f"bundle-server: {len(files)} files, {size / 1e6:.1f} MB in {TARGET.relative_to(EXTENSION)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
