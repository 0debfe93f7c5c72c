// Runs and state of the current program: what the server's commands answer (prose.runs.list,
// prose.state.describe|reset|compact; openprose/lsp/state_commands.py) turned into quick pick
// items and messages. No `vscode` import: unit-tested under Node (the UI is in stateView.ts).
import { type RunInputs, type RunLaunch, runLaunch } from "./run";

/** The extension's commands (the server's own ids are taken by the languageclient). */
export const SHOW_RUNS_COMMAND = "prose.showRuns";
export const DESCRIBE_STATE_COMMAND = "prose.describeRunState";
export const RESET_STATE_COMMAND = "prose.resetRunState";
export const COMPACT_MEMORY_COMMAND = "prose.compactAgentMemory";
export const STATE_COMMANDS = [SHOW_RUNS_COMMAND, DESCRIBE_STATE_COMMAND, RESET_STATE_COMMAND, COMPACT_MEMORY_COMMAND];

/** The server's commands. */
export const SERVER_RUNS_LIST = "prose.runs.list";
export const SERVER_DESCRIBE = "prose.state.describe";
export const SERVER_RESET = "prose.state.reset";
export const SERVER_COMPACT = "prose.state.compact";

/** A run as `prose runs list --json` prints it (the fields used here). */
export interface RunSummary {
  run_id: string;
  state: string;
  program_name: string;
  status: string;
  started_at: number;
  duration: number | null;
  steps: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  failed_statement: string;
  error: string;
}

export interface StoreReport {
  name: string;
  enabled: boolean;
  exists: boolean;
  counts: Record<string, number>;
  metadata: Record<string, unknown>;
  data: unknown;
}

/** The seed's report (StateReport.to_json). */
export interface StateReport {
  operation: string;
  run_id: string | null;
  agent: string | null;
  stores: StoreReport[];
  cleared: string[];
  compacted: string[];
  missing: string[];
  errors: { store: string; message: string }[];
}

export interface RunItem {
  label: string;
  description: string;
  detail?: string;
  runId: string;
}

/** `2026-11-23 23:12` in UTC (the run ids are UTC too). */
export function startedAt(seconds: number): string {
  if (!seconds) {
    return "-";
  }
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
}

export function duration(seconds: number | null): string {
  if (seconds === null || seconds === undefined) {
    return "-";
  }
  if (seconds < 60) {
    return `${seconds.toFixed(1)}s`;
  }
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes}m${String(Math.floor(seconds % 60)).padStart(2, "0")}s` : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** One quick pick item a run, newest first as the server answers them. */
export function runItems(runs: readonly RunSummary[]): RunItem[] {
  return runs.map((run) => {
    const tokens = run.input_tokens + run.output_tokens;
    const item: RunItem = {
      label: run.run_id,
      description: [
        run.status,
        startedAt(run.started_at),
        duration(run.duration),
        `${run.steps} steps`,
        `${tokens} tokens`,
        `$${run.cost.toFixed(2)}`,
        run.state,
      ].join(" · "),
      runId: run.run_id,
    };
    const failure = [run.failed_statement && `at ${run.failed_statement}`, run.error].filter(Boolean).join(": ");
    if (failure) {
      item.detail = failure;
    }
    return item;
  });
}

/** One line for a notification: what an operation did. */
export function reportSummary(report: StateReport): string {
  const target = report.run_id ? `run ${report.run_id}` : report.agent ? `agent ${report.agent}` : "the project";
  const parts: string[] = [];
  if (report.operation === "reset") {
    parts.push(report.cleared.length ? `cleared ${report.cleared.join(", ")}` : "nothing to clear");
  } else if (report.operation === "compact") {
    parts.push(report.compacted.length ? `compacted ${report.compacted.join(", ")}` : "nothing to compact");
  } else {
    const present = report.stores.filter((store) => store.exists).map((store) => store.name);
    parts.push(present.length ? `holds ${present.join(", ")}` : "holds no state");
  }
  if (report.errors.length) {
    parts.push(`errors: ${report.errors.map((e) => `${e.store}: ${e.message}`).join("; ")}`);
  }
  return `OpenProse: ${report.operation} ${target}: ${parts.join("; ")}`;
}

/** The report as text for a read-only document (what `prose state describe` prints). */
export function reportText(report: StateReport): string {
  const target = report.run_id ? `run ${report.run_id}` : report.agent ? `agent ${report.agent}` : "the project";
  const lines = [`${report.operation} ${target}`];
  for (const store of report.stores) {
    const counts = Object.entries(store.counts).map(([name, count]) => `${count} ${name}`);
    const state = !store.enabled ? "not enabled" : !store.exists ? "empty" : counts.join(", ") || "present";
    const where = store.metadata.path ?? store.metadata.location;
    lines.push(`  ${store.name.padEnd(22)} ${state}${where ? `  (${String(where)})` : ""}`);
  }
  for (const [title, names] of [
    ["cleared", report.cleared],
    ["compacted", report.compacted],
    ["missing", report.missing],
  ] as const) {
    if (names.length) {
      lines.push(`${title}: ${names.join(", ")}`);
    }
  }
  for (const error of report.errors) {
    lines.push(`error: ${error.store}: ${error.message}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The project's agents with memory, from a describe of the project. */
export function projectAgents(report: StateReport): string[] {
  const agents = new Set<string>();
  for (const store of report.stores) {
    if (store.name.startsWith("memory:") && Array.isArray(store.metadata.agents)) {
      for (const name of store.metadata.agents) {
        agents.add(String(name));
      }
    }
  }
  return [...agents].sort();
}

/** The options of prose.state.compact from the user's answers (null: not a valid limit). */
export function compactOptions(agent: string, strategy: "recent" | "tokens", limit: string): Record<string, unknown> | null {
  const options: Record<string, unknown> = { agent, strategy };
  const text = limit.trim();
  if (text) {
    if (!/^\d+$/.test(text)) {
      return null;
    }
    options[strategy === "recent" ? "maxMessages" : "maxTokens"] = Number(text);
  }
  return options;
}

/**
 * `prose runs resume RUN_ID --program FILE` in a terminal in the program's folder (where its
 * runs are), as Run Program starts `prose run FILE`: the same Python, libs and wait for Enter.
 */
export function resumeLaunch(inputs: Omit<RunInputs, "inputs">, runId: string): RunLaunch {
  const run = runLaunch({ ...inputs, inputs: [] });
  const [isolated, code, keepOpen] = run.args;
  return {
    ...run,
    args: [isolated, code, keepOpen, "runs", "resume", runId, "--program", inputs.file],
    name: `Resume ${runId}`,
  };
}
