package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/store"
)

// TestMeasureDirectVsPlanner measures, on the same 1,000- and
// 10,000-message conversations and ceilings, the prompt tokens (our exact count of every
// request sent) and the model calls of one turn: the planner path whose
// plan has a model step write the answer (the usual shape), and a direct
// turn answering at once or after one history_search. The figures are
// logged (go test -v -run TestMeasureDirectVsPlanner ./host/runtime) and
// quoted in docs/performance.md; the test holds the claims docs/providers.md
// makes: with
// the pack at the ceiling every request costs about the ceiling, so a
// direct turn that needs no tool costs about half the planner path's
// tokens in one call (one search round: about the same, in two), and a
// direct turn works under a 2,000-token ceiling.
func TestMeasureDirectVsPlanner(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		if n > 1000 && (raceEnabled || testing.Short()) {
			t.Skip("10,000 messages: not under -race or -short")
		}
		measureDirectVsPlanner(t, n)
	}
}

func measureDirectVsPlanner(t *testing.T, n int) {
	var msgs []store.Message
	for i := range n {
		role := []store.Role{store.RoleUser, store.RoleAssistant}[i%2]
		msgs = append(msgs, store.Message{Role: role, Content: store.TextContent(
			fmt.Sprintf("message %d about the lease path, topic %d and the deploy plan; %s", i, i%97, strings.Repeat("detail ", 10+i%20)))})
	}
	type figure struct{ tokens, calls int }
	turn := func(mode string, ceiling int64, withSearch bool) (figure, error) {
		c := memConv(t, msgs...)
		opts := turnOpts(&planner{answers: []string{`{"steps":[{"op":"model","provider":"local","prompt":{"ref":"input","name":"query"},"bind":"a"},{"op":"final","value":{"ref":"var","name":"a"}}]}`}}, handle.New(nil))
		opts.Deps.Models = &models{}
		opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens = ceiling, ceiling
		opts.Pack.Policy.MaxCandidates = 512 // lib's default
		if mode == ModeDirect {
			replies := []plan.ModelResult{{Text: "answer"}}
			if withSearch {
				replies = []plan.ModelResult{search("s1", "deploy plan", 4), {Text: "answer"}}
			}
			opts.Mode, opts.Deps.Models = ModeDirect, &respondModels{replies: replies}
		}
		res, err := c.Turn(context.Background(), user("what did we decide about the deploy plan?"), opts)
		if err != nil {
			return figure{}, err
		}
		f := figure{calls: len(res.Receipt.Calls)}
		for _, call := range res.Receipt.Calls {
			f.tokens += call.LocalPromptTokens
		}
		return f, nil
	}
	for _, ceiling := range []int64{8000, 32000} {
		p, err := turn(ModePlanner, ceiling, false)
		if err != nil {
			t.Fatal(err)
		}
		d, err := turn(ModeDirect, ceiling, false)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := turn(ModeDirect, ceiling, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d messages, ceiling %d: planner %d prompt tokens in %d calls; direct %d in %d (%.2f×); direct with one history_search %d in %d (%.2f×)",
			n, ceiling, p.tokens, p.calls, d.tokens, d.calls, float64(d.tokens)/float64(p.tokens), ds.tokens, ds.calls, float64(ds.tokens)/float64(p.tokens))
		if d.calls != 1 || p.calls != 2 || ds.calls != 2 || 2*d.tokens > p.tokens+p.tokens/10 {
			t.Fatalf("direct %+v, direct with a search %+v, planner %+v", d, ds, p)
		}
	}
	if _, err := turn(ModeDirect, 2000, true); err != nil {
		t.Fatalf("a direct turn under a 2,000-token ceiling: %v", err)
	}
}
