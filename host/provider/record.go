package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// record is one line of a recording.
type record struct {
	Call     int               `json:"call"`
	Op       string            `json:"op"` // "complete" or "stream"
	Request  tokenizer.Request `json:"request"`
	Body     string            `json:"body,omitempty"` // the bytes sent (Response.RequestBody)
	Response Response          `json:"response"`
	Deltas   []Delta           `json:"deltas,omitempty"`
	Error    *recordError      `json:"error,omitempty"`
}

// recordError is an error as recorded: the fields of an [*Error], or only
// Message for any other error.
type recordError struct {
	Kind       Kind   `json:"kind,omitempty"`
	Status     int    `json:"status,omitempty"`
	Code       string `json:"code,omitempty"`
	Type       string `json:"type,omitempty"`
	Message    string `json:"message"`
	Retryable  bool   `json:"retryable,omitempty"`
	RetryAfter int64  `json:"retry_after_ns,omitempty"`
	// PromptTokens and ContextLimit are a context_length_exceeded
	// error's counts.
	PromptTokens int `json:"prompt_tokens,omitempty"`
	ContextLimit int `json:"context_limit,omitempty"`
}

func toRecordError(err error) *recordError {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return &recordError{Kind: e.Kind, Status: e.Status, Code: e.Code, Type: e.Type, Message: e.Message,
			Retryable: e.Retryable, RetryAfter: int64(e.RetryAfter), PromptTokens: e.PromptTokens, ContextLimit: e.ContextLimit}
	}
	return &recordError{Message: err.Error()}
}

func (r *recordError) err() error {
	if r == nil {
		return nil
	}
	if r.Kind == 0 {
		return errors.New(r.Message)
	}
	e := &Error{Kind: r.Kind, Status: r.Status, Code: r.Code, Type: r.Type, Message: r.Message,
		Retryable: r.Retryable, RetryAfter: time.Duration(r.RetryAfter), PromptTokens: r.PromptTokens, ContextLimit: r.ContextLimit}
	switch r.Kind {
	case KindCanceled:
		e.Err = context.Canceled
	case KindMissingCredential:
		e.Err = ErrMissingCredential
	}
	return e
}

// body is the RequestBody of a replayed call: the recorded bytes, or for a
// recording without them the body of req; nil for a failed call.
func (rec *record) body(req *tokenizer.Request, stream bool) []byte {
	switch {
	case rec.Error != nil:
		return nil
	case rec.Body != "":
		return []byte(rec.Body)
	}
	b, _ := Body(req, stream)
	return b
}

// Recorder is a [Provider] that forwards every call to P and appends the
// request, the response (with a stream's deltas) and any error to W as one
// JSON line (the request in its wire form, and the body bytes sent).
// Credentials are never written:
// a request holds none, and the
// errors of [*Client] are redacted before they are recorded. Lines are
// written in completion order; "call" numbers calls in arrival order.
//
// A Recorder is safe for concurrent use if P is. If a line cannot be
// written, the call returns the provider's response with an error that
// says so: a lost recording should not go unnoticed.
type Recorder struct {
	p  Provider
	mu sync.Mutex // protects the fields below
	w  io.Writer
	n  int
}

var _ Provider = (*Recorder)(nil)

// NewRecorder returns a Recorder writing to w.
func NewRecorder(p Provider, w io.Writer) *Recorder { return &Recorder{p: p, w: w} }

func (r *Recorder) next() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	return r.n - 1
}

func (r *Recorder) write(rec record) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("provider: record: %w", err)
	}
	line = append(line, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(line); err != nil {
		return fmt.Errorf("provider: record: %w", err)
	}
	return nil
}

// Complete forwards to the wrapped provider and records the exchange.
func (r *Recorder) Complete(ctx context.Context, req tokenizer.Request) (Response, error) {
	call := r.next()
	req = req.Clone()
	resp, err := r.p.Complete(ctx, req)
	if werr := r.write(record{Call: call, Op: "complete", Request: req, Body: string(resp.RequestBody), Response: resp, Error: toRecordError(err)}); werr != nil && err == nil {
		return resp, werr
	}
	return resp, err
}

// Stream forwards to the wrapped provider, recording each delta delivered
// to fn.
func (r *Recorder) Stream(ctx context.Context, req tokenizer.Request, fn func(Delta) error) (Response, error) {
	call := r.next()
	req = req.Clone()
	var ds []Delta
	resp, err := r.p.Stream(ctx, req, func(d Delta) error {
		ds = append(ds, cloneDelta(d))
		if fn != nil {
			return fn(d)
		}
		return nil
	})
	if ds == nil {
		ds = []Delta{} // distinguishes "streamed nothing" from a Complete record
	}
	if werr := r.write(record{Call: call, Op: "stream", Request: req, Body: string(resp.RequestBody), Response: resp, Deltas: ds, Error: toRecordError(err)}); werr != nil && err == nil {
		return resp, werr
	}
	return resp, err
}

func cloneDelta(d Delta) Delta {
	if d.ToolCall != nil {
		tc := *d.ToolCall
		d.ToolCall = &tc
	}
	if d.Usage != nil {
		u := *d.Usage
		d.Usage = &u
	}
	return d
}

// Replayer is a [Provider] that answers from a recording made by a
// [Recorder], without any network. By default call i must send the request
// of line i; with Unordered, a call is matched to the first unused line with
// an equal request (for concurrent callers). A call that matches nothing
// returns a [*MismatchError] naming the first differing field.
//
// Set Unordered before the first call; the methods are safe for concurrent
// use.
type Replayer struct {
	Unordered bool

	mu      sync.Mutex // protects the fields below
	records []record
	used    []bool
	next    int // first unused line (ordered mode)
	calls   int
}

var _ Provider = (*Replayer)(nil)

// NewReplayer reads a whole recording. Blank lines are skipped.
func NewReplayer(r io.Reader) (*Replayer, error) {
	rp := &Replayer{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("provider: replay: line %d: %w", n, err)
		}
		if rec.Op != "complete" && rec.Op != "stream" {
			return nil, fmt.Errorf("provider: replay: line %d: unknown op %q", n, rec.Op)
		}
		rp.records = append(rp.records, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("provider: replay: %w", err)
	}
	rp.used = make([]bool, len(rp.records))
	return rp, nil
}

// Remaining returns how many recorded calls have not been replayed.
func (r *Replayer) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, u := range r.used {
		if !u {
			n++
		}
	}
	return n
}

func (r *Replayer) take(op string, req tokenizer.Request) (record, error) {
	got, err := canonical(req)
	if err != nil {
		return record{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	call := r.calls
	r.calls++
	if !r.Unordered {
		for r.next < len(r.records) && r.used[r.next] {
			r.next++
		}
		if r.next == len(r.records) {
			return record{}, &MismatchError{Call: call, Want: fmt.Sprintf("no recorded call left (recording has %d)", len(r.records))}
		}
		rec := r.records[r.next]
		want, err := canonical(rec.Request)
		if err != nil {
			return record{}, err
		}
		if rec.Op != op {
			return record{}, &MismatchError{Call: call, Path: "op", Got: strconv.Quote(op), Want: strconv.Quote(rec.Op)}
		}
		if path, g, w, same := diff("request", got, want); !same {
			return record{}, &MismatchError{Call: call, Path: path, Got: g, Want: w}
		}
		r.used[r.next] = true
		return rec, nil
	}
	var first *MismatchError
	for i, rec := range r.records {
		if r.used[i] {
			continue
		}
		want, err := canonical(rec.Request)
		if err != nil {
			return record{}, err
		}
		path, g, w, same := diff("request", got, want)
		if same && rec.Op == op {
			r.used[i] = true
			return rec, nil
		}
		if first == nil {
			if same {
				path, g, w = "op", strconv.Quote(op), strconv.Quote(rec.Op)
			}
			first = &MismatchError{Call: call, Path: path, Got: g, Want: w}
		}
	}
	if first == nil {
		return record{}, &MismatchError{Call: call, Want: fmt.Sprintf("no recorded call left (recording has %d)", len(r.records))}
	}
	return record{}, first // the difference from the first unused line
}

// Complete answers with the matching recorded response or error, with
// the body of req in RequestBody.
func (r *Replayer) Complete(ctx context.Context, req tokenizer.Request) (Response, error) {
	if ctx.Err() != nil {
		return Response{}, canceled(ctx, 0)
	}
	rec, err := r.take("complete", req)
	if err != nil {
		return Response{}, err
	}
	rec.Response.RequestBody = rec.body(&req, false)
	return rec.Response, rec.Error.err()
}

// Stream delivers the recorded deltas to fn and returns the recorded
// response or error.
func (r *Replayer) Stream(ctx context.Context, req tokenizer.Request, fn func(Delta) error) (Response, error) {
	if ctx.Err() != nil {
		return Response{}, canceled(ctx, 0)
	}
	rec, err := r.take("stream", req)
	if err != nil {
		return Response{}, err
	}
	rec.Response.RequestBody = rec.body(&req, true)
	for _, d := range rec.Deltas {
		if ctx.Err() != nil {
			return Response{}, canceled(ctx, 0)
		}
		if fn != nil {
			if err := fn(d); err != nil {
				return rec.Response, err
			}
		}
	}
	return rec.Response, rec.Error.err()
}

// canonical is a request as generic JSON values, for comparison.
func canonical(req tokenizer.Request) (any, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("provider: replay: %w", err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("provider: replay: %w", err)
	}
	return v, nil
}

// diff finds the first path where two JSON values differ, visiting object
// keys in sorted order.
func diff(path string, got, want any) (string, string, string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, dup := w[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, gs, ws, same := diff(path+"."+k, g[k], w[k]); !same {
				return p, gs, ws, false
			}
		}
		return "", "", "", true
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			if p, gs, ws, same := diff(path+"["+strconv.Itoa(i)+"]", g[i], w[i]); !same {
				return p, gs, ws, false
			}
		}
		if len(w) == len(g) {
			return "", "", "", true
		}
		return path + ".length", strconv.Itoa(len(g)), strconv.Itoa(len(w)), false
	default:
		if got == want {
			return "", "", "", true
		}
	}
	return path, jsonText(got), jsonText(want), false
}

func jsonText(v any) string {
	if v == nil {
		return "absent"
	}
	b, _ := json.Marshal(v)
	const n = 120
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
