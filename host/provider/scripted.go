package provider

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Step is one scripted answer: the response to return, or Err.
type Step struct {
	Response Response
	Err      error
	// Delay overrides Scripted.Delay for this call.
	Delay time.Duration
	// Deltas, when set, are what Stream delivers for this step (and the
	// response it returns is their assembly); otherwise Stream delivers the
	// deltas of Response.
	Deltas []Delta
}

// Scripted is a deterministic [Provider] for tests. Call i (0-based, in the
// order calls arrive) is answered by Steps[i]; once the steps run out, by
// Func; with neither, by [ErrScriptExhausted]. Every request is recorded
// (deep-copied) before it is answered, including ones that fail or are
// canceled, so a test can assert what the model saw: the planner prompt,
// and the messages of plan model steps alike.
//
// Each call first waits Delay (or the step's Delay), returning an [*Error]
// of kind [KindCanceled] if ctx ends first: that is how tests cancel during
// a slow model call. OnCall, when set, runs as the call starts (before the
// delay), for example to signal a test goroutine.
//
// Set the fields before the first call and do not change them after; the
// methods are then safe for concurrent use.
type Scripted struct {
	Steps  []Step
	Func   func(call int, req tokenizer.Request) (Response, error)
	Delay  time.Duration
	OnCall func(call int, req tokenizer.Request)

	mu       sync.Mutex // protects the fields below
	requests []tokenizer.Request
}

var _ Provider = (*Scripted)(nil)

// NewScripted returns a Scripted answering with the given responses in
// order.
func NewScripted(responses ...Response) *Scripted {
	s := &Scripted{}
	for _, r := range responses {
		s.Steps = append(s.Steps, Step{Response: r})
	}
	return s
}

// Requests returns copies of the requests received so far, in call order.
// The caller owns the returned slice.
func (s *Scripted) Requests() []tokenizer.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tokenizer.Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.Clone()
	}
	return out
}

// Calls returns how many calls have been received.
func (s *Scripted) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Scripted) begin(ctx context.Context, req tokenizer.Request) (int, Step, error) {
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, req.Clone())
	s.mu.Unlock()
	if s.OnCall != nil {
		s.OnCall(i, req)
	}
	var st Step
	haveStep := i < len(s.Steps)
	if haveStep {
		st = s.Steps[i]
	}
	delay := s.Delay
	if haveStep && st.Delay > 0 {
		delay = st.Delay
	}
	if err := ctx.Err(); err != nil {
		return i, st, canceled(ctx, 0)
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return i, st, canceled(ctx, 0)
		case <-t.C:
		}
	}
	switch {
	case haveStep:
		return i, st, nil
	case s.Func != nil:
		r, err := s.Func(i, req)
		return i, Step{Response: r, Err: err}, nil
	default:
		return i, st, fmt.Errorf("%w: call %d, script has %d steps", ErrScriptExhausted, i, len(s.Steps))
	}
}

// Complete answers with the next step, with the body an [Client] client
// would send for req in RequestBody (without a default model; nil if req
// cannot be encoded).
func (s *Scripted) Complete(ctx context.Context, req tokenizer.Request) (Response, error) {
	_, st, err := s.begin(ctx, req)
	if err != nil {
		return Response{}, err
	}
	if st.Err != nil {
		return Response{}, st.Err
	}
	r := st.Response
	if st.Deltas != nil {
		var a assembler
		for _, d := range st.Deltas {
			a.add(d)
		}
		r = a.response()
		r.Model, r.ID, r.ReasoningSignature = st.Response.Model, st.Response.ID, st.Response.ReasoningSignature
	}
	r.RequestBody, _ = Body(&req, false)
	return r, nil
}

// Stream answers with the next step, delivering its deltas to fn (which may
// be nil), with req's body in RequestBody as [Scripted.Complete]. A step
// with both Deltas and Err delivers the deltas and then fails, like a
// stream broken midway.
func (s *Scripted) Stream(ctx context.Context, req tokenizer.Request, fn func(Delta) error) (Response, error) {
	_, st, err := s.begin(ctx, req)
	if err != nil {
		return Response{}, err
	}
	r, err := playStream(ctx, st, fn)
	if err == nil {
		r.RequestBody, _ = Body(&req, true)
	}
	return r, err
}

// playStream delivers a step's deltas and assembles the response.
func playStream(ctx context.Context, st Step, fn func(Delta) error) (Response, error) {
	ds := st.Deltas
	if ds == nil && st.Err == nil {
		ds = deltasOf(st.Response)
	}
	var a assembler
	a.resp.Model, a.resp.ID, a.resp.ReasoningSignature = st.Response.Model, st.Response.ID, st.Response.ReasoningSignature
	for _, d := range ds {
		if ctx.Err() != nil {
			return a.response(), canceled(ctx, 0)
		}
		a.add(d)
		if fn != nil {
			if err := fn(d); err != nil {
				return a.response(), err
			}
		}
	}
	return a.response(), st.Err
}
