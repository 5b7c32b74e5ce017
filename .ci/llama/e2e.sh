#!/usr/bin/env bash
# `make e2e`: the runtime against a real OpenAI-compatible model server.
# Sets up llama-server, the tiny Llama 3 model and an MCP server from npm
# (setup.sh), serves the model on
# loopback, waits for /health, runs the env-gated end-to-end tests (they
# skip without RLMPL_E2E_URL), and stops the server however they end.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
port=${E2E_PORT:-18080}
dir=$(bash .ci/llama/setup.sh)
log="$dir/llama-server.log"
"$dir/sid/run.sh" "$dir/sid/root/usr/bin/llama-server" -m "$dir/tiny.gguf" \
  --host 127.0.0.1 --port "$port" -c 4096 -t 1 --no-webui --jinja >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
  if curl -fsS "$url/health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "llama-server exited:"; cat "$log"; exit 1; fi
  sleep 0.5
done
curl -fsS "$url/health" >/dev/null || { echo "llama-server not healthy:"; tail -20 "$log"; exit 1; }
RLMPL_E2E_URL="$url/v1" RLMPL_E2E_DIR="$dir" RLMPL_LLAMA_URL="$url/v1" \
  RLMPL_E2E_MCP="$dir/mcp/node_modules/.bin/mcp-server-everything" \
  "$GO" test -count=1 -v -run 'E2E|Llama' ./host ./host/provider
