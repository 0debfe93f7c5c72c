#!/usr/bin/env node
// Tokenize .prose files with the grammar, the way VS Code does (vscode-textmate +
// vscode-oniguruma, both installed with vscode-tmgrammar-test).
//
//   node tools/tokenize.js [--grammar FILE] FILE...     (or: --stdin-list, one path per line)
//
// Prints one JSON object: {"files": [{"path": P, "lines": [[[start, end, [scopes...]], ...], ...]}]}
// Lines are split on \r\n, \n or \r and given to the grammar without their line break, carrying
// the rule stack from line to line. A file that cannot be tokenized makes the script exit 1.
'use strict';

const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

async function main() {
  const args = process.argv.slice(2);
  let grammarPath = path.join(__dirname, '..', 'prose.tmLanguage.json');
  const files = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--grammar') {
      grammarPath = args[++i];
    } else if (args[i] === '--stdin-list') {
      files.push(...fs.readFileSync(0, 'utf8').split(/\r?\n/).filter((p) => p));
    } else {
      files.push(args[i]);
    }
  }
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve('vscode-oniguruma')), 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const rawGrammar = vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => (scopeName === rawGrammar.scopeName ? rawGrammar : null),
  });
  const grammar = await registry.loadGrammar(rawGrammar.scopeName);
  const out = [];
  for (const file of files) {
    let text = fs.readFileSync(file, 'utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const lines = text.split(/\r\n|\n|\r/);
    let ruleStack = vsctm.INITIAL;
    const tokenized = [];
    for (const line of lines) {
      const result = grammar.tokenizeLine(line, ruleStack);
      if (result.stoppedEarly) throw new Error(`${file}: tokenization stopped early`);
      tokenized.push(result.tokens.map((t) => [t.startIndex, Math.min(t.endIndex, line.length), t.scopes]));
      ruleStack = result.ruleStack;
    }
    out.push({ path: file, lines: tokenized });
  }
  process.stdout.write(JSON.stringify({ files: out }));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
