"""The dbos engine's fan-out items traced: their model calls are spans of their run's trace,
children of its workflow span, whichever process executes them (the run's trace context
travels with the item)."""

from __future__ import annotations

from pathlib import Path

from openprose.vm.engines import dbos_branches as branches
from openprose.vm.engines.base import Attachment
from tests.support.extras import require
from tests.vm.engines.test_dbos_branches import _items, _run

require("dbos", "pip install 'openprose[dbos]'")
require("opentelemetry.sdk", "pip install 'openprose[otel]'")

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from openprose.vm.telemetry import Telemetry  # noqa: E402

PROGRAM = (
    'let out = parallel for x in ["a", "b", "c"]:\n'
    '  session "Study {x}"\n'
    "parallel:\n"
    '  left = session "Left"\n'
    '  right = session "Right"\n'
)


def test_items_calls_are_children_of_their_run_s_workflow_span(tmp_path: Path) -> None:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    telemetry = Telemetry(provider, MeterProvider())
    url, run_id, result = _run(tmp_path, PROGRAM, attachment=Attachment(telemetry=telemetry))
    assert result.status == "success"
    assert not branches.ITEM_TELEMETRY  # the run's telemetry is not kept past it

    finished = spans.get_finished_spans()
    [workflow] = [s for s in finished if s.name.startswith("invoke_workflow")]
    calls = [
        s
        for s in finished
        if s.attributes and s.attributes.get("gen_ai.operation.name") == "invoke_agent"
    ]
    # Five sessions, each an item's or a branch's workflow, traced in the run's trace.
    assert len(calls) == 5, [s.name for s in finished]
    for call in calls:
        assert call.context.trace_id == workflow.context.trace_id
        assert call.parent is not None and call.parent.span_id == workflow.context.span_id
    assert len(_items(url, run_id)) == 5
