#!/bin/sh
# mixed.sh measures issue 25's tokenizer targets in one session: rlmpl and
# github.com/tiktoken-go/tokenizer (BenchmarkMixed) and the official
# tiktoken (mixed.mjs, which also checks every chunk's count), on the same
# generated mixed corpus, twice, alternating. Needs node and
#
#	mkdir -p /tmp/tt && cd /tmp/tt && npm init -y && npm install tiktoken@1.0.22
#
# Usage, from the repository root: sh tokenizer/testdata/mixed.sh
set -e
: "${TIKTOKEN_DIR:=/tmp/tt}"
MIXED=$(mktemp /tmp/mixed.XXXXXX.json)
trap 'rm -f "$MIXED"' EXIT
RLMPL_MIXED_CORPUS=$MIXED go test ./tokenizer -run '^TestMixedCorpusFile$' -count 1
for round in 1 2; do
	go test ./tokenizer -run '^$' -bench '^BenchmarkMixed$' -benchtime 2x | grep tokens/s
	(cd tokenizer/testdata && TIKTOKEN_DIR=$TIKTOKEN_DIR MIXED=$MIXED node mixed.mjs)
done
