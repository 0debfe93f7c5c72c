// Bundles src/extension.ts and vscode-languageclient into out/extension.js (the VSIX carries no
// node_modules), plus the one file the languageclient loads from beside its own code.
import * as esbuild from "esbuild";
import { chmodSync, copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "out");
const watch = process.argv.includes("--watch");

const options = {
  entryPoints: [join(root, "src", "extension.ts")],
  outfile: join(out, "extension.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18", // VS Code 1.82's Electron
  external: ["vscode"],
  sourcemap: watch ? "inline" : false,
  logLevel: "info",
};

mkdirSync(out, { recursive: true });
// On Linux and macOS the languageclient kills a server that ignores `exit` with this script,
// found through __dirname: in the bundle, that is out/.
const require = createRequire(import.meta.url);
const client = dirname(require.resolve("vscode-languageclient/node"));
copyFileSync(join(client, "lib", "node", "terminateProcess.sh"), join(out, "terminateProcess.sh"));
chmodSync(join(out, "terminateProcess.sh"), 0o755);

if (watch) {
  await (await esbuild.context(options)).watch();
} else {
  await esbuild.build(options);
}
