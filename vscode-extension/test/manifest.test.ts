// package.json and language-configuration.json agree with the code that reads them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

import { RUN_PROGRAM_COMMAND, RUN_WITH_INPUTS_COMMAND } from "../src/run";
import { RESTART_SETTINGS, serverArgs, toServerSettings } from "../src/settings";
import { STATE_COMMANDS } from "../src/state";

const ROOT = join(__dirname, "..", "..", ".."); // out/test/test -> vscode-extension
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const language = JSON.parse(readFileSync(join(ROOT, "language-configuration.json"), "utf8"));
const properties: Record<string, { default: unknown }> = manifest.contributes.configuration.properties;

/** A reader over the declared defaults that records which keys were read. */
function defaultsReader(read: string[]): (key: string) => unknown {
  return (key) => {
    read.push(`prose.${key}`);
    return properties[`prose.${key}`]?.default;
  };
}

describe("package.json", () => {
  it("declares every setting the extension reads", () => {
    const read: string[] = ["prose.interpreter"];
    toServerSettings(defaultsReader(read));
    serverArgs(defaultsReader(read));
    assert.deepEqual(read.filter((key) => !(key in properties)), []);
    assert.deepEqual(Object.keys(properties).filter((key) => !read.includes(key)), []);
  });

  it("has defaults that leave the server's rules alone", () => {
    assert.deepEqual(toServerSettings(defaultsReader([])), {
      format: { enable: true },
      debounce: 150,
      trace: "off",
      inlayHints: { runCost: true },
    });
  });

  it("restricts the settings that start programs in untrusted workspaces", () => {
    const untrusted = manifest.capabilities.untrustedWorkspaces;
    assert.equal(untrusted.supported, "limited");
    assert.deepEqual(untrusted.restrictedConfigurations, [...RESTART_SETTINGS]);
  });

  it("declares the commands, with prose.run hidden from the palette", () => {
    const commands = manifest.contributes.commands.map((c: { command: string }) => c.command);
    assert.deepEqual(
      commands.sort(),
      ["prose.restartServer", "prose.run", RUN_PROGRAM_COMMAND, RUN_WITH_INPUTS_COMMAND, "prose.showOutput", ...STATE_COMMANDS].sort(),
    );
    assert.deepEqual(manifest.contributes.menus.commandPalette[0], { command: "prose.run", when: "false" });
  });

  it("never offers Run Program in an untrusted workspace, and puts it in the editor title", () => {
    for (const command of manifest.contributes.commands) {
      if (command.command.startsWith("prose.run")) {
        assert.equal(command.enablement, "isWorkspaceTrusted");
      }
    }
    const menus = [...manifest.contributes.menus.commandPalette, ...manifest.contributes.menus["editor/title/run"]];
    for (const item of menus.filter((m: { command: string }) => m.command !== "prose.run")) {
      assert.match(item.when, /isWorkspaceTrusted/);
    }
    assert.deepEqual(
      manifest.contributes.menus["editor/title/run"].map((m: { command: string }) => m.command),
      [RUN_PROGRAM_COMMAND],
    );
  });

  it("makes this extension the formatter of prose files", () => {
    const defaults = manifest.contributes.configurationDefaults["[prose]"];
    assert.equal(defaults["editor.defaultFormatter"], `${manifest.publisher}.${manifest.name}`);
    assert.equal(defaults["editor.formatOnSave"], true);
    assert.equal(defaults["editor.tabSize"], 2);
    assert.equal(defaults["editor.insertSpaces"], true);
  });

  it("activates on prose files and contributes the language and grammar", () => {
    assert.deepEqual(manifest.activationEvents, ["onLanguage:prose"]);
    assert.deepEqual(manifest.contributes.languages[0].extensions, [".prose"]);
    assert.equal(manifest.contributes.grammars[0].scopeName, "source.prose");
    assert.equal(manifest.main, "./out/extension.js");
  });
});

describe("language-configuration.json", () => {
  // VS Code compiles these patterns as JavaScript regular expressions.
  const increase = new RegExp(language.indentationRules.increaseIndentPattern);
  const decrease = new RegExp(language.indentationRules.decreaseIndentPattern);
  const word = new RegExp(`^(?:${language.wordPattern})$`);

  it("indents after a line ending in a colon, not after comments or strings", () => {
    for (const line of ["agent scout:", "  parallel:  # three branches", "loop until **done** (max: 3):", "else:"]) {
      assert.match(line, increase);
    }
    for (const line of ['  prompt: "Summarize: this"', "# Note:", 'session "x"  # see:', "let a = b"]) {
      assert.doesNotMatch(line, increase);
    }
    assert.ok(language.onEnterRules.some((rule: { beforeText: string }) => new RegExp(rule.beforeText).test("try:")));
  });

  it("dedents the clauses that continue a statement", () => {
    for (const line of ["else:", "  elif **x**:", "catch as e:", "finally:", '  option "fast":']) {
      assert.match(line, decrease);
    }
    for (const line of ["elsewhere:", "agent catcher:", "  session: writer"]) {
      assert.doesNotMatch(line, decrease);
    }
  });

  it("treats hyphenated names as one word", () => {
    for (const text of ["follow-up", "open_questions", "draft2", "résumé", "-4.5"]) {
      assert.match(text, word);
    }
    assert.doesNotMatch("a b", word);
  });

  it("auto-closes strings, triple-quoted strings and discretion markers", () => {
    const opens = language.autoClosingPairs.map((pair: { open: string }) => pair.open);
    assert.deepEqual(opens.sort(), ['"', '"""', "(", "**", "[", "{"]);
    assert.equal(language.comments.lineComment, "#");
    assert.equal(language.folding.offSide, true);
  });
});
