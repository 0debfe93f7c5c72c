import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { statusView } from "../src/status";

describe("statusView", () => {
  it("shows each state with its icon", () => {
    assert.equal(statusView("starting").text, "$(loading~spin) OpenProse");
    assert.equal(statusView("running").text, "$(check) OpenProse");
    assert.equal(statusView("stopped").text, "$(circle-slash) OpenProse");
    assert.equal(statusView("error").text, "$(error) OpenProse");
  });

  it("marks only the error state as an error", () => {
    assert.deepEqual(
      (["starting", "running", "stopped", "error"] as const).map((s) => statusView(s).error),
      [false, false, false, true],
    );
  });

  it("puts the state, the detail and the click action in the tooltip", () => {
    assert.equal(
      statusView("running", "Python 3.12 (python3)").tooltip,
      "OpenProse language server: running\nPython 3.12 (python3)\nClick to show the output.",
    );
    assert.equal(statusView("stopped").tooltip, "OpenProse language server: stopped\nClick to show the output.");
  });
});
