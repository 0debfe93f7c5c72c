// The commands on the current program's runs: Show runs, Describe run state, Reset run state,
// Compact agent memory. Each calls the server's command (the languageclient registers the
// commands the server advertises), with a quick pick of the program's runs.
import * as vscode from "vscode";

import {
  COMPACT_MEMORY_COMMAND,
  DESCRIBE_STATE_COMMAND,
  RESET_STATE_COMMAND,
  type RunItem,
  type RunSummary,
  SERVER_COMPACT,
  SERVER_DESCRIBE,
  SERVER_RESET,
  SERVER_RUNS_LIST,
  SHOW_RUNS_COMMAND,
  type StateReport,
  compactOptions,
  projectAgents,
  reportSummary,
  reportText,
  runItems,
} from "./state";

/** Resumes a run in a terminal (extension.ts: it knows the server's Python). */
export type Resume = (program: vscode.Uri, runId: string) => Promise<void>;

export function registerStateCommands(resume: Resume): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(SHOW_RUNS_COMMAND, () => showRuns(resume)),
    vscode.commands.registerCommand(DESCRIBE_STATE_COMMAND, () => describeRun()),
    vscode.commands.registerCommand(RESET_STATE_COMMAND, () => resetRun()),
    vscode.commands.registerCommand(COMPACT_MEMORY_COMMAND, () => compactMemory()),
  ];
}

/** The program of the active editor, saved to a file. */
function currentProgram(): vscode.Uri | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== "file" || !uri.path.endsWith(".prose")) {
    void vscode.window.showWarningMessage("OpenProse: open a saved .prose program to see its runs.");
    return undefined;
  }
  return uri;
}

/** The server's answer; undefined when it refused (it says why itself) or is not running. */
async function ask<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
  try {
    const answer = await vscode.commands.executeCommand<T | null>(command, ...args);
    return answer ?? undefined;
  } catch (error) {
    void vscode.window.showErrorMessage(
      `OpenProse: the language server did not answer ${command} (${error instanceof Error ? error.message : String(error)}).`,
    );
    return undefined;
  }
}

async function pickRun(uri: vscode.Uri, title: string): Promise<RunItem | undefined> {
  const runs = await ask<RunSummary[]>(SERVER_RUNS_LIST, uri.toString());
  if (!runs) {
    return undefined;
  }
  const name = uri.path.split("/").pop();
  if (!runs.length) {
    void vscode.window.showInformationMessage(`OpenProse: ${name} has no runs yet.`);
    return undefined;
  }
  return vscode.window.showQuickPick(runItems(runs), { title: `${title}: runs of ${name}`, matchOnDescription: true, matchOnDetail: true });
}

async function showReport(report: StateReport): Promise<void> {
  const document = await vscode.workspace.openTextDocument({
    content: `${reportText(report)}\n${JSON.stringify(report, null, 2)}\n`,
    language: "plaintext",
  });
  await vscode.window.showTextDocument(document, { preview: true });
}

async function showRuns(resume: Resume): Promise<void> {
  const uri = currentProgram();
  const run = uri && (await pickRun(uri, "Runs"));
  if (!uri || !run) {
    return;
  }
  const action = await vscode.window.showQuickPick(["Resume it in a terminal", "Describe its state", "Reset its state"], {
    title: run.label,
  });
  if (action === "Resume it in a terminal") {
    await resume(uri, run.runId);
  } else if (action === "Describe its state") {
    await describe(uri, run.runId);
  } else if (action === "Reset its state") {
    await reset(uri, run.runId);
  }
}

async function describeRun(): Promise<void> {
  const uri = currentProgram();
  const run = uri && (await pickRun(uri, "Describe run state"));
  if (uri && run) {
    await describe(uri, run.runId);
  }
}

async function describe(uri: vscode.Uri, runId: string): Promise<void> {
  const report = await ask<StateReport>(SERVER_DESCRIBE, uri.toString(), { runId, includeData: true });
  if (report) {
    await showReport(report);
  }
}

async function resetRun(): Promise<void> {
  const uri = currentProgram();
  const run = uri && (await pickRun(uri, "Reset run state"));
  if (uri && run) {
    await reset(uri, run.runId);
  }
}

async function reset(uri: vscode.Uri, runId: string): Promise<void> {
  const answer = await vscode.window.showWarningMessage(
    `Clear the state of run ${runId}? Its bindings, narration, journal, agent memory and imports go; the run stays and starts over when resumed.`,
    { modal: true },
    "Reset",
  );
  if (answer !== "Reset") {
    return;
  }
  const report = await ask<StateReport>(SERVER_RESET, uri.toString(), { runId });
  if (report) {
    const show = report.errors.length ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(reportSummary(report));
  }
}

async function compactMemory(): Promise<void> {
  const uri = currentProgram();
  if (!uri) {
    return;
  }
  const project = await ask<StateReport>(SERVER_DESCRIBE, uri.toString(), {});
  if (!project) {
    return;
  }
  const agents = projectAgents(project);
  if (!agents.length) {
    void vscode.window.showInformationMessage("OpenProse: no agent of this project has memory yet.");
    return;
  }
  const agent = await vscode.window.showQuickPick(agents, { title: "Compact agent memory: agent" });
  if (!agent) {
    return;
  }
  const strategy = await vscode.window.showQuickPick(
    [
      { label: "recent", description: "keep the most recent segments" },
      { label: "tokens", description: "keep the most recent segments that fit a token budget" },
    ],
    { title: `Compact ${agent}'s memory: strategy` },
  );
  if (!strategy) {
    return;
  }
  const recent = strategy.label === "recent";
  const limit = await vscode.window.showInputBox({
    title: `Compact ${agent}'s memory`,
    prompt: recent ? "Segments to keep (empty: the default, 3)" : "Tokens to keep (empty: the default, 2000)",
    validateInput: (text) => (compactOptions(agent, "recent", text) ? undefined : "A whole number, or nothing"),
  });
  if (limit === undefined) {
    return;
  }
  const options = compactOptions(agent, recent ? "recent" : "tokens", limit);
  const report = options && (await ask<StateReport>(SERVER_COMPACT, uri.toString(), options));
  if (report) {
    const show = report.errors.length ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(reportSummary(report));
  }
}
