from __future__ import annotations

import io

from openprose.vm import events as ev
from openprose.vm.progress import Progress


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(out, terminal=False, total=3)
    progress(ev.Position(step="1", statement='session "A"'))
    progress(ev.Position(step="1", level=1, statement="nested: not shown"))
    progress(ev.Success(input_tokens=3, output_tokens=4))
    progress(ev.Position(step="2", statement="let b = 1"))
    progress(ev.ProgramEnd())
    assert out.getvalue() == 'prose: [1/3] session "A"\nprose: [2/3] let b = 1\n'


def test_a_status_line_on_a_terminal() -> None:
    out = io.StringIO()
    now = [0.0]
    progress = Progress(out, terminal=True, total=5, clock=lambda: now[0])
    progress(ev.Position(step="2", statement="parallel:"))
    progress(ev.ParallelEnter(branches=["a", "b", "c"]))
    now[0] = 1.0
    progress(ev.Success(input_tokens=10, output_tokens=5, cost=0.25))
    assert progress.line() == "[2/5] parallel: · 3 branches running · 1 session, 15 tokens, $0.25"
    assert out.getvalue().count("\r\x1b[K") == 2  # the Position, then one redraw past 0.1 s
    progress(ev.ProgramEnd())
    assert out.getvalue().endswith("\r\x1b[K")  # the line is cleared at the end


def test_a_long_statement_is_cut_to_the_width() -> None:
    out = io.StringIO()
    progress = Progress(out, terminal=False, total=1, width=40)
    progress(ev.Position(step="1", statement='let doc = "' + "word " * 50 + '"'))
    (line,) = out.getvalue().splitlines()
    assert len(line) == 40 and line.endswith("…")


def test_compaction_and_overflow_steps_are_said_summaries_are_not() -> None:
    out = io.StringIO()
    progress = Progress(out, terminal=False, total=1)
    progress(ev.ContextStep(action="summarised", detail="doc: 5,000 characters ..."))
    progress(ev.ContextStep(action="compacted", detail="history past 70 %: compacted 5"))
    progress(ev.ContextStep(action="dropped", detail="context overflow: dropped doc"))
    assert out.getvalue().splitlines() == [
        "prose: context: history past 70 %: compacted 5",
        "prose: context: context overflow: dropped doc",
    ]


def test_a_context_step_clears_the_status_line_first() -> None:
    out = io.StringIO()
    progress = Progress(out, terminal=True, total=1, clock=lambda: 0.0)
    progress(ev.Position(step="1", statement='session "A"'))
    progress(ev.ContextStep(action="reset", detail="context overflow: fresh session"))
    assert out.getvalue().endswith("\r\x1b[Kprose: context: context overflow: fresh session\n")
