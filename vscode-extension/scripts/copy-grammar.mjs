// Copies the repository's TextMate grammar (../syntaxes/prose.tmLanguage.json, the single source of
// truth) into the extension, where package.json's `grammars` contribution points. The copy is a
// build product (ignored by git); set PROSE_GRAMMAR to use another file.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const source = resolve(process.env.PROSE_GRAMMAR || join(root, "..", "syntaxes", "prose.tmLanguage.json"));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const contribution = manifest.contributes.grammars.find((g) => g.language === "prose");
const target = join(root, contribution.path);

let grammar;
try {
  grammar = JSON.parse(readFileSync(source, "utf8"));
} catch (error) {
  const reason = error.code === "ENOENT" ? "it does not exist" : error.message;
  console.error(`copy-grammar: cannot read the TextMate grammar ${source}: ${reason}`);
  process.exit(1);
}
if (grammar.scopeName !== contribution.scopeName) {
  console.error(
    `copy-grammar: ${source} has scopeName ${JSON.stringify(grammar.scopeName)}, ` +
      `but package.json contributes ${JSON.stringify(contribution.scopeName)}`,
  );
  process.exit(1);
}
mkdirSync(dirname(target), { recursive: true });
copyFileSync(source, target);
console.log(`copy-grammar: ${relative(process.cwd(), source)} -> ${relative(process.cwd(), target)}`);
