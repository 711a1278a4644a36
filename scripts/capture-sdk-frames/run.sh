#!/usr/bin/env bash
# Capture the client frames the official Gemini SDKs send over the Live
# WebSocket, and (re)write the fixtures in protocol/tests/fixtures/sdk/.
#
#   scripts/capture-sdk-frames/run.sh            install/upgrade the SDKs, capture
#   SKIP_INSTALL=1 scripts/capture-sdk-frames/run.sh   reuse what is installed
#
# Installs (never pinned; the manifest records the versions that ran):
#   PyPI google-genai + websockets  -> target/sdk-capture/venv
#   npm  @google/genai              -> target/sdk-capture/node
# Then, per SDK: starts server.py on 127.0.0.1 (a random port), runs the SDK
# client script against it, and lets the server write the fixtures:
#   protocol/tests/fixtures/sdk/python/   (Python SDK, over wss:// with a
#                                          self-signed certificate)
#   protocol/tests/fixtures/sdk/js/       (JS SDK, over ws://)
# Finally regenerates SDK-TYPES.md from the installed Python SDK's types.
# Needs: python3 (with venv), node + npm, and network access to PyPI and npm.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$ROOT/target/sdk-capture"
VENV="$WORK/venv"
NODE_PREFIX="$WORK/node"
TLS="$WORK/tls"
FIXTURES="$ROOT/protocol/tests/fixtures/sdk"
PY="$VENV/bin/python"

log() { printf '\n== %s\n' "$*"; }

mkdir -p "$WORK" "$TLS"

# ---- install -------------------------------------------------------------
if [[ "${SKIP_INSTALL:-}" != 1 ]]; then
  log "installing google-genai + websockets into $VENV"
  [[ -x "$PY" ]] || python3 -m venv "$VENV"
  "$PY" -m pip install --quiet --disable-pip-version-check --upgrade google-genai websockets

  log "installing @google/genai into $NODE_PREFIX"
  npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error @google/genai@latest
fi

PY_SDK_VERSION="$("$PY" -c 'import importlib.metadata as m; print(m.version("google-genai"))')"
PY_WS_VERSION="$("$PY" -c 'import importlib.metadata as m; print(m.version("websockets"))')"
PY_RUNTIME="$("$PY" -c 'import platform; print("python", platform.python_version())')"
JS_SDK_VERSION="$(node -p "require('$NODE_PREFIX/node_modules/@google/genai/package.json').version")"
JS_RUNTIME="node $(node --version)"
echo "google-genai $PY_SDK_VERSION (websockets $PY_WS_VERSION, $PY_RUNTIME)"
echo "@google/genai $JS_SDK_VERSION ($JS_RUNTIME)"

# ---- TLS certificate for 127.0.0.1 / localhost -----------------------------
log "generating a self-signed certificate in $TLS"
if command -v openssl >/dev/null 2>&1; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=localhost" \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "$TLS/key.pem" -out "$TLS/cert.pem" 2>/dev/null
else
  echo "no openssl command: using the cryptography package"
  "$PY" -m pip install --quiet --disable-pip-version-check cryptography
  "$PY" "$HERE/gen_cert.py" "$TLS/cert.pem" "$TLS/key.pem"
fi

# ---- one capture: server in the background, SDK client in the foreground ---
# capture NAME SDK_PACKAGE SDK_VERSION RUNTIME TLS(yes|no) CLIENT_COMMAND...
capture() {
  local name="$1" sdk="$2" version="$3" runtime="$4" tls="$5"
  shift 5
  local port_file="$WORK/$name.port" server_log="$WORK/$name-server.log"
  local tls_args=()
  [[ "$tls" == yes ]] && tls_args=(--cert "$TLS/cert.pem" --key "$TLS/key.pem")
  rm -f "$port_file"

  log "capturing $sdk $version"
  "$PY" "$HERE/server.py" --out "$FIXTURES/$name" --sdk "$sdk" --sdk-version "$version" \
    --runtime "$runtime" "${tls_args[@]}" --port-file "$port_file" \
    --connections 2 --deadline 90 >"$server_log" 2>&1 &
  local server_pid=$!

  local i
  for i in $(seq 100); do  # up to 10 s for the server to bind
    [[ -s "$port_file" ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -s "$port_file" ]]; then
    cat "$server_log"
    kill "$server_pid" 2>/dev/null || true
    echo "server for $name did not start" >&2
    return 1
  fi

  local client_rc=0 server_rc=0
  timeout 75 "$@" "$(cat "$port_file")" || client_rc=$?
  wait "$server_pid" || server_rc=$?   # the server ends by itself (deadline 90 s)
  cat "$server_log"
  if (( client_rc != 0 || server_rc != 0 )); then
    echo "capture for $name failed (client rc=$client_rc, server rc=$server_rc)" >&2
    return 1
  fi
}

# The Python SDK always uses wss:// when it has an API key; it reads the CA
# bundle from SSL_CERT_FILE.
failed=()
capture python google-genai "$PY_SDK_VERSION" "$PY_RUNTIME, websockets $PY_WS_VERSION" yes \
  env SSL_CERT_FILE="$TLS/cert.pem" "$PY" "$HERE/client.py" || failed+=(python)

# The JS SDK maps an http:// base URL to ws://.
capture js @google/genai "$JS_SDK_VERSION" "$JS_RUNTIME" no \
  env SDK_NODE_PREFIX="$NODE_PREFIX" node "$HERE/client.mjs" || failed+=(js)

log "regenerating $HERE/SDK-TYPES.md"
"$PY" "$HERE/sdk_types.py" >"$HERE/SDK-TYPES.md"

ls -l "$FIXTURES/python" "$FIXTURES/js"
if (( ${#failed[@]} )); then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
log "done"
