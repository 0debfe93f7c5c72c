// The extension's `prose.*` settings as the language server reads them. No `vscode` import.
//
// VS Code groups the rule settings under `prose.diagnostics.*` and the trace under
// `prose.trace.server`; the server (openprose/lsp/settings.py) reads flat keys: `select`,
// `extend-select`, `ignore`, `severity`, `format: {enable}`, `debounce` (ms), `trace` and
// `inlayHints: {runCost}`.
// The same object is sent as initializationOptions, as the answer to workspace/configuration
// (section `prose`) and in workspace/didChangeConfiguration.

/** Reads one setting below `prose.`, for example `get("diagnostics.select")`. */
export type SettingsReader = (key: string) => unknown;

export type TraceLevel = "off" | "messages" | "verbose";
export type Severity = "error" | "warning" | "information" | "hint";

export interface ServerSettings {
  select?: string[];
  "extend-select"?: string[];
  ignore?: string[];
  severity?: Record<string, Severity>;
  format: { enable: boolean };
  debounce: number;
  trace: TraceLevel;
  inlayHints: { runCost: boolean };
}

export const DEFAULT_DEBOUNCE_MS = 150;
export const MAX_DEBOUNCE_MS = 5000;
const TRACE_LEVELS: readonly TraceLevel[] = ["off", "messages", "verbose"];
const SEVERITIES: readonly Severity[] = ["error", "warning", "information", "hint"];

/** Settings whose change restarts the server (they change how it is started). */
export const RESTART_SETTINGS = ["prose.interpreter", "prose.server.args"] as const;

/** A list of codes: strings only, trimmed, empty ones dropped; undefined when nothing is left. */
function codes(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) {
    return undefined;
  }
  const result = value.filter((v): v is string => typeof v === "string").map((v) => v.trim());
  const nonEmpty = result.filter((v) => v !== "");
  return nonEmpty.length ? nonEmpty : undefined;
}

function severities(value: unknown): Record<string, Severity> | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return undefined;
  }
  const result: Record<string, Severity> = {};
  for (const [code, level] of Object.entries(value)) {
    if (typeof level === "string" && (SEVERITIES as readonly string[]).includes(level) && code.trim()) {
      result[code.trim()] = level as Severity;
    }
  }
  return Object.keys(result).length ? result : undefined;
}

/** `prose.trace.server` is a level, or (the languageclient's long form) `{verbosity, format}`. */
export function traceLevel(value: unknown): TraceLevel {
  const level =
    typeof value === "object" && value !== null ? (value as { verbosity?: unknown }).verbosity : value;
  return typeof level === "string" && (TRACE_LEVELS as readonly string[]).includes(level)
    ? (level as TraceLevel)
    : "off";
}

function debounce(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    return DEFAULT_DEBOUNCE_MS;
  }
  return Math.min(MAX_DEBOUNCE_MS, Math.max(0, value));
}

/**
 * The server's settings from the extension's. An empty `select` means the default rule set, so
 * it is left out (the server would read an empty list as "report nothing"); so are the other
 * empty rule settings. `format`, `debounce`, `trace` and `inlayHints` are always present so that
 * a setting reset to its default reaches the server too.
 */
export function toServerSettings(get: SettingsReader): ServerSettings {
  const settings: ServerSettings = {
    format: { enable: get("format.enable") !== false },
    debounce: debounce(get("debounce")),
    trace: traceLevel(get("trace.server")),
    inlayHints: { runCost: get("inlayHints.runCost") !== false },
  };
  const select = codes(get("diagnostics.select"));
  if (select) {
    settings.select = select;
  }
  const extendSelect = codes(get("diagnostics.extendSelect"));
  if (extendSelect) {
    settings["extend-select"] = extendSelect;
  }
  const ignore = codes(get("diagnostics.ignore"));
  if (ignore) {
    settings.ignore = ignore;
  }
  const severity = severities(get("diagnostics.severity"));
  if (severity) {
    settings.severity = severity;
  }
  return settings;
}

/** `prose.server.args`: the string items of the array, anything else ignored. */
export function serverArgs(get: SettingsReader): string[] {
  const value = get("server.args");
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
