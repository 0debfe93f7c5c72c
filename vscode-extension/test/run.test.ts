import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { RUN_COMMAND_OPTION, declaredInputs, runLaunch } from "../src/run";

describe("declaredInputs", () => {
  it("finds top-level inputs with their descriptions, in order, each once", () => {
    const text = [
      'input topic: "What to research"',
      "input depth",
      'session "Research {topic}"',
      '  prompt: "input fake: not an input"',
      'input topic: "again"',
      'input quoted: "say \\"hi\\""',
    ].join("\n");
    assert.deepEqual(declaredInputs(text), [
      { name: "topic", description: "What to research" },
      { name: "depth", description: "" },
      { name: "quoted", description: 'say \\"hi\\"' },
    ]);
  });

  it("finds nothing in a program without inputs", () => {
    assert.deepEqual(declaredInputs('let inputs = session "x"\n# input commented: "no"\n'), []);
  });
});

describe("runLaunch", () => {
  it("runs prose run on the file in its folder, without the folder on sys.path", () => {
    const launch = runLaunch({
      python: "/usr/bin/python3",
      extensionPath: "/ext",
      file: "/home/ada/work/review.prose",
      inputs: [
        ["topic", "rate limiting"],
        ["notes", "a=b"],
      ],
      env: { PATH: "/usr/bin" },
      platform: "linux",
    });
    assert.deepEqual(launch, {
      command: "/usr/bin/python3",
      args: [
        "-P",
        "-m",
        "openprose",
        "run",
        "/home/ada/work/review.prose",
        "--input",
        "topic=rate limiting",
        "--input",
        "notes=a=b",
      ],
      cwd: "/home/ada/work",
      env: { PATH: "/usr/bin", PYTHONPATH: "/ext/bundled/libs" },
      name: "Run review.prose",
    });
  });

  it("uses Windows folders", () => {
    const launch = runLaunch({
      python: "python.exe",
      extensionPath: "C:\\ext",
      file: "C:\\work\\main.prose",
      env: {},
      platform: "win32",
    });
    assert.equal(launch.cwd, "C:\\work");
    assert.deepEqual(launch.args, ["-P", "-m", "openprose", "run", "C:\\work\\main.prose"]);
  });

  it("tells the server that the client runs programs", () => {
    assert.deepEqual(RUN_COMMAND_OPTION, { runCommand: "client" });
  });
});
