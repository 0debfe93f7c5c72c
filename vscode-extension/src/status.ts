// What the status bar item shows for each server state. No `vscode` import.

export type ServerState = "starting" | "running" | "stopped" | "error";

export interface StatusView {
  text: string;
  tooltip: string;
  /** Shown with the error background. */
  error: boolean;
}

const ICONS: Record<ServerState, string> = {
  starting: "$(loading~spin)",
  running: "$(check)",
  stopped: "$(circle-slash)",
  error: "$(error)",
};

/** `detail`: the interpreter when running, the reason when stopped or failed. */
export function statusView(state: ServerState, detail?: string): StatusView {
  const tooltip = [`OpenProse language server: ${state}`, detail, "Click to show the output."]
    .filter(Boolean)
    .join("\n");
  return { text: `${ICONS[state]} OpenProse`, tooltip, error: state === "error" };
}
