"""Checking and formatting pause the cyclic garbage collector: the tree and the model of a
file are alive until its report is written, so a collection in between only scans them (on a
100,000-line file the collections took a third of `prose check`'s time).  The collector is
left as it was found."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import openprose.checking
from openprose.checking import check_text
from openprose.cli import main
from openprose.cli.render import format_human


@pytest.fixture
def collector_state() -> Iterator[list[bool]]:
    seen: list[bool] = []
    # Every check ends with ``finish`` (selection, suppressions), the tree still alive.
    real = openprose.checking.finish

    def spying(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    enabled = gc.isenabled()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openprose.checking, "finish", spying)
        yield seen
    if enabled:
        gc.enable()


def test_check_text_pauses_the_collector_and_restores_it(collector_state: list[bool]) -> None:
    gc.enable()
    check_text('session "x"\n')
    assert collector_state == [False]
    assert gc.isenabled()
    gc.disable()
    check_text('session "x"\n')
    assert not gc.isenabled()


def test_prose_check_pauses_the_collector_per_file(
    tmp_path: Path, collector_state: list[bool], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.prose").write_text('session "a"\n')
    (tmp_path / "b.prose").write_text('session "b"\n')
    gc.enable()
    assert main(["check", "--format", "json", str(tmp_path)]) == 0
    assert collector_state == [False, False]
    assert gc.isenabled()
    capsys.readouterr()


def test_the_human_report_is_written_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its hints read the file's analysis, which is alive while its diagnostics are shown.
    (tmp_path / "a.prose").write_text('session "a"\nsession ""\n')
    seen: list[bool] = []

    def spying(*args: Any, **kwargs: Any) -> str:
        seen.append(gc.isenabled())
        return format_human(*args, **kwargs)

    monkeypatch.setattr("openprose.cli.check.format_human", spying)
    enabled = gc.isenabled()
    gc.enable()
    try:
        assert main(["check", "--color", "never", str(tmp_path)]) == 0
        assert seen == [False]
        assert gc.isenabled()
    finally:
        if not enabled:
            gc.disable()
    assert "W001" in capsys.readouterr().out


def test_prose_fmt_formats_with_the_collector_paused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from openprose.format import format_text

    (tmp_path / "a.prose").write_text('session   "a"\n')
    seen: list[bool] = []

    def spying(text: str) -> Any:
        seen.append(gc.isenabled())
        return format_text(text)

    monkeypatch.setattr("openprose.format.format_text", spying)
    enabled = gc.isenabled()
    gc.enable()
    try:
        assert main(["fmt", "--check", str(tmp_path)]) == 1
        assert seen == [False]
        assert gc.isenabled()
    finally:
        if not enabled:
            gc.disable()
    capsys.readouterr()
