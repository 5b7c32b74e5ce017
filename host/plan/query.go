package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// QueryInput is one direct, bounded model call: llm_query/3, or
// rlm_query/4 with Depth > 0 and a prompt from [RLMQueryPrompt].
type QueryInput struct {
	// Prompt is sent as one user message, unless Request has messages.
	Prompt string
	// Request, when it has messages, is sent instead of Prompt: a packed
	// conversation reaches the model as the chat request it was counted
	// as. Its MaxTokens is replaced by the cap.
	Request  tokenizer.Request
	Provider string
	// Options are passed to the model; max_tokens is set to the cap.
	Options map[string]any
	// Budget bounds the call (model calls, tokens, cost, time limit). Nil
	// means [DefaultBudget].
	Budget *Budget
	// MaxTokens caps generation (then capped by the token budget). Zero
	// means 1024.
	MaxTokens int
	// Depth is the recursion depth the call stands for; more than the
	// budget's MaxRecursionDepth is a completion_fault
	// recursion_depth_exceeded(Depth, Max) before any call.
	Depth int
	// Reason is recorded in the ModelCall. Empty means "direct".
	Reason string
}

// QueryOutcome is a direct call's result.
type QueryOutcome struct {
	Response ModelResult
	Usage    UsageTotals
	Elapsed  time.Duration
}

// Query makes one model call under the budget: the call counts against
// MaxModelCalls, max_tokens is capped by the remaining tokens, and the
// reported usage is checked afterwards (token_budget_exceeded,
// cost_budget_exceeded; unknown usage charged as in [Complete]).
// Cancellation and the time limit win as in Complete ([KindCancelled],
// [KindTimeout]); a model error is a completion_error of phase model and
// kind model_error with the error as Cause.
func Query(ctx context.Context, in QueryInput, models Models) (*QueryOutcome, error) {
	out := &QueryOutcome{}
	start := time.Now()
	defer func() { out.Elapsed = time.Since(start) }()
	b := DefaultBudget()
	if in.Budget != nil {
		b = *in.Budget
	}
	if err := b.Validate(); err != nil {
		return out, err
	}
	if in.Depth < 0 || in.Depth > b.MaxRecursionDepth {
		return out, complFault(D("recursion_depth_exceeded", int64(in.Depth), int64(b.MaxRecursionDepth)),
			fmt.Sprintf("depth %d exceeds the recursion limit %d", in.Depth, b.MaxRecursionDepth))
	}
	if models == nil {
		return out, complFault(D("invalid_dependencies"), "Query needs a Models dependency")
	}
	if in.MaxTokens <= 0 {
		in.MaxTokens = 1024
	}
	if in.Reason == "" {
		in.Reason = "direct"
	}
	m := newMeter(b)
	defer func() { out.Usage = m.totals() }()
	if ctl := control(ctx); ctl != nil {
		return out, ctl
	}
	ctx, cancel := context.WithTimeoutCause(ctx, b.TimeLimit, ErrTimeLimit)
	defer cancel()
	limit, err := m.beginCall(in.MaxTokens, true)
	if err != nil {
		return out, err
	}
	opts := make(map[string]any, len(in.Options)+1)
	for k, v := range in.Options {
		opts[k] = v
	}
	opts["max_tokens"] = int64(limit)
	req := userRequest(in.Prompt, limit)
	if len(in.Request.Messages) > 0 {
		req = in.Request.Clone()
		req.MaxTokens = limit
	}
	call := ModelCall{Provider: in.Provider, Request: req, Options: opts, Depth: in.Depth, Reason: in.Reason}
	res, err := guard(ctx, func(ctx context.Context) (ModelResult, error) { return models.Complete(ctx, call) })
	if ctl := control(ctx); ctl != nil {
		return out, ctl
	}
	if err != nil {
		e := complErr(PhaseModel, KindModelError, "the model call failed: "+err.Error(), Field{"provider", Atom(in.Provider)})
		e.Cause = err
		return out, e
	}
	out.Response = res
	if err := m.endCall(res.Usage, promptBytes(&req), limit); err != nil {
		return out, err
	}
	return out, nil
}

// RLMQueryPrompt is rlm_query's prompt: one user message stating the
// depth, the goal and the context metadata (never the payload), telling
// the model to answer only from what it is actually given.
func RLMQueryPrompt(query string, depth int, meta handle.Metadata) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "You answer a recursive subquery at depth %d of a bounded recursive language-model runtime.\n", depth)
	sb.WriteString("Answer only from information actually supplied to you; the context below is described by its metadata, not shown.\n\n")
	fmt.Fprintf(&sb, "Goal: %s\n", query)
	fmt.Fprintf(&sb, "Context metadata: %s\n", meta.Describe())
	return sb.String()
}
