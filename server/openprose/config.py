"""Project configuration: which rules run and at what severity.

The format follows ruff's rule selection, kept small (README, "Configuration")::

    # prose.toml (the whole file is the table), or a [tool.openprose] table in pyproject.toml
    select = ["E", "W"]            # codes or prefixes; default: every code
    extend-select = ["I001"]       # added to select
    ignore = ["W015", "W03"]       # codes or prefixes to leave out
    severity = { W005 = "error", E044 = "warning" }
    exclude = ["fixtures"]          # globs; replaces the default list (.git, node_modules...)
    extend-exclude = ["old/*.prose"]   # globs added to the default list
    respect-gitignore = true       # leave out what .gitignore files ignore (default)
    force-exclude = false          # exclude paths named on the command line too
    run = { model-map = { sonnet = "llama3.1" } }   # prose run: model aliases (docs/run.md)
    # run.allow-remote = true: prose run may fetch https:// and handle/slug programs
    # run.state = "sqlite": where prose run keeps run state (filesystem, sqlite, postgres,
    #   in-context; docs/run.md)
    # run.engine = "dbos": what executes prose run's runs (local, dbos; docs/scale.md)
    # run.windows = { "llama3.1" = 32000 }: context windows by model id (docs/context.md)
    # run.prices = { "llama3.1" = [0.1, 0.2] }: dollars per million tokens in, out[, cache
    #   read[, cache write]] (docs/run.md)
    # run.rate-limits = { anthropic = "50/min" }: with the dbos engine, a provider's model
    #   requests and fan-out items started per period, across all workers (docs/scale.md)
    # run.global-concurrency = { runs = 8, branches = 64 }: with the dbos engine, runs and
    #   fan-out items executed at once across all workers (docs/scale.md)

A prefix is a code's leading characters (``W``, ``W0``, ``E04``). For each code the most
specific selector decides (an exact code beats ``E04``, which beats ``E``; on a tie ``ignore``
wins). Syntax errors (``SYNTAX_CODES``) are always reported as errors: naming them in
``ignore`` or giving them another severity is a ``ConfigError``, and so is an unknown key or
code, because a typo must not silently do nothing.

``ConfigFinder`` finds a file's configuration by walking up from its directory and caches
what it finds per directory. Loading never prints anything: every problem is a
``ConfigError`` and the caller decides (the CLI exits with status 2).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from openprose.codes import CODES, SYNTAX_CODES
from openprose.diagnostics import Diagnostic, Severity
from openprose.files import DEFAULT_MAX_FILE_SIZE, read_bytes

PROSE_TOML = "prose.toml"
PYPROJECT_TOML = "pyproject.toml"
MAX_CONFIG_SIZE = DEFAULT_MAX_FILE_SIZE

KEYS = (
    "select",
    "extend-select",
    "ignore",
    "severity",
    "exclude",
    "extend-exclude",
    "respect-gitignore",
    "force-exclude",
    "run",
)
RUN_KEYS = (
    "model-map",
    "allow-remote",
    "state",
    "engine",
    "windows",
    "prices",
    "rate-limits",
    "global-concurrency",
)
# run.global-concurrency's keys: what the dbos engine's workers execute at once, all together
GLOBAL_CAPS = ("runs", "branches")
ENGINES = ("local", "dbos")  # prose run --engine, run.engine (vm/engines/)
MODEL_BACKENDS = ("offline", "replay", "anthropic", "openai", "claude-code")  # --backend
STATE_BACKENDS = ("filesystem", "sqlite", "postgres", "in-context")
SEVERITIES = {s.label: s for s in sorted(Severity)}  # error, warning, information, hint

_SELECTOR = re.compile(r"[A-Z][0-9]{0,3}")


class ConfigError(Exception):
    """A configuration that cannot be used; ``str()`` is one line for the user.

    ``source`` is the configuration file (or the command-line option) at fault.
    """

    def __init__(self, source: str, reason: str) -> None:
        where = "option" if source.startswith("--") else f"configuration in {source}"
        super().__init__(f"invalid {where}: {reason}")
        self.source = source
        self.reason = reason


@dataclass(frozen=True, slots=True)
class RuleSelection:
    """One source of rule selection (a configuration file, or the command line).

    ``select=None`` keeps the codes enabled by the sources before this one.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def apply(self, enabled: set[str]) -> set[str]:
        """The codes enabled after this source, given those enabled before it."""
        chosen = [*(self.select or ()), *self.extend_select]
        result = set() if self.select is not None else set(enabled)
        for code in CODES:
            # Most specific selector wins; an ignore wins a tie (it sorts after a select).
            matches = [(len(s), False, s) for s in self.ignore if code.startswith(s)]
            matches += [(len(s), True, s) for s in chosen if code.startswith(s)]
            if matches:
                _, is_select, _ = max(matches, key=lambda m: (m[0], not m[1]))
                if is_select:
                    result.add(code)
                else:
                    result.discard(code)
        return result


@dataclass(frozen=True)
class Config:
    """Resolved settings: the enabled codes and each code's severity.

    Build one with ``load_config`` (a file), ``Config()`` (the defaults) or
    ``with_selection`` (command-line overrides on top of a file).
    """

    path: str | None = None  # the file it came from; None: defaults
    selections: tuple[RuleSelection, ...] = ()
    severity: Mapping[str, Severity] = dataclasses.field(default_factory=dict)
    model_map: Mapping[str, str] = dataclasses.field(default_factory=dict)  # for prose run
    allow_remote: bool = False  # prose run: fetch https:// and handle/slug programs
    state: str | None = None  # prose run: the state backend (None: filesystem)
    windows: Mapping[str, int] = dataclasses.field(default_factory=dict)  # model id -> tokens
    # model id -> dollars per million tokens: input, output[, cache read[, cache write]]
    prices: Mapping[str, tuple[float, ...]] = dataclasses.field(default_factory=dict)
    # File discovery (prose check and fmt; see openprose.cli.exclusion). exclude=None keeps
    # the default list; relative globs are anchored at this file's directory.
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False
    engine: str | None = None  # prose run: local or dbos (None: local)
    # The dbos engine: a provider's fan-out items started per period (a parse_rate_limit)
    rate_limits: Mapping[str, RateLimit | None] = dataclasses.field(default_factory=dict)
    # The dbos engine: runs and fan-out items executed at once across all workers
    # (``GLOBAL_CAPS``; a cap left out: none)
    global_concurrency: Mapping[str, int] = dataclasses.field(default_factory=dict)
    enabled: frozenset[str] = dataclasses.field(init=False)
    severities: Mapping[str, Severity] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        enabled = set(CODES)
        for selection in self.selections:
            enabled = selection.apply(enabled)
        object.__setattr__(self, "enabled", frozenset(enabled | SYNTAX_CODES))
        object.__setattr__(self, "severities", _resolve_severities(self.severity))

    def with_selection(self, selection: RuleSelection) -> Config:
        """This configuration with one more selection source applied after the others."""
        # replace(), not a constructor call listing fields: a field added later is kept.
        return dataclasses.replace(self, selections=(*self.selections, selection))

    def apply(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Drop the diagnostics of codes not enabled; override severities."""
        result = []
        for d in diagnostics:
            if d.code not in self.enabled and d.code in CODES:
                continue
            severity = self.severities.get(d.code, d.severity)
            result.append(
                d if severity is d.severity else dataclasses.replace(d, severity=severity)
            )
        return result


def _resolve_severities(overrides: Mapping[str, Severity]) -> dict[str, Severity]:
    """Per code, the override of the most specific matching key (a code or a prefix)."""
    resolved: dict[str, Severity] = {}
    for code in CODES:
        keys = [k for k in overrides if code.startswith(k)]
        if keys and code not in SYNTAX_CODES:
            resolved[code] = overrides[max(keys, key=len)]
    return resolved


# --------------------------------------------------------------------------- validation


def parse_selectors(source: str, key: str, value: object, *, ignoring: bool = False) -> list[str]:
    """Check a list of codes or prefixes; raise ConfigError naming the bad ones."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(source, f'`{key}` must be a list of codes or prefixes, such as ["W0"]')
    unknown = [v for v in value if not _is_known_selector(v)]
    if unknown:
        raise ConfigError(source, f"unknown code or prefix in `{key}`: {', '.join(unknown)}")
    if ignoring:
        syntax_only = [v for v in value if _matches_only_syntax(v)]
        if syntax_only:
            raise ConfigError(
                source,
                f"`{key}` names syntax errors, which cannot be ignored: {', '.join(syntax_only)}",
            )
    return list(value)


def _is_known_selector(selector: str) -> bool:
    return bool(_SELECTOR.fullmatch(selector)) and any(c.startswith(selector) for c in CODES)


def _matches_only_syntax(selector: str) -> bool:
    return all(c in SYNTAX_CODES for c in CODES if c.startswith(selector))


def _parse_severity(source: str, value: object) -> dict[str, Severity]:
    if not isinstance(value, dict):
        raise ConfigError(source, '`severity` must be a table, such as { W005 = "error" }')
    unknown = [k for k in value if not _is_known_selector(k)]
    if unknown:
        raise ConfigError(source, f"unknown code or prefix in `severity`: {', '.join(unknown)}")
    result: dict[str, Severity] = {}
    for key, name in value.items():
        if not isinstance(name, str) or name not in SEVERITIES:
            raise ConfigError(
                source,
                f"`severity.{key}` must be one of {', '.join(SEVERITIES)}, not {name!r}",
            )
        if SEVERITIES[name] is not Severity.ERROR and _matches_only_syntax(key):
            raise ConfigError(
                source, f"`severity.{key}`: syntax errors are always errors, not {name}"
            )
        result[key] = SEVERITIES[name]
    return result


def config_from_table(source: str, table: Mapping[str, Any]) -> Config:
    """A Config from the keys of a ``[tool.openprose]`` table (or a whole prose.toml)."""
    unknown = [k for k in table if k not in KEYS]
    if unknown:
        raise ConfigError(
            source, f"unknown key {', '.join(map(repr, unknown))} (known: {', '.join(KEYS)})"
        )
    select = table.get("select")
    selection = RuleSelection(
        select=None if select is None else tuple(parse_selectors(source, "select", select)),
        extend_select=tuple(
            parse_selectors(source, "extend-select", table.get("extend-select", []))
        ),
        ignore=tuple(parse_selectors(source, "ignore", table.get("ignore", []), ignoring=True)),
    )
    severity = _parse_severity(source, table.get("severity", {}))
    run = table.get("run", {})
    model_map = _parse_model_map(source, run)
    allow_remote = run.get("allow-remote", False)
    if not isinstance(allow_remote, bool):
        raise ConfigError(source, "`run.allow-remote` must be true or false")
    state = run.get("state")
    if state is not None and state not in STATE_BACKENDS:
        raise ConfigError(
            source, f"`run.state` must be one of {', '.join(STATE_BACKENDS)}, not {state!r}"
        )
    engine = run.get("engine")
    if engine is not None and engine not in ENGINES:
        raise ConfigError(
            source, f"`run.engine` must be one of {', '.join(ENGINES)}, not {engine!r}"
        )
    windows = _parse_windows(source, run.get("windows", {}))
    prices = _parse_prices(source, run.get("prices", {}))
    exclude = table.get("exclude")
    return Config(
        source,
        (selection,),
        severity,
        model_map,
        allow_remote,
        state,
        windows,
        prices,
        exclude=None if exclude is None else _parse_globs(source, "exclude", exclude),
        extend_exclude=_parse_globs(source, "extend-exclude", table.get("extend-exclude", [])),
        respect_gitignore=_parse_flag(source, "respect-gitignore", table, default=True),
        force_exclude=_parse_flag(source, "force-exclude", table, default=False),
        engine=engine,
        rate_limits=_parse_rate_limits(source, run.get("rate-limits", {})),
        global_concurrency=_parse_caps(source, run.get("global-concurrency", {})),
    )


RateLimit = tuple[int, float]  # at most so many starts in any window of so many seconds
_PERIODS = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0}
_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*(s|sec|min|h)\s*")
RATE_LIMIT_FORM = '"N/s", "N/min", "N/h" or "N/30s" (N starts per period), or "off"'


def parse_rate_limit(text: str) -> RateLimit | None:
    """``"50/min"``, ``"10/30s"``, ``"3000/h"``: (starts, seconds); ``"off"``: None (no
    limit).  ValueError for anything else."""
    if text.strip() == "off":
        return None
    match = _RATE.fullmatch(text)
    if match is None:
        raise ValueError(f"a rate limit is {RATE_LIMIT_FORM}, not {text!r}")
    count, multiple, unit = match.groups()
    period = float(multiple or 1) * _PERIODS[unit]
    if int(count) < 1 or period <= 0:
        raise ValueError(f"a rate limit needs at least 1 start in a period over 0 s: {text!r}")
    return int(count), period


def _parse_rate_limits(source: str, table: object) -> dict[str, RateLimit | None]:
    """``run.rate-limits``: each model backend's limit, as ``parse_rate_limit`` reads it."""
    if not isinstance(table, dict):
        raise ConfigError(source, "`run.rate-limits` must map backends to rate limits")
    limits: dict[str, RateLimit | None] = {}
    for backend, text in table.items():
        if backend not in MODEL_BACKENDS:
            raise ConfigError(
                source,
                f"`run.rate-limits`: unknown backend {backend!r} "
                f"(known: {', '.join(MODEL_BACKENDS)})",
            )
        try:
            limits[backend] = parse_rate_limit(text if isinstance(text, str) else "")
        except ValueError as error:
            raise ConfigError(source, f"`run.rate-limits.{backend}`: {error}") from None
    return limits


def _parse_caps(source: str, table: object) -> dict[str, int]:
    """``run.global-concurrency = { runs = 8, branches = 64 }``: positive whole numbers."""
    if not isinstance(table, dict):
        raise ConfigError(
            source, "`run.global-concurrency` must be a table such as { runs = 8, branches = 64 }"
        )
    caps: dict[str, int] = {}
    for name, value in table.items():
        if name not in GLOBAL_CAPS:
            raise ConfigError(
                source,
                f"`run.global-concurrency`: unknown key {name!r} (known: {', '.join(GLOBAL_CAPS)})",
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(
                source, f"`run.global-concurrency.{name}` must be a whole number of at least 1"
            )
        caps[name] = value
    return caps


def _parse_globs(source: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(
            source, f'`{key}` must be a list of paths or globs, such as ["fixtures", "*.gen.prose"]'
        )
    return tuple(value)


def _parse_flag(source: str, key: str, table: Mapping[str, Any], *, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(source, f"`{key}` must be true or false")
    return value


def _parse_windows(source: str, table: object) -> dict[str, int]:
    """``run.windows``: each model id's context window, a whole number of tokens."""
    if not isinstance(table, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 1_000 for v in table.values()
    ):
        raise ConfigError(
            source, "`run.windows` must map model ids to windows of 1000 tokens or more"
        )
    return {str(model): int(tokens) for model, tokens in table.items()}


def _parse_prices(source: str, table: object) -> dict[str, tuple[float, ...]]:
    """``run.prices``: each model id's [input, output, cache read?, cache write?] prices."""

    def valid(value: object) -> bool:
        return (
            isinstance(value, list)
            and 2 <= len(value) <= 4
            and all(
                isinstance(n, int | float) and not isinstance(n, bool) and n >= 0 for n in value
            )
        )

    if not isinstance(table, dict) or not all(valid(v) for v in table.values()):
        raise ConfigError(
            source,
            "`run.prices` must map model ids to [input, output, cache read?, cache write?] "
            "dollars per million tokens (numbers, 0 or more)",
        )
    return {str(model): tuple(float(n) for n in value) for model, value in table.items()}


def _parse_model_map(source: str, run: object) -> dict[str, str]:
    """``run.model-map``: model aliases for ``prose run``, each a non-empty model id."""
    if not isinstance(run, dict):
        raise ConfigError(source, "`run` must be a table")
    unknown = [k for k in run if k not in RUN_KEYS]
    if unknown:
        raise ConfigError(source, f"unknown key run.{unknown[0]} (known: {', '.join(RUN_KEYS)})")
    mapping = run.get("model-map", {})
    if not isinstance(mapping, dict) or not all(
        isinstance(model, str) and model.strip() for model in mapping.values()
    ):
        raise ConfigError(source, "`run.model-map` must map aliases to model ids (strings)")
    return {str(alias): model.strip() for alias, model in mapping.items()}


# --------------------------------------------------------------------------- files


def _read_toml(path: str) -> dict[str, Any]:
    # Imported here: its regular expressions cost the language server's start ~10 ms, and
    # most starts read no configuration file before `initialize` is answered.
    import tomllib

    try:
        # Not open(): a FIFO named prose.toml would block, /dev/zero would fill memory.
        return tomllib.loads(read_bytes(path, MAX_CONFIG_SIZE).decode())
    except OSError as error:
        raise ConfigError(path, f"cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(path, "not valid UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(path, f"not valid TOML: {error}") from None


def _openprose_table(path: str, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``[tool.openprose]`` table of a parsed pyproject.toml, if it has one."""
    tool = data.get("tool")
    table = tool.get("openprose") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(path, "`tool.openprose` must be a table")
    return table


def load_config(path: str) -> Config:
    """Load a configuration file named explicitly (``--config``).

    A file named ``pyproject.toml`` must have a ``[tool.openprose]`` table; any other file is
    read like ``prose.toml`` (the whole file is the table).
    """
    data = _read_toml(path)
    if os.path.basename(path) != PYPROJECT_TOML:
        return config_from_table(path, data)
    table = _openprose_table(path, data)
    if table is None:
        raise ConfigError(path, "no [tool.openprose] table")
    return config_from_table(path, table)


class ConfigFinder:
    """Finds the configuration that applies to a file, caching per directory.

    The configuration is the first, walking up from the file's directory to the root, of a
    ``prose.toml`` or a ``pyproject.toml`` with a ``[tool.openprose]`` table (``prose.toml``
    first when a directory has both). None when there is none. One finder per run: files
    changed after they were read are not reread (a long-lived caller calls ``clear()``).
    """

    def __init__(self) -> None:
        self._by_directory: dict[str, Config | ConfigError | None] = {}

    def clear(self) -> None:
        self._by_directory.clear()

    def for_path(self, path: str | None) -> Config | None:
        """The configuration for a file (None: standard input, searched from the current
        directory)."""
        directory = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
        return self.for_directory(directory)

    def for_directory(self, directory: str) -> Config | None:
        visited: list[str] = []
        found: Config | ConfigError | None = None
        current = directory
        while True:
            if current in self._by_directory:
                found = self._by_directory[current]
                break
            visited.append(current)
            try:
                found = self._load_in(current)
            except ConfigError as error:
                found = error
            if found is not None:
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for seen in visited:
            self._by_directory[seen] = found
        if isinstance(found, ConfigError):
            raise found
        return found

    @staticmethod
    def _load_in(directory: str) -> Config | None:
        prose_toml = os.path.join(directory, PROSE_TOML)
        if _present(prose_toml):
            return config_from_table(prose_toml, _read_toml(prose_toml))
        pyproject = os.path.join(directory, PYPROJECT_TOML)
        if _present(pyproject):
            table = _openprose_table(pyproject, _read_toml(pyproject))
            if table is not None:
                return config_from_table(pyproject, table)
        return None


def _present(path: str) -> bool:
    # A FIFO or a device named prose.toml is there (and refused when read, so the user
    # learns their configuration is not used); a directory of that name is not a file.
    return os.path.exists(path) and not os.path.isdir(path)
