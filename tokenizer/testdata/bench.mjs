// bench.mjs measures the official tiktoken (npm tiktoken@1.0.22, the Rust core
// compiled to WASM) on the same mixed corpus and the same chunking as the Go
// benchmark BenchmarkCount (tokenizer/bench_test.go): the files of
// testdata/corpus/, counted file by file with encode_ordinary.
//
// It is run by hand, never by go test:
//
//	mkdir -p /tmp/tk && cd /tmp/tk && npm init -y && npm install tiktoken@1.0.22
//	cd tokenizer/testdata && TIKTOKEN_DIR=/tmp/tk node bench.mjs
//	cd tokenizer && go test -run '^$' -bench 'Count/' -benchtime 3s .
//
// It prints one line per encoding in the same units as the Go benchmark
// (MB/s, tokens/s), plus the first-use cost (loading the ranks and building
// the encoder), so the two can be read side by side.

import { createRequire } from "node:module";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const base = process.env.TIKTOKEN_DIR
  ? path.join(process.env.TIKTOKEN_DIR, "package.json")
  : import.meta.url;
const require = createRequire(base);
const { Tiktoken } = require("tiktoken/lite");

// The same split as the Go benchmark: "mixed" is every file but runs.txt,
// "runs" is runs.txt (long single-character runs, base64, digits).
const sets = { mixed: [], runs: [] };
for (const f of readdirSync("corpus").sort()) {
  sets[f === "runs.txt" ? "runs" : "mixed"].push(readFileSync(path.join("corpus", f), "utf8"));
}
const seconds = Number(process.env.BENCH_SECONDS || 3);

for (const name of ["cl100k_base", "o200k_base", "p50k_base", "r50k_base"]) {
  let t0 = process.hrtime.bigint();
  const def = require(`tiktoken/encoders/${name}.json`);
  const enc = new Tiktoken(def.bpe_ranks, def.special_tokens, def.pat_str);
  enc.encode_ordinary("x");
  const initMs = Number(process.hrtime.bigint() - t0) / 1e6;

  for (const [set, texts] of Object.entries(sets)) {
    const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
    // Warm up, then run whole passes over the set for about `seconds`.
    for (const t of texts) enc.encode_ordinary(t);
    let passes = 0;
    let tokens = 0;
    t0 = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < seconds) {
      for (const t of texts) tokens += enc.encode_ordinary(t).length;
      passes++;
      elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    }
    console.log(
      `${(name + "/" + set).padEnd(18)} ${((bytes * passes) / elapsed / 1e6).toFixed(2)} MB/s  ` +
        `${(tokens / elapsed / 1e6).toFixed(2)} Mtokens/s  init ${initMs.toFixed(1)} ms  ` +
        `(${passes} passes of ${bytes} bytes)`,
    );
  }
  enc.free();
}
