"""The four state backends behind one fixture, and what their tests share.

``catalog`` is parametrised over every backend of ``base.BACKENDS``; ``durable_catalog``
over those that keep a run after its process (all but in-context).  ``postgres`` runs on
the throwaway cluster of ``tests.postgres_cluster`` and skips, saying why, where there is
none.

For end-to-end tests, ``run_in_state`` runs a program on the offline backend with the
state in the test's catalog; ``state_support.binding_text`` reads a committed binding back
from any backend's own record (the file, the row, the memory).
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from openprose.vm.state import BACKENDS, Catalog, RunStore, open_catalog

# A fixture (it skips without PostgreSQL locally, and fails under CI): importing it here
# makes it visible to the tests of this folder.
from tests.postgres_cluster import postgres_db_url  # noqa: F401
from tests.vm.state.state_support import RunInState, StateRun

DURABLE = tuple(state for state in BACKENDS if state != "in-context")


def make_catalog(state: str, root: Path, request: pytest.FixtureRequest) -> Catalog:
    """A fresh catalogue of ``state`` whose runs go under ``root/.prose/runs``."""
    runs = root / ".prose" / "runs"
    if state != "postgres":
        return open_catalog(state, runs, project_root=root)
    url = request.getfixturevalue("postgres_db_url")
    return open_catalog(
        state, runs, project_root=root, environ={"OPENPROSE_POSTGRES_URL": str(url)}
    )


@pytest.fixture(params=BACKENDS)
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Catalog]:
    yield make_catalog(request.param, tmp_path, request)


@pytest.fixture(params=DURABLE)
def durable_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Catalog]:
    yield make_catalog(request.param, tmp_path, request)


# ------------------------------------------------------------------ end to end


class _Recording:
    """A catalogue that remembers the stores it made (the runner does not return them)."""

    def __init__(self, inner: Catalog) -> None:
        self.inner = inner
        self.state = inner.state
        self.stores: list[RunStore] = []

    def create(self, *args: Any, **kwargs: Any) -> RunStore:
        store = self.inner.create(*args, **kwargs)
        self.stores.append(store)
        return store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def run_in_state(tmp_path: Path) -> RunInState:
    """``run_in_state(catalog, source, inputs=None, *, backend=None, options=None,
    resume=None)``: run ``source`` (dedented) as ``main.prose`` with its state in
    ``catalog``; ``resume`` is a store from ``catalog.open``."""

    def run(
        catalog: Catalog,
        source: str,
        inputs: dict[str, Any] | None = None,
        *,
        backend: Any = None,
        options: Options | None = None,
        resume: RunStore | None = None,
        files: dict[str, str] | None = None,
    ) -> StateRun:
        from openprose.vm.runner import run_file

        for name, text in (files or {}).items():
            (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
        main = tmp_path / "main.prose"
        main.write_text(textwrap.dedent(source), encoding="utf-8")
        recording = _Recording(catalog)
        result = asyncio.run(
            run_file(
                main,
                inputs,
                backend=backend or OfflineBackend(),
                options=options or Options(jitter=False),
                resume=resume,
                catalog=recording,
                project_root=tmp_path,
            )
        )
        store = resume if resume is not None else recording.stores[-1]
        return StateRun(result, store, catalog)

    return run


@pytest.fixture(autouse=True)
def _no_stray_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own database must never receive a test's runs.
    for variable in ("OPENPROSE_POSTGRES_URL", "DATABASE_URL"):
        monkeypatch.delenv(variable, raising=False)
