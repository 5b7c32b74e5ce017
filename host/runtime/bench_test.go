package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
)

// BenchmarkWarmPack: a pack of a 100k-message conversation with 64 warm
// artifacts (4 representations each) covering the older candidates in
// ranges of 8, each excluding its raws, at a 300k and a 32k cap — the
// target is p50 ≤ 20 ms and a proven optimum (reported as optimal-%).
func BenchmarkWarmPack(b *testing.B) {
	const n = 100000
	c := benchConv(b, Options{}, StoreSpec{Dir: "bench"}, benchTranscript(n))
	gen := func(ctx context.Context, src WarmSource) (WarmFields, WarmGeneration, error) {
		return WarmFields{Summary: fmt.Sprintf("messages %d..%d discussed the lease path", src.From, src.To),
			Decisions: []string{"use fencing tokens"}, Facts: []string{"leases expire"}, Unresolved: []string{"benchmark"},
			Entities: []string{}, Topics: []string{"leases"}, Files: []string{}, Symbols: []string{}}, WarmGeneration{Kind: "callback"}, nil
	}
	end := int64(n - 12) // the hot tail is the last 12
	for k := range 64 {
		to := end - int64(k)*8
		if _, err := c.WarmPublish(context.Background(), to-7, to, gen, []string{"o200k_base"}); err != nil {
			b.Fatal(err)
		}
	}
	warm := &WarmOptions{Policy: WarmPolicy{MaxCandidates: 64,
		Fidelity: map[string]int64{"verbatim": 95, "detailed_summary": 90, "compact_summary": 70, "facts_only": 60},
		Weights:  map[string]int64{"recency": 1}}}
	for _, limit := range []int64{300000, 32000} {
		opts := PackOptions{Policy: pack.Policy{MaxContextTokens: limit, ProviderContextTokens: 1000000, ReserveOutputTokens: 4000,
			SafetyMarginTokens: 1000, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: pack.Contiguous},
			Model: "gpt-4o", Boundary: true, BoundaryTemplates: []string{"1..{cold_through} may be absent"}, Warm: warm,
			Utilities: pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}}
		b.Run(fmt.Sprintf("messages=100k/artifacts=64/cap=%dk", limit/1000), func(b *testing.B) {
			optimal, runs := 0, 0
			latency(b, func() {
				cp, err := c.Pack(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				if cp.Warm.Loaded != 64 {
					b.Fatalf("loaded %d artifacts", cp.Warm.Loaded)
				}
				if cp.Status.String() == "optimal" {
					optimal++
				}
				runs++
			})
			b.ReportMetric(100*float64(optimal)/float64(runs), "optimal-%")
		})
	}
}

// BenchmarkTurn: the host overhead of a managed turn — everything but the
// model: the receipt lookup, the synced user append, the cold handle, the
// pack of the planner's request under the default policy, a scripted
// planner answering at once, the synced assistant append with its receipt —
// at 1k, 10k and 100k stored messages, beside rlm_completion alone
// (plan.Complete over the same cold handle with the same planner).
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			c := benchConv(b, Options{}, StoreSpec{Dir: "bench"}, benchTranscript(n))
			opts := benchTurnOptions()
			reg := opts.Handles
			b.Run("turn", func(b *testing.B) {
				latency(b, func() {
					if _, err := c.Turn(context.Background(), user("what did we decide about the lease path?"), opts); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run("rlm_completion", func(b *testing.B) {
				latency(b, func() {
					ref, meta, err := c.ColdContext(context.Background(), reg, handle.Limits{})
					if err != nil {
						b.Fatal(err)
					}
					_, err = plan.Complete(context.Background(), plan.Input{Query: "what did we decide?", Context: plan.ContextRef{Ref: ref, Metadata: meta}},
						plan.Deps{Planner: instantPlanner{}, Contexts: reg})
					reg.Delete(ref)
					if err != nil {
						b.Fatal(err)
					}
				})
			})
			// Time to the first streamed delta, both paths answering through
			// an instant model: a direct turn (one respond round) and a
			// planner turn whose plan has a model step write the answer.
			for _, mode := range []string{ModeDirect, ModePlanner} {
				o := opts
				o.Mode, o.Completion.Providers, o.Deps.Models = mode, []string{"local"}, instantModel{}
				if mode == ModePlanner {
					o.Deps.Planner = modelStepPlanner{}
				}
				b.Run("first-delta-"+mode, func(b *testing.B) {
					firstDelta(b, c, o)
				})
			}
		})
	}
}

// firstDelta takes turns under opts and reports p50 and p99 of the time
// from the call to the first text delta.
func firstDelta(b *testing.B, c Conversation, opts TurnOptions) {
	var samples []time.Duration
	for b.Loop() {
		start, first := time.Now(), time.Duration(0)
		opts.OnEvent = func(e TurnEvent) {
			if e.Kind == "delta" && first == 0 {
				first = time.Since(start)
			}
		}
		if _, err := c.Turn(context.Background(), user("what did we decide about the lease path?"), opts); err != nil {
			b.Fatal(err)
		}
		if first == 0 {
			b.Fatal("no delta")
		}
		samples = append(samples, first)
	}
	reportPercentiles(b, samples)
}

// instantModel answers every model call at once with one delta.
type instantModel struct{}

func (instantModel) Complete(_ context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	if call.OnDelta != nil {
		call.OnDelta("noted")
	}
	return plan.ModelResult{Text: "noted"}, nil
}

// modelStepPlanner answers with a plan whose model step writes the answer.
type modelStepPlanner struct{}

func (modelStepPlanner) Plan(context.Context, plan.PlannerRequest) (plan.PlannerReply, error) {
	return plan.PlannerReply{Text: `{"steps":[{"op":"model","provider":"local","prompt":{"ref":"input","name":"query"},"bind":"a"},{"op":"final","value":{"ref":"var","name":"a"}}]}`}, nil
}

// instantPlanner answers every request with a final plan, at once.
type instantPlanner struct{}

func (instantPlanner) Plan(context.Context, plan.PlannerRequest) (plan.PlannerReply, error) {
	return plan.PlannerReply{Text: `{"steps":[{"op":"final","value":"noted"}]}`}, nil
}

// latency runs f b.N times and reports p50 and p99.
func latency(b *testing.B, f func()) {
	var samples []time.Duration
	for b.Loop() {
		t := time.Now()
		f()
		samples = append(samples, time.Since(t))
	}
	reportPercentiles(b, samples)
}

// reportPercentiles reports the p50 and p99 of samples, in ms.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkReceipts: a page of 20 receipts from the end of a 300-turn
// conversation, against reading them all (-benchmem shows the memory).
func BenchmarkReceipts(b *testing.B) {
	rt, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	st, err := rt.OpenStore(StoreSpec{Memory: true})
	if err != nil {
		b.Fatal(err)
	}
	st.Create("c", nil)
	c := st.Conversation("c")
	opts := TurnOptions{
		Pack: PackOptions{Policy: pack.Policy{MaxContextTokens: 100000, ProviderContextTokens: 100000, ReserveOutputTokens: 500,
			MinRecentTurns: 2, MaxCandidates: 64, Overflow: "deny", Window: pack.Contiguous}, Model: "gpt-4o", Utilities: testUtilities},
		Completion: plan.Input{Providers: []string{"local"}},
		Deps:       plan.Deps{Planner: instantPlanner{}},
		Handles:    handle.New(nil),
	}
	const turns = 300
	for range turns {
		if _, err := c.Turn(context.Background(), user("a question"), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("page=20", func(b *testing.B) {
		for b.Loop() {
			n := 0
			if err := c.EachReceipt(ReceiptQuery{After: 2 * (turns - 20), Limit: 20}, func(Receipt) error { n++; return nil }); err != nil || n != 20 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if rs, err := c.Receipts(false); err != nil || len(rs) != turns {
				b.Fatal(err)
			}
		}
	})
}

// benchTranscript is the benchmarks' conversation of n messages, as JSONL.
func benchTranscript(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"role":%q,"content":"message %d about the lease path and topic%d; %s"}`+"\n",
			[]string{"user", "assistant"}[i%2], i, i%997, strings.Repeat("detail ", 20+i%40))
	}
	return sb.String()
}

// benchConv opens spec on a fresh runtime with opts (its state directory
// temporary, closed with b) and imports jsonl into conversation "c",
// counted in o200k_base and indexed.
func benchConv(b *testing.B, opts Options, spec StoreSpec, jsonl string) Conversation {
	b.Helper()
	opts.StateDir = b.TempDir()
	rt, err := New(&opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	st, err := rt.OpenStore(spec)
	if err != nil {
		b.Fatal(err)
	}
	st.Create("c", nil)
	c := st.Conversation("c")
	if _, err := c.Import(strings.NewReader(jsonl), ImportOptions{Encodings: []string{"o200k_base"}, WaitIndexed: time.Minute}); err != nil {
		b.Fatal(err)
	}
	return c
}

// benchTurnOptions are the options of the host-overhead turn benchmarks:
// the default policy at 131k, an exact counter, an instant planner.
func benchTurnOptions() TurnOptions {
	return TurnOptions{
		Pack: PackOptions{Policy: pack.Policy{MaxContextTokens: 131072, ProviderContextTokens: 131072, ReserveOutputTokens: 16384,
			SafetyMarginTokens: 4096, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: pack.Contiguous},
			Model: "gpt-4o-2024-08-06", Boundary: true, BoundaryTemplates: []string{"Sequences 1..{cold_through} may be absent."},
			Utilities: pack.Utilities{HotBase: 1_000_000, HotPerSeq: 1, OlderBase: 1_000, OlderPerSeq: 1, Boundary: 2_000_000}},
		Encodings: []string{"o200k_base"},
		Deps:      plan.Deps{Planner: instantPlanner{}},
		Handles:   handle.New(nil),
	}
}
