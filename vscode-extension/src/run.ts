// Run Program: `prose run FILE` in a terminal, with the interpreter that runs the server.
// No `vscode` import: unit-tested under Node.
//
// The server's Run lenses name this extension's commands because the extension starts the
// server with the initialization option `runCommand: "client"` (openprose/lsp/settings.py);
// other clients get the server-side `prose.run` instead.
import { serverLaunch } from "./launch";

/** Run the program of the active editor or of a lens (argument: its URI). */
export const RUN_PROGRAM_COMMAND = "prose.runProgram";
/** The same, asking for each declared input first. */
export const RUN_WITH_INPUTS_COMMAND = "prose.runProgramWithInputs";
/** The initialization option that makes the server's lenses name the commands above. */
export const RUN_COMMAND_OPTION = { runCommand: "client" } as const;

export interface DeclaredInput {
  name: string;
  description: string;
}

// `input name: "description"` at the start of a line (inputs are top-level statements).
const INPUT = /^input[ \t]+([A-Za-z_][A-Za-z0-9_-]*)[ \t]*(?::[ \t]*"((?:[^"\\]|\\.)*)")?/gm;

/** The inputs a program declares, in order (each name once). */
export function declaredInputs(text: string): DeclaredInput[] {
  const found: DeclaredInput[] = [];
  for (const match of text.matchAll(INPUT)) {
    if (!found.some((input) => input.name === match[1])) {
      found.push({ name: match[1], description: match[2] ?? "" });
    }
  }
  return found;
}

/**
 * `prose ARGS...` that waits for Enter once the command is done. VS Code closes a terminal whose
 * process exits, and the extension API cannot ask it to wait (microsoft/vscode#70444): without
 * this the run's output vanishes the moment it ends. Exits with the command's status.
 */
export const KEEP_OPEN = [
  "import sys",
  "from openprose.cli import main",
  "try:",
  "    status = main()",
  "except SystemExit as stop:",
  "    status = stop.code",
  "try:",
  "    input('\\n[prose exited with status %s; press Enter to close this terminal]' % status)",
  "except (EOFError, KeyboardInterrupt):",
  "    pass",
  "sys.exit(status)",
].join("\n");

export interface RunInputs {
  python: string;
  extensionPath: string;
  /** The program file (a local path). */
  file: string;
  /** Values for `--input NAME=VALUE`, in order. */
  inputs?: readonly (readonly [string, string])[];
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export interface RunLaunch {
  /** Started directly as the terminal's process (no shell: nothing to quote). */
  command: string;
  args: string[];
  /** The program's folder: its runs go to `.prose/runs` there, as `prose run` does. */
  cwd: string;
  env: Record<string, string>;
  /** The terminal's name. */
  name: string;
}

/**
 * `<python> -P -c KEEP_OPEN run FILE [--input NAME=VALUE]...` (`prose run FILE ...`) in the
 * program's folder, with the bundled libs first on PYTHONPATH (as for the server). `-P` keeps the
 * working directory off sys.path, so files in the workspace cannot shadow the toolchain's modules.
 */
export function runLaunch(inputs: RunInputs): RunLaunch {
  const server = serverLaunch({
    python: inputs.python,
    extensionPath: inputs.extensionPath,
    args: [],
    env: inputs.env,
    platform: inputs.platform,
  });
  const separator = inputs.platform === "win32" ? /[\\/]/ : /\//;
  const parts = inputs.file.split(separator);
  const base = parts.pop() ?? inputs.file;
  const cwd = parts.join(inputs.platform === "win32" ? "\\" : "/") || (inputs.platform === "win32" ? "\\" : "/");
  const args = ["-P", "-c", KEEP_OPEN, "run", inputs.file];
  for (const [name, value] of inputs.inputs ?? []) {
    args.push("--input", `${name}=${value}`);
  }
  return { command: inputs.python, args, cwd, env: server.env, name: `Run ${base}` };
}
