"""Rate limits on each model request (engines/dbos_pacing.py): the window of places in the
system database, and a run whose items make more requests than the limit allows."""

from __future__ import annotations

import time
from pathlib import Path

from openprose.vm.backends.base import SessionRequest, SessionResult
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.engines.base import Attachment
from openprose.vm.interpreter import Options
from tests.support.extras import require
from tests.vm.engines.test_dbos_branches import _run

require("dbos", "pip install 'openprose[dbos]'")


def test_a_window_gives_n_places_a_period_and_says_how_long_to_wait(tmp_path: Path) -> None:
    import sqlalchemy as sa

    from openprose.vm.engines.dbos_pacing import Pacer, make_table

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'system.sqlite'}")
    make_table(engine)
    make_table(engine)  # a second worker finds it made
    pacer = Pacer(engine, "anthropic", (3, 0.5))
    other = Pacer(engine, "openai", (1, 60.0))
    assert [pacer.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = pacer.take()
    assert 0.0 < wait <= 0.5  # until the first place leaves the window
    assert other.take() == 0.0 and other.take() > 59  # each backend has its own window
    time.sleep(wait + 0.01)
    assert pacer.take() == 0.0


class _Timed(OfflineBackend):
    """The offline backend, noting when each session reaches it."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    async def run_session(self, request: SessionRequest) -> SessionResult:
        self.times.append(time.time())
        return await super().run_session(request)


def test_a_rate_limit_paces_every_request_of_the_items_not_only_their_starts(
    tmp_path: Path,
) -> None:
    text = (
        'let out = parallel for x in ["a", "b", "c", "d", "e"]:\n'
        '  let one = session "One {x}"\n'
        '  let two = session "Two {x}"\n'
        '  session "Three {x}"\n'
    )
    backend = _Timed()
    _url, _run_id, result = _run(
        tmp_path,
        text,
        Options(jitter=False, concurrency=5),
        rate_limits={"offline": (5, 1.0)},
        attachment=Attachment(backend=backend),
    )
    assert result.status == "success", result.error
    times = sorted(backend.times)
    assert len(times) == 15
    # The five items start at once (five starts a second are allowed); their fifteen
    # sessions come five a second: three windows. A session reaches the backend a moment
    # after it took its place, so the windows looked at are a little shorter than one.
    assert all(sum(t <= u < t + 0.75 for u in times) <= 5 for t in times), times
    assert times[-1] - times[0] >= 1.75, times
