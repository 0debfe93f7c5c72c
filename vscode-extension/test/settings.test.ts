import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RESTART_SETTINGS, serverArgs, toServerSettings, traceLevel } from "../src/settings";

/** A reader over VS Code-style keys below `prose.` (what getConfiguration("prose").get sees). */
function reader(values: Record<string, unknown>): (key: string) => unknown {
  return (key) => values[key];
}

/** The extension's defaults, as in package.json. */
const DEFAULTS = {
  interpreter: "",
  "server.args": [],
  "trace.server": "off",
  "diagnostics.select": [],
  "diagnostics.extendSelect": [],
  "diagnostics.ignore": [],
  "diagnostics.severity": {},
  "format.enable": true,
  debounce: 150,
  "inlayHints.runCost": true,
};

describe("toServerSettings", () => {
  it("maps the defaults to the server's defaults, leaving the rule settings out", () => {
    assert.deepEqual(toServerSettings(reader(DEFAULTS)), {
      format: { enable: true },
      debounce: 150,
      trace: "off",
      inlayHints: { runCost: true },
    });
  });

  it("maps every setting to the server's flat keys", () => {
    const settings = toServerSettings(
      reader({
        ...DEFAULTS,
        "diagnostics.select": ["E", "W01"],
        "diagnostics.extendSelect": ["I001"],
        "diagnostics.ignore": ["W003"],
        "diagnostics.severity": { W003: "error", E030: "hint" },
        "format.enable": false,
        debounce: 0,
        "trace.server": "verbose",
        "inlayHints.runCost": false,
      }),
    );
    assert.deepEqual(settings, {
      select: ["E", "W01"],
      "extend-select": ["I001"],
      ignore: ["W003"],
      severity: { W003: "error", E030: "hint" },
      format: { enable: false },
      debounce: 0,
      trace: "verbose",
      inlayHints: { runCost: false },
    });
  });

  it("survives missing and malformed values", () => {
    assert.deepEqual(toServerSettings(reader({})), {
      format: { enable: true },
      debounce: 150,
      trace: "off",
      inlayHints: { runCost: true },
    });
    const settings = toServerSettings(
      reader({
        "diagnostics.select": "E001",
        "diagnostics.ignore": [" W003 ", 7, "", null],
        "diagnostics.severity": { W003: "fatal", E001: "warning", " ": "error" },
        "format.enable": "no",
        debounce: Number.NaN,
        "trace.server": "loud",
        "inlayHints.runCost": "no",
      }),
    );
    assert.deepEqual(settings, {
      ignore: ["W003"],
      severity: { E001: "warning" },
      format: { enable: true },
      debounce: 150,
      trace: "off",
      inlayHints: { runCost: true },
    });
  });

  it("clamps the debounce to what the server accepts", () => {
    assert.equal(toServerSettings(reader({ debounce: -5 })).debounce, 0);
    assert.equal(toServerSettings(reader({ debounce: 99999 })).debounce, 5000);
    assert.equal(toServerSettings(reader({ debounce: 40 })).debounce, 40);
  });

  it("is plain JSON (it travels as initializationOptions)", () => {
    const settings = toServerSettings(reader({ ...DEFAULTS, "diagnostics.select": ["E"] }));
    assert.deepEqual(JSON.parse(JSON.stringify(settings)), settings);
  });
});

describe("traceLevel", () => {
  it("reads the short and the long form of prose.trace.server", () => {
    assert.equal(traceLevel("messages"), "messages");
    assert.equal(traceLevel({ verbosity: "verbose", format: "json" }), "verbose");
    assert.equal(traceLevel(undefined), "off");
    assert.equal(traceLevel({}), "off");
  });
});

describe("serverArgs", () => {
  it("keeps the strings of prose.server.args", () => {
    assert.deepEqual(serverArgs(reader({ "server.args": ["--log-level", "DEBUG", 3] })), ["--log-level", "DEBUG"]);
    assert.deepEqual(serverArgs(reader({ "server.args": "--log-level DEBUG" })), []);
    assert.deepEqual(serverArgs(reader({})), []);
  });

  it("restarts on the settings that change how the server starts", () => {
    assert.deepEqual([...RESTART_SETTINGS], ["prose.interpreter", "prose.server.args"]);
  });
});
