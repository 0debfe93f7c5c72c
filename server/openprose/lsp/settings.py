"""The server's settings: `initializationOptions` and `workspace/configuration` (section
`prose`), and the project's configuration files.

Settings keys (all optional): ``select``, ``extend-select``, ``ignore`` (codes or
prefixes), ``severity`` (code -> error/warning/information/hint), ``format`` (``{"enable":
bool}``), ``debounce`` (milliseconds before diagnostics are recomputed after a change),
``trace`` (off, messages, verbose: the server's log level), ``large-file-size`` (characters
above which formatting and code actions answer with nothing; 0: no limit), ``docs-url``
(the URL of the diagnostics reference each code links into, ``""`` for no links; by
default docs/diagnostics.md on GitHub at this version's release tag), ``runCommand``
(``"client"``: the client runs programs itself, and the Run lenses name its commands,
``prose.runProgram``/``prose.runProgramWithInputs``; ``"server"``, the default:
``prose.run``), ``run`` (``{"backend": "offline"}``: the backend ``prose.run`` uses; only
``offline`` so far), ``inlayHints`` (``{"runCost": bool}``: the last run's tokens and cost
after each session, shown by default).  A project's own
``prose.toml`` or ``[tool.openprose]`` table takes precedence over the editor's rule settings.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from openprose.config import Config, ConfigError, ConfigFinder, config_from_table

log = logging.getLogger("prose-ls")

_RULE_KEYS = ("select", "extend-select", "ignore", "severity")
LARGE_FILE_SIZE = 1_000_000
_URL_SCHEMES = ("https://", "http://", "file:")
_RUN_BACKENDS = ("offline",)  # prose.run needs no key; others need a way to configure them
_TRACE_LEVELS = {"off": logging.WARNING, "messages": logging.INFO, "verbose": logging.DEBUG}


class Settings:
    def __init__(self) -> None:
        self.debounce = 0.15  # seconds
        self.format_enabled = True
        # Formatting and code actions cost seconds per megabyte (code actions check the
        # fixed text): above this many characters they answer with nothing.  0: no limit.
        self.large_file_size = LARGE_FILE_SIZE
        self.docs_url: str | None = None  # None: openprose.reference's, "": no code links
        self.client_runs = False  # runCommand "client": the lenses name the client's commands
        self.run_backend = "offline"
        self.run_cost_hints = True  # inlayHints.runCost
        self.client_config: Config | None = None
        self._finder = ConfigFinder()
        # Why the last settings from the editor were rejected, until the user has been told.
        self.problems: list[str] = []

    def update(self, values: dict[str, Any]) -> None:
        """Apply settings from the client; a bad value is logged and ignored."""
        rules = {key: values[key] for key in _RULE_KEYS if values.get(key) is not None}
        try:
            self.client_config = config_from_table("editor settings", rules) if rules else None
        except ConfigError as error:
            log.warning("ignoring invalid editor settings: %s", error)
            self.problems.append(
                f"OpenProse: the rule settings were not applied ({error}); "
                "the previous ones stay in force."
            )
        fmt = values.get("format")
        if isinstance(fmt, dict) and isinstance(fmt.get("enable"), bool):
            self.format_enabled = fmt["enable"]
        debounce = values.get("debounce")
        if isinstance(debounce, int | float) and 0 <= debounce <= 5000:
            self.debounce = debounce / 1000
        size = values.get("large-file-size")
        if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
            self.large_file_size = size
        docs_url = values.get("docs-url")
        if isinstance(docs_url, str) and (docs_url == "" or docs_url.startswith(_URL_SCHEMES)):
            self.docs_url = docs_url
        run_command = values.get("runCommand")
        if run_command in ("client", "server"):
            self.client_runs = run_command == "client"
        hints = values.get("inlayHints")
        if isinstance(hints, dict) and isinstance(hints.get("runCost"), bool):
            self.run_cost_hints = hints["runCost"]
        run = values.get("run")
        if isinstance(run, dict) and run.get("backend") in _RUN_BACKENDS:
            self.run_backend = run["backend"]
        trace = values.get("trace")
        if isinstance(trace, str) and trace in _TRACE_LEVELS:
            logging.getLogger().setLevel(_TRACE_LEVELS[trace])

    def config_for(self, path: Path | None) -> Config | None:
        """The rules for a document: its project's configuration file, else the editor's."""
        if path is not None:
            try:
                found = self._finder.for_path(str(path))
            except ConfigError as error:
                log.warning("ignoring invalid configuration: %s", error)
                found = None
            if found is not None:
                return found
        return self.client_config

    def clear_file_configs(self) -> None:
        self._finder.clear()
