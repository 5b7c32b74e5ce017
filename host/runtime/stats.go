package runtime

import "slices"

// Statistics of a conversation's receipts: what each turn spent and what
// the provider served from its cache, for `rlmpl receipt stats` and Go
// callers. Everything is read from the receipts; nothing is estimated
// here.

// TurnStats is one turn's spend, read from its receipt.
type TurnStats struct {
	TurnID  string `json:"turn_id"`
	UserSeq int64  `json:"user_seq"`
	Status  string `json:"status"`
	// Solver is the planner pack's solver status ("" when the turn
	// composed no request).
	Solver string `json:"solver_status,omitempty"`
	// ContextTokens are the tokens the planner request's ledger charges
	// for what is sent, Stages the same grouped by section (see
	// [StageTokens]); ReservedTokens what it keeps free under the ceiling
	// (output reserve, safety margin); Limit the ceiling. ContextTokens +
	// ReservedTokens is the ledger's total.
	ContextTokens  int64         `json:"context_tokens"`
	ReservedTokens int64         `json:"reserved_tokens"`
	Limit          int64         `json:"limit"`
	Stages         []StageTokens `json:"stages,omitempty"`
	// Calls counts the requests that completed (a failed HTTP attempt is
	// not one). PromptTokens sums their prompts: the provider's count
	// where it reported one, else ours. CachedTokens sums what the
	// provider said it served from its cache, CachedShare is
	// CachedTokens / PromptTokens, CachePrefixTokens what we predicted it
	// could (Receipt.CachePrefixTokens).
	Calls             int     `json:"calls"`
	PromptTokens      int     `json:"prompt_tokens"`
	CachedTokens      int     `json:"cached_tokens"`
	CachedShare       float64 `json:"cached_share"`
	CachePrefixTokens int     `json:"cache_prefix_tokens"`
	// OutputTokens are the completion tokens reported (Receipt.Usage).
	OutputTokens int `json:"output_tokens"`
	// CostUSD sums the calls' costs; UnpricedCalls counts those without
	// one (no price for the model, and none reported).
	CostUSD       float64 `json:"cost_usd"`
	UnpricedCalls int     `json:"unpriced_calls,omitempty"`
	// LatencyMS is the turn's wall time (Receipt.Timings.TotalMS).
	LatencyMS float64 `json:"latency_ms"`
}

// StageTokens is the tokens a request spent on one part: a fixed
// section by its name (instructions, plan_grammar, tool_schemas, ...) and
// the selected units by their section (pinned, conversation, warm,
// cold_history_boundary). The budget's reserve (output_reserve,
// safety_margin: kept free, never sent) is not a stage here.
type StageTokens struct {
	Stage  string `json:"stage"`
	Tokens int64  `json:"tokens"`
}

// ConversationStats are the statistics of a conversation's turns, in the
// order of their user messages, and their totals (Total.TurnID is
// "total"; its Stages sum every turn's, its CachedShare is the share of
// all prompt tokens, its LatencyMS the sum).
type ConversationStats struct {
	Turns []TurnStats `json:"turns"`
	Total TurnStats   `json:"total"`
	// Completed and Failed count the turns by status.
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// Stages groups a receipt's ledger by section (see [StageTokens]), in
// ledger order; nil when the turn composed no request.
func (r Receipt) Stages() []StageTokens {
	if r.Context == nil {
		return nil
	}
	section := map[string]string{}
	for _, u := range r.Context.Selected {
		section[u.ID] = u.Section
	}
	var out []StageTokens
	add := func(name string, n int64) {
		if i := slices.IndexFunc(out, func(s StageTokens) bool { return s.Stage == name }); i >= 0 {
			out[i].Tokens += n
			return
		}
		out = append(out, StageTokens{Stage: name, Tokens: n})
	}
	for _, s := range r.Context.Stages {
		if s.Kind == "reserve" {
			continue
		}
		name := s.Name
		if s.Kind == "context_unit" {
			if sec, ok := section[s.Name]; ok {
				name = sec
			}
		}
		add(name, s.Charged)
	}
	return out
}

// Stats reads one receipt's statistics.
func (r Receipt) Stats() TurnStats {
	ts := TurnStats{TurnID: r.TurnID, UserSeq: r.UserSeq, Status: r.Status, CachePrefixTokens: r.CachePrefixTokens,
		OutputTokens: r.Usage.CompletionTokens, LatencyMS: r.Timings.TotalMS, Stages: r.Stages()}
	if c := r.Context; c != nil {
		ts.Solver, ts.Limit = c.Solver.Status, c.Limit
		for _, s := range c.Stages {
			if s.Kind == "reserve" {
				ts.ReservedTokens += s.Charged
			}
		}
		ts.ContextTokens = c.Total - ts.ReservedTokens
	}
	for _, c := range r.Calls {
		if c.Error != "" {
			continue
		}
		ts.Calls++
		if c.ProviderPromptTokens != nil {
			ts.PromptTokens += *c.ProviderPromptTokens
		} else {
			ts.PromptTokens += c.LocalPromptTokens
		}
		if c.CachedTokens != nil {
			ts.CachedTokens += *c.CachedTokens
		}
	}
	ts.CostUSD, ts.UnpricedCalls = r.Cost()
	ts.CachedShare = share(ts.CachedTokens, ts.PromptTokens)
	return ts
}

func share(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// StatsOf sums receipts' statistics.
func StatsOf(rs []Receipt) ConversationStats {
	cs := newStats()
	for _, r := range rs {
		cs.add(r.Stats())
	}
	cs.Total.CachedShare = share(cs.Total.CachedTokens, cs.Total.PromptTokens)
	return cs
}

func newStats() ConversationStats {
	return ConversationStats{Turns: []TurnStats{}, Total: TurnStats{TurnID: "total"}}
}

// add counts one turn.
func (cs *ConversationStats) add(ts TurnStats) {
	t := &cs.Total
	cs.Turns = append(cs.Turns, ts)
	switch ts.Status {
	case StatusCompleted:
		cs.Completed++
	case StatusFailed:
		cs.Failed++
	}
	t.ContextTokens += ts.ContextTokens
	t.ReservedTokens += ts.ReservedTokens
	t.Calls += ts.Calls
	t.PromptTokens += ts.PromptTokens
	t.CachedTokens += ts.CachedTokens
	t.CachePrefixTokens += ts.CachePrefixTokens
	t.OutputTokens += ts.OutputTokens
	t.CostUSD += ts.CostUSD
	t.UnpricedCalls += ts.UnpricedCalls
	t.LatencyMS += ts.LatencyMS
	for _, s := range ts.Stages {
		if i := slices.IndexFunc(t.Stages, func(x StageTokens) bool { return x.Stage == s.Stage }); i >= 0 {
			t.Stages[i].Tokens += s.Tokens
		} else {
			t.Stages = append(t.Stages, s)
		}
	}
}

// ReceiptStats reads the statistics of the receipts q selects (the latest run of
// each turn unless q.History), one receipt at a time.
func (c Conversation) ReceiptStats(q ReceiptQuery) (ConversationStats, error) {
	cs := newStats()
	err := c.EachReceipt(q, func(r Receipt) error {
		cs.add(r.Stats())
		return nil
	})
	cs.Total.CachedShare = share(cs.Total.CachedTokens, cs.Total.PromptTokens)
	return cs, err
}
