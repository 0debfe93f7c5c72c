import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";

import { KEEP_OPEN, RUN_COMMAND_OPTION, declaredInputs, runLaunch } from "../src/run";

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
        "-c",
        KEEP_OPEN,
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
    assert.deepEqual(launch.args, ["-P", "-c", KEEP_OPEN, "run", "C:\\work\\main.prose"]);
  });

  // VS Code closes the terminal when its process exits: the run's output must stay until Enter.
  it("runs prose, then waits for Enter and exits with prose's status", () => {
    const python = process.platform === "win32" ? "python" : "python3";
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "prose-run-test-"));
    try {
      fs.writeFileSync(path.join(dir, "hello.prose"), 'session "Say hello"\n');
      const launch = runLaunch({
        python,
        extensionPath: "/nonexistent",
        file: path.join(dir, "hello.prose"),
        env: {},
        platform: process.platform,
      });
      // The toolchain from this checkout instead of the bundled libs (not built for unit tests).
      const env = { ...process.env, PYTHONPATH: path.resolve(__dirname, "../../../../server") };
      const run = (args: string[], input: string) =>
        spawnSync(launch.command, args, { cwd: launch.cwd, env, input, encoding: "utf8" });
      const ok = run(launch.args, "\n");
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(ok.stderr, /prose: run \S+ succeeded/);
      assert.match(ok.stdout, /prose exited with status 0; press Enter to close this terminal/);
      const usage = run(["-P", "-c", KEEP_OPEN, "run"], "");
      assert.equal(usage.status, 2, usage.stderr);
      assert.match(usage.stdout, /prose exited with status 2; press Enter/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("tells the server that the client runs programs", () => {
    assert.deepEqual(RUN_COMMAND_OPTION, { runCommand: "client" });
  });
});
