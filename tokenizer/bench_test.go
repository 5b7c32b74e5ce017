package tokenizer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// Benchmarks. The side-by-side baseline is testdata/bench.mjs (official
// tiktoken, run by hand with node) over the same corpus split:
//
//	go test -run '^$' -bench . -benchtime 3s ./tokenizer/
//	cd tokenizer/testdata && TIKTOKEN_DIR=/tmp/tk node bench.mjs

// benchCorpus returns the corpus files as two sets: "mixed" (prose, code,
// CJK, emoji, CRLF, special-token text) and "runs" (runs.txt: long runs of
// one character, base64, digits; pathological for BPE).
func benchCorpus(b *testing.B) map[string][]string {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*"))
	if err != nil || len(files) == 0 {
		b.Fatalf("corpus: %v", err)
	}
	sort.Strings(files)
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		set := "mixed"
		if filepath.Base(f) == "runs.txt" {
			set = "runs"
		}
		out[set] = append(out[set], string(data))
	}
	return out
}

// BenchmarkCount reports MB/s and tokens/s per encoding and corpus set;
// the "lib" rows run github.com/tiktoken-go/tokenizer's own codec (which
// miscounts, see builtin.go) for reference.
func BenchmarkCount(b *testing.B) {
	r := newTestRegistry(b)
	corpus := benchCorpus(b)
	for _, name := range []string{Cl100kBase, O200kBase, P50kBase, R50kBase} {
		enc, _ := r.Encoding(name)
		lib, _ := tiktoken.Get(tiktoken.Encoding(name))
		for _, set := range []string{"mixed", "runs"} {
			texts := corpus[set]
			size := 0
			for _, t := range texts {
				size += len(t)
			}
			b.Run(name+"/"+set, func(b *testing.B) {
				b.SetBytes(int64(size))
				tokens := 0
				for b.Loop() {
					for _, t := range texts {
						tokens += enc.Count(t)
					}
				}
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			})
			b.Run(name+"/"+set+"/lib", func(b *testing.B) {
				b.SetBytes(int64(size))
				tokens := 0
				for b.Loop() {
					for _, t := range texts {
						n, _ := lib.Count(t)
						tokens += n
					}
				}
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkEstimate is the estimator's speed on the mixed set.
func BenchmarkEstimate(b *testing.B) {
	texts := benchCorpus(b)["mixed"]
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, t := range texts {
			Estimate(t)
		}
	}
}

// BenchmarkCountRequest counts a typical 100-message rendered request
// (system prompt, user/assistant turns with code, a tool call and result
// every tenth turn, three tools): from scratch, with the estimator, and
// with cached content counts.
func BenchmarkCountRequest(b *testing.B) {
	r := newTestRegistry(b)
	req := typicalRequest(100)
	exact, _ := r.Counter("gpt-4o-2024-08-06")
	for _, tc := range []struct {
		name string
		c    Counter
	}{{"gpt-4o-2024-08-06", exact}, {"estimator", r.Estimator()}} {
		b.Run("100msgs/"+tc.name, func(b *testing.B) {
			var total int
			for b.Loop() {
				total = tc.c.CountRequest(req).Total.Tokens
			}
			b.ReportMetric(float64(total), "tokens")
		})
	}
	// Contents counted at append (the store's cached counts): only roles,
	// names, ids, tool calls and schemas are tokenized.
	stored := make([]Count, len(req.Messages))
	for i, m := range req.Messages {
		stored[i] = exact.Count(m.Content)
	}
	b.Run("100msgs/gpt-4o-2024-08-06/cached", func(b *testing.B) {
		var total int
		for b.Loop() {
			total = exact.CountRequestCached(req, func(i int) (Count, bool) { return stored[i], true }).Total.Tokens
		}
		b.ReportMetric(float64(total), "tokens")
	})
}

// firstUseEnv makes the test binary measure one encoding's first use in a
// fresh process (TestMain) and print the duration in nanoseconds.
const firstUseEnv = "RLMPL_TOKENIZER_FIRST_USE"

func TestMain(m *testing.M) {
	if name := os.Getenv(firstUseEnv); name != "" {
		t0 := time.Now()
		r, err := New(nil)
		if err == nil {
			var enc *Encoding
			if enc, err = r.Encoding(name); err == nil {
				enc.Count("warm")
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		d := time.Since(t0)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Println(d.Nanoseconds(), ms.HeapAlloc)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkFirstUse is the cost of an encoding's first use in a process:
// reading its embedded table's header and preparing its splitter. It runs
// the test binary once per iteration and reports the in-process time as
// first-use-ms (ns/op includes process start) and the live heap after it
// as heap-MiB (the table itself is read-only data, not heap).
func BenchmarkFirstUse(b *testing.B) {
	for _, name := range []string{Cl100kBase, O200kBase, P50kBase, R50kBase} {
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			var heap uint64
			n := 0
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), firstUseEnv+"="+name)
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				f := strings.Fields(string(out))
				if len(f) != 2 {
					b.Fatalf("child output %q", out)
				}
				ns, err1 := strconv.ParseInt(f[0], 10, 64)
				h, err2 := strconv.ParseUint(f[1], 10, 64)
				if err1 != nil || err2 != nil {
					b.Fatalf("child output %q", out)
				}
				total += time.Duration(ns)
				heap = h
				n++
			}
			b.ReportMetric(float64(total.Microseconds())/1e3/float64(n), "first-use-ms")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
		})
	}
}
