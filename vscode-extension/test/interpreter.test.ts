import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";

import {
  type Candidate,
  type ExpandContext,
  type LazyCandidate,
  type Probe,
  describeRejections,
  execProbe,
  expandInterpreterSetting,
  interpreterCandidates,
  isSupportedVersion,
  noInterpreterMessage,
  parsePythonVersion,
  resolveInterpreter,
} from "../src/interpreter";

const LINUX: ExpandContext = { workspaceFolder: "/work/project", home: "/home/ada", platform: "linux" };
const WINDOWS: ExpandContext = { workspaceFolder: "C:\\work\\project", home: "C:\\Users\\ada", platform: "win32" };

/** A probe answering from a table: a version string, or an Error to throw. */
function fakeProbe(answers: Record<string, string | Error>, calls: string[] = []): Probe {
  return async (command) => {
    calls.push(command);
    const answer = answers[command];
    if (answer === undefined) {
      throw new Error("not found");
    }
    if (answer instanceof Error) {
      throw answer;
    }
    return answer;
  };
}

async function commands(candidates: LazyCandidate[]): Promise<(Candidate | undefined)[]> {
  const result: (Candidate | undefined)[] = [];
  for (const c of candidates) {
    result.push(typeof c === "function" ? await c() : c);
  }
  return result;
}

describe("parsePythonVersion", () => {
  it("reads what sys.version_info[:2] prints", () => {
    assert.deepEqual(parsePythonVersion("(3, 12)\n"), { major: 3, minor: 12 });
    assert.deepEqual(parsePythonVersion("(3, 9)\r\n"), { major: 3, minor: 9 });
    assert.deepEqual(parsePythonVersion("  (4,0)  "), { major: 4, minor: 0 });
  });

  it("rejects anything else", () => {
    for (const output of ["", "3.12", "Python 3.12.1", "(3,)", "(3, 12, 1)", "(3, 12)\n(3, 11)", "Python was not found"]) {
      assert.equal(parsePythonVersion(output), undefined, output);
    }
  });

  it("accepts 3.11 and later only", () => {
    assert.equal(isSupportedVersion({ major: 3, minor: 11 }), true);
    assert.equal(isSupportedVersion({ major: 3, minor: 14 }), true);
    assert.equal(isSupportedVersion({ major: 4, minor: 0 }), true);
    assert.equal(isSupportedVersion({ major: 3, minor: 10 }), false);
    assert.equal(isSupportedVersion({ major: 2, minor: 99 }), false);
  });
});

describe("expandInterpreterSetting", () => {
  it("keeps absolute paths and bare names", () => {
    assert.deepEqual(expandInterpreterSetting("/usr/bin/python3.12", LINUX), { command: "/usr/bin/python3.12" });
    assert.deepEqual(expandInterpreterSetting("  python3.12 ", LINUX), { command: "python3.12" });
    assert.deepEqual(expandInterpreterSetting("C:\\Python312\\python.exe", WINDOWS), {
      command: "C:\\Python312\\python.exe",
    });
  });

  it("expands ~ and ${workspaceFolder}, and resolves relative paths against the folder", () => {
    assert.deepEqual(expandInterpreterSetting("~/.venvs/prose/bin/python", LINUX), {
      command: "/home/ada/.venvs/prose/bin/python",
    });
    assert.deepEqual(expandInterpreterSetting("${workspaceFolder}/.venv/bin/python", LINUX), {
      command: "/work/project/.venv/bin/python",
    });
    assert.deepEqual(expandInterpreterSetting(".venv/bin/python", LINUX), { command: "/work/project/.venv/bin/python" });
    assert.deepEqual(expandInterpreterSetting(".venv\\Scripts\\python.exe", WINDOWS), {
      command: "C:\\work\\project\\.venv\\Scripts\\python.exe",
    });
  });

  it("refuses workspace-relative paths without a (trusted) folder", () => {
    const none: ExpandContext = { home: "/home/ada", platform: "linux" };
    assert.ok("error" in expandInterpreterSetting("${workspaceFolder}/.venv/bin/python", none));
    assert.ok("error" in expandInterpreterSetting(".venv/bin/python", none));
    assert.deepEqual(expandInterpreterSetting("/usr/bin/python3", none), { command: "/usr/bin/python3" });
  });
});

describe("interpreterCandidates", () => {
  it("orders the setting, the Python extension, then python3", async () => {
    const candidates = interpreterCandidates({
      setting: "/opt/py/bin/python",
      pythonExtension: async () => "/home/ada/.venv/bin/python",
      context: LINUX,
    });
    assert.deepEqual(await commands(candidates), [
      { command: "/opt/py/bin/python", source: "setting" },
      { command: "/home/ada/.venv/bin/python", source: "python-extension" },
      { command: "python3", source: "path" },
    ]);
  });

  it("adds python on Windows", async () => {
    const candidates = interpreterCandidates({ setting: "", context: WINDOWS });
    assert.deepEqual(await commands(candidates), [
      { command: "python3", source: "path" },
      { command: "python", source: "path" },
    ]);
  });

  it("skips an empty setting and a missing Python extension", async () => {
    assert.deepEqual(await commands(interpreterCandidates({ setting: "   ", context: LINUX })), [
      { command: "python3", source: "path" },
    ]);
    const none = interpreterCandidates({ pythonExtension: async () => undefined, context: LINUX });
    assert.deepEqual(await commands(none), [undefined, { command: "python3", source: "path" }]);
  });
});

describe("resolveInterpreter", () => {
  it("takes the setting when it works, without asking the Python extension", async () => {
    let asked = false;
    const candidates = interpreterCandidates({
      setting: "/opt/py/bin/python",
      pythonExtension: async () => {
        asked = true;
        return "/venv/bin/python";
      },
      context: LINUX,
    });
    const calls: string[] = [];
    const resolution = await resolveInterpreter(
      candidates,
      fakeProbe({ "/opt/py/bin/python": "(3, 11)\n", "/venv/bin/python": "(3, 13)\n", python3: "(3, 12)\n" }, calls),
    );
    assert.deepEqual(resolution.found, {
      candidate: { command: "/opt/py/bin/python", source: "setting" },
      version: { major: 3, minor: 11 },
    });
    assert.deepEqual(resolution.rejected, []);
    assert.deepEqual(calls, ["/opt/py/bin/python"]);
    assert.equal(asked, false);
  });

  it("falls back in order, and says why each candidate was rejected", async () => {
    const candidates = interpreterCandidates({
      setting: "/opt/old/bin/python",
      pythonExtension: async () => "/venv/bin/python",
      context: LINUX,
    });
    const resolution = await resolveInterpreter(
      candidates,
      fakeProbe({
        "/opt/old/bin/python": "(3, 10)\n",
        "/venv/bin/python": new Error("failed: ModuleNotFoundError"),
        python3: "(3, 12)\n",
      }),
    );
    assert.equal(resolution.found?.candidate.command, "python3");
    assert.deepEqual(describeRejections(resolution.rejected), [
      "/opt/old/bin/python (prose.interpreter): Python 3.10, older than 3.11",
      "/venv/bin/python (the Python extension's interpreter): failed: ModuleNotFoundError",
    ]);
  });

  it("uses the Python extension's interpreter before python3", async () => {
    const candidates = interpreterCandidates({ pythonExtension: async () => "/venv/bin/python", context: LINUX });
    const resolution = await resolveInterpreter(
      candidates,
      fakeProbe({ "/venv/bin/python": "(3, 13)\n", python3: "(3, 12)\n" }),
    );
    assert.deepEqual(resolution.found?.candidate, { command: "/venv/bin/python", source: "python-extension" });
  });

  it("survives a Python extension that throws", async () => {
    const candidates = interpreterCandidates({
      pythonExtension: async () => {
        throw new Error("API not ready");
      },
      context: LINUX,
    });
    const resolution = await resolveInterpreter(candidates, fakeProbe({ python3: "(3, 12)\n" }));
    assert.equal(resolution.found?.candidate.command, "python3");
    assert.equal(resolution.rejected.length, 1);
    assert.equal(resolution.rejected[0].candidate.source, "python-extension");
  });

  it("reports a setting that cannot be expanded", async () => {
    const candidates = interpreterCandidates({
      setting: "${workspaceFolder}/.venv/bin/python",
      context: { platform: "linux" },
    });
    const resolution = await resolveInterpreter(candidates, fakeProbe({ python3: "(3, 12)\n" }));
    assert.equal(resolution.found?.candidate.command, "python3");
    assert.equal(resolution.rejected[0].candidate.source, "setting");
    assert.match(resolution.rejected[0].reason, /workspace folder/);
  });

  it("tries each command once", async () => {
    const calls: string[] = [];
    const candidates = interpreterCandidates({
      setting: "python3",
      pythonExtension: async () => "python3",
      context: LINUX,
    });
    const resolution = await resolveInterpreter(candidates, fakeProbe({ python3: "(3, 9)\n" }, calls));
    assert.equal(resolution.found, undefined);
    assert.deepEqual(calls, ["python3"]);
  });

  it("finds nothing when nothing works, with a message naming what was tried", async () => {
    const candidates = interpreterCandidates({ setting: "", context: WINDOWS });
    const resolution = await resolveInterpreter(
      candidates,
      fakeProbe({ python3: "Python was not found; run without arguments to install from the Microsoft Store" }),
    );
    assert.equal(resolution.found, undefined);
    assert.equal(resolution.rejected.length, 2);
    const message = noInterpreterMessage(resolution.rejected);
    assert.match(message, /Python 3\.11 or later/);
    assert.match(message, /python3 \(PATH\): unexpected version output/);
    assert.match(message, /python \(PATH\): not found/);
    assert.match(message, /prose\.interpreter/);
  });
});

describe("execProbe", () => {
  it("says when a command does not exist", async () => {
    await assert.rejects(execProbe()("/nonexistent/prose-test/python"), /not found/);
  });

  const python3 = spawnSync("python3", ["--version"]).status === 0;
  it("reads the version of a real python3", { skip: !python3 && "no python3 on PATH" }, async () => {
    const version = parsePythonVersion(await execProbe()("python3"));
    assert.ok(version, "python3 printed a version");
    assert.equal(version.major, 3);
  });

  it("reports a failing interpreter with its last line of standard error", async () => {
    // node stands in for a broken Python: `-c` is not an option it knows with that argument.
    await assert.rejects(execProbe()(process.execPath), /failed: /);
  });
});
