#!/usr/bin/env bash
# End-to-end check of the OpenProse VS Code extension in a real VS Code (code-server) driven by
# headless Chromium:
#   bash tests/e2e/vscode/install.sh      # once (about 2 minutes the first time)
#   bash tests/e2e/vscode/run.sh vscode-extension/openprose-*.vsix
# Installs the VSIX into a fresh extensions dir, opens a workspace holding fixtures/*.prose, runs
# driver.js (language mode, colours, diagnostics, hover, completion, Format Document, format on
# save, Run Program), writes screenshots, summary.json and the workbench logs to artifacts/, prints a summary,
# exits 1 if a check failed, and kills every process it started.
# Environment: PROSE_E2E_HOME (install.sh's cache, default ~/.cache/prose-e2e), KEEP_E2E=1 keeps
# the temporary directory; E2E_DEBUG, E2E_EXTRA_SETTINGS and the E2E_*_TIMEOUT_MS waits: README.md.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROSE_E2E_HOME:-$HOME/.cache/prose-e2e}
START=$SECONDS
log() { printf '[run %(%H:%M:%S)T] %s\n' -1 "$*"; }

if (($# != 1)); then echo "usage: $0 EXTENSION.vsix" >&2; exit 2; fi
[[ -f $1 ]] || { echo "no such VSIX: $1" >&2; exit 2; }
VSIX=$(realpath "$1")
[[ -f $CACHE/env.sh && -f $HERE/node_modules/playwright-core/package.json ]] \
  || { echo "run install.sh first: bash $HERE/install.sh" >&2; exit 2; }
# shellcheck source=/dev/null
source "$CACHE/env.sh"
NODE=$PROSE_E2E_NODE; CODE_SERVER=$PROSE_E2E_CODE_SERVER
# code-server's launcher runs `node` from PATH, and needs Node 24.
export PATH=$(dirname "$NODE"):$PATH
export CHROMIUM=${PROSE_E2E_CHROMIUM:-/usr/bin/chromium}

ART=$HERE/artifacts
rm -rf "$ART" && mkdir -p "$ART"
RUN=$(mktemp -d "${TMPDIR:-/tmp}/prose-e2e-vscode.XXXXXX")
WS=$RUN/workspace
mkdir -p "$WS" "$RUN/data/User" "$RUN/exts"
cp "$HERE"/fixtures/*.prose "$WS/"
# Everything code-server and the browser write goes under $RUN, never into ~/.config or ~/.local.
export XDG_CONFIG_HOME=$RUN/xdg/config XDG_DATA_HOME=$RUN/xdg/data XDG_CACHE_HOME=$RUN/xdg/cache

CS_PGID=; DRIVER_PGID=
cleanup() {
  local g
  for g in $DRIVER_PGID $CS_PGID; do kill -TERM -- -"$g" 2>/dev/null; done
  sleep 0.5
  for g in $DRIVER_PGID $CS_PGID; do kill -KILL -- -"$g" 2>/dev/null; done
  # Keep the workbench logs (extension host, the language server's output channel) as artifacts.
  [[ -d $RUN/data/logs ]] && cp -r "$RUN/data/logs" "$ART/logs" 2>/dev/null
  [[ -f $RUN/code-server.log ]] && cp "$RUN/code-server.log" "$RUN/install.log" "$ART/" 2>/dev/null
  if [[ ${KEEP_E2E:-} == 1 ]]; then echo "kept $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Does the extension turn format-on-save on by itself? If not, the test turns it on in the user
# settings (as a user would) and says so in the summary.
EXT_FORMAT_ON_SAVE=$(python3 - "$VSIX" <<'PY'
import json, sys, zipfile
try:
    manifest = json.loads(zipfile.ZipFile(sys.argv[1]).read("extension/package.json"))
    defaults = manifest.get("contributes", {}).get("configurationDefaults", {})
    print("yes" if defaults.get("[prose]", {}).get("editor.formatOnSave") is True else "no")
except Exception:
    print("no")
PY
)

# Settings that make runs repeatable: no hot exit or auto save (stale buffers and auto-saved edits
# leak between runs otherwise), no trust prompt, no telemetry or update checks, fast hovers.
python3 - "$RUN/data/User/settings.json" "$EXT_FORMAT_ON_SAVE" <<'PY'
import json, os, sys
s = {"workbench.startupEditor": "none", "workbench.tips.enabled": False, "telemetry.telemetryLevel": "off",
     "update.mode": "none", "extensions.autoCheckUpdates": False, "extensions.autoUpdate": False,
     "extensions.ignoreRecommendations": True, "security.workspace.trust.enabled": False,
     "chat.disableAIFeatures": True, "editor.hover.delay": 150, "editor.minimap.enabled": False,
     "files.autoSave": "off", "files.hotExit": "off", "workbench.localHistory.enabled": False,
     "git.enabled": False, "workbench.colorTheme": "Default Dark Modern",
     "workbench.welcomePage.walkthroughs.openOnInstall": False, "workbench.secondarySideBar.defaultVisibility": "hidden", "editor.quickSuggestionsDelay": 50,
     # The DOM renderer puts the terminal's text in the page, where the Run Program check reads it.
     "terminal.integrated.gpuAcceleration": "off"}
if sys.argv[2] != "yes":
    s["[prose]"] = {"editor.formatOnSave": True}
s.update(json.loads(os.environ.get("E2E_EXTRA_SETTINGS") or "{}"))   # for debugging, e.g. {"prose.trace.server": "verbose"}
json.dump(s, open(sys.argv[1], "w"), indent=1)
PY

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$RUN/config.yaml" <<YAML
bind-addr: 127.0.0.1:$PORT
auth: none
cert: false
disable-telemetry: true
disable-update-check: true
disable-workspace-trust: true
disable-getting-started-override: true
user-data-dir: $RUN/data
extensions-dir: $RUN/exts
YAML

log "installing $(basename "$VSIX") into a fresh extensions dir"
"$CODE_SERVER" --config "$RUN/config.yaml" --install-extension "$VSIX" >"$RUN/install.log" 2>&1 \
  || { echo "code-server could not install $VSIX:"; tail -c 3000 "$RUN/install.log"; exit 3; }
log "installed: $(ls "$RUN/exts" | grep -v '^extensions.json$' | tr '\n' ' ')"

# setsid: code-server, its extension host and the language server it starts share one process
# group, killed as a whole at the end.
setsid "$CODE_SERVER" --config "$RUN/config.yaml" "$WS" >"$RUN/code-server.log" 2>&1 &
CS_PGID=$!
for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.25; done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null \
  || { echo "code-server did not start:"; tail -c 3000 "$RUN/code-server.log"; exit 4; }
log "code-server listening on 127.0.0.1:$PORT"

FOLDER=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$WS")
# TMPDIR: the browser profile lives under $RUN too, so it goes even if the driver is killed.
CS_URL="http://127.0.0.1:$PORT/?folder=$FOLDER" WORKSPACE=$WS E2E_OUT=$ART TMPDIR=$RUN \
  setsid "$NODE" "$HERE/driver.js" &
DRIVER_PGID=$!
wait "$DRIVER_PGID"; STATUS=$?

python3 - "$ART/summary.json" "$EXT_FORMAT_ON_SAVE" "$((SECONDS - START))" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no summary from the driver ({e})"); sys.exit(0)
res = data["results"]
print()
print(f"OpenProse VS Code end-to-end: {sum(r['ok'] for r in res)}/{len(res)} checks passed in {sys.argv[3]} s")
for r in res:
    print(f"  {'PASS' if r['ok'] else 'FAIL'}  {r['name']:<20} {r['detail']}")
    if r.get("screenshot"):
        print(f"        {r['screenshot']}")
if sys.argv[2] != "yes":
    print("  note: the extension does not set editor.formatOnSave for [prose]; the test's user settings turn it on")
PY
echo "artifacts: $ART"
exit "$STATUS"
