"""Invariants over random programs assembled from every construct: a checked program either
succeeds or fails as a program (never an internal error), frames balance, and the run
directory's log ends with its end or error marker."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprose.checking import check_text
from openprose.syntax import parse
from openprose.vm import events as ev
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Interpreter, Options
from openprose.vm.state.filesystem import FilesystemCatalog

PRELUDE = """\
agent helper:
  model: sonnet
  prompt: "Help"

block step(x, n):
  if n <= 0:
    output x
  let inner = session "Step {x}"
  output do step(inner, n - 1)

"""

SNIPPETS = [
    'session "Plain"\n',
    'session: helper\n  prompt: "As agent"\n',
    'let a{i} = session "Bind"\n',
    'const c{i} = "fixed"\n',
    'parallel ("first"):\n  session "A"\n  session "B"\n',
    'parallel ("any", count: 1, on-fail: "ignore"):\n  session "fail A"\n  session "B"\n',
    'parallel (on-fail: "continue"):\n  p{i} = session "fail P"\n  q{i} = session "Q"\n',
    'repeat 2 as r{i}:\n  session "R {{r{i}}}"\n',
    'for f{i}, k{i} in ["x", "y"]:\n  session "F {{f{i}}} {{k{i}}}"\n',
    'parallel for g{i} in ["x", "y", "z"]:\n  session "G {{g{i}}}"\n',
    'loop until **done {i}** (max: 3):\n  session "L"\n',
    'loop while **going {i}** (max: 2):\n  session "W"\n',
    'let m{i} = ["u", "v"] | map:\n  session "M {{item}}"\n',
    'let v{i} = ["u", "v", "w"] | filter:\n  session "Keep {{item}}?"\n',
    'let d{i} = do step("s", 2)\n',
    'try:\n  session "fail T"\ncatch as e{i}:\n  session "Caught {{e{i}.message}}"\nfinally:\n'
    '  session "Finally"\n',
    'try:\n  throw "boom {i}"\ncatch:\n  session "Recovered"\n',
    'choice **pick {i}**:\n  option "one":\n    session "One"\n'
    '  option "two":\n    session "Two"\n',
    'if **cond {i}**:\n  session "Then"\nelse:\n  session "Else"\n',
    'session "X" -> session "Y"\n',
    'session "Retry"\n  retry: 2\n  backoff: "exponential"\n',
    'session "fail U"\n',
    'parallel:\n  session "fail V"\n  session "W"\n',
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(range(len(SNIPPETS))), min_size=1, max_size=8),
    st.integers(min_value=1, max_value=3),
    st.dictionaries(st.sampled_from(["fail", "Step"]), st.integers(0, 20), max_size=2),
)
def test_random_programs_run_to_an_end_marker(
    picks: list[int], rounds: int, failures: dict[str, int]
) -> None:
    text = PRELUDE + "".join(SNIPPETS[p].format(i=n) for n, p in enumerate(picks))
    assert not [d for d in check_text(text) if d.is_error], text
    events: list[ev.Event] = []
    with tempfile.TemporaryDirectory() as directory:
        store = FilesystemCatalog(Path(directory)).create(text, "random.prose", {})
        interpreter = Interpreter(
            parse(text),
            OfflineBackend(rounds=rounds, failures=failures),
            store=store,
            sinks=[events.append],
            options=Options(retry_base_delay=0.0),
        )
        result = asyncio.run(interpreter.run({}))
        assert store.path is not None
        last = (store.path / "state.md").read_text(encoding="utf-8").splitlines()[-1]
    assert result.status in ("success", "error")
    assert last.startswith("---end " if result.status == "success" else "---error ")
    pushes = [e.execution_id for e in events if isinstance(e, ev.FramePush)]
    pops = [e.execution_id for e in events if isinstance(e, ev.FramePop)]
    assert sorted(pushes) == sorted(pops)
    assert len(set(pushes)) == len(pushes)
    assert isinstance(events[-1], ev.ProgramEnd)
