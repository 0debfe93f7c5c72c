"""OpenTelemetry traces and metrics of a run (vm/telemetry.py): spans checked with the SDK's
in-memory exporter, metrics with its in-memory reader; off, and not even imported, unless
configured."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from openprose.vm.backends.base import SummaryRequest
from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.interpreter import Options
from openprose.vm.runner import run_file
from openprose.vm.state.filesystem import FilesystemCatalog
from openprose.vm.telemetry import (
    SCHEMA_URL,
    SEMCONV_VERSION,
    Telemetry,
    TelemetryError,
    from_environment,
    requested,
)

PROGRAM = """\
agent writer:
  model: opus
  prompt: "You write clearly"

let a = session: writer
  prompt: "Draft"
if **the draft is good**:
  session "Polish"
choice **the best next step**:
  option "Write":
    session "Write it"
  option "Review":
    session "Review it"
"""


class Recorded:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.telemetry = Telemetry(tracer_provider, MeterProvider(metric_readers=[self.metrics]))

    def finished(self) -> list[Any]:
        return list(self.spans.get_finished_spans())

    def points(self, name: str) -> list[tuple[dict[str, Any], int, float]]:
        """(attributes, count, sum) of each histogram point of the metric ``name``."""
        data = self.metrics.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found += [
                            (dict(p.attributes or {}), p.count, p.sum)
                            for p in metric.data.data_points
                            if isinstance(p, HistogramDataPoint)
                        ]
        return found


def _program(tmp_path: Path, text: str = PROGRAM) -> Path:
    path = tmp_path / "main.prose"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_is_one_workflow_span_with_a_span_per_step(tmp_path: Path) -> None:
    recorded = Recorded()
    result = asyncio.run(
        run_file(
            _program(tmp_path),
            backend=OfflineBackend(),
            runs_root=tmp_path / "runs",
            telemetry=recorded.telemetry,
        )
    )
    assert result.status == "success"
    spans = recorded.finished()
    workflow = next(s for s in spans if s.name == "invoke_workflow main.prose")
    assert workflow.kind is SpanKind.INTERNAL
    assert workflow.parent is None
    assert workflow.instrumentation_scope.schema_url == SCHEMA_URL
    assert dict(workflow.attributes) == {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": "main.prose",
        "openprose.program": "main.prose",
        "openprose.state": "filesystem",
        "openprose.resumed": False,
        "openprose.run_id": result.run_id,
        "openprose.status": "success",
        "openprose.sessions": 3,
        "openprose.usage.input_tokens": result.usage.input_tokens,
        "openprose.usage.output_tokens": result.usage.output_tokens,
        "openprose.usage.cache_read_tokens": 0,
        "openprose.usage.cache_write_tokens": 0,
        "openprose.cost_usd": 0.0,
    }
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    steps = [s for s in spans if s is not workflow]
    assert all(s.parent.span_id == workflow.context.span_id for s in steps)
    assert [s.name for s in steps] == [
        "invoke_agent writer",
        "openprose.judge",
        "invoke_agent",
        "openprose.choose",
        "invoke_agent",
    ]
    draft = steps[0].attributes
    assert draft["gen_ai.operation.name"] == "invoke_agent"
    assert draft["gen_ai.provider.name"] == "openprose.offline"
    assert draft["gen_ai.request.model"] == "opus"
    assert draft["gen_ai.agent.name"] == "writer"
    assert draft["gen_ai.conversation.id"] == "offline-1"
    assert draft["openprose.step_key"]
    assert draft["openprose.replayed"] is False
    assert draft["gen_ai.usage.input_tokens"] > 0
    assert draft["gen_ai.usage.output_tokens"] > 0
    assert steps[1].attributes["openprose.condition.value"] is True
    assert steps[1].attributes["openprose.purpose"] == "if"
    assert steps[3].attributes["openprose.choice.index"] == 0
    assert steps[3].attributes["openprose.options"] == 2
    # No prompt and no answer goes into a span: content is opt-in in the conventions.
    texts = json.dumps([dict(s.attributes) for s in spans])
    assert "Draft" not in texts and "You write clearly" not in texts


def test_metrics_count_each_live_call_by_token_type(tmp_path: Path) -> None:
    recorded = Recorded()
    asyncio.run(
        run_file(_program(tmp_path), backend=OfflineBackend(), telemetry=recorded.telemetry)
    )
    spans = [s for s in recorded.finished() if s.name.startswith(("invoke_agent", "openprose."))]
    tokens = recorded.points("gen_ai.client.token.usage")
    by_type: dict[str, tuple[int, float]] = {}
    for attributes, count, total in tokens:
        assert attributes["gen_ai.provider.name"] == "openprose.offline"
        kind = attributes["gen_ai.token.type"]
        before = by_type.get(kind, (0, 0.0))
        by_type[kind] = (before[0] + count, before[1] + total)
    assert by_type["input"] == (
        len(spans),
        sum(s.attributes["gen_ai.usage.input_tokens"] for s in spans),
    )
    assert by_type["output"][1] == sum(s.attributes["gen_ai.usage.output_tokens"] for s in spans)
    durations = recorded.points("gen_ai.client.operation.duration")
    assert sum(count for _, count, _ in durations) == len(spans)
    operations = {a["gen_ai.operation.name"] for a, _, _ in durations}
    assert operations == {"invoke_agent", "openprose.judge", "openprose.choose"}
    assert {a.get("gen_ai.request.model") for a, _, _ in durations} == {"opus", None}


def test_a_resumed_run_marks_the_replayed_steps_and_counts_them_in_no_metric(
    tmp_path: Path,
) -> None:
    path = _program(tmp_path)
    runs = tmp_path / "runs"
    first = Recorded()
    stopped = asyncio.run(
        run_file(
            path,
            backend=OfflineBackend(),
            runs_root=runs,
            options=Options(max_sessions=2),
            telemetry=first.telemetry,
        )
    )
    assert stopped.status == "error"
    workflow = next(s for s in first.finished() if s.name.startswith("invoke_workflow"))
    assert workflow.status.status_code is StatusCode.ERROR
    assert workflow.attributes["error.type"] == "stopped"  # by a limit, not the program

    second = Recorded()
    store = FilesystemCatalog(runs).open(stopped.run_id)
    resumed = asyncio.run(
        run_file(path, backend=OfflineBackend(), resume=store, telemetry=second.telemetry)
    )
    assert resumed.status == "success"
    spans = second.finished()
    workflow = next(s for s in spans if s.name.startswith("invoke_workflow"))
    assert workflow.attributes["openprose.resumed"] is True
    assert workflow.attributes["openprose.run_id"] == stopped.run_id
    steps = [(s.name, s.attributes["openprose.replayed"]) for s in spans if s is not workflow]
    assert steps == [
        ("invoke_agent writer", True),
        ("openprose.judge", True),
        ("invoke_agent", True),
        ("openprose.choose", True),
        ("invoke_agent", False),
    ]
    replayed = [s for s in spans if s.attributes.get("openprose.replayed")]
    assert all("gen_ai.usage.input_tokens" not in s.attributes for s in replayed)
    assert replayed[0].attributes["gen_ai.conversation.id"] == "offline-1"
    # Only the live session is in the metrics: the first run reported the rest.
    tokens = second.points("gen_ai.client.token.usage")
    assert sum(count for _, count, _ in tokens) == 2  # its input and its output
    durations = second.points("gen_ai.client.operation.duration")
    assert [(a["gen_ai.operation.name"], count) for a, count, _ in durations] == [
        ("invoke_agent", 1)
    ]


def test_a_failed_step_is_an_error_span_with_its_type(tmp_path: Path) -> None:
    recorded = Recorded()
    program = 'session "Flaky"\n'
    result = asyncio.run(
        run_file(
            _program(tmp_path, program),
            backend=OfflineBackend(failures={"Flaky": 1}),
            telemetry=recorded.telemetry,
        )
    )
    assert result.status == "error"
    failed = next(s for s in recorded.finished() if s.name == "invoke_agent")
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "BackendError"
    durations = recorded.points("gen_ai.client.operation.duration")
    assert [a.get("error.type") for a, _, _ in durations] == ["BackendError"]
    assert recorded.points("gen_ai.client.token.usage") == []


def test_a_summary_has_its_span() -> None:
    recorded = Recorded()
    backend = recorded.telemetry.backend(OfflineBackend())
    request = SummaryRequest(name="notes", text="x" * 3000, limit=500, step="1")
    asyncio.run(backend.summarise(request))
    (span,) = recorded.finished()
    assert span.name == "openprose.summarise"
    assert span.attributes["openprose.binding"] == "notes"
    assert span.attributes["openprose.replayed"] is False
    assert span.attributes["gen_ai.usage.input_tokens"] == 750


def test_a_chat_backend_request_is_a_client_span_under_its_step(tmp_path: Path) -> None:
    from openprose.vm.backends.anthropic_backend import AnthropicBackend
    from tests.vm.backends.provider_fakes import FakeProvider, anthropic_stream

    recorded = Recorded()
    with FakeProvider() as fake:
        fake.script(anthropic_stream(["Hello"], ref="msg_7", cache_read_input_tokens=5))
        result = asyncio.run(
            run_file(
                _program(tmp_path, 'session "Hi"\n'),
                backend=AnthropicBackend("test-key", base_url=fake.url),
                telemetry=recorded.telemetry,
            )
        )
    assert result.status == "success", result.error
    spans = {s.name.split()[0]: s for s in recorded.finished()}
    chat, agent = spans["chat"], spans["invoke_agent"]
    assert chat.kind is SpanKind.CLIENT
    assert chat.parent.span_id == agent.context.span_id
    assert chat.name == f"chat {chat.attributes['gen_ai.request.model']}"
    assert chat.attributes["gen_ai.request.model"].startswith("claude-")
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == "anthropic"
    assert chat.attributes["gen_ai.response.id"] == "msg_7"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 15  # cache reads counted in
    assert agent.attributes["gen_ai.provider.name"] == "anthropic"
    assert agent.attributes["gen_ai.conversation.id"] == "msg_7"
    assert agent.attributes["gen_ai.usage.cache_read.input_tokens"] == 5
    # One request a step: the metrics count it once, on the step.
    tokens = recorded.points("gen_ai.client.token.usage")
    assert sorted((a["gen_ai.token.type"], count) for a, count, _ in tokens) == [
        ("input", 1),
        ("output", 1),
    ]


@pytest.mark.parametrize(("inside", "failed"), [(True, False), (False, True)])
def test_a_claude_code_tool_call_is_an_execute_tool_span(
    tmp_path: Path, inside: bool, failed: bool
) -> None:
    pytest.importorskip("claude_agent_sdk")
    from openprose.vm.backends.base import SessionRequest
    from openprose.vm.backends.claude_code_backend import ClaudeCodeBackend
    from tests.vm.backends.provider_fakes import (
        FakeProvider,
        anthropic_stream,
        anthropic_tool_use_stream,
    )

    (tmp_path / "work").mkdir()
    # A write the session's permissions allow, or one they deny (the tool's result an error).
    target = tmp_path / "work" / ("notes/a.md" if inside else "secret.txt")
    request = SessionRequest(
        prompt="Write the notes",
        step="1",
        agent="writer",
        properties=(("permissions", json.dumps({"write": ["notes/"]})),),
    )
    recorded = Recorded()
    with FakeProvider() as fake:
        fake.script(
            anthropic_tool_use_stream("Write", {"file_path": str(target), "content": "x\n"}),
            anthropic_stream(["Done"]),
        )
        model = ClaudeCodeBackend(
            "test-key",
            base_url=fake.url,
            cwd=tmp_path / "work",
            run_key="run-1",
            environ={"CLAUDE_CONFIG_DIR": str(tmp_path / "config")},
        )
        result = asyncio.run(recorded.telemetry.backend(model).run_session(request))
    assert result.text == "Done"
    spans = {s.name: s for s in recorded.finished()}
    tool, agent = spans["execute_tool Write"], spans["invoke_agent writer"]
    assert tool.parent.span_id == agent.context.span_id
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.call.id"] == "toolu_01"
    assert agent.attributes["gen_ai.provider.name"] == "anthropic"
    assert (tool.status.status_code is StatusCode.ERROR) is failed
    assert target.exists() is inside


def test_without_extra_installed_otel_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import openprose.vm.telemetry as telemetry

    monkeypatch.setattr(telemetry, "installed", lambda: False)
    with pytest.raises(TelemetryError, match=r"pip install 'openprose\[otel\]'"):
        from_environment({}, force=True)
    # Variables meant for another program turn nothing on here without the extra.
    assert from_environment({"OTEL_TRACES_EXPORTER": "console"}) is None


def test_the_semconv_version_is_pinned_in_the_docs() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "run.md").read_text(encoding="utf-8")
    assert f"semantic conventions {SEMCONV_VERSION}" in docs
    assert SCHEMA_URL.endswith(SEMCONV_VERSION)


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        ({}, False),
        ({"OTEL_SERVICE_NAME": "x"}, False),
        ({"OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_METRICS_EXPORTER": "otlp"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, False),
    ],
)
def test_only_a_configured_exporter_turns_telemetry_on(
    environ: dict[str, str], wanted: bool
) -> None:
    assert requested(environ) is wanted
    if not wanted:
        assert from_environment(environ) is None


def test_an_unknown_exporter_is_refused() -> None:
    with pytest.raises(TelemetryError, match="'nosuch'"):
        from_environment({"OTEL_TRACES_EXPORTER": "nosuch"})


def _prose(tmp_path: Path, args: list[str], environ: dict[str, str]) -> subprocess.CompletedProcess:
    """``prose run`` in a fresh interpreter, which then prints the OpenTelemetry modules it
    loaded; no OTEL_* variable of the caller's is passed on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(environ)
    code = (
        "import sys\n"
        "from openprose.cli import main\n"
        f"status = main(['run', *{args!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry')\n"
        "print('LOADED', len(loaded), file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_configuration_opentelemetry_is_never_imported(tmp_path: Path) -> None:
    _program(tmp_path)
    done = _prose(tmp_path, ["main.prose"], {})
    assert done.returncode == 0, done.stderr
    assert "LOADED 0" in done.stderr


class _Collector(http.server.BaseHTTPRequestHandler):
    paths: list[str]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).paths.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_a_configured_endpoint_receives_the_traces_and_metrics(tmp_path: Path) -> None:
    _program(tmp_path)
    _Collector.paths = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        done = _prose(tmp_path, ["main.prose"], {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    assert "LOADED 0" not in done.stderr
    assert "/v1/traces" in _Collector.paths
    assert "/v1/metrics" in _Collector.paths


def test_otel_flag_uses_the_standard_variables(tmp_path: Path) -> None:
    _program(tmp_path)
    done = _prose(
        tmp_path,
        ["main.prose", "--otel"],
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"},
    )
    assert done.returncode == 0, done.stderr
    assert '"name": "invoke_workflow main.prose"' in done.stdout
    quiet = _prose(tmp_path, ["main.prose", "--otel"], {"OTEL_SDK_DISABLED": "true"})
    assert quiet.returncode == 0, quiet.stderr
    assert "LOADED 0" in quiet.stderr
