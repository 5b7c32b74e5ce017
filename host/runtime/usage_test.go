package runtime

import (
	"context"
	"math"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
)

// TestReceiptCachedTokensAndCost: a provider over HTTP that reports cached
// and reasoning tokens leaves them in the receipt's call beside our count,
// and the price table gives the call and the turn the cost computed by
// hand; a model with no price has no cost, and says so.
func TestReceiptCachedTokensAndCost(t *testing.T) {
	usage := `{"prompt_tokens":2000,"completion_tokens":300,"total_tokens":2300,` +
		`"prompt_tokens_details":{"cached_tokens":1500},"completion_tokens_details":{"reasoning_tokens":200}}`
	srv := providertest.NewServer(providertest.CompletionUsage(final("hi"), usage))
	defer srv.Close()
	prices := provider.Prices{"m-*": {Input: 2, CachedInput: 0.5, CacheWrite: 2, Output: 8}}
	for _, tc := range []struct {
		model  string
		priced bool
	}{{"m-1", true}, {"other", false}} {
		t.Run(tc.model, func(t *testing.T) {
			p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: tc.model})
			if err != nil {
				t.Fatal(err)
			}
			c := memConvWith(t, &Options{Prices: prices})
			res, err := c.Turn(context.Background(), user("hello"), turnOpts(httpPlanner{p}, handle.New(nil)))
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Receipt(res.TurnID)
			if err != nil || len(r.Calls) != 1 {
				t.Fatalf("receipt %+v, %v", r, err)
			}
			call := r.Calls[0]
			if call.CachedTokens == nil || *call.CachedTokens != 1500 || call.ReasoningTokens == nil || *call.ReasoningTokens != 200 ||
				call.CompletionTokens == nil || *call.CompletionTokens != 300 || call.CacheWriteTokens != nil ||
				*call.ProviderPromptTokens != 2000 || call.LocalPromptTokens == 0 {
				t.Fatalf("call %+v", call)
			}
			if n, ok := r.CachedTokens(); n != 1500 || !ok {
				t.Errorf("CachedTokens() = %d, %v", n, ok)
			}
			if r.Usage.CachedTokens != 1500 || r.Usage.ReasoningTokens != 200 {
				t.Errorf("usage totals %+v", r.Usage)
			}
			usd, unpriced := r.Cost()
			if !tc.priced {
				if call.CostUSD != nil || usd != 0 || unpriced != 1 {
					t.Errorf("unpriced model: cost %v, Cost() = %v, %d", call.CostUSD, usd, unpriced)
				}
				return
			}
			// 500 uncached × $2 + 1500 cached × $0.50 + 300 out × $8, per million.
			want := (500*2 + 1500*0.5 + 300*8) / 1e6
			if call.CostUSD == nil || math.Abs(*call.CostUSD-want) > 1e-12 || call.CostSource != CostPriceTable ||
				math.Abs(usd-want) > 1e-12 || unpriced != 0 {
				t.Errorf("cost %v (%s), Cost() = %v, %d; want %v", call.CostUSD, call.CostSource, usd, unpriced, want)
			}
		})
	}
}

func TestPriceLookup(t *testing.T) {
	ps := provider.Prices{"gpt-4o": {Input: 1}, "gpt-4o-*": {Input: 2}, "gpt-4o-mini*": {Input: 3}}
	for model, want := range map[string]float64{"gpt-4o": 1, "gpt-4o-2024-08-06": 2, "gpt-4o-mini": 3, "gpt-4o-mini-2024": 3, "gpt-4": -1} {
		p, ok := ps.Lookup(model)
		if !ok && want != -1 || ok && p.Input != want {
			t.Errorf("Lookup(%q) = %v, %v; want %v", model, p, ok, want)
		}
	}
}

// TestReceiptStats: two turns against a provider that reports its cache
// (nothing cached, then 1,024 of 1,500): per-turn and total prompt,
// cached share, output and cost match hand-computed values, and each
// turn's stages sum to its ledger total.
func TestReceiptStats(t *testing.T) {
	srv := providertest.NewServer(
		providertest.CompletionUsage(final("one"), `{"prompt_tokens":1200,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":0}}`),
		providertest.CompletionUsage(final("two"), `{"prompt_tokens":1500,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":1024}}`),
	)
	defer srv.Close()
	p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m-1"})
	if err != nil {
		t.Fatal(err)
	}
	c := memConvWith(t, &Options{Prices: provider.Prices{"m-1": {Input: 1, CachedInput: 0.1, CacheWrite: 1, Output: 4}}})
	for _, q := range []string{"first", "second"} {
		if _, err := c.Turn(context.Background(), user(q), turnOpts(httpPlanner{p}, handle.New(nil))); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.ReceiptStats(ReceiptQuery{})
	if err != nil || len(cs.Turns) != 2 || cs.Completed != 2 {
		t.Fatalf("stats %+v, %v", cs, err)
	}
	cost1 := (1200*1.0 + 10*4.0) / 1e6
	cost2 := (476*1.0 + 1024*0.1 + 30*4.0) / 1e6
	for i, want := range []TurnStats{
		{Calls: 1, PromptTokens: 1200, CachedTokens: 0, CachedShare: 0, OutputTokens: 10, CostUSD: cost1},
		{Calls: 1, PromptTokens: 1500, CachedTokens: 1024, CachedShare: 1024.0 / 1500, OutputTokens: 30, CostUSD: cost2},
	} {
		g := cs.Turns[i]
		if g.Calls != want.Calls || g.PromptTokens != want.PromptTokens || g.CachedTokens != want.CachedTokens ||
			math.Abs(g.CachedShare-want.CachedShare) > 1e-12 || g.OutputTokens != want.OutputTokens ||
			math.Abs(g.CostUSD-want.CostUSD) > 1e-12 || g.Solver != "optimal" || g.Status != StatusCompleted {
			t.Errorf("turn %d = %+v, want %+v", i+1, g, want)
		}
		var sum int64
		for _, s := range g.Stages {
			sum += s.Tokens
		}
		r, _ := c.Receipt(g.TurnID)
		if sum != g.ContextTokens || g.ContextTokens == 0 || g.ContextTokens+g.ReservedTokens != r.Context.Total || g.ReservedTokens != 500 {
			t.Errorf("turn %d: stages %v sum to %d, ledger %d", i+1, g.Stages, sum, g.ContextTokens)
		}
	}
	tot := cs.Total
	if tot.PromptTokens != 2700 || tot.CachedTokens != 1024 || math.Abs(tot.CachedShare-1024.0/2700) > 1e-12 ||
		tot.OutputTokens != 40 || math.Abs(tot.CostUSD-(cost1+cost2)) > 1e-12 || tot.ContextTokens != cs.Turns[0].ContextTokens+cs.Turns[1].ContextTokens {
		t.Errorf("total %+v", tot)
	}
}
