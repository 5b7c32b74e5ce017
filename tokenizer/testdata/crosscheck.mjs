// crosscheck.mjs extends the golden test to any large local corpus without
// committing it: it writes, for every valid UTF-8 file under the given
// directories and every encoding, the official tiktoken's token count and
// the SHA-256 of its token-ID stream (uint32 little-endian). TestCrossCheck
// (golden_test.go) reads that file and compares rlmpl's IDs, when
// RLMPL_TOKENIZER_CROSSCHECK names it. Run by hand, never by go test:
//
//	mkdir -p /tmp/tk && cd /tmp/tk && npm init -y && npm install tiktoken@1.0.22
//	cd tokenizer/testdata && TIKTOKEN_DIR=/tmp/tk node crosscheck.mjs /tmp/xcorpus > /tmp/xcheck.jsonl
//	cd .. && RLMPL_TOKENIZER_CROSSCHECK=/tmp/xcheck.jsonl go test -run CrossCheck -v .
//
// Files that are not valid UTF-8 are skipped: node's decoder and rlmpl
// replace invalid bytes differently (maximal subparts vs. one U+FFFD per
// byte), so they would not compare the same text.

import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const base = process.env.TIKTOKEN_DIR
  ? path.join(process.env.TIKTOKEN_DIR, "package.json")
  : import.meta.url;
const require = createRequire(base);
const { Tiktoken } = require("tiktoken/lite");

function walk(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

const files = [];
for (const dir of process.argv.slice(2)) walk(path.resolve(dir), files);
const texts = [];
for (const f of files) {
  const buf = readFileSync(f);
  const text = new TextDecoder("utf-8", { fatal: false }).decode(buf);
  if (!Buffer.from(text, "utf8").equals(buf)) continue; // not valid UTF-8
  texts.push({ f, text });
}

for (const name of ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]) {
  const def = require(`tiktoken/encoders/${name}.json`);
  const enc = new Tiktoken(def.bpe_ranks, def.special_tokens, def.pat_str);
  for (const { f, text } of texts) {
    const ids = enc.encode_ordinary(text);
    const h = createHash("sha256").update(Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength));
    console.log(JSON.stringify({ file: f, encoding: name, count: ids.length, sha256: h.digest("hex") }));
  }
  enc.free();
}
