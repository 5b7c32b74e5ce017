// mixed.mjs times the official tiktoken (npm tiktoken@1.0.22, the Rust core
// compiled to WASM, encode_ordinary) on the mixed corpus of issue 25's
// speed targets and checks rlmpl's counts of every chunk against it. The
// corpus and rlmpl's counts come from the Go generator
// (TestMixedCorpusFile in mixed_test.go); mixed.sh runs both sides in one
// session. Run by hand, never by go test:
//
//	TIKTOKEN_DIR=/tmp/tt MIXED=/tmp/mixed.json node mixed.mjs
//
// It prints, per encoding, tokens/s, MB/s and the chunks whose counts
// disagree (want 0).

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.env.TIKTOKEN_DIR || ".", "package.json"));
const { Tiktoken } = require("tiktoken/lite");
const { chunks, counts } = JSON.parse(readFileSync(process.env.MIXED, "utf8"));
const bytes = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0);
const passes = Number(process.env.PASSES || 2);

for (const name of ["o200k_base", "cl100k_base"]) {
  const def = require(`tiktoken/encoders/${name}.json`);
  const enc = new Tiktoken(def.bpe_ranks, def.special_tokens, def.pat_str);
  let disagree = 0;
  chunks.forEach((c, i) => {
    if (enc.encode_ordinary(c).length !== counts[name][i]) disagree++;
  });
  let tokens = 0;
  const t0 = process.hrtime.bigint();
  for (let p = 0; p < passes; p++) {
    for (const c of chunks) tokens += enc.encode_ordinary(c).length;
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`${name}/official\t${(tokens / s).toFixed(0)} tokens/s\t${((bytes * passes) / s / 1e6).toFixed(2)} MB/s\t${disagree} of ${chunks.length} chunks disagree`);
  enc.free();
}
