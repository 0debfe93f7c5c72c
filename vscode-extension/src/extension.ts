// The OpenProse extension: starts the bundled prose-ls (`<python> -m openprose.lsp` with
// PYTHONPATH=<extension>/bundled/libs) and connects it to VS Code. The decisions (which Python,
// which command, which settings) live in modules without `vscode` imports, tested under Node.
import * as os from "node:os";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";

import {
  type Resolution,
  describeRejections,
  execProbe,
  formatVersion,
  interpreterCandidates,
  noInterpreterMessage,
  resolveInterpreter,
} from "./interpreter";
import { bundledLibs, serverLaunch } from "./launch";
import { RUN_COMMAND_OPTION, RUN_PROGRAM_COMMAND, RUN_WITH_INPUTS_COMMAND, declaredInputs, runLaunch } from "./run";
import { RESTART_SETTINGS, type ServerSettings, serverArgs, toServerSettings } from "./settings";
import { resumeLaunch } from "./state";
import { registerStateCommands } from "./stateView";
import { type ServerState, statusView } from "./status";

const CLIENT_ID = "prose"; // the languageclient reads `prose.trace.server` through this id
const RUN_COMMAND = "prose.run";
const PYTHON_EXTENSION = "ms-python.python";

let controller: ServerController | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("OpenProse", { log: true });
  const status = vscode.window.createStatusBarItem("prose.status", vscode.StatusBarAlignment.Right, 100);
  status.name = "OpenProse Language Server";
  status.command = "prose.showOutput";
  controller = new ServerController(context, output, status);
  const server = controller;
  // Disposed in this order: the server first, while its output and status item still exist.
  context.subscriptions.push(
    server,
    vscode.commands.registerCommand("prose.restartServer", () => server.restart("Restart Server command")),
    vscode.commands.registerCommand("prose.showOutput", () => output.show(true)),
    vscode.commands.registerCommand(RUN_PROGRAM_COMMAND, (target?: unknown) => runProgram(server, target, false)),
    vscode.commands.registerCommand(RUN_WITH_INPUTS_COMMAND, (target?: unknown) => runProgram(server, target, true)),
    ...registerStateCommands((program, runId) => resumeRun(server, program, runId)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      const changed = RESTART_SETTINGS.filter((setting) => event.affectsConfiguration(setting));
      if (changed.length) {
        void server.restart(`${changed.join(" and ")} changed`);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart("the workspace is now trusted")),
    output,
    status,
  );
  void server.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}

/** Run Program: `prose run FILE` in a terminal (Ctrl-C, colours and output as in a shell). */
async function runProgram(server: ServerController, target: unknown, askInputs: boolean): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("OpenProse: programs do not run in an untrusted workspace.");
    return;
  }
  const uri =
    target instanceof vscode.Uri
      ? target
      : typeof target === "string"
        ? vscode.Uri.parse(target)
        : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== "file") {
    void vscode.window.showWarningMessage("OpenProse: save the program to a file to run it.");
    return;
  }
  const document = await vscode.workspace.openTextDocument(uri);
  if (document.isDirty && !(await document.save())) {
    return; // `prose run` reads the file: run what the user sees, or nothing
  }
  const python = await server.interpreter();
  if (!python) {
    void vscode.window.showErrorMessage("OpenProse: no Python 3.11 or later to run the program with.");
    return;
  }
  const inputs: [string, string][] = [];
  if (askInputs) {
    for (const input of declaredInputs(document.getText())) {
      const value = await vscode.window.showInputBox({
        title: `Run ${uri.path.split("/").pop()}`,
        prompt: input.description ? `${input.name}: ${input.description}` : input.name,
        ignoreFocusOut: true,
      });
      if (value === undefined) {
        return; // cancelled
      }
      inputs.push([input.name, value]);
    }
  }
  const launch = runLaunch({
    python,
    extensionPath: server.extensionPath,
    file: uri.fsPath,
    inputs,
    env: process.env,
    platform: process.platform,
  });
  const terminal = vscode.window.createTerminal({
    name: launch.name,
    shellPath: launch.command,
    shellArgs: launch.args,
    cwd: launch.cwd,
    env: launch.env,
    strictEnv: true,
  });
  terminal.show();
}

/** Resume a run of a program: `prose runs resume RUN_ID --program FILE` in a terminal. */
async function resumeRun(server: ServerController, program: vscode.Uri, runId: string): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("OpenProse: programs do not run in an untrusted workspace.");
    return;
  }
  const python = await server.interpreter();
  if (!python) {
    void vscode.window.showErrorMessage("OpenProse: no Python 3.11 or later to run the program with.");
    return;
  }
  const launch = resumeLaunch(
    { python, extensionPath: server.extensionPath, file: program.fsPath, env: process.env, platform: process.platform },
    runId,
  );
  const terminal = vscode.window.createTerminal({
    name: launch.name,
    shellPath: launch.command,
    shellArgs: launch.args,
    cwd: launch.cwd,
    env: launch.env,
    strictEnv: true,
  });
  terminal.show();
}

/** The Python extension's API, as far as it is used here (it is an optional dependency). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
    resolveEnvironment(
      environment: { id: string; path: string } | string,
    ): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

function settingsReader(scope?: vscode.Uri): (key: string) => unknown {
  const config = vscode.workspace.getConfiguration("prose", scope ?? null);
  return (key) => config.get(key);
}

/** The server's settings now (window scope: the server asks for section `prose` without a URI). */
function currentServerSettings(scope?: vscode.Uri): ServerSettings {
  return toServerSettings(settingsReader(scope));
}

class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<void> = Promise.resolve();
  private stopping = false;
  private pythonListener: vscode.Disposable | undefined;
  private python: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly status: vscode.StatusBarItem,
  ) {
    this.show("stopped");
    this.status.show();
  }

  /** Start, stop and restart run one at a time, in the order they were asked for. */
  private serialize(task: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(task, task).catch((error) => {
      this.output.error(`OpenProse: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
    });
    return this.queue;
  }

  start(): Promise<void> {
    return this.serialize(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serialize(() => this.doStop());
  }

  restart(reason: string): Promise<void> {
    this.output.info(`Restarting the server: ${reason}`);
    return this.serialize(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  get extensionPath(): string {
    return this.context.extensionPath;
  }

  /** The interpreter the server runs with (looked for again if the server has none). */
  async interpreter(): Promise<string | undefined> {
    return this.python ?? (await this.findInterpreter()).found?.candidate.command;
  }

  dispose(): void {
    this.pythonListener?.dispose();
    void this.stop();
  }

  private show(state: ServerState, detail?: string): void {
    const view = statusView(state, detail);
    this.status.text = view.text;
    this.status.tooltip = view.tooltip;
    this.status.backgroundColor = view.error ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  private async findInterpreter(): Promise<Resolution> {
    const trusted = vscode.workspace.isTrusted;
    const folder = vscode.workspace.workspaceFolders?.[0];
    const candidates = interpreterCandidates({
      setting: vscode.workspace.getConfiguration("prose").get<string>("interpreter"),
      // In an untrusted workspace the Python extension may point into the workspace (.venv).
      pythonExtension: trusted ? () => this.pythonExtensionInterpreter(folder?.uri) : undefined,
      context: {
        workspaceFolder: trusted && folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined,
        home: os.homedir(),
        platform: process.platform,
      },
    });
    return resolveInterpreter(candidates, execProbe());
  }

  private async pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
    const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
    if (!extension) {
      return undefined;
    }
    const api = extension.isActive ? extension.exports : await extension.activate();
    this.watchPythonExtension(api);
    const environments = api?.environments;
    if (environments) {
      const active = environments.getActiveEnvironmentPath(resource);
      const resolved = await environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) {
        return executable;
      }
    }
    return api?.settings?.getExecutionDetails?.(resource).execCommand?.[0];
  }

  private watchPythonExtension(api: PythonApi | undefined): void {
    const event = api?.environments?.onDidChangeActiveEnvironmentPath;
    if (this.pythonListener || !event) {
      return;
    }
    this.pythonListener = event(() => {
      if (!vscode.workspace.getConfiguration("prose").get<string>("interpreter")?.trim()) {
        void this.restart("the Python extension's interpreter changed");
      }
    });
  }

  private async doStart(): Promise<void> {
    this.python = undefined;
    this.show("starting", "Looking for Python");
    const resolution = await this.findInterpreter();
    for (const line of describeRejections(resolution.rejected)) {
      this.output.warn(`Not using ${line}`);
    }
    if (!resolution.found) {
      const message = noInterpreterMessage(resolution.rejected);
      this.output.error(message);
      this.show("error", "No Python 3.11 or later");
      void vscode.window.showErrorMessage(message, "Open Settings", "Show Output").then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "prose.interpreter");
        } else if (choice === "Show Output") {
          this.output.show(true);
        }
      });
      return;
    }
    const { candidate, version } = resolution.found;
    this.python = candidate.command;
    const settingFailed = resolution.rejected.find((r) => r.candidate.source === "setting");
    if (settingFailed) {
      void vscode.window.showWarningMessage(
        `OpenProse: prose.interpreter ${settingFailed.candidate.command} cannot be used ` +
          `(${settingFailed.reason}); using ${candidate.command} instead.`,
      );
    }
    const python = `Python ${formatVersion(version)} (${candidate.command})`;
    const launch = serverLaunch({
      python: candidate.command,
      extensionPath: this.context.extensionPath,
      args: serverArgs(settingsReader()),
      env: process.env,
      platform: process.platform,
    });
    this.output.info(
      `Starting the language server with ${python}: ${launch.command} ${launch.args.join(" ")} ` +
        `(PYTHONPATH starts with ${bundledLibs(this.context.extensionPath, process.platform)})`,
    );
    const client = new LanguageClient(
      CLIENT_ID,
      "OpenProse Language Server",
      {
        command: launch.command,
        args: launch.args,
        transport: TransportKind.stdio,
        options: { cwd: launch.cwd, env: launch.env },
      },
      this.clientOptions(),
    );
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Starting) {
        this.show("starting", python);
      } else if (newState === State.Running) {
        this.show("running", python);
      } else if (this.stopping) {
        this.show("stopped");
      } else {
        this.show("error", "The server stopped; see the output");
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      // The languageclient has logged the cause in the output already.
      this.output.error(`The language server did not start: ${error instanceof Error ? error.message : error}`);
      this.show("error", "The server did not start; see the output");
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) {
      return;
    }
    this.stopping = true;
    try {
      await client.dispose(3000); // stops it first (waiting for a start in progress)
    } catch (error) {
      this.output.warn(`Stopping the language server: ${error instanceof Error ? error.message : error}`);
    } finally {
      this.stopping = false;
      this.show("stopped");
    }
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [
        { scheme: "file", language: "prose" },
        { scheme: "untitled", language: "prose" },
      ],
      outputChannel: this.output,
      traceOutputChannel: this.output,
      // runCommand "client": the Run lenses name this extension's commands (src/run.ts).
      initializationOptions: () => ({ ...currentServerSettings(), ...RUN_COMMAND_OPTION }),
      synchronize: { configurationSection: "prose" },
      middleware: {
        workspace: {
          // The server reads flat keys (select, ignore, format, ...), not VS Code's nested ones.
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (!Array.isArray(result)) {
              return result;
            }
            return params.items.map((item, index) =>
              item.section === "prose"
                ? currentServerSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : result[index],
            );
          },
          didChangeConfiguration: async () => {
            await this.client?.sendNotification(DidChangeConfigurationNotification.type, {
              settings: { prose: currentServerSettings() },
            });
          },
        },
        executeCommand: async (command, args, next) => {
          if (command === RUN_COMMAND && !vscode.workspace.isTrusted) {
            void vscode.window.showWarningMessage("OpenProse: programs do not run in an untrusted workspace.");
            return undefined;
          }
          return next(command, args);
        },
      },
    };
  }
}
