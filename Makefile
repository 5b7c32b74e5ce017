# rlmpl — everything works offline once modules are downloaded.
GO       ?= go
PKGS     ?= ./...
FUZZTIME ?= 50000x
# Targets that run a Prolog query per input (≈20 inputs/s) take a count
# of their own.
FUZZTIME_QUERY ?= 2000x
BENCHTIME ?= 1s

.PHONY: all check build run test race vet fmt-check tidy-check bench bench-engine fuzz rewrite e2e eval-retrieval upstream-tests

all: check                      # `make` = what CI runs

check: fmt-check tidy-check vet test

build:
	$(GO) build -o bin/rlmpl ./cmd/rlmpl

# The README's main job: the tour of the runtime.
run: build
	./bin/rlmpl run examples/tour.pl

test:
	$(GO) test $(PKGS)

race:
	$(GO) test -race $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)

tidy-check:
	$(GO) mod tidy -diff

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

# The Prolog engine on classic workloads beside SWI-Prolog (when swipl is
# installed: apt-get install swi-prolog-nox), each run in a fresh process.
bench-engine: build
	./bin/rlmpl bench engine

# Recall@1/5/10 of the store's search against plain BM25, per question type,
# on the committed synthetic set and, when RLMPL_LOCOMO names a copy of the
# LoCoMo data (locomo10.json or its per-conversation directory; CC BY-NC,
# fetch it yourself), on LoCoMo. Fails if a target gain is missed.
eval-retrieval:
	$(GO) test ./store -run '^TestRetrievalEval$$' -count=1 -v

# Upstream's own plunit files (github.com/lost-rob0t/prolog-rlm, test/),
# translated mechanically (dicts to records: host/swisyntax_test.go) and run
# under rlmpl's plunit; prints each test as passed, differs (documented in
# docs/upstream.md) or not applicable, and fails on any other failure. It
# needs a copy of upstream in UPSTREAM, a folder git ignores:
#   git clone https://github.com/lost-rob0t/prolog-rlm .upstream/prolog-rlm
#   git -C .upstream/prolog-rlm checkout e32dd14   # the commit measured
# The translated files are kept beside it, in .upstream/translated.
UPSTREAM ?= .upstream/prolog-rlm
upstream-tests:
	@if [ -d "$(UPSTREAM)/test" ]; then \
		RLMPL_UPSTREAM="$(abspath $(UPSTREAM))" RLMPL_UPSTREAM_OUT="$(abspath $(UPSTREAM))/../translated" \
			$(GO) test ./host -run '^TestUpstreamSuites$$' -count=1 -v; \
	else \
		echo "upstream-tests: skipped: no copy of upstream in $(UPSTREAM);"; \
		echo "  git clone https://github.com/lost-rob0t/prolog-rlm $(UPSTREAM)"; \
		echo "  git -C $(UPSTREAM) checkout e32dd14"; \
	fi

# Go fuzzes one target of one package at a time; FUZZTIME is per target, a
# count of inputs (Nx): a duration races go1.26's fuzz coordinator, which
# can report its own deadline as a failure (golang/go#75804).
fuzz:
	$(GO) test ./prolog -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./prolog -run '^$$' -fuzz '^FuzzTermRoundTrip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./prolog -run '^$$' -fuzz '^FuzzReadTerm$$' -fuzztime $(FUZZTIME)
	$(GO) test ./prolog -run '^$$' -fuzz '^FuzzTextRoundTrip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./prolog -run '^$$' -fuzz '^FuzzCyclicAndDeepArguments$$' -fuzztime $(FUZZTIME_QUERY)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzRecordDecode$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzKeyOrder$$' -fuzztime $(FUZZTIME)
	$(GO) test ./tokenizer -run '^$$' -fuzz '^FuzzTokenizerRoundTrip$$' -fuzztime $(FUZZTIME)
	$(GO) test ./tokenizer -run '^$$' -fuzz '^FuzzPretokenizer$$' -fuzztime $(FUZZTIME)
	$(GO) test ./solver -run '^$$' -fuzz '^FuzzSolve$$' -fuzztime $(FUZZTIME)
	$(GO) test ./host/plan -run '^$$' -fuzz '^FuzzParsePlanJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./host/plan -run '^$$' -fuzz '^FuzzParsePlanTerm$$' -fuzztime $(FUZZTIME)
	$(GO) test ./host/provider -run '^$$' -fuzz '^FuzzDecodeResponse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./host/provider -run '^$$' -fuzz '^FuzzStream$$' -fuzztime $(FUZZTIME)
	$(GO) test ./host -run '^$$' -fuzz '^FuzzMessageCodec$$' -fuzztime $(FUZZTIME)

# The runtime against a real model server: llama.cpp's llama-server with a
# tiny random-weight model carrying the real Llama 3 tokenizer, on
# loopback (.ci/llama/; installs into .e2e/ with apt-get and npm).
e2e:
	GO=$(GO) bash .ci/llama/e2e.sh

# Regenerates datadriven expectations: review the diff, a rewrite accepts
# whatever the code prints now.
rewrite:
	$(GO) test ./cmd/rlmpl -rewrite
