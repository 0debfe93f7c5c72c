import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  type RunSummary,
  type StateReport,
  type StoreReport,
  compactOptions,
  duration,
  projectAgents,
  reportSummary,
  reportText,
  resumeLaunch,
  runItems,
} from "../src/state";

const RUN: RunSummary = {
  run_id: "20261123-231254-3wutj7",
  state: "filesystem",
  program_name: "main.prose",
  status: "failed",
  started_at: Date.UTC(2026, 10, 23, 23, 12, 54) / 1000,
  duration: 75.5,
  steps: 3,
  input_tokens: 10,
  output_tokens: 32,
  cost: 0.125,
  failed_statement: "let a = session \"x\"",
  error: "session limit reached",
};

function report(extra: Partial<StateReport>): StateReport {
  return {
    operation: "describe",
    run_id: RUN.run_id,
    agent: null,
    stores: [],
    cleared: [],
    compacted: [],
    missing: [],
    errors: [],
    ...extra,
  };
}

describe("runItems", () => {
  it("shows each run's summary and its failure", () => {
    const [item] = runItems([RUN]);
    assert.equal(item.label, RUN.run_id);
    assert.equal(item.runId, RUN.run_id);
    assert.equal(item.description, "failed · 2026-11-23 23:12 · 1m15s · 3 steps · 42 tokens · $0.13 · filesystem");
    assert.equal(item.detail, 'at let a = session "x": session limit reached');
    assert.equal(runItems([{ ...RUN, failed_statement: "", error: "" }])[0].detail, undefined);
  });

  it("formats durations", () => {
    assert.equal(duration(null), "-");
    assert.equal(duration(2.25), "2.3s");
    assert.equal(duration(3725), "1h02m");
  });
});

describe("reports", () => {
  const stores: StoreReport[] = [
    { name: "bindings", enabled: true, exists: true, counts: { bindings: 2 }, metadata: { path: "/r/bindings" }, data: null },
    { name: "imports", enabled: true, exists: false, counts: { programs: 0 }, metadata: {}, data: null },
  ];

  it("says what a describe found, as text and in one line", () => {
    const described = report({ stores, missing: ["imports"] });
    assert.equal(
      reportText(described),
      `describe run ${RUN.run_id}\n  bindings               2 bindings  (/r/bindings)\n  imports                empty\nmissing: imports\n`,
    );
    assert.equal(reportSummary(described), `OpenProse: describe run ${RUN.run_id}: holds bindings`);
  });

  it("says what a reset cleared, and its errors", () => {
    const cleared = report({ operation: "reset", cleared: ["bindings", "journal"] });
    assert.equal(reportSummary(cleared), `OpenProse: reset run ${RUN.run_id}: cleared bindings, journal`);
    const refused = report({
      operation: "reset",
      errors: [{ store: "reset", message: "refused: nothing was cleared" }],
    });
    assert.match(reportSummary(refused), /nothing to clear; errors: reset: refused: nothing was cleared$/);
    const agent = report({ operation: "compact", run_id: null, agent: "advisor", compacted: ["memory:project"] });
    assert.equal(reportSummary(agent), "OpenProse: compact agent advisor: compacted memory:project");
  });

  it("lists the project's agents from a describe of the project", () => {
    const project = report({
      run_id: null,
      stores: [
        { name: "runs", enabled: true, exists: true, counts: {}, metadata: {}, data: null },
        { name: "memory:project", enabled: true, exists: true, counts: {}, metadata: { agents: ["b", "a"] }, data: null },
        { name: "memory:user", enabled: true, exists: true, counts: {}, metadata: { agents: ["a", "c"] }, data: null },
      ],
    });
    assert.deepEqual(projectAgents(project), ["a", "b", "c"]);
  });
});

describe("compactOptions", () => {
  it("turns the limit into the strategy's option", () => {
    assert.deepEqual(compactOptions("advisor", "recent", " 2 "), { agent: "advisor", strategy: "recent", maxMessages: 2 });
    assert.deepEqual(compactOptions("advisor", "tokens", "500"), { agent: "advisor", strategy: "tokens", maxTokens: 500 });
    assert.deepEqual(compactOptions("advisor", "tokens", ""), { agent: "advisor", strategy: "tokens" });
    assert.equal(compactOptions("advisor", "recent", "two"), null);
    assert.equal(compactOptions("advisor", "recent", "-1"), null);
  });
});

describe("resumeLaunch", () => {
  it("resumes the run with prose runs resume in the program's folder", () => {
    const launch = resumeLaunch(
      { python: "/usr/bin/python3", extensionPath: "/ext", file: "/home/ada/work/review.prose", env: {}, platform: "linux" },
      RUN.run_id,
    );
    assert.equal(launch.command, "/usr/bin/python3");
    assert.equal(launch.cwd, "/home/ada/work");
    assert.equal(launch.name, `Resume ${RUN.run_id}`);
    assert.deepEqual(launch.args.slice(0, 2), ["-P", "-c"]);
    assert.deepEqual(launch.args.slice(3), ["runs", "resume", RUN.run_id, "--program", "/home/ada/work/review.prose"]);
  });
});
