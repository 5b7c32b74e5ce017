package plan

import (
	"context"
	"fmt"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
)

const benchPlan = `{"steps":[
{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"search","pattern":"needle-77"},"bind":"hits"},
{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"peek","selector":{"type":"head","count":5}},"bind":"head"},
{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"reduce","reducer":"count"},"bind":"count"},
{"op":"context","handle":{"ref":"input","name":"context"},"action":{"type":"slice","start":100,"length":10},"bind":"window"},
{"op":"final","value":{"count":{"ref":"var","name":"count"},"hits":{"ref":"var","name":"hits"},"head":{"ref":"var","name":"head"}}}]}`

// benchEnv registers a 10k-item terms context in a real handle.Registry.
func benchEnv(b *testing.B, n int) (Input, Deps) {
	reg := handle.New(nil)
	items := make([]handle.Item, n)
	for i := range items {
		items[i] = handle.Item{Text: fmt.Sprintf("row-%d needle-%d payload", i, i%100)}
	}
	ref, meta, err := reg.RegisterTerms(items, handle.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	p := planner(benchPlan)
	in := Input{Query: "q", Context: ContextRef{Ref: ref, Metadata: meta}, MaxTrajectory: 64}
	return in, Deps{Contexts: reg, Planner: p}
}

// BenchmarkComplete is the host overhead of one completion excluding model
// latency (the planner answers instantly): prompt, parse, validate and
// execute a 5-step plan (4 context operations, final) against a 10k-item
// context.
func BenchmarkComplete(b *testing.B) {
	b.Run("items=10k", func(b *testing.B) { benchComplete(b, 10000) })
	// With 200 items the context operations are cheap: what is left is the
	// host's own overhead.
	b.Run("items=200", func(b *testing.B) { benchComplete(b, 200) })
}

func benchComplete(b *testing.B, n int) {
	in, deps := benchEnv(b, n)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out, err := Complete(ctx, in, deps)
		if err != nil || out.Value == nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseValidate(b *testing.B) {
	pol := Policy{Capabilities: MustCapabilities("context(search)", "context(peek)", "context(reduce)", "context(slice)"), Budget: DefaultBudget()}
	b.ReportAllocs()
	for b.Loop() {
		p, err := ParseText(benchPlan, TermsForTest)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Validate(p, pol); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseTerm(b *testing.B) {
	text := mustTerm(benchPlan[:0] + `plan([context(input(context), search("needle-77"), hits), context(input(context), peek(head(5)), head), context(input(context), reduce(count), count), context(input(context), slice(100,10), window), final(object([count-var(count), head-var(head), hits-var(hits)]))])`).String()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseTerm(text, TermsForTest); err != nil {
			b.Fatal(err)
		}
	}
}
