import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { bundledLibs, serverLaunch } from "../src/launch";

describe("serverLaunch", () => {
  it("runs the bundled server module with the bundled libs on PYTHONPATH", () => {
    const launch = serverLaunch({
      python: "/usr/bin/python3",
      extensionPath: "/home/ada/.vscode/extensions/openprose-toolchain.openprose-0.1.0",
      args: [],
      env: { PATH: "/usr/bin", HOME: "/home/ada" },
      platform: "linux",
    });
    const libs = "/home/ada/.vscode/extensions/openprose-toolchain.openprose-0.1.0/bundled/libs";
    assert.deepEqual(launch, {
      command: "/usr/bin/python3",
      args: ["-m", "openprose.lsp"],
      cwd: libs,
      env: { PATH: "/usr/bin", HOME: "/home/ada", PYTHONPATH: libs },
    });
  });

  it("puts the bundled libs ahead of the user's PYTHONPATH, and appends prose.server.args", () => {
    const launch = serverLaunch({
      python: "python3",
      extensionPath: "/ext",
      args: ["--log-level", "DEBUG"],
      env: { PYTHONPATH: "/site/a:/site/b", UNSET: undefined },
      platform: "darwin",
    });
    assert.deepEqual(launch.args, ["-m", "openprose.lsp", "--log-level", "DEBUG"]);
    assert.deepEqual(launch.env, { PYTHONPATH: "/ext/bundled/libs:/site/a:/site/b" });
  });

  it("uses Windows paths, separators and the existing spelling of the variable", () => {
    const launch = serverLaunch({
      python: "C:\\Python312\\python.exe",
      extensionPath: "C:\\Users\\ada\\.vscode\\extensions\\openprose",
      args: [],
      env: { PythonPath: "D:\\lib", Path: "C:\\Windows" },
      platform: "win32",
    });
    const libs = "C:\\Users\\ada\\.vscode\\extensions\\openprose\\bundled\\libs";
    assert.equal(launch.cwd, libs);
    assert.deepEqual(launch.env, { PythonPath: `${libs};D:\\lib`, Path: "C:\\Windows" });
  });

  it("never starts in a workspace folder (python -m puts the working directory on sys.path)", () => {
    const launch = serverLaunch({ python: "python3", extensionPath: "/ext", args: [], env: {}, platform: "linux" });
    assert.equal(launch.cwd, bundledLibs("/ext", "linux"));
  });

  it("does not change the environment it was given", () => {
    const env = { PYTHONPATH: "/site" };
    serverLaunch({ python: "python3", extensionPath: "/ext", args: [], env, platform: "linux" });
    assert.deepEqual(env, { PYTHONPATH: "/site" });
  });
});
