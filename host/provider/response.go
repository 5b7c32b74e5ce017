package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Provider completes chat requests. Implementations in this package are
// [*Client], [*Scripted], [*Recorder] and [*Replayer].
//
// Complete returns the whole response. Stream delivers the response as it is
// generated, calling fn once per [Delta] in order from the calling
// goroutine, and returns the assembled response; if fn returns an error the
// stream stops and Stream returns the response so far with that error.
// Both return [*Error] for provider failures; when ctx is done they return
// an [*Error] of kind [KindCanceled] that unwraps to ctx.Err().
type Provider interface {
	Complete(ctx context.Context, req tokenizer.Request) (Response, error)
	Stream(ctx context.Context, req tokenizer.Request, fn func(Delta) error) (Response, error)
}

// Response is a normalized chat completion: the first choice's message,
// whichever server and dialect produced it.
type Response struct {
	Content   string               `json:"content"`
	ToolCalls []tokenizer.ToolCall `json:"tool_calls,omitempty"`
	Reasoning string               `json:"reasoning,omitempty"` // reasoning_content (DeepSeek, vLLM, llama.cpp) or reasoning (OpenRouter, Ollama), thinking blocks (Anthropic)
	// ReasoningSignature signs Reasoning (Anthropic's thinking block), so
	// it can be sent back with the tool calls it led to.
	ReasoningSignature string `json:"reasoning_signature,omitempty"`
	FinishReason       string `json:"finish_reason,omitempty"` // "" when the provider sent none
	Model              string `json:"model,omitempty"`         // the model that answered (body.model), else the requested one
	ID                 string `json:"id,omitempty"`            // the provider's response id, "" when absent
	Usage              Usage  `json:"usage"`

	// RequestBody is the exact request body of a successful call ([Body]):
	// what [Client] sent (every retry sends the same bytes), or what it
	// would have sent for a scripted or replayed call. A turn receipt hashes
	// it. It is nil with an error, and not recorded: it follows from the
	// recorded request.
	RequestBody []byte `json:"-"`
}

// Message returns the response as an assistant message, ready to append to
// the next request's history.
func (r Response) Message() tokenizer.Message {
	return tokenizer.Message{Role: tokenizer.RoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls, Reasoning: r.Reasoning,
		ReasoningSignature: r.ReasoningSignature}
}

// toolCall returns a function call as a response carries it.
func toolCall(id, name, arguments string) tokenizer.ToolCall {
	return tokenizer.ToolCall{ID: id, Type: "function", Function: tokenizer.FunctionCall{Name: name, Arguments: arguments}}
}

// Usage is what a call consumed, as the provider reported it. A count is
// meaningful only when its Known flag is set: many servers omit usage, or
// cost, and an unknown value is never reported as 0. TotalTokens is derived
// as prompt + completion when the provider sent both but no total.
//
// CachedTokens are the prompt tokens the provider served from its prompt
// cache (OpenAI's prompt_tokens_details.cached_tokens, DeepSeek's
// prompt_cache_hit_tokens, cache_read_input_tokens where a compatible
// server reports Anthropic's names); CacheWriteTokens those it wrote to the
// cache (prompt_tokens_details.cache_write_tokens, cache_creation_input_tokens);
// ReasoningTokens the completion tokens spent reasoning
// (completion_tokens_details.reasoning_tokens). Each is part of the prompt
// or completion count, not added to it.
//
// Its JSON form (used by [Recorder]) writes only known fields, in the
// OpenAI usage object's shape.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	Cost             float64 // in the provider's billing unit (OpenRouter: credits, i.e. USD)
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

// TokenUsage returns a Usage with known prompt, completion and total
// counts and an unknown cost (for scripted responses).
func TokenUsage(prompt, completion int) Usage {
	return Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
		PromptKnown: true, CompletionKnown: true, TotalKnown: true}
}

// WithCost returns u with a known cost.
func (u Usage) WithCost(cost float64) Usage {
	u.Cost, u.CostKnown = cost, true
	return u
}

// WithCached returns u with known cached prompt tokens.
func (u Usage) WithCached(cached int) Usage {
	u.CachedTokens, u.CachedKnown = cached, true
	return u
}

// WithReasoning returns u with known reasoning tokens.
func (u Usage) WithReasoning(reasoning int) Usage {
	u.ReasoningTokens, u.ReasoningKnown = reasoning, true
	return u
}

// Any reports whether any field is known.
func (u Usage) Any() bool {
	return u.PromptKnown || u.CompletionKnown || u.TotalKnown || u.CostKnown || u.CachedKnown || u.CacheWriteKnown || u.ReasoningKnown
}

// String renders u with "?" for unknown fields: "prompt=28 completion=5
// total=33 cost=?", then " cached=N", " cache_write=N" and " reasoning=N"
// for those known.
func (u Usage) String() string {
	n := func(known bool, v int) string {
		if !known {
			return "?"
		}
		return strconv.Itoa(v)
	}
	c := "?"
	if u.CostKnown {
		c = strconv.FormatFloat(u.Cost, 'g', -1, 64)
	}
	s := "prompt=" + n(u.PromptKnown, u.PromptTokens) + " completion=" + n(u.CompletionKnown, u.CompletionTokens) +
		" total=" + n(u.TotalKnown, u.TotalTokens) + " cost=" + c
	if u.CachedKnown {
		s += " cached=" + strconv.Itoa(u.CachedTokens)
	}
	if u.CacheWriteKnown {
		s += " cache_write=" + strconv.Itoa(u.CacheWriteTokens)
	}
	if u.ReasoningKnown {
		s += " reasoning=" + strconv.Itoa(u.ReasoningTokens)
	}
	return s
}

// usageJSON is the OpenAI usage object with the cache and reasoning
// details; counts are float64 on reading (some servers send 12.0).
type usageJSON struct {
	PromptTokens             *float64           `json:"prompt_tokens,omitempty"`
	CompletionTokens         *float64           `json:"completion_tokens,omitempty"`
	TotalTokens              *float64           `json:"total_tokens,omitempty"`
	Cost                     *float64           `json:"cost,omitempty"`
	PromptDetails            *promptDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionDetails        *completionDetails `json:"completion_tokens_details,omitempty"`
	PromptCacheHitTokens     *float64           `json:"prompt_cache_hit_tokens,omitempty"`     // DeepSeek
	CacheReadInputTokens     *float64           `json:"cache_read_input_tokens,omitempty"`     // Anthropic's names
	CacheCreationInputTokens *float64           `json:"cache_creation_input_tokens,omitempty"` // Anthropic's names
}

type promptDetails struct {
	CachedTokens     *float64 `json:"cached_tokens,omitempty"`
	CacheWriteTokens *float64 `json:"cache_write_tokens,omitempty"`
}

type completionDetails struct {
	ReasoningTokens *float64 `json:"reasoning_tokens,omitempty"`
}

// MarshalJSON writes the known fields only.
func (u Usage) MarshalJSON() ([]byte, error) {
	var j usageJSON
	f := func(known bool, v int) *float64 {
		if !known {
			return nil
		}
		x := float64(v)
		return &x
	}
	j.PromptTokens, j.CompletionTokens, j.TotalTokens = f(u.PromptKnown, u.PromptTokens), f(u.CompletionKnown, u.CompletionTokens), f(u.TotalKnown, u.TotalTokens)
	if u.CostKnown {
		j.Cost = &u.Cost
	}
	if u.CachedKnown || u.CacheWriteKnown {
		j.PromptDetails = &promptDetails{CachedTokens: f(u.CachedKnown, u.CachedTokens), CacheWriteTokens: f(u.CacheWriteKnown, u.CacheWriteTokens)}
	}
	if u.ReasoningKnown {
		j.CompletionDetails = &completionDetails{ReasoningTokens: f(true, u.ReasoningTokens)}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the form [Usage.MarshalJSON] writes, which is also
// the OpenAI usage object (and the cache counts of DeepSeek and of
// Anthropic-named servers): absent or null fields stay unknown.
func (u *Usage) UnmarshalJSON(b []byte) error {
	var j usageJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*u = j.usage()
	return nil
}

func (j *usageJSON) usage() Usage {
	var u Usage
	if j == nil {
		return u
	}
	set := func(p *float64, v *int, known *bool) {
		if p != nil && !*known {
			*v, *known = int(*p), true
		}
	}
	set(j.PromptTokens, &u.PromptTokens, &u.PromptKnown)
	set(j.CompletionTokens, &u.CompletionTokens, &u.CompletionKnown)
	set(j.TotalTokens, &u.TotalTokens, &u.TotalKnown)
	if !u.TotalKnown && u.PromptKnown && u.CompletionKnown {
		u.TotalTokens, u.TotalKnown = u.PromptTokens+u.CompletionTokens, true
	}
	if j.Cost != nil {
		u.Cost, u.CostKnown = *j.Cost, true
	}
	if d := j.PromptDetails; d != nil {
		set(d.CachedTokens, &u.CachedTokens, &u.CachedKnown)
		set(d.CacheWriteTokens, &u.CacheWriteTokens, &u.CacheWriteKnown)
	}
	set(j.PromptCacheHitTokens, &u.CachedTokens, &u.CachedKnown)
	set(j.CacheReadInputTokens, &u.CachedTokens, &u.CachedKnown)
	set(j.CacheCreationInputTokens, &u.CacheWriteTokens, &u.CacheWriteKnown)
	if d := j.CompletionDetails; d != nil {
		set(d.ReasoningTokens, &u.ReasoningTokens, &u.ReasoningKnown)
	}
	return u
}

// DeltaKind says what a [Delta] carries.
type DeltaKind int

// Delta kinds, in the order a stream usually produces them.
const (
	DeltaText      DeltaKind = iota + 1 // Text is a fragment of the content
	DeltaReasoning                      // Text is a fragment of the reasoning
	DeltaToolCall                       // ToolCall is a fragment of one tool call
	DeltaFinish                         // FinishReason is set
	DeltaUsage                          // Usage is set
)

var deltaNames = [...]string{"", "text", "reasoning", "tool_call", "finish", "usage"}

func (k DeltaKind) String() string {
	if k > 0 && int(k) < len(deltaNames) {
		return deltaNames[k]
	}
	return "delta_kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText encodes k by name.
func (k DeltaKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a name written by [DeltaKind.MarshalText].
func (k *DeltaKind) UnmarshalText(b []byte) error {
	for i, n := range deltaNames {
		if i > 0 && n == string(b) {
			*k = DeltaKind(i)
			return nil
		}
	}
	return fmt.Errorf("provider: unknown delta kind %q", b)
}

// ToolCallDelta is a fragment of the tool call at Index: ID and Name arrive
// once (usually first), Arguments arrive in pieces to concatenate.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Delta is one streaming event.
type Delta struct {
	Kind         DeltaKind      `json:"kind"`
	Text         string         `json:"text,omitempty"`
	ToolCall     *ToolCallDelta `json:"tool_call,omitempty"`
	FinishReason string         `json:"finish_reason,omitempty"`
	Usage        *Usage         `json:"usage,omitempty"`
}

// assembler builds a Response from Deltas: tool calls by index, text by
// concatenation. Stream implementations share it so that every provider
// assembles identically.
type assembler struct {
	content, reasoning strings.Builder
	calls              []tokenizer.ToolCall
	resp               Response
}

func (a *assembler) add(d Delta) {
	switch d.Kind {
	case DeltaText:
		a.content.WriteString(d.Text)
	case DeltaReasoning:
		a.reasoning.WriteString(d.Text)
	case DeltaToolCall:
		tc := d.ToolCall
		for len(a.calls) <= tc.Index {
			a.calls = append(a.calls, toolCall("", "", ""))
		}
		c := &a.calls[tc.Index]
		if c.ID == "" {
			c.ID = tc.ID
		}
		if c.Function.Name == "" {
			c.Function.Name = tc.Name
		}
		c.Function.Arguments += tc.Arguments
	case DeltaFinish:
		a.resp.FinishReason = d.FinishReason
	case DeltaUsage:
		a.resp.Usage = *d.Usage
	}
}

func (a *assembler) response() Response {
	r := a.resp
	r.Content = a.content.String()
	r.Reasoning = a.reasoning.String()
	if len(a.calls) > 0 {
		r.ToolCalls = slices.Clone(a.calls)
	}
	return r
}

// deltasOf splits a complete response into the Deltas a stream of it would
// produce: one per non-empty text, reasoning and tool call, then finish and
// usage (when known). Scripted and replayed streams use it.
func deltasOf(r Response) []Delta {
	var ds []Delta
	if r.Reasoning != "" {
		ds = append(ds, Delta{Kind: DeltaReasoning, Text: r.Reasoning})
	}
	if r.Content != "" {
		ds = append(ds, Delta{Kind: DeltaText, Text: r.Content})
	}
	for i, tc := range r.ToolCalls {
		ds = append(ds, Delta{Kind: DeltaToolCall, ToolCall: &ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	if r.FinishReason != "" {
		ds = append(ds, Delta{Kind: DeltaFinish, FinishReason: r.FinishReason})
	}
	if r.Usage.Any() {
		u := r.Usage
		ds = append(ds, Delta{Kind: DeltaUsage, Usage: &u})
	}
	return ds
}
