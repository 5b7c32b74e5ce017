package host

import (
	"context"
	"fmt"
	"sync"

	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Providers: a completion's planner and model steps reach models through a
// provider.Provider. A call names one with provider(Name) or
// provider(Name, Settings), or names none and gets the default. Resolution
// (Host.Provider) takes, in order: Options.Providers[Name] (tests and
// embedding programs inject scripted or custom providers there); else the
// layers of provider.Resolve: the call's settings, the configuration file
// (Options.ProviderConfig), the environment's conventions and the preset.
// Keys are read with Options.Getenv when each request is made, never
// before and never kept.

// Resolved is a call's provider: its name (what model(Name) steps and
// capabilities say), the client, and whether planners using it are asked
// for plans in the plan's JSON schema.
type Resolved struct {
	Name             string
	Provider         provider.Provider
	StructuredOutput bool
	SchemaFree       bool // see provider.Resolved
	// Credential is the environment variable the key is read from when
	// each request is made; "" when no key is sent.
	Credential string
}

// Provider resolves the provider called name with the call's settings
// (name "" means the default: the configuration file's, else the first of
// lib's default_provider/1 whose key is in the environment). A provider of
// Options.Providers is used as it is, with call.Model as its model when
// set. Configuration problems are *provider.ConfigError, in the user's
// words. The lead's managed turn and the CLI use it as the predicates do.
func (h *Host) Provider(ctx context.Context, name string, call provider.Settings) (Resolved, error) {
	if name == "" {
		defaults, err := h.defaultProviders(ctx)
		if err != nil {
			return Resolved{}, err
		}
		if name, err = provider.DefaultName(h.opts.ProviderConfig, defaults, h.opts.Getenv); err != nil {
			return Resolved{}, err
		}
	}
	return h.resolve(name, call)
}

func (h *Host) resolve(name string, call provider.Settings) (Resolved, error) {
	if p, ok := h.opts.Providers[name]; ok {
		if call.Model != "" {
			p = withModel{p, call.Model}
		}
		return Resolved{Name: name, Provider: p}, nil
	}
	r, err := provider.Resolve(name, call, h.opts.ProviderConfig, h.opts.Getenv)
	if err != nil {
		return Resolved{}, err
	}
	// A client per call is cheap (no I/O); connections are pooled by the
	// shared transport.
	c, err := provider.NewClient(&r.Options)
	if err != nil {
		return Resolved{}, fmt.Errorf("host: provider %s: %w", name, err) // Resolve validated: a bug
	}
	return Resolved{Name: name, Provider: c, StructuredOutput: r.StructuredOutput, SchemaFree: r.SchemaFree, Credential: r.Options.Credential}, nil
}

// defaultProviders reads lib's default_provider/1 once, for Go callers.
// Prolog calls read it in their own session (a program may change it).
func (h *Host) defaultProviders(ctx context.Context) ([]string, error) {
	h.defaultNames.once.Do(func() {
		s, err := h.NewSession(ctx)
		if err == nil {
			var bs []prolog.Binding
			if bs, err = s.in.Once(ctx, "findall(N, default_provider(N), Ns)"); err == nil {
				for _, b := range bs {
					if v, _ := prolog.Value(b.Value, nil); b.Name == "Ns" {
						ns, _ := v.([]any)
						for _, n := range ns {
							h.defaultNames.names = append(h.defaultNames.names, fmt.Sprint(n))
						}
					}
				}
			}
		}
		h.defaultNames.err = err
	})
	return h.defaultNames.names, h.defaultNames.err
}

// withModel is an injected provider whose requests name a model by default.
type withModel struct {
	provider.Provider
	model string
}

func (w withModel) Complete(ctx context.Context, req tokenizer.Request) (provider.Response, error) {
	if req.Model == "" {
		req.Model = w.model
	}
	return w.Provider.Complete(ctx, req)
}

func (w withModel) Stream(ctx context.Context, req tokenizer.Request, fn func(provider.Delta) error) (provider.Response, error) {
	if req.Model == "" {
		req.Model = w.model
	}
	return w.Provider.Stream(ctx, req, fn)
}

// providerModels answers a call's planner and model steps with its one
// provider. With onDelta set, calls stream and each delta is passed on.
type providerModels struct {
	r       Resolved
	onDelta func(provider.Delta) error
}

func (m providerModels) Complete(ctx context.Context, call plan.ModelCall) (plan.ModelResult, error) {
	if call.Provider != m.r.Name {
		return plan.ModelResult{}, fmt.Errorf("host: no provider %q in this call (it has %s)", call.Provider, m.r.Name)
	}
	req := call.Request.Clone()
	if err := provider.ApplyOptions(&req, withoutKey(call.Options, "max_tokens")); err != nil {
		return plan.ModelResult{}, err
	}
	var resp provider.Response
	var err error
	if m.onDelta != nil || call.OnDelta != nil {
		resp, err = m.r.Provider.Stream(ctx, req, func(d provider.Delta) error {
			if call.OnDelta != nil && d.Kind == provider.DeltaText {
				call.OnDelta(d.Text)
			}
			if m.onDelta != nil {
				return m.onDelta(d)
			}
			return nil
		})
	} else {
		resp, err = m.r.Provider.Complete(ctx, req)
	}
	if err != nil {
		return plan.ModelResult{}, err
	}
	return plan.ModelResult{Text: resp.Content, Reasoning: resp.Reasoning, ReasoningSignature: resp.ReasoningSignature, Model: resp.Model, ToolCalls: resp.ToolCalls,
		Usage: plan.Usage(resp.Usage), FinishReason: resp.FinishReason, RequestBody: resp.RequestBody}, nil
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

// providerPlanner asks the call's provider for the plan, at temperature 0.
// The request arrives composed (the plan schema already in its
// response_format when the provider supports structured output).
type providerPlanner struct{ models providerModels }

func (p providerPlanner) Plan(ctx context.Context, req plan.PlannerRequest) (plan.PlannerReply, error) {
	res, err := p.models.Complete(ctx, plan.ModelCall{Provider: p.models.r.Name, Request: req.Request,
		Options: map[string]any{"temperature": 0.0}, Depth: req.Depth, Reason: "planner", OnDelta: req.OnDelta})
	if err != nil {
		return plan.PlannerReply{}, err
	}
	return plan.PlannerReply{Text: res.Text, Usage: res.Usage, Model: res.Model, FinishReason: res.FinishReason, RequestBody: res.RequestBody}, nil
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

// cancel marks id cancelled. It reports false for a token create never
// made (upstream registered it, so a typo cancelled nothing in silence).
func (t *cancelTokens) cancel(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, known := t.tokens[id]
	if !known {
		return false
	}
	tok.cancelled = true
	for _, c := range tok.running {
		c(ErrCancelled)
	}
	return true
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
