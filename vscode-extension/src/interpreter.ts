// Choosing the Python that runs the language server. No `vscode` import: unit-tested under Node.
import { execFile } from "node:child_process";
import * as path from "node:path";

export interface PythonVersion {
  major: number;
  minor: number;
}

/** The oldest Python the server supports (pyproject.toml: requires-python >= 3.11). */
export const MINIMUM_VERSION: PythonVersion = { major: 3, minor: 11 };

/** Arguments that make a Python print its version as `(3, 12)`. */
export const VERSION_PROBE_ARGS = ["-c", "import sys; print(sys.version_info[:2])"];

/** Where a candidate came from, in the order they are tried. */
export type CandidateSource = "setting" | "python-extension" | "path";

export interface Candidate {
  command: string;
  source: CandidateSource;
}

/** A candidate, or a function that finds one only when it is needed (the Python extension). */
export type LazyCandidate = Candidate | (() => Promise<Candidate | undefined>);

export interface Rejection {
  candidate: Candidate;
  reason: string;
}

export interface Resolution {
  found?: { candidate: Candidate; version: PythonVersion };
  /** Candidates tried before the one found (or all of them), with why each was not used. */
  rejected: Rejection[];
}

/** Runs `command VERSION_PROBE_ARGS` and returns its standard output; throws on failure. */
export type Probe = (command: string) => Promise<string>;

/** `(3, 12)` (what VERSION_PROBE_ARGS prints) as a version; undefined for anything else. */
export function parsePythonVersion(output: string): PythonVersion | undefined {
  const match = /^\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*$/.exec(output);
  return match ? { major: Number(match[1]), minor: Number(match[2]) } : undefined;
}

export function isSupportedVersion(version: PythonVersion): boolean {
  return (
    version.major > MINIMUM_VERSION.major ||
    (version.major === MINIMUM_VERSION.major && version.minor >= MINIMUM_VERSION.minor)
  );
}

export function formatVersion(version: PythonVersion): string {
  return `${version.major}.${version.minor}`;
}

export interface ExpandContext {
  /** The first workspace folder; undefined when there is none, or it is not trusted. */
  workspaceFolder?: string;
  home?: string;
  platform: NodeJS.Platform;
}

/**
 * The `prose.interpreter` setting as a command: `~` and `${workspaceFolder}` expanded, a relative
 * path (one with a separator) made absolute against the workspace folder. A bare name such as
 * `python3.12` is left for the PATH lookup. Returns an error message when it cannot be expanded.
 */
export function expandInterpreterSetting(
  value: string,
  context: ExpandContext,
): { command: string } | { error: string } {
  const p = context.platform === "win32" ? path.win32 : path.posix;
  let command = value.trim();
  if (command.includes("${workspaceFolder}")) {
    if (context.workspaceFolder === undefined) {
      return { error: "${workspaceFolder} needs an open, trusted workspace folder" };
    }
    command = command.split("${workspaceFolder}").join(context.workspaceFolder);
  }
  if (command === "~" || command.startsWith("~/") || command.startsWith("~\\")) {
    if (!context.home) {
      return { error: "no home directory to expand ~ in" };
    }
    command = p.join(context.home, command.slice(1));
  }
  const hasSeparator = command.includes("/") || (context.platform === "win32" && command.includes("\\"));
  if (hasSeparator && !p.isAbsolute(command)) {
    if (context.workspaceFolder === undefined) {
      return { error: "a relative path needs an open, trusted workspace folder" };
    }
    command = p.resolve(context.workspaceFolder, command);
  }
  return { command };
}

export interface CandidateInputs {
  /** The `prose.interpreter` setting, unexpanded ("" or undefined: not set). */
  setting?: string;
  /** Finds the Python extension's active interpreter; undefined when that is not to be used. */
  pythonExtension?: () => Promise<string | undefined>;
  context: ExpandContext;
}

/**
 * The candidates in the order they are tried: the setting, the Python extension's interpreter,
 * then `python3` (and `python` on Windows, where `python3` is often missing or a Store stub).
 * A setting that cannot be expanded becomes a candidate that fails with the reason.
 */
export function interpreterCandidates(inputs: CandidateInputs): LazyCandidate[] {
  const candidates: LazyCandidate[] = [];
  const setting = inputs.setting?.trim();
  if (setting) {
    const expanded = expandInterpreterSetting(setting, inputs.context);
    candidates.push(
      "command" in expanded
        ? { command: expanded.command, source: "setting" }
        : async () => {
            throw new CandidateError({ command: setting, source: "setting" }, expanded.error);
          },
    );
  }
  const fromExtension = inputs.pythonExtension;
  if (fromExtension) {
    candidates.push(async () => {
      let command: string | undefined;
      try {
        command = await fromExtension();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new CandidateError({ command: "(unknown)", source: "python-extension" }, reason);
      }
      return command ? { command, source: "python-extension" } : undefined;
    });
  }
  candidates.push({ command: "python3", source: "path" });
  if (inputs.context.platform === "win32") {
    candidates.push({ command: "python", source: "path" });
  }
  return candidates;
}

/** Thrown by a lazy candidate that cannot give a command (a setting that cannot be expanded). */
export class CandidateError extends Error {
  constructor(
    readonly candidate: Candidate,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Tries the candidates in order and returns the first Python >= 3.11, with what was rejected. */
export async function resolveInterpreter(
  candidates: readonly LazyCandidate[],
  probe: Probe,
): Promise<Resolution> {
  const rejected: Rejection[] = [];
  const seen = new Set<string>();
  for (const entry of candidates) {
    let candidate: Candidate | undefined;
    if (typeof entry === "function") {
      try {
        candidate = await entry();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const failed = error instanceof CandidateError ? error.candidate : undefined;
        rejected.push({ candidate: failed ?? { command: "(unknown)", source: "python-extension" }, reason });
        continue;
      }
    } else {
      candidate = entry;
    }
    if (!candidate || seen.has(candidate.command)) {
      continue;
    }
    seen.add(candidate.command);
    let output: string;
    try {
      output = await probe(candidate.command);
    } catch (error) {
      rejected.push({ candidate, reason: error instanceof Error ? error.message : String(error) });
      continue;
    }
    const version = parsePythonVersion(output);
    if (!version) {
      rejected.push({ candidate, reason: `unexpected version output ${JSON.stringify(output.trim())}` });
    } else if (!isSupportedVersion(version)) {
      rejected.push({
        candidate,
        reason: `Python ${formatVersion(version)}, older than ${formatVersion(MINIMUM_VERSION)}`,
      });
    } else {
      return { found: { candidate, version }, rejected };
    }
  }
  return { rejected };
}

const SOURCE_NAMES: Record<CandidateSource, string> = {
  setting: "prose.interpreter",
  "python-extension": "the Python extension's interpreter",
  path: "PATH",
};

/** One line per rejected candidate, for the output and the error message. */
export function describeRejections(rejected: readonly Rejection[]): string[] {
  return rejected.map(({ candidate, reason }) => `${candidate.command} (${SOURCE_NAMES[candidate.source]}): ${reason}`);
}

/** The error message shown when no candidate works. */
export function noInterpreterMessage(rejected: readonly Rejection[]): string {
  const tried = describeRejections(rejected).join("; ");
  return (
    `OpenProse needs Python ${formatVersion(MINIMUM_VERSION)} or later to run its language server, ` +
    `and found none${tried ? ` (tried ${tried})` : ""}. ` +
    "Install one, or set prose.interpreter to its path."
  );
}

/** Runs the version probe with a timeout; errors carry a short, readable message. */
export function execProbe(timeoutMs = 15000): Probe {
  return (command) =>
    new Promise((resolve, reject) => {
      execFile(
        command,
        VERSION_PROBE_ARGS,
        { timeout: timeoutMs, windowsHide: true, encoding: "utf8" },
        (error, stdout, stderr) => {
          if (!error) {
            resolve(stdout);
            return;
          }
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT") {
            reject(new Error("not found"));
          } else if (code === "EACCES") {
            reject(new Error("not executable"));
          } else if (error.killed) {
            reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`));
          } else {
            const detail = String(stderr).trim().split(/\r?\n/).pop() || error.message;
            reject(new Error(`failed: ${detail}`));
          }
        },
      );
    });
}
