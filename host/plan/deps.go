package plan

import (
	"context"

	"github.com/rlmpl/rlmpl/host/handle"
)

// The dependencies a completion calls, declared here by their consumer (the
// database/sql/driver habit) so that the Prolog-side handlers, the HTTP
// provider and test doubles all plug in the same way. Each must be safe for
// concurrent use: parallel branches call them from several goroutines.

// Contexts runs bounded operations on context handles. *handle.Registry
// implements it.
type Contexts interface {
	Do(ctx context.Context, ref handle.Ref, req handle.Request, lim handle.Limits) (handle.Result, error)
}

var _ Contexts = (*handle.Registry)(nil)

// Models answers plan model steps. An implementation returns ctx.Err()
// (or an error wrapping it) when ctx is done; Complete reports that as
// cancellation or timeout, never as a model error.
type Models interface {
	Complete(ctx context.Context, call ModelCall) (ModelResult, error)
}

// ModelCall is one model request from a plan step.
type ModelCall struct {
	Provider string         // the step's provider name
	Prompt   string         // one user message
	Options  map[string]any // the step's options, max_tokens already capped
	// MaxTokens is the generation cap: the step's max_tokens (or
	// max_completion_tokens) capped by the remaining token budget.
	MaxTokens int
	Depth     int    // recursion depth of the plan running the step (root 0)
	Reason    string // direct_plan_model, nested_rlm_model, parallel_model or retry_model
}

// ModelResult is a model's answer.
type ModelResult struct {
	Text      string
	Reasoning string
	Model     string // the model that answered, "" when unknown
	Usage     Usage
}

// Usage is what one call consumed, as reported. A count is meaningful only
// when its Known flag is set (host/provider's Usage has the same shape).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	Cost             float64 // USD

	PromptKnown     bool
	CompletionKnown bool
	TotalKnown      bool
	CostKnown       bool
}

// Tools calls trusted tools by name. Args is the evaluated args expression
// (a Go value of the plan value mapping); the result becomes a plan value.
// An error that wraps ctx.Err() is a control signal; any other error is a
// tool_error.
type Tools interface {
	Call(ctx context.Context, name string, args any) (any, error)
}

// Planner asks the planner model for a plan.
type Planner interface {
	Plan(ctx context.Context, req PlannerRequest) (PlannerReply, error)
}

// PlannerRequest is one planner call.
type PlannerRequest struct {
	Prompt    string // one user message (see [Prompt])
	MaxTokens int    // generation cap: min(PlannerMaxTokens, remaining tokens)
	Attempt   int    // 1-based
	Depth     int    // 0 for the root planner, d for an rlm(query(...)) child at depth d
}

// PlannerReply is the planner's answer: text to parse (JSON or term
// syntax, possibly inside prose or a markdown fence), or, from a trusted
// in-process planner such as a Prolog planner_handler, an already built
// Plan (which is validated like any other). Usage is what the call used.
type PlannerReply struct {
	Text  string
	Plan  *Plan
	Usage Usage
}

// ToolSchema describes a tool to the planner. Schema is rendered verbatim
// (typically a JSON schema of the args); Name must match the tool(Name)
// capability and what [Tools] answers.
type ToolSchema struct {
	Name        string
	Description string
	Schema      string
}

// Deps are the dependencies of [Complete]. Contexts and Planner are
// required; Models and Tools only when a plan uses them (a model or tool
// step with no dependency is rejected at preflight).
type Deps struct {
	Contexts Contexts
	Models   Models
	Tools    Tools
	Planner  Planner
}
