// How the bundled language server is started. No `vscode` import: unit-tested under Node.
import * as path from "node:path";

/** The server's module: `python -m openprose.lsp` (prose-ls). */
export const SERVER_MODULE = "openprose.lsp";

/** Where the VSIX carries the server and its pure-Python dependencies. */
export const BUNDLED_LIBS = ["bundled", "libs"] as const;

export interface LaunchInputs {
  python: string;
  extensionPath: string;
  /** `prose.server.args`, appended. */
  args: readonly string[];
  /** The environment to start from (the extension host's). */
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export interface Launch {
  command: string;
  args: string[];
  /** The bundled libs directory: `-m` puts the working directory first on sys.path, so it must
   * not be a workspace folder, whose files could shadow (or replace) the server's modules. */
  cwd: string;
  env: Record<string, string>;
}

export function bundledLibs(extensionPath: string, platform: NodeJS.Platform): string {
  const p = platform === "win32" ? path.win32 : path.posix;
  return p.join(extensionPath, ...BUNDLED_LIBS);
}

/**
 * `<python> -m openprose.lsp ARGS`, with the bundled libs first on PYTHONPATH (ahead of any
 * PYTHONPATH the user has, so another installed openprose or pygls cannot take their place).
 */
export function serverLaunch(inputs: LaunchInputs): Launch {
  const libs = bundledLibs(inputs.extensionPath, inputs.platform);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(inputs.env)) {
    if (value !== undefined) {
      env[key] = value;
    }
  }
  // Windows environment names are case-insensitive: reuse whatever spelling is there.
  const key =
    (inputs.platform === "win32" && Object.keys(env).find((k) => k.toUpperCase() === "PYTHONPATH")) ||
    "PYTHONPATH";
  const delimiter = inputs.platform === "win32" ? ";" : ":";
  const existing = env[key];
  env[key] = existing ? `${libs}${delimiter}${existing}` : libs;
  return {
    command: inputs.python,
    args: ["-m", SERVER_MODULE, ...inputs.args],
    cwd: libs,
    env,
  };
}
