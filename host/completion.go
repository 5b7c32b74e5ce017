package host

import (
	"context"
	"fmt"
	"sync"

	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
)

// Providers: a completion's planner and model steps reach models through a
// provider.Provider, resolved by name. Host.Options.Providers wins (tests
// and embedding programs inject scripted or custom providers there); any
// other name is a preset of host/provider (openai, openrouter, deepseek,
// ollama, vllm, llamacpp) whose credential is read with Options.Getenv at
// request time.

// providerFor resolves a provider by name, with an optional model override.
func (h *Host) providerFor(name string) (provider.Provider, error) {
	if p, ok := h.opts.Providers[name]; ok {
		return p, nil
	}
	o, ok := provider.Preset(name)
	if !ok {
		return nil, fmt.Errorf("host: unknown provider %q (configure it in Options.Providers or use one of %v)", name, provider.PresetNames())
	}
	o.Getenv = h.opts.Getenv
	if o.Getenv == nil {
		o.Credential = "" // no environment: only local servers work
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if p, ok := h.presets[name]; ok {
		return p, nil
	}
	p, err := provider.NewOpenAI(&o)
	if err != nil {
		return nil, err
	}
	if h.presets == nil {
		h.presets = map[string]provider.Provider{}
	}
	h.presets[name] = p
	return p, nil
}

// providerModels answers plan model steps with real providers.
type providerModels struct {
	host  *Host
	model string // the model name sent, "" for the provider's default
}

func (m providerModels) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	p, err := m.host.providerFor(call.Provider)
	if err != nil {
		return plan.ModelResult{}, err
	}
	req := call.Request.Clone()
	if m.model != "" {
		req.Model = m.model
	}
	if err := provider.ApplyOptions(&req, withoutKey(call.Options, "max_tokens")); err != nil {
		return plan.ModelResult{}, err
	}
	var resp provider.Response
	if call.OnDelta != nil {
		resp, err = p.Stream(ctx, req, func(d provider.Delta) error {
			if d.Kind == provider.DeltaText {
				call.OnDelta(d.Text)
			}
			return nil
		})
	} else {
		resp, err = p.Complete(ctx, req)
	}
	if err != nil {
		return plan.ModelResult{}, err
	}
	return plan.ModelResult{Text: resp.Content, Reasoning: resp.Reasoning, Model: resp.Model, Usage: plan.Usage(resp.Usage),
		RequestBody: resp.RequestBody}, nil
}

func withoutKey(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// providerPlanner asks a provider for the plan.
type providerPlanner struct {
	models   providerModels
	provider string
}

func (p providerPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	res, err := p.models.Complete(ctx, plan.ModelCall{Provider: p.provider, Request: req.Request,
		Options: map[string]any{"temperature": 0.0}, Depth: req.Depth, Reason: "planner"})
	if err != nil {
		return plan.PlannerReply{}, err
	}
	return plan.PlannerReply{Text: res.Text, Usage: res.Usage, RequestBody: res.RequestBody}, nil
}

// cancelTokens are the session's cancellation tokens: rlm_cancel/1 marks a
// token and cancels every completion running under it.
type cancelTokens struct {
	mu     sync.Mutex // protects the fields below
	next   int
	tokens map[string]*cancelToken
}

type cancelToken struct {
	cancelled bool
	running   map[int]context.CancelCauseFunc
}

// ErrCancelled is the cause of a completion stopped by rlm_cancel/1.
var ErrCancelled = fmt.Errorf("host: cancelled by rlm_cancel/1")

// create returns a new active token, cancel_<n>, unique in the session.
func (t *cancelTokens) create() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	id := fmt.Sprintf("cancel_%d", t.next)
	t.get(id)
	return id
}

// cancel marks id cancelled (registering it when unknown, as upstream).
func (t *cancelTokens) cancel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := t.get(id)
	tok.cancelled = true
	for _, c := range tok.running {
		c(ErrCancelled)
	}
}

func (t *cancelTokens) get(id string) *cancelToken {
	if t.tokens == nil {
		t.tokens = map[string]*cancelToken{}
	}
	tok, ok := t.tokens[id]
	if !ok {
		tok = &cancelToken{running: map[int]context.CancelCauseFunc{}}
		t.tokens[id] = tok
	}
	return tok
}

// watch derives a context that rlm_cancel(id) cancels. The returned func
// unregisters it and must be called.
func (t *cancelTokens) watch(ctx context.Context, id string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if id == "" {
		return ctx, func() { cancel(nil) }
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := t.get(id)
	if tok.cancelled {
		cancel(ErrCancelled)
		return ctx, func() {}
	}
	t.next++
	n := t.next
	tok.running[n] = cancel
	return ctx, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(tok.running, n)
		cancel(nil)
	}
}
