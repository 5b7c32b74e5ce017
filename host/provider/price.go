package provider

import (
	"fmt"
	"math"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens: prompt
// tokens the provider computed (Input), served from its prompt cache
// (CachedInput), written to that cache (CacheWrite), and generated
// (Output, reasoning included).
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"`
	CacheWrite  float64 `json:"cache_write"`
	Output      float64 `json:"output"`
}

// Cost is the cost of one call's usage in US dollars, and whether it could
// be computed: it needs the prompt and completion counts. Cached and
// cache-write tokens are part of the prompt; those not reported are
// charged at the Input price.
func (p Price) Cost(u Usage) (float64, bool) {
	if !u.PromptKnown || !u.CompletionKnown {
		return 0, false
	}
	cached, written := 0, 0
	if u.CachedKnown {
		cached = u.CachedTokens
	}
	if u.CacheWriteKnown {
		written = u.CacheWriteTokens
	}
	plain := max(0, u.PromptTokens-cached-written)
	c := float64(plain)*p.Input + float64(cached)*p.CachedInput + float64(written)*p.CacheWrite + float64(u.CompletionTokens)*p.Output
	return c / 1e6, true
}

// Prices is a price table by model name: a key is a model's exact name,
// or a prefix ending in "*" ("gpt-4o-2024-*"), the longest matching
// prefix winning. A nil Prices prices nothing. rlmpl ships no default
// table: prices change, and a stale one would be wrong without saying
// so; users configure theirs ([prices] in providers.toml).
type Prices map[string]Price

// Lookup returns the price of model.
func (ps Prices) Lookup(model string) (Price, bool) {
	if p, ok := ps[model]; ok && !strings.HasSuffix(model, "*") {
		return p, true
	}
	best, found := -1, Price{}
	for k, p := range ps {
		prefix, isPattern := strings.CutSuffix(k, "*")
		if isPattern && strings.HasPrefix(model, prefix) && len(prefix) > best {
			best, found = len(prefix), p
		}
	}
	return found, best >= 0
}

// filePrice is the TOML shape of one [prices."model"] table.
type filePrice struct {
	Input       *float64 `toml:"input"`
	CachedInput *float64 `toml:"cached_input"`
	CacheWrite  *float64 `toml:"cache_write"`
	Output      *float64 `toml:"output"`
}

// price checks a table of the file: input and output are required,
// cached_input and cache_write default to input (no discount).
func (f filePrice) price(path, model string) (Price, error) {
	bad := func(field, msg string) error {
		return &ConfigError{Field: "prices", Message: fmt.Sprintf("%s: prices.%q.%s: %s", path, model, field, msg)}
	}
	var p Price
	for _, fld := range []struct {
		name     string
		v        *float64
		dst      *float64
		required bool
	}{{"input", f.Input, &p.Input, true}, {"output", f.Output, &p.Output, true},
		{"cached_input", f.CachedInput, &p.CachedInput, false}, {"cache_write", f.CacheWrite, &p.CacheWrite, false}} {
		switch {
		case fld.v == nil && fld.required:
			return p, bad(fld.name, "is required (US dollars per million tokens)")
		case fld.v == nil:
			*fld.dst = p.Input
		case *fld.v < 0 || math.IsNaN(*fld.v) || math.IsInf(*fld.v, 0):
			return p, bad(fld.name, "must be a number of US dollars per million tokens, at least 0")
		default:
			*fld.dst = *fld.v
		}
	}
	return p, nil
}
