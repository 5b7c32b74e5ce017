package runtime

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/host/pack"
)

// BenchmarkPackBackends: a pack end to end (read the candidates, count,
// solve, render) of a 100k-message conversation at a 32k cap, on badger
// on disk and on PostgreSQL in one run, p50 and p99: the target is p50 ≤
// 20 ms.
func BenchmarkPackBackends(b *testing.B) {
	jsonl := benchTranscript(100000)
	opts := PackOptions{Policy: pack.Policy{MaxContextTokens: 32000, ProviderContextTokens: 1000000, ReserveOutputTokens: 4000,
		SafetyMarginTokens: 1000, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: pack.Contiguous},
		Model: "gpt-4o", Boundary: true, BoundaryTemplates: []string{"1..{cold_through} may be absent"},
		Utilities: pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}}
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(be.name+"/messages=100k/cap=32k", func(b *testing.B) {
			c := benchConv(b, Options{}, be.spec(b), jsonl)
			latency(b, func() {
				if _, err := c.Pack(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkTurnBackends: BenchmarkTurn's host overhead of a managed turn
// (everything but the model: receipt lookup, turn lock, synced user
// append, cold handle, pack, an instant planner, the synced answer with
// its receipt) at 10k stored messages, on badger on disk and on
// PostgreSQL in one run.
func BenchmarkTurnBackends(b *testing.B) {
	jsonl := benchTranscript(10000)
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(be.name+"/messages=10k", func(b *testing.B) {
			c := benchConv(b, Options{}, be.spec(b), jsonl)
			opts := benchTurnOptions()
			latency(b, func() {
				if _, err := c.Turn(context.Background(), user("what did we decide about the lease path?"), opts); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
