package plan

import (
	"context"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/tokenizer"
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

// ModelCall is one model request: a plan's model step, or a direct call
// ([Query]).
type ModelCall struct {
	Provider string // the step's provider name
	// Request is the chat request to send, as the caller counted it: one
	// user message for a model step, or the caller's whole request for
	// [Query]. Its MaxTokens is the generation cap: the step's max_tokens
	// (or max_completion_tokens) capped by the remaining token budget.
	Request tokenizer.Request
	Options map[string]any // the step's options, max_tokens already capped
	Depth   int            // recursion depth of the plan running the step (root 0)
	Reason  string         // direct_plan_model, nested_rlm_model, parallel_model or retry_model
	// OnDelta, when set, receives the answer's text as it streams (an
	// implementation that cannot stream calls it once with the whole text).
	OnDelta func(text string)
	// Respond marks a round of a respond step: Request.Messages[0] is the
	// query as a user message, followed by the tool calls and results of
	// the rounds so far, and Request.Tools are the tools offered. A caller
	// that holds the conversation the query ends (a managed turn) sends the
	// conversation in place of that first message.
	Respond bool
}

// Prompt returns the text of the request's last user message, for
// implementations that take one prompt (a Prolog model_handler).
func (c ModelCall) Prompt() string { return c.Request.LastUserText() }

// userRequest is a request of one user message under a generation cap.
func userRequest(prompt string, maxTokens int) tokenizer.Request {
	return tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: prompt}}, MaxTokens: maxTokens}
}

// promptBytes is the size of a request's message text: what unknown
// prompt usage is estimated from.
func promptBytes(req *tokenizer.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Text())
	}
	return n
}

// ModelResult is a model's answer.
type ModelResult struct {
	Text      string
	Reasoning string
	// ReasoningSignature signs Reasoning (Anthropic's thinking): a respond
	// round sends it back with the tool calls it led to.
	ReasoningSignature string
	Model              string // the model that answered, "" when unknown
	// ToolCalls are the tools the model called (a respond round offering
	// tools), in the order it called them.
	ToolCalls []tokenizer.ToolCall
	Usage     Usage
	// FinishReason is why the model stopped, as the provider said ("" when
	// it did not).
	FinishReason string
	// RequestBody is the exact body the provider sent, when it sent one
	// over HTTP (a turn receipt records its SHA-256); nil otherwise.
	RequestBody []byte
}

// Usage is what one call consumed, as reported. A count is meaningful only
// when its Known flag is set (host/provider's Usage has the same shape).
//
// CachedTokens (served from the provider's prompt cache) and
// CacheWriteTokens (written to it) are part of PromptTokens,
// ReasoningTokens part of CompletionTokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	Cost             float64 // USD
	CachedTokens     int
	CacheWriteTokens int
	ReasoningTokens  int

	PromptKnown     bool
	CompletionKnown bool
	TotalKnown      bool
	CostKnown       bool
	CachedKnown     bool
	CacheWriteKnown bool
	ReasoningKnown  bool
}

// Tools calls trusted tools by name. Args is the evaluated args expression
// (a Go value of the plan value mapping); the result becomes a plan value.
// An error that wraps ctx.Err() is a control signal; any other error is a
// tool_error.
type Tools interface {
	Call(ctx context.Context, name string, args any) (any, error)
}

type toolCallKey struct{}

// withToolCallID marks ctx as running the model's tool call id.
func withToolCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, toolCallKey{}, id)
}

// ToolCallID is the id of the model's tool call that a [Tools] call runs
// (in a respond step), or "" (a plan's tool step): a Tools implementation
// that keeps more of a result than the model reads (an image) keys it by
// this id, which the tool message answering the call carries.
func ToolCallID(ctx context.Context) string {
	id, _ := ctx.Value(toolCallKey{}).(string)
	return id
}

// Planner asks the planner model for a plan.
type Planner interface {
	Plan(ctx context.Context, req PlannerRequest) (PlannerReply, error)
}

// PlannerRequest is one planner call.
type PlannerRequest struct {
	// Request is the chat request: one user message, the prompt
	// ([RenderPrompt]), under the generation cap min(PlannerMaxTokens,
	// remaining tokens) in Request.MaxTokens.
	Request tokenizer.Request
	Attempt int // 1-based
	Depth   int // 0 for the root planner, d for an rlm(query(...)) child at depth d
	// OnDelta, when set, receives the planner's answer as it streams (a
	// caller feeds it to an [AnswerScanner] to show a direct answer as it
	// is written). A planner that cannot stream does not call it.
	OnDelta func(text string)
}

// Prompt returns the text of the request's last user message: the planner
// prompt.
func (r PlannerRequest) Prompt() string { return r.Request.LastUserText() }

// PlannerReply is the planner's answer: text to parse (JSON or term
// syntax, possibly inside prose or a markdown fence), or, from a trusted
// in-process planner such as a Prolog planner_handler, an already built
// Plan (which is validated like any other). Usage is what the call used.
type PlannerReply struct {
	Text  string
	Plan  *Plan
	Usage Usage
	// Invalid, when set, says why the answer is not a plan (a handler's
	// plan term that does not convert): like text that does not parse, it
	// is fed back and retried, and the last one is the completion's error
	// when no attempt is left.
	Invalid error
	// Model and FinishReason are the answering model and why it stopped,
	// when a provider said.
	Model        string
	FinishReason string
	// RequestBody is the exact body sent, as in [ModelResult].
	RequestBody []byte
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
// step with no dependency is rejected at preflight); Terms reads planner
// answers in the term syntax (without it, planners must answer in JSON).
type Deps struct {
	Contexts Contexts
	Models   Models
	Tools    Tools
	Planner  Planner
	Terms    TermReader
}
