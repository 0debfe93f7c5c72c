"""OpenTelemetry traces and metrics of a run, following the GenAI semantic conventions.

Off by default, and nothing here imports OpenTelemetry until it is turned on: by the
``openprose[otel]`` extra being installed *and* an exporter configured with the standard
``OTEL_*`` variables, or by ``prose run --otel`` (which then exports as those variables say,
by default over OTLP to a collector on this machine).

A run is one ``invoke_workflow`` span; each session an ``invoke_agent`` span under it; each
condition, choice and summary a span of its own (``openprose.judge``, ``openprose.choose``,
``openprose.summarise``: the conventions have no operation for them); a chat backend's
request to its provider a ``chat`` client span under its step (``traced_chat``).
``TelemetryBackend`` wraps the backend *outside* the journal (``JournalBackend``), so that a
step a resumed run answers from its journal still has its span, marked ``openprose.replayed``;
such a step records no metric and no ``gen_ai.usage.*`` attribute, since the run that made
the call already reported them: a resumed run never counts a token twice.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from openprose.vm.backends.base import (
    Backend,
    ChoiceRequest,
    ChoiceResult,
    ConditionRequest,
    ConditionResult,
    SessionRequest,
    SessionResult,
    SummaryRequest,
    SummaryResult,
    Usage,
)
from openprose.vm.backends.replay import exchange_key

# The version of the semantic conventions these spans and metrics follow: the last release
# of the main repository holding the GenAI conventions (they have moved to their own since).
SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
INSTRUMENTATION = "openprose"
SERVICE_NAME = "openprose"

# The conventions' advised bucket boundaries for the two client metrics.
TOKEN_BUCKETS = [4.0**i for i in range(14)]  # 1, 4, 16 ... 67,108,864
DURATION_BUCKETS = [0.01 * 2**i for i in range(14)]  # 0.01 s ... 81.92 s

# Backends whose provider has a name in the conventions; the rest are named openprose.<name>.
PROVIDERS = {"anthropic": "anthropic", "openai": "openai", "claude-code": "anthropic"}

OPERATIONS = {
    "session": "invoke_agent",
    "judge": "openprose.judge",
    "choose": "openprose.choose",
    "summarise": "openprose.summarise",
}

Request = SessionRequest | ConditionRequest | ChoiceRequest | SummaryRequest

# The run's telemetry while a step's call is awaited: how a backend's own requests (``chat``)
# find their parent without being handed anything.
_ACTIVE: ContextVar[Telemetry | None] = ContextVar("openprose_telemetry", default=None)

# Any of these, set and not "none", is the user asking for telemetry.
_EXPORTER_VARIABLES = ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")
_ENDPOINT_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)


class TelemetryError(Exception):
    """Telemetry was asked for but cannot be set up (the extra is missing, an unknown
    exporter is named)."""


def requested(environ: Mapping[str, str]) -> bool:
    """Whether the standard variables configure an exporter (``OTEL_SDK_DISABLED`` wins)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    for name in _EXPORTER_VARIABLES:
        value = environ.get(name, "").strip().lower()
        if value and value != "none":
            return True
    return any(environ.get(name, "").strip() for name in _ENDPOINT_VARIABLES)


def installed() -> bool:
    # find_spec of a submodule imports its parent package: only asked once telemetry is wanted.
    try:
        return importlib.util.find_spec("opentelemetry.sdk") is not None
    except ModuleNotFoundError:
        return False


@dataclass
class Telemetry:
    """A tracer and the two GenAI client metrics; ``owned`` providers are flushed and shut
    down by ``shutdown`` (the CLI's), others belong to the caller (tests, an application)."""

    tracer_provider: Any
    meter_provider: Any
    owned: bool = False
    tracer: Any = field(init=False)
    token_usage: Any = field(init=False)
    duration: Any = field(init=False)

    def __post_init__(self) -> None:
        version = _version()
        self.tracer = self.tracer_provider.get_tracer(
            INSTRUMENTATION, version, schema_url=SCHEMA_URL
        )
        meter = self.meter_provider.get_meter(INSTRUMENTATION, version, schema_url=SCHEMA_URL)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )

    def backend(self, inner: Backend) -> TelemetryBackend:
        return TelemetryBackend(inner, self)

    def run(self, program: str, run_id: str, state: str, *, resumed: bool) -> WorkflowSpan:
        return WorkflowSpan(self, program, run_id, state, resumed)

    def shutdown(self) -> None:
        if self.owned:
            self.tracer_provider.shutdown()
            self.meter_provider.shutdown()


def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("openprose")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return None


def from_environment(
    environ: Mapping[str, str] | None = None, *, force: bool = False
) -> Telemetry | None:
    """Telemetry as the standard ``OTEL_*`` variables configure it, or None when they ask for
    none (``force``, from ``--otel``, turns it on with the SDK's defaults).  Raises
    ``TelemetryError`` when it is wanted but cannot be set up; without ``force``, a missing
    extra only means no telemetry (the variables may be meant for another program)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if not force and not requested(env):
        return None
    if not installed():
        if force:
            raise TelemetryError("--otel needs the otel extra: pip install 'openprose[otel]'")
        return None
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, which win.
    resource = Resource.create({"service.name": SERVICE_NAME}, schema_url=SCHEMA_URL)
    tracer_provider = TracerProvider(resource=resource)
    for exporter in _exporters("traces", env):
        tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    readers = [PeriodicExportingMetricReader(e) for e in _exporters("metrics", env)]
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    return Telemetry(tracer_provider, meter_provider, owned=True)


def _exporters(signal: str, env: Mapping[str, str]) -> list[Any]:
    """The exporters ``OTEL_<SIGNAL>_EXPORTER`` names (default ``otlp``), found by the
    SDK's entry points, as the SDK's own auto-configuration finds them."""
    from importlib.metadata import entry_points

    names = [n.strip() for n in env.get(f"OTEL_{signal.upper()}_EXPORTER", "otlp").split(",")]
    exporters = []
    for name in names:
        if not name or name == "none":
            continue
        if name == "otlp":
            protocol = env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or env.get(
                "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
            )
            name = "otlp_proto_grpc" if protocol.strip() == "grpc" else "otlp_proto_http"
        found = list(entry_points(group=f"opentelemetry_{signal}_exporter", name=name))
        if not found:
            raise TelemetryError(
                f"no OpenTelemetry {signal} exporter {name!r} is installed "
                "(the otel extra has otlp over http/protobuf, and console)"
            )
        exporters.append(found[0].load()())
    return exporters


class WorkflowSpan:
    """The ``invoke_workflow`` span of one run, current while the run is awaited so that every
    step's span is its child (tasks the run starts copy the context)."""

    def __init__(
        self, telemetry: Telemetry, program: str, run_id: str, state: str, resumed: bool
    ) -> None:
        self.telemetry = telemetry
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": program,
            "openprose.program": program,
            "openprose.state": state,
            "openprose.resumed": resumed,
        }
        if run_id:
            attributes["openprose.run_id"] = run_id
        self.attributes = attributes
        self.name = f"invoke_workflow {program}"

    async def around(self, run: Awaitable[Any]) -> Any:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        span = self.telemetry.tracer.start_span(
            self.name, kind=SpanKind.INTERNAL, attributes=self.attributes
        )
        try:
            with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                result = await run
        except BaseException as error:
            span.set_attribute("error.type", type(error).__qualname__)
            span.set_status(Status(StatusCode.ERROR, type(error).__qualname__))
            span.end()
            raise
        status = getattr(result, "status", "success")
        span.set_attribute("openprose.status", status)
        span.set_attribute("openprose.sessions", int(getattr(result, "sessions", 0)))
        # The run's totals, its replayed steps included (as --max-cost counts them): under
        # openprose.*, since gen_ai.usage.* on the workflow would count every call twice
        # for a backend that sums the spans' usage.
        usage = getattr(result, "usage", None)
        if usage is not None:
            span.set_attribute("openprose.usage.input_tokens", int(usage.input_tokens))
            span.set_attribute("openprose.usage.output_tokens", int(usage.output_tokens))
            span.set_attribute("openprose.usage.cache_read_tokens", int(usage.cache_read_tokens))
            span.set_attribute("openprose.usage.cache_write_tokens", int(usage.cache_write_tokens))
        span.set_attribute("openprose.cost_usd", float(getattr(result, "cost", 0.0)))
        if status != "success":
            kind = "stopped" if getattr(result, "fatal", False) else status
            span.set_attribute("error.type", kind)
            span.set_status(Status(StatusCode.ERROR, str(getattr(result, "error", ""))[:500]))
        span.end()
        return result


def trace_context() -> dict[str, str]:
    """The current trace context as W3C headers, for work another process does on this
    one's behalf ({} without OpenTelemetry, or without a current span)."""
    try:
        from opentelemetry import propagate
    except ImportError:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def attach_trace(carrier: Mapping[str, str]) -> Callable[[], None]:
    """Make the trace context ``carrier`` holds (``trace_context``'s, in another process)
    current, so that the spans started here are its children; returns what undoes it."""
    from opentelemetry import context, propagate

    token = context.attach(propagate.extract(dict(carrier)))
    return lambda: context.detach(token)


def answered_from_journal(backend: Any, request: Request) -> bool:
    """Whether ``backend`` (a ``JournalBackend``) will answer ``request`` from its journal;
    False for a backend with no journal."""
    recorded = getattr(backend, "recorded", None)
    return recorded is not None and recorded(request) is not None


class TelemetryBackend:
    """Passes every call to ``inner`` inside a span, and records the client metrics of the
    calls that reached a model."""

    def __init__(self, inner: Backend, telemetry: Telemetry) -> None:
        self.inner = inner
        self.name = inner.name
        self.dry_run = inner.dry_run
        self.telemetry = telemetry
        self.provider = PROVIDERS.get(inner.name, f"openprose.{inner.name}")

    async def _traced(
        self,
        request: Request,
        model: str | None,
        extra: dict[str, Any],
        call: Callable[[], Awaitable[Any]],
    ) -> Any:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        kind, _ = exchange_key(request)
        operation = OPERATIONS[kind]
        replayed = answered_from_journal(self.inner, request)
        common: dict[str, Any] = {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": self.provider,
        }
        if model:
            common["gen_ai.request.model"] = model
        attributes = {
            **common,
            **extra,
            "openprose.step_key": request.step,
            "openprose.replayed": replayed,
        }
        agent = extra.get("gen_ai.agent.name")
        name = f"{operation} {agent}" if agent else operation
        span = self.telemetry.tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)
        started = time.perf_counter()
        active = _ACTIVE.set(self.telemetry)
        try:
            with trace.use_span(span, record_exception=False, set_status_on_exception=False):
                result = await call()
        except BaseException as error:
            error_type = type(error).__qualname__
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
            span.end()
            if not replayed:
                self._duration(started, {**common, "error.type": error_type})
            raise
        finally:
            _ACTIVE.reset(active)
        if result.session_ref:
            span.set_attribute("gen_ai.conversation.id", result.session_ref)
        _result_attributes(span, result)
        if not replayed:
            usage: Usage = result.usage
            inputs = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
            # The conventions count cached tokens inside the input tokens; Usage keeps them apart.
            span.set_attribute("gen_ai.usage.input_tokens", inputs)
            span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
            if usage.cache_read_tokens:
                span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
            if usage.cache_write_tokens:
                span.set_attribute(
                    "gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens
                )
            span.set_attribute("openprose.cost_usd", float(result.cost))
            self.telemetry.token_usage.record(inputs, {**common, "gen_ai.token.type": "input"})
            self.telemetry.token_usage.record(
                usage.output_tokens, {**common, "gen_ai.token.type": "output"}
            )
            self._duration(started, common)
        span.end()
        return result

    def _duration(self, started: float, attributes: dict[str, Any]) -> None:
        self.telemetry.duration.record(time.perf_counter() - started, attributes)

    async def run_session(self, request: SessionRequest) -> SessionResult:
        extra: dict[str, Any] = {"openprose.attempt": request.attempt}
        if request.agent:
            extra["gen_ai.agent.name"] = request.agent
        result: SessionResult = await self._traced(
            request, request.model, extra, lambda: self.inner.run_session(request)
        )
        return result

    async def judge(self, request: ConditionRequest) -> ConditionResult:
        extra = {"openprose.purpose": request.purpose, "openprose.evaluation": request.evaluation}
        result: ConditionResult = await self._traced(
            request, None, extra, lambda: self.inner.judge(request)
        )
        return result

    async def choose(self, request: ChoiceRequest) -> ChoiceResult:
        extra = {"openprose.options": len(request.options)}
        result: ChoiceResult = await self._traced(
            request, None, extra, lambda: self.inner.choose(request)
        )
        return result

    async def summarise(self, request: SummaryRequest) -> SummaryResult:
        extra = {"openprose.binding": request.name, "openprose.limit": request.limit}
        result: SummaryResult = await self._traced(
            request, None, extra, lambda: self.inner.summarise(request)
        )
        return result


def _result_attributes(span: Any, result: Any) -> None:
    # What the step decided, never what it said: prompts and answers are content, which
    # the conventions leave opt-in (and OpenProse does not send).
    if isinstance(result, ConditionResult):
        span.set_attribute("openprose.condition.value", result.value)
    elif isinstance(result, ChoiceResult):
        span.set_attribute("openprose.choice.index", result.index)


async def traced_chat(
    backend: str,
    model: str,
    max_tokens: int,
    ask: Callable[[], Awaitable[tuple[str, Usage, str]]],
) -> tuple[str, Usage, str]:
    """A backend's one request to a chat API (its answer's text, usage and reference): a
    ``chat {model}`` client span under the step's span when the run is traced, else just
    the request.  The step's span holds the metrics: one request a step, counted once."""
    telemetry = _ACTIVE.get()
    if telemetry is None:
        return await ask()
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDERS.get(backend, f"openprose.{backend}"),
        "gen_ai.request.model": model,
        "gen_ai.request.max_tokens": max_tokens,
    }
    span = telemetry.tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes)
    try:
        with trace.use_span(span, record_exception=False, set_status_on_exception=False):
            text, usage, ref = await ask()
    except BaseException as error:
        span.set_attribute("error.type", type(error).__qualname__)
        span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        span.end()
        raise
    if ref:
        span.set_attribute("gen_ai.response.id", ref)
    span.set_attribute(
        "gen_ai.usage.input_tokens",
        usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
    )
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    span.end()
    return text, usage, ref


class ToolCalls:
    """``execute_tool`` spans of an agent's tool calls, under the step's span: one opens when
    the agent asks for a tool and ends when the tool's result comes back (a result that is
    an error, a denial included, ends it with status ERROR).  Does nothing when the run is
    not traced."""

    def __init__(self) -> None:
        self.telemetry = _ACTIVE.get()
        self.open: dict[str, Any] = {}

    def called(self, call_id: str, name: str) -> None:
        if self.telemetry is None:
            return
        from opentelemetry.trace import SpanKind

        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
        }
        self.open[call_id] = self.telemetry.tracer.start_span(
            f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
        )

    def returned(self, call_id: str, failed: bool) -> None:
        span = self.open.pop(call_id, None)
        if span is None:
            return
        if failed:
            from opentelemetry.trace import Status, StatusCode

            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        span.end()

    def close(self) -> None:
        """Ends the spans of calls whose result never came (the session stopped first)."""
        for call_id in list(self.open):
            self.returned(call_id, True)
