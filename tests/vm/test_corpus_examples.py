"""Every official example of ../shared/corpus/examples runs to completion on the offline
backend, or is listed here with the reason it cannot."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openprose.syntax import parse
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options, declared_inputs
from openprose.vm.runner import ProgramInvalid, run_file
from tests.corpus import location

EXAMPLES = location.CORPUS / "examples"
pytestmark = pytest.mark.corpus

# Programs that do not run to completion, and why.  A program leaving this list (it now
# runs) fails the test too, so the list stays true.
CANNOT_RUN = {
    "22-error-handling.prose": "ends with an unconditional `throw` (it demonstrates one)",
    "43-rlm-pairwise.prose": "`for i, a in list` then `j > i` orders two items, not indices",
    "49-prose-run-retrospective.prose": "reads `.outcome_type` of a text result (not JSON offline)",
    "44-run-endpoint-ux-test.prose": "has errors (E019: a variable defined twice)",
    "48-habit-miner.prose": "has errors (E018: `resume:` of memory that does not exist yet)",
    "roadmap/syntax/open-prose-syntax.prose": "a sketch of proposed syntax, not a program",
}


# Offline, `if **c**` holds; these programs throw when their check fails, so the test
# answers those conditions the way a passing run would.
CONDITIONS = {
    "45-plugin-release.prose": {"pre-flight issues found": False},
    "47-language-self-improvement.prose": {
        "there are no approved proposals": False,
        "the guardian recommends halting": False,
    },
}


def examples() -> list[Path]:
    return location.files("examples")


@pytest.mark.parametrize("path", examples(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_runs_offline(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # `persist: user` memory stays here
    name = path.relative_to(EXAMPLES).as_posix()
    text = path.read_text(encoding="utf-8")
    inputs = {n: f"sample {n}" for n, _ in declared_inputs(parse(text))}
    options = Options(jitter=False, retry_base_delay=0.0)
    try:
        backend = OfflineBackend(conditions=CONDITIONS.get(name, {}))
        result = asyncio.run(
            # The temporary directory is the project: `persist: project` memory goes there,
            # never beside the shared corpus.
            run_file(
                path,
                inputs,
                backend=backend,
                runs_root=tmp_path,
                options=options,
                project_root=tmp_path,
            )
        )
    except ProgramInvalid as invalid:
        errors = [d.code for d in invalid.diagnostics if d.is_error]
        assert name in CANNOT_RUN, f"{name} has errors: {errors}"
        return
    if name in CANNOT_RUN:
        assert result.status == "error", f"{name} now runs: remove it from CANNOT_RUN"
        return
    assert result.status == "success", f"{name}: {result.error} at {result.failed_statement}"
    assert result.sessions > 0
    state = (tmp_path / result.run_id / "state.md").read_text(encoding="utf-8")
    assert not (EXAMPLES / ".prose").exists()
    assert state.splitlines()[-1].startswith("---end ")
