// gen_golden.mjs writes testdata/golden/<encoding>.json: the token IDs that the
// official tiktoken implementation (npm tiktoken@1.0.22, the Rust core compiled
// to WASM, rank files shipped in the package) produces for every file in
// testdata/corpus/ and every case in testdata/cases.json.
//
// It was run once; the Go tests read its output and never need node.
// To regenerate:
//
//	mkdir -p /tmp/tk && cd /tmp/tk && npm init -y && npm install tiktoken@1.0.22
//	cd tokenizer/testdata && TIKTOKEN_DIR=/tmp/tk node gen_golden.mjs
//
// Counting uses encode_ordinary: special-token text such as "<|endoftext|>"
// is ordinary text, which is what tokenizer.Encoding.Encode does.
//
// o200k_harmony is not in npm tiktoken 1.0.22. It is built here exactly as
// upstream tiktoken (tiktoken_ext/openai_public.py, o200k_harmony) builds it:
// the o200k_base ranks and pattern plus the harmony special tokens.

import { createRequire } from "node:module";
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";

const base = process.env.TIKTOKEN_DIR
  ? path.join(process.env.TIKTOKEN_DIR, "package.json")
  : import.meta.url;
const require = createRequire(base);
const { Tiktoken } = require("tiktoken/lite");
const pkg = JSON.parse(
  readFileSync(path.join(path.dirname(require.resolve("tiktoken")), "package.json"), "utf8"),
);
if (pkg.version !== "1.0.22") {
  throw new Error(`want tiktoken 1.0.22, have ${pkg.version}`);
}

function harmonySpecials(o200k) {
  const s = { ...o200k.special_tokens };
  Object.assign(s, {
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
  });
  for (let i = 200013; i < 201088; i++) s[`<|reserved_${i}|>`] = i;
  return s;
}

const encodings = ["r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"];

const inputs = [];
for (const f of readdirSync("corpus").sort()) {
  inputs.push({ name: `corpus/${f}`, text: readFileSync(path.join("corpus", f), "utf8") });
}
for (const c of JSON.parse(readFileSync("cases.json", "utf8"))) {
  inputs.push({ name: `case/${c.name}`, text: c.text });
}

mkdirSync("golden", { recursive: true });
for (const name of encodings) {
  const file = name === "o200k_harmony" ? "o200k_base" : name;
  const def = require(`tiktoken/encoders/${file}.json`);
  const specials = name === "o200k_harmony" ? harmonySpecials(def) : def.special_tokens;
  const enc = new Tiktoken(def.bpe_ranks, specials, def.pat_str);
  const lines = [];
  for (const { name: n, text } of inputs) {
    const ids = Array.from(enc.encode_ordinary(text));
    // The decoded bytes must give back the input (a sanity check of the run).
    const back = new TextDecoder().decode(enc.decode(Uint32Array.from(ids)));
    if (back !== text) throw new Error(`${name} ${n}: decode mismatch`);
    lines.push(JSON.stringify({ name: n, bytes: Buffer.byteLength(text), count: ids.length, ids }));
  }
  // Special tokens: each name, its id, and the text the official
  // implementation decodes that id to (when two names share an id, the later
  // definition wins, as in upstream's reversed map), sorted by id then name.
  const special = Object.entries(specials)
    .map(([k, v]) => [v, k, new TextDecoder().decode(enc.decode_single_token_bytes(v))])
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
  const out =
    `{"generator":"npm tiktoken@${pkg.version} encode_ordinary","encoding":"${name}",\n` +
    `"special":${JSON.stringify(special.map(([id, name, text]) => ({ id, name, text })))},\n` +
    `"cases":[\n${lines.join(",\n")}\n]}\n`;
  writeFileSync(path.join("golden", `${name}.json`), out);
  enc.free();
  console.log(name, inputs.length, "inputs");
}
