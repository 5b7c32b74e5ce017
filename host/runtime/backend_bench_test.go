package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
)

// BenchmarkPackBackends: a pack end to end (read the candidates, count,
// solve, render) of a 100k-message conversation at a 32k cap, on badger
// on disk and on PostgreSQL in one run, p50 and p99: the target is p50 ≤
// 20 ms. RLMPL_BENCH_PACK_MESSAGES overrides the size.
func BenchmarkPackBackends(b *testing.B) {
	const n = 100000
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"role":%q,"content":"message %d about the lease path and topic%d; %s"}`+"\n",
			[]string{"user", "assistant"}[i%2], i, i%997, strings.Repeat("detail ", 20+i%40))
	}
	jsonl := sb.String()
	opts := PackOptions{Policy: pack.Policy{MaxContextTokens: 32000, ProviderContextTokens: 1000000, ReserveOutputTokens: 4000,
		SafetyMarginTokens: 1000, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: pack.Contiguous},
		Model: "gpt-4o", Boundary: true, BoundaryTemplate: "1..{cold_through} may be absent",
		Utilities: pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}}
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(be.name+"/messages=100k/cap=32k", func(b *testing.B) {
			rt, err := New(&Options{StateDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			st, err := rt.OpenStore(be.spec(b))
			if err != nil {
				b.Fatal(err)
			}
			st.Create("c", nil)
			c := st.Conversation("c")
			if _, err := c.Import(strings.NewReader(jsonl), ImportOptions{Encodings: []string{"o200k_base"}}); err != nil {
				b.Fatal(err)
			}
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
	const n = 10000
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"role":%q,"content":"message %d about the lease path and topic%d; %s"}`+"\n",
			[]string{"user", "assistant"}[i%2], i, i%997, strings.Repeat("detail ", 20+i%40))
	}
	jsonl := sb.String()
	for _, be := range backends {
		if be.name == "badger-memory" {
			continue
		}
		b.Run(be.name+"/messages=10k", func(b *testing.B) {
			rt, err := New(&Options{StateDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer rt.Close()
			st, err := rt.OpenStore(be.spec(b))
			if err != nil {
				b.Fatal(err)
			}
			st.Create("c", nil)
			c := st.Conversation("c")
			if _, err := c.Import(strings.NewReader(jsonl), ImportOptions{Encodings: []string{"o200k_base"}, WaitIndexed: time.Minute}); err != nil {
				b.Fatal(err)
			}
			opts := TurnOptions{
				Pack: PackOptions{Policy: pack.Policy{MaxContextTokens: 131072, ProviderContextTokens: 131072, ReserveOutputTokens: 16384,
					SafetyMarginTokens: 4096, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: pack.Contiguous},
					Model: "gpt-4o-2024-08-06", Boundary: true, BoundaryTemplate: "Sequences 1..{cold_through} may be absent.",
					Utilities: pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}},
				Encodings: []string{"o200k_base"},
				Deps:      plan.Deps{Planner: instantPlanner{}},
				Handles:   handle.New(nil),
			}
			latency(b, func() {
				if _, err := c.Turn(context.Background(), user("what did we decide about the lease path?"), opts); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
