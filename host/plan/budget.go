package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Capability is one grant: rlm, parallel, retry, checkpoint, or Kind(Name)
// for tool, context, model, graph, persistence, network, filesystem and
// process. Its String form is the term syntax (context(search)).
type Capability struct {
	Kind string
	Name string // "" for rlm, parallel, retry, checkpoint
}

// String renders c in term syntax.
func (c Capability) String() string {
	if c.Name == "" {
		return c.Kind
	}
	return c.Kind + "(" + c.Name + ")"
}

// Term is c as a term value: an [Atom] (rlm) or a [Compound]
// (tool(count_items)), never an atom quoting the compound's text.
func (c Capability) Term() any {
	if c.Name == "" {
		return Atom(c.Kind)
	}
	return Compound{Functor: c.Kind, Args: []any{Atom(c.Name)}}
}

// NormalizeCapabilities validates, sorts and deduplicates caps, as
// [Complete] does with Input.Capabilities.
func NormalizeCapabilities(caps []Capability) ([]Capability, error) { return normalizeCaps(caps) }

var (
	bareCaps  = []string{"checkpoint", "parallel", "retry", "rlm"}
	namedCaps = []string{"context", "filesystem", "graph", "model", "network", "persistence", "process", "tool"}
)

// ParseCapability reads a capability written in term syntax: "rlm",
// "context(search)", "tool(count_items)".
func ParseCapability(s string) (Capability, error) {
	s = strings.TrimSpace(s)
	if slices.Contains(bareCaps, s) {
		return Capability{Kind: s}, nil
	}
	if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		c := Capability{Kind: s[:i], Name: strings.TrimSpace(s[i+1 : len(s)-1])}
		if slices.Contains(namedCaps, c.Kind) && c.Name != "" && !strings.ContainsAny(c.Name, "(),") {
			return c, nil
		}
	}
	return Capability{}, complFault(D("capability_error", Record{Tag: "capability_error", Fields: []Field{
		{Key: "detail", Value: Compound{Functor: "invalid_capability", Args: []any{s}}},
		{Key: "kind", Value: Atom("invalid_capabilities")}}}), "invalid capability "+s)
}

// MustCapabilities parses capabilities and panics on a bad one (for tests
// and literals).
func MustCapabilities(ss ...string) []Capability {
	out := make([]Capability, len(ss))
	for i, s := range ss {
		c, err := ParseCapability(s)
		if err != nil {
			panic(err)
		}
		out[i] = c
	}
	return out
}

// normalizeCaps validates, sorts and deduplicates caps.
func normalizeCaps(caps []Capability) ([]Capability, error) {
	out := make([]Capability, 0, len(caps))
	for _, c := range caps {
		bare := slices.Contains(bareCaps, c.Kind) && c.Name == ""
		named := slices.Contains(namedCaps, c.Kind) && c.Name != "" && !strings.ContainsAny(c.Name, "(),")
		if !bare && !named {
			_, err := ParseCapability(c.String())
			if err == nil {
				err = complFault(D("capability_error", Atom("invalid_capabilities")), "invalid capability "+c.String())
			}
			return nil, err
		}
		out = append(out, c)
	}
	// NB: for the fixed kinds, (Kind, Name) order is the order of String().
	slices.SortFunc(out, func(a, b Capability) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return slices.Compact(out), nil
}

func capStrings(caps []Capability) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = c.String()
	}
	return out
}

func hasCap(caps []Capability, c Capability) bool { return slices.Contains(caps, c) }

// Budget bounds one completion: every counter is global across the root
// plan, nested plans, parallel branches, retries and child completions, and
// is never refunded. [DefaultBudget] has upstream's defaults.
type Budget struct {
	MaxIterations         int           // plan steps executed; > 0 (default 32)
	MaxRecursionDepth     int           // rlm nesting; >= 0 (default 1)
	MaxConcurrentSubcalls int           // parallel branches running at once; > 0 (default 2)
	MaxModelCalls         int           // planner calls + model steps; > 0 (default 4)
	MaxToolCalls          int           // >= 0 (default 4)
	MaxContextOps         int           // >= 0 (default 8)
	MaxTotalTokens        int           // > 0 (default 8192)
	MaxCostUSD            float64       // >= 0 (default 0.25)
	MaxOutputBytes        int           // canonical bytes of produced values (an rlm child's result counts again at its parent); > 0 (default 32768)
	TimeLimit             time.Duration // wall time of the whole completion; > 0 (default 30s)
	// UnknownCallCostUSD is charged for each call that reports no cost
	// (many OpenAI-compatible servers never do). >= 0 (default 0: local
	// servers are free; set it for a paid provider that omits cost).
	UnknownCallCostUSD float64
}

// DefaultBudget returns upstream's default completion budget.
func DefaultBudget() Budget {
	return Budget{
		MaxIterations: 32, MaxRecursionDepth: 1, MaxConcurrentSubcalls: 2, MaxModelCalls: 4,
		MaxToolCalls: 4, MaxContextOps: 8, MaxTotalTokens: 8192, MaxCostUSD: 0.25,
		MaxOutputBytes: 32768, TimeLimit: 30 * time.Second,
	}
}

// BudgetKeys are the overlay keys, in upstream's spelling.
var BudgetKeys = []string{
	"max_concurrent_subcalls", "max_context_ops", "max_cost_usd", "max_iterations", "max_model_calls",
	"max_output_bytes", "max_recursion_depth", "max_tool_calls", "max_total_tokens", "time_limit",
	"unknown_call_cost_usd",
}

// Overlay returns b with the given fields replaced. Keys are [BudgetKeys];
// an unknown key is an error (upstream accepted them silently, so a typo
// such as max_tokens silently kept the default). Values are Go numbers
// (int, int64, float64); time_limit is in seconds. Errors are [*Error] of
// kind completion_fault with upstream's details
// (unknown_budget_field(K), invalid_positive_integer(F, V), …).
func (b Budget) Overlay(fields map[string]any) (Budget, error) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := fields[k]
		f, isNum := number(v)
		i, isInt := integer(v)
		switch k {
		case "max_iterations", "max_recursion_depth", "max_concurrent_subcalls", "max_model_calls",
			"max_tool_calls", "max_context_ops", "max_total_tokens", "max_output_bytes":
			if !isInt {
				return b, complFault(D("invalid_integer", Atom(k), v), fmt.Sprintf("budget %s must be an integer", k))
			}
			*b.intField(k) = i
		case "max_cost_usd":
			if !isNum {
				return b, complFault(D("invalid_nonnegative_number", Atom(k), v), "budget max_cost_usd must be a number")
			}
			b.MaxCostUSD = f
		case "unknown_call_cost_usd":
			if !isNum {
				return b, complFault(D("invalid_nonnegative_number", Atom(k), v), "budget unknown_call_cost_usd must be a number")
			}
			b.UnknownCallCostUSD = f
		case "time_limit":
			if !isNum || f <= 0 || f > 1e6 {
				return b, complFault(D("invalid_positive_number", Atom(k), v), "budget time_limit must be a positive number of seconds")
			}
			b.TimeLimit = time.Duration(f * float64(time.Second))
		default:
			return b, complFault(D("unknown_budget_field", Atom(k)),
				fmt.Sprintf("unknown budget field %s; fields are %s", k, strings.Join(BudgetKeys, ", ")))
		}
	}
	return b, b.Validate()
}

func (b *Budget) intField(k string) *int {
	switch k {
	case "max_iterations":
		return &b.MaxIterations
	case "max_recursion_depth":
		return &b.MaxRecursionDepth
	case "max_concurrent_subcalls":
		return &b.MaxConcurrentSubcalls
	case "max_model_calls":
		return &b.MaxModelCalls
	case "max_tool_calls":
		return &b.MaxToolCalls
	case "max_context_ops":
		return &b.MaxContextOps
	case "max_total_tokens":
		return &b.MaxTotalTokens
	}
	return &b.MaxOutputBytes
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case float64:
		return v, !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	return 0, false
}

func integer(v any) (int, bool) {
	switch v := v.(type) {
	case int:
		return v, true
	case int64:
		if v > math.MaxInt32 || v < math.MinInt32 {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}

// Validate checks every field's range, in upstream's detail terms.
func (b Budget) Validate() error {
	pos := func(k string, v int) error {
		if v <= 0 {
			return complFault(D("invalid_positive_integer", Atom(k), int64(v)), "budget "+k+" must be a positive integer")
		}
		return nil
	}
	nonneg := func(k string, v int) error {
		if v < 0 {
			return complFault(D("invalid_nonnegative_integer", Atom(k), int64(v)), "budget "+k+" must be a non-negative integer")
		}
		return nil
	}
	for _, err := range []error{
		pos("max_iterations", b.MaxIterations), nonneg("max_recursion_depth", b.MaxRecursionDepth),
		pos("max_concurrent_subcalls", b.MaxConcurrentSubcalls), pos("max_model_calls", b.MaxModelCalls),
		nonneg("max_tool_calls", b.MaxToolCalls), nonneg("max_context_ops", b.MaxContextOps),
		pos("max_total_tokens", b.MaxTotalTokens), pos("max_output_bytes", b.MaxOutputBytes),
	} {
		if err != nil {
			return err
		}
	}
	if !(b.MaxCostUSD >= 0) {
		return complFault(D("invalid_nonnegative_number", Atom("max_cost_usd"), b.MaxCostUSD), "budget max_cost_usd must be >= 0")
	}
	if !(b.UnknownCallCostUSD >= 0) {
		return complFault(D("invalid_nonnegative_number", Atom("unknown_call_cost_usd"), b.UnknownCallCostUSD), "budget unknown_call_cost_usd must be >= 0")
	}
	if b.TimeLimit <= 0 {
		return complFault(D("invalid_positive_number", Atom("time_limit"), b.TimeLimit.Seconds()), "budget time_limit must be > 0")
	}
	return nil
}

func complFault(d *Detail, msg string) *Error {
	e := complErr(PhaseRuntime, KindCompletionFault, msg)
	e.Detail = d
	return e
}

// Counters are what a completion used (or, in [Outcome].Remaining, what is
// left).
type Counters struct {
	Steps       int
	ModelCalls  int
	ToolCalls   int
	ContextOps  int
	OutputBytes int
	Tokens      int // reported tokens, plus the conservative estimate for calls that reported none
	CostUSD     float64
	Depth       int // deepest recursion reached (root 0)
}

// UsageTotals sums the usage of every model call (planner calls
// included). TokensKnown and CostKnown are false when any call did not
// report its tokens or cost; EstimatedTokens is what was charged in their
// place (see the package doc's budget rules).
type UsageTotals struct {
	ModelCalls       int     `json:"model_calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	TotalTokens      int     `json:"total_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	TokensKnown      bool    `json:"tokens_known"`
	CostKnown        bool    `json:"cost_known"`
	EstimatedTokens  int     `json:"estimated_tokens"`
	// CachedTokens and ReasoningTokens sum what the calls that reported
	// them said (see [Usage]); 0 when none did.
	CachedTokens    int `json:"cached_tokens,omitempty"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// meter holds the global counters of one completion. Safe for concurrent
// use (parallel branches share it).
type meter struct {
	b Budget

	mu    sync.Mutex // protects the fields below
	used  Counters
	usage UsageTotals
}

func newMeter(b Budget) *meter {
	return &meter{b: b, usage: UsageTotals{TokensKnown: true, CostKnown: true}}
}

func (m *meter) snapshot() Counters {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

func (m *meter) totals() UsageTotals {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

func exhausted(name string, requested, remaining int) *Error {
	return planErr(PhaseExecute, KindBudgetExhausted, fmt.Sprintf("the %s budget is exhausted", name),
		Field{"budget", Atom(name)}, Field{"requested", int64(requested)}, Field{"remaining", int64(remaining)})
}

// step spends one step and one unit of the step's counter ("" for none).
func (m *meter) step(counter string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used.Steps >= m.b.MaxIterations {
		return exhausted("steps", 1, 0)
	}
	switch counter {
	case "model_calls":
		if m.used.ModelCalls >= m.b.MaxModelCalls {
			return exhausted(counter, 1, 0)
		}
		m.used.ModelCalls++
	case "tool_calls":
		if m.used.ToolCalls >= m.b.MaxToolCalls {
			return exhausted(counter, 1, 0)
		}
		m.used.ToolCalls++
	case "context_ops":
		if m.used.ContextOps >= m.b.MaxContextOps {
			return exhausted(counter, 1, 0)
		}
		m.used.ContextOps++
	}
	m.used.Steps++
	return nil
}

// output charges n bytes of newly produced values.
func (m *meter) output(n int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rem := m.b.MaxOutputBytes - m.used.OutputBytes; n > rem {
		return exhausted("output_bytes", n, rem)
	}
	m.used.OutputBytes += n
	return nil
}

func (m *meter) depth(d int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.Depth = max(m.used.Depth, d)
}

// beginCall reserves a model call (planner calls too) and returns the
// generation cap: min(want, remaining tokens). It fails before any call
// when no call or no token is left.
func (m *meter) beginCall(want int, planner bool) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used.ModelCalls >= m.b.MaxModelCalls {
		if planner {
			return 0, complErr(PhasePlanner, KindModelCallBudgetExhausted, "no model call is left for the planner",
				Field{"limit", int64(m.b.MaxModelCalls)}, Field{"used", int64(m.used.ModelCalls)})
		}
		return 0, exhausted("model_calls", 1, 0)
	}
	rem := m.b.MaxTotalTokens - m.used.Tokens
	if rem <= 0 {
		if planner {
			return 0, complErr(PhasePlanner, KindTokenBudgetExhausted, "no token is left for the planner",
				Field{"limit", int64(m.b.MaxTotalTokens)}, Field{"used", int64(m.used.Tokens)})
		}
		return 0, exhausted("tokens", 1, 0)
	}
	m.used.ModelCalls++
	m.usage.ModelCalls++
	return max(1, min(want, rem)), nil
}

// endCall charges a finished call's usage and checks the budget, in
// upstream's order: tokens, then cost. Unknown tokens are charged
// conservatively: an unknown prompt count as ceil(prompt bytes / 3)
// (English BPE averages about 4 bytes a token), an unknown completion
// count as the call's max_tokens cap (a true bound). Unknown cost is
// charged UnknownCallCostUSD.
func (m *meter) endCall(u Usage, promptBytes, maxTokens int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var tokens int
	switch {
	case u.TotalKnown:
		tokens = u.TotalTokens
	case u.PromptKnown && u.CompletionKnown:
		tokens = u.PromptTokens + u.CompletionTokens
	default:
		p, c := (promptBytes+2)/3, maxTokens
		if u.PromptKnown {
			p = u.PromptTokens
		}
		if u.CompletionKnown {
			c = u.CompletionTokens
		}
		tokens = p + c
		m.usage.TokensKnown = false
		m.usage.EstimatedTokens += tokens
	}
	tokens = max(0, tokens)
	if u.PromptKnown {
		m.usage.PromptTokens += u.PromptTokens
	}
	if u.CompletionKnown {
		m.usage.CompletionTokens += u.CompletionTokens
	}
	if u.CachedKnown {
		m.usage.CachedTokens += u.CachedTokens
	}
	if u.ReasoningKnown {
		m.usage.ReasoningTokens += u.ReasoningTokens
	}
	m.usage.TotalTokens += tokens
	m.used.Tokens += tokens
	cost := u.Cost
	if !u.CostKnown || !(cost >= 0) {
		cost = m.b.UnknownCallCostUSD
		m.usage.CostKnown = false
	}
	m.usage.CostUSD += cost
	m.used.CostUSD += cost
	if m.used.Tokens > m.b.MaxTotalTokens {
		return complErr(PhaseBudget, KindTokenBudgetExceeded, "the calls used more tokens than the budget allows",
			Field{"used", int64(m.used.Tokens)}, Field{"limit", int64(m.b.MaxTotalTokens)}, Field{"estimated", !m.usage.TokensKnown})
	}
	if m.used.CostUSD > m.b.MaxCostUSD {
		return complErr(PhaseBudget, KindCostBudgetExceeded, "the calls cost more than the budget allows",
			Field{"used", m.used.CostUSD}, Field{"limit", m.b.MaxCostUSD})
	}
	return nil
}

func (m *meter) remaining() Counters {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.used
	return Counters{
		Steps: m.b.MaxIterations - u.Steps, ModelCalls: m.b.MaxModelCalls - u.ModelCalls,
		ToolCalls: m.b.MaxToolCalls - u.ToolCalls, ContextOps: m.b.MaxContextOps - u.ContextOps,
		OutputBytes: m.b.MaxOutputBytes - u.OutputBytes, Tokens: m.b.MaxTotalTokens - u.Tokens,
		CostUSD: m.b.MaxCostUSD - u.CostUSD, Depth: m.b.MaxRecursionDepth - u.Depth,
	}
}
