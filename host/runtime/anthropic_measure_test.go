package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// TestMeasureAnthropicCache runs a long conversation (questions of about
// 600 tokens) under window(stable) against a server that caches like
// Anthropic (providertest.Anthropic: the prefix up to a breakpoint, from
// 1,024 tokens; its counts are o200k's, a tokenizer the runtime is not
// told of, so it packs with the calibrated estimator), in planner and in
// direct turns (and window(contiguous) for comparison), and reports the
// share of prompt tokens read from the
// cache, the share written, and the prompt's cost at Anthropic's
// multipliers (writes 1.25×, reads 0.1× the input price) against no
// cache. It holds that at least 80% are read from cache (a request over
// the ceiling would be refused, and retried once calibrated).
func TestMeasureAnthropicCache(t *testing.T) {
	if testing.Short() {
		t.Skip("a long conversation, twice")
	}
	const turns = 300
	reg, err := tokenizer.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := reg.Encoding("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	question := func(i int) string {
		return fmt.Sprintf("Question %d about the lease path and the deploy plan, with the log excerpt: %s", i,
			strings.Repeat(fmt.Sprintf("node-%d reported lease renewal latency above threshold; ", i%13), 45))
	}
	const ceiling = 32000
	for _, run := range []struct {
		mode   string
		window pack.Window
	}{{ModePlanner, pack.Stable}, {ModeDirect, pack.Stable}, {ModePlanner, pack.Contiguous}} {
		mode := run.mode
		a, srv, p := anthropicServer(t, providertest.AnthropicOptions{Count: enc.Count, Window: ceiling, Reply: func(int, map[string]any) providertest.AnthropicReply {
			return providertest.AnthropicReply{Text: final("noted")}
		}})
		c := memConv(t)
		opts := turnOpts(httpPlanner{p}, handle.New(nil))
		if mode == ModeDirect {
			opts = directOpts(clientModels{p}, handle.New(nil), ceiling)
		}
		opts.Pack.Model = "claude-test"
		opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens = ceiling, ceiling
		opts.Pack.Policy.MaxCandidates = 512
		opts.Pack.Policy.Window = run.window
		moves, refused := 0, 0
		for i := range turns {
			res, err := c.Turn(context.Background(), user(question(i)), opts)
			var te *TurnError
			if errors.As(err, &te) && te.Kind == KindContextLengthExceeded {
				refused++ // before the calibration has learnt: the same turn again
				res, err = c.Turn(context.Background(), user(question(i)), withTurnID(opts, te.TurnID))
			}
			if err != nil {
				t.Fatalf("%s turn %d: %v", mode, i+1, err)
			}
			if res.Receipt.Context.Boundary.Window == "moved" {
				moves++
			}
		}
		srv.Close()
		var prompt, read, written int
		for _, u := range a.Usages() {
			prompt, read, written = prompt+u.Prompt(), read+u.CacheRead, written+u.CacheWrite
		}
		share := float64(read) / float64(prompt)
		cost := (float64(prompt-read-written) + 0.1*float64(read) + 1.25*float64(written)) / float64(prompt)
		k := c.st.rt.Calibration("local", "claude-test")
		t.Logf("%s turns, window(%s), ceiling %dk, %d turns: %d calls, %d prompt tokens, %.1f%% read from cache, %.1f%% written; prompt cost %.3f× uncached; window moved %d times; %d refused as too long; calibration %.3f over %d calls",
			mode, run.window, ceiling/1000, turns, len(a.Usages()), prompt, 100*share, 100*float64(written)/float64(prompt), cost, moves, refused, k.Ratio, k.Samples)
		if run.window == pack.Stable && share < 0.8 {
			t.Errorf("%s: %.1f%% read from cache, want at least 80%%", mode, 100*share)
		}
		if run.window == pack.Contiguous && written > prompt/100 {
			t.Errorf("window(contiguous): %d of %d prompt tokens written to a cache no later request reads", written, prompt)
		}
	}
}

func withTurnID(o TurnOptions, id string) TurnOptions {
	o.TurnID = id
	return o
}

// TestMeasureCalibration runs a conversation packed to its ceiling
// against a server whose counts run 25% over the estimator's
// (providertest.Anthropic with its Count at 1.25× tokenizer.Estimate, and
// its window the ceiling), a refused turn run again as a caller would,
// and reports how many requests were refused, the last call refused, and
// how full the window was once calibrated (the provider's count over the
// window, its largest and its mean). It holds that no request is refused
// but the first, sent before anything was learnt, and that none exceeds
// the window.
func TestMeasureCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("60 turns")
	}
	const window, turns = 8000, 60
	a, srv, p := anthropicServer(t, providertest.AnthropicOptions{Window: window, Count: estimateOver(1.25), Reply: func(int, map[string]any) providertest.AnthropicReply {
		return providertest.AnthropicReply{Text: final("noted")}
	}})
	defer srv.Close()
	c := convOn(t, StoreSpec{Memory: true}, &Options{StateDir: t.TempDir()}, longHistory(120)...)
	opts := turnOpts(httpPlanner{p}, handle.New(nil))
	opts.Pack.Model = "claude-test"
	opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.ProviderContextTokens, opts.Pack.Policy.ReserveOutputTokens = window, window, 512
	opts.Pack.Policy.MaxCandidates = 512
	var refusedAt []int
	maxFill, sumFill, n := 0.0, 0.0, 0
	for i := range turns {
		q := fmt.Sprintf("note %d: how long did node-%d take to renew its lease, and what waited on it?", i, i%7)
		res, err := c.Turn(context.Background(), user(q), opts)
		var te *TurnError
		if errors.As(err, &te) && te.Kind == KindContextLengthExceeded {
			refusedAt = append(refusedAt, len(srv.Requests()))
			res, err = c.Turn(context.Background(), user(q), withTurnID(opts, te.TurnID))
		}
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		for _, call := range res.Receipt.Calls {
			if call.ProviderPromptTokens == nil {
				continue
			}
			fill := float64(*call.ProviderPromptTokens+512) / window
			maxFill, sumFill, n = max(maxFill, fill), sumFill+fill, n+1
			if fill > 1 {
				t.Errorf("turn %d: the provider counted %d prompt tokens, over the window with the reserve", i+1, *call.ProviderPromptTokens)
			}
		}
	}
	k := c.st.rt.Calibration("local", "claude-test")
	t.Logf("counts 25%% over the estimate, window %d, %d turns: %d calls, refused at calls %v; learnt ratio %.3f over %d calls (+%d%%); prompt + reserve after calibration: mean %.1f%%, largest %.1f%% of the window",
		window, turns, len(srv.Requests()), refusedAt, k.Ratio, k.Samples, k.SafetyPercent, 100*sumFill/float64(n), 100*maxFill)
	if len(refusedAt) > 1 || len(refusedAt) == 1 && refusedAt[0] != 1 {
		t.Errorf("refused at calls %v, want at most the first", refusedAt)
	}
	if len(a.Usages()) != turns {
		t.Errorf("%d answered, want %d", len(a.Usages()), turns)
	}
}
