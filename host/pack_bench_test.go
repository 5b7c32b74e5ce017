package host_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host"
)

// historySizes are the stored-history sizes of the end-to-end benchmarks;
// 1M is opt-in (RLMPL_BENCH_LARGE=1) because filling it takes a while.
func historySizes() []int {
	sizes := []int{1000, 10000, 100000}
	if os.Getenv("RLMPL_BENCH_LARGE") != "" {
		sizes = append(sizes, 1000000)
	}
	return sizes
}

// benchSession returns a session with conversation "bench" of n messages
// in a persistent store on disk (imported in batches, as `rlmpl conv
// import` does; the index's segments merge on disk as they would in use).
func benchSession(b *testing.B, n int) (*host.Session, func()) {
	b.Helper()
	dir := b.TempDir()
	var sb strings.Builder
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&sb, `{"role":%q,"content":"message %d about the lease path and topic%d; %s"}`+"\n",
			role, i, i%997, strings.Repeat("detail ", 20+i%40))
	}
	if err := os.WriteFile(dir+"/t.jsonl", []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	h, err := host.New(&host.Options{FS: os.DirFS(dir), StateDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s, err := h.NewSession(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Once(ctx, `conversation_store_open(persist(store), ok(S)), conversation_create(S, [id(bench)], ok(C)),
		conversation_import(C, 't.jsonl', ok(_)), nb_setval(bench_conv, C)`); err != nil {
		b.Fatal(err)
	}
	return s, func() { s.Close(); h.Close() }
}

// reportLatency runs f b.N times and reports p50 and p99.
func reportLatency(b *testing.B, f func()) {
	var samples []time.Duration
	for b.Loop() {
		t := time.Now()
		f()
		samples = append(samples, time.Since(t))
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkConversationPack: the whole conversation_context_pack/3 from
// Prolog — candidates from the store, solve, render, ledger, independent
// count — at growing history sizes and two ceilings. Candidates are
// bounded (512 older + the tail), so the cost should stay flat.
func BenchmarkConversationPack(b *testing.B) {
	for _, n := range historySizes() {
		s, done := benchSession(b, n)
		for _, c := range []struct {
			limit  int
			window string
		}{{300000, "contiguous"}, {128000, "contiguous"}, {300000, "most_turns"}, {128000, "most_turns"}} {
			goal := fmt.Sprintf(`nb_getval(bench_conv, C), conversation_context_pack(C, [policy([max_context_tokens(%d),
				provider_context_tokens(1000000), reserve_output_tokens(8000), safety_margin_tokens(2000), window(%s)]),
				token_options([model('gpt-4o')])], ok(_))`, c.limit, c.window)
			b.Run(fmt.Sprintf("messages=%d/cap=%dk/%s", n, c.limit/1000, c.window), func(b *testing.B) {
				ctx := context.Background()
				reportLatency(b, func() {
					if _, err := s.Once(ctx, goal); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
		done()
	}
}

// BenchmarkColdSearch: a ranked search through the cold-history handle,
// top 10, at growing history sizes; peek and slice alongside. "search"
// asks for a selective term (one message in 997); "search-broad" adds a
// term every message holds, which makes BM25 score the whole posting list.
func BenchmarkColdSearch(b *testing.B) {
	for _, n := range historySizes() {
		s, done := benchSession(b, n)
		ctx := context.Background()
		if _, err := s.Once(ctx, `nb_getval(bench_conv, C), conversation_cold_context(C, [], ok(context_ref(P))),
			memberchk(handle(H), P), nb_setval(bench_handle, H)`); err != nil {
			b.Fatal(err)
		}
		for name, goal := range map[string]string{
			"search": `nb_getval(bench_handle, H), context_search(H, "topic42", [max_results(10)], ok(_))`,
			// A term every message holds makes BM25 score every document.
			"search-broad": `nb_getval(bench_handle, H), context_search(H, "topic42 lease", [max_results(10)], ok(_))`,
			"peek":         `nb_getval(bench_handle, H), context_peek(H, item(17), [], ok(_))`,
			"slice":        `nb_getval(bench_handle, H), context_slice(H, 100, 10, [], ok(_))`,
		} {
			b.Run(fmt.Sprintf("messages=%d/%s", n, name), func(b *testing.B) {
				reportLatency(b, func() {
					if _, err := s.Once(ctx, goal); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
		done()
	}
}
