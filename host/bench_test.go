package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host"
)

// BenchmarkNewSession: interpreter + prelude + predicate table + lib/.
func BenchmarkNewSession(b *testing.B) {
	h, err := host.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := h.NewSession(ctx)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkPrologAppend: 1,000 messages appended from Prolog to a synced
// store on disk, by a loop of conversation_append/4 and by one
// conversation_append_all/4 batch; ms-per-message is the figure to compare.
func BenchmarkPrologAppend(b *testing.B) {
	for _, way := range []string{"loop", "batch"} {
		b.Run(way, func(b *testing.B) {
			dir := b.TempDir()
			h, err := host.New(&host.Options{StateDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			ctx := context.Background()
			s, err := h.NewSession(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Once(ctx, `conversation_store_open(persist(store), ok(S)), conversation_create(S, [id(bench)], ok(C)), nb_setval(bench_conv, C)`); err != nil {
				b.Fatal(err)
			}
			goal := `nb_getval(bench_conv, C), forall(between(1, 1000, I), (format(string(T), "tool output ~d: exit 0", [I]), conversation_append(C, message(user, T), [], ok(_))))`
			if way == "batch" {
				goal = `nb_getval(bench_conv, C), findall(message(user, T), (between(1, 1000, I), format(string(T), "tool output ~d: exit 0", [I])), Ms), conversation_append_all(C, Ms, [], ok(_))`
			}
			goal = `\+ \+ (` + goal + `)` // no bindings to print
			start := time.Now()
			for b.Loop() {
				if _, err := s.Once(ctx, goal); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N*1000), "ms/message")
		})
	}
}
