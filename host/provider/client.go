package provider

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Options configures a [Client]. The zero value (or a nil *Options)
// talks to api.openai.com without a credential, which the server will
// refuse; set at least Credential and Getenv for a hosted provider.
type Options struct {
	// API is the wire format, a [Dialect]'s name: "openai" (chat
	// completions, "" too) or "anthropic" (the Messages API).
	API string

	// BaseURL is the API root, such as https://api.openai.com/v1,
	// https://api.anthropic.com/v1, https://openrouter.ai/api/v1,
	// https://api.deepseek.com/v1, http://127.0.0.1:11434/v1 (Ollama),
	// http://127.0.0.1:8000/v1 (vLLM) or http://127.0.0.1:18080/v1
	// (llama.cpp's llama-server). Requests go to BaseURL + the dialect's
	// path ("/chat/completions", "/messages"); a BaseURL already ending in
	// it is used as is. Zero means https://api.openai.com/v1 (for
	// anthropic, https://api.anthropic.com/v1).
	BaseURL string

	// Model is the model used when a [tokenizer.Request] names none. Zero
	// means the request's own: a request with no model is sent without
	// one, which servers of a single model (llama.cpp's, vLLM's) accept
	// and others refuse with their own error.
	Model string

	// Credential is the name of the environment variable that holds the API
	// key, such as OPENAI_API_KEY. The key is read through Getenv at the
	// start of every Complete or Stream call, sent as "Authorization:
	// Bearer" (anthropic: "x-api-key"), and never stored in the client, an
	// error, a String() or a recording. An unset or empty variable fails
	// the call with [KindMissingCredential]. Zero means no credential: no
	// key is sent (local servers).
	Credential string

	// Getenv reads the credential (os.Getenv in production, a map lookup in
	// tests). It is required when Credential is set: this package never
	// reads the environment itself. Like Now and Rand, it must be safe for
	// concurrent use.
	Getenv func(string) string

	// HTTPClient sends the requests. Zero means a client with
	// http.DefaultTransport (which honors HTTPS_PROXY and friends) and no
	// client-level timeout (Timeout applies).
	HTTPClient *http.Client

	// Timeout bounds one HTTP attempt. For Complete it covers the whole
	// exchange; for Stream it bounds the wait for the response headers and
	// then each gap between two stream lines, so long generations are not
	// cut while they progress. Expiry is [KindTimeout]. Zero means 60s.
	Timeout time.Duration

	// MaxRetries is how many times a retryable failure (429, 408, 409, 5xx,
	// transport error, timeout) is retried, with exponential backoff and
	// jitter, at least as long as the server's Retry-After. A stream is
	// retried only if nothing was delivered yet. Zero means 2; negative
	// means no retries.
	MaxRetries int

	// RetryBaseDelay is the first backoff; attempt n waits about
	// RetryBaseDelay·2^(n-1), jittered to between half and all of that.
	// Zero means 500ms.
	RetryBaseDelay time.Duration

	// RetryMaxDelay caps one backoff. A Retry-After longer than this is not
	// waited for: the error is returned with its RetryAfter set. Zero means
	// 20s.
	RetryMaxDelay time.Duration

	// Headers are sent with every request, after the defaults (for example
	// OpenRouter's HTTP-Referer and X-Title). Authorization is rejected:
	// secrets go through Credential. Values are redacted from errors and
	// recordings like the key, since some servers take keys this way.
	Headers map[string]string

	// AllowedOptions lists the [tokenizer.Request].Extra keys this provider accepts
	// (llama.cpp's "grammar", OpenRouter's "provider", ...). A request with
	// another Extra key fails with [KindInvalidRequest] rather than being
	// silently stripped. Zero means [DefaultAllowedOptions].
	AllowedOptions []string

	// UserAgent is the User-Agent header. Zero means "rlmpl-provider/0.1".
	UserAgent string

	// MaxResponseBytes bounds a response body (a whole stream included).
	// Zero means 32 MiB.
	MaxResponseBytes int64

	// Now reads the clock for HTTP-date Retry-After values (only: timeouts
	// and backoff waits use real timers). Zero means time.Now.
	Now func() time.Time

	// Rand returns a number in [0, 1) for backoff jitter. Zero means
	// math/rand/v2's Float64.
	Rand func() float64

	// MaxTokens is the generation cap sent when a request sets none, for
	// a dialect that requires one (anthropic). Zero means 4096.
	MaxTokens int

	// CacheTTL is how long a provider that caches at the request's marked
	// breakpoints ([tokenizer.Request].Cache) keeps them, when the request
	// does not say: "" its default (Anthropic: 5 minutes), "5m" or "1h".
	CacheTTL string

	// Prices give each response's Usage its cost (Usage.Cost, CostKnown)
	// for the model named in the request body: when the table prices that
	// model and the provider reported the prompt and completion counts,
	// the table's cost replaces any the provider reported (receipts price
	// their calls by the same rule). Nil prices nothing: only a cost the
	// provider reports (OpenRouter's) is known.
	Prices Prices
}

// DefaultAllowedOptions returns the Extra keys allowed when
// Options.AllowedOptions is empty for the openai dialect: the standard
// OpenAI generation options that have no typed [tokenizer.Request] field.
// (The anthropic dialect's are metadata, service_tier, thinking,
// tool_choice and top_k.) The caller owns the returned slice.
func DefaultAllowedOptions() []string {
	return OpenAIChat.allowedOptions()
}

// defaultMaxTokens is Options.MaxTokens when zero.
const defaultMaxTokens = 4096

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	d, ok := DialectNamed(c.API)
	if !ok {
		return c, fmt.Errorf("provider: Options.API: must be one of %s (got %q)", strings.Join(APIs(), ", "), c.API)
	}
	c.API = d.Name()
	if c.BaseURL == "" {
		c.BaseURL = "https://api.openai.com/v1"
		if c.API == APIAnthropic {
			c.BaseURL = "https://api.anthropic.com/v1"
		}
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return c, errors.New("provider: Options.BaseURL: not a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("provider: Options.BaseURL: must be an http or https URL (got %q)", u.Redacted())
	}
	if c.Credential != "" {
		if !envName.MatchString(c.Credential) {
			// NB: never echo the value: it may be a pasted key.
			return c, errors.New("provider: Options.Credential: must be an environment variable name such as OPENAI_API_KEY, not a key")
		}
		if c.Getenv == nil {
			return c, errors.New("provider: Options.Getenv: required when Credential is set")
		}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.Timeout < 0 {
		return c, fmt.Errorf("provider: Options.Timeout: must be >= 0 (got %v)", c.Timeout)
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 2
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.RetryBaseDelay < 0 || c.RetryMaxDelay < 0 {
		return c, errors.New("provider: Options.RetryBaseDelay, RetryMaxDelay: must be >= 0")
	}
	if c.RetryBaseDelay == 0 {
		c.RetryBaseDelay = 500 * time.Millisecond
	}
	if c.RetryMaxDelay == 0 {
		c.RetryMaxDelay = 20 * time.Second
	}
	hs := make(map[string]string, len(c.Headers))
	for k, v := range c.Headers {
		if strings.EqualFold(k, "Authorization") {
			return c, errors.New("provider: Options.Headers: Authorization is not allowed (use Credential)")
		}
		hs[http.CanonicalHeaderKey(k)] = v
	}
	c.Headers = hs
	if c.MaxTokens < 0 {
		return c, fmt.Errorf("provider: Options.MaxTokens: must be >= 0 (got %d)", c.MaxTokens)
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = defaultMaxTokens
	}
	if !validTTL(c.CacheTTL) {
		return c, fmt.Errorf("provider: Options.CacheTTL: must be 5m or 1h (got %q)", c.CacheTTL)
	}
	if len(c.AllowedOptions) == 0 {
		c.AllowedOptions = d.allowedOptions()
	} else {
		c.AllowedOptions = slices.Clone(c.AllowedOptions)
		for _, k := range c.AllowedOptions {
			if owner := extraOwner(k); owner != "" {
				return c, fmt.Errorf("provider: Options.AllowedOptions: %q is set through %s", k, owner)
			}
		}
	}
	sort.Strings(c.AllowedOptions)
	if c.UserAgent == "" {
		c.UserAgent = "rlmpl-provider/0.1"
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = 32 << 20
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	return c, nil
}

// String renders the options without secrets (the credential appears as
// env(NAME), header values are elided).
func (o Options) String() string {
	cred := "none"
	if o.Credential != "" {
		cred = "env(" + o.Credential + ")"
	}
	keys := make([]string, 0, len(o.Headers))
	for k := range o.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	base := o.BaseURL
	if u, err := url.Parse(base); err == nil {
		base = u.Redacted() // a password in the URL is a secret too
	}
	api := o.API
	if api == "" {
		api = APIOpenAI
	}
	return fmt.Sprintf("provider.Options{API: %s, BaseURL: %s, Model: %q, Credential: %s, Timeout: %v, MaxRetries: %d, Headers: %v, AllowedOptions: %v}",
		api, base, o.Model, cred, o.Timeout, o.MaxRetries, keys, o.AllowedOptions)
}

// validTTL reports whether ttl is a cache time to live a provider names.
func validTTL(ttl string) bool { return ttl == "" || ttl == "5m" || ttl == "1h" }

// Client is an HTTP client of a model provider in one [Dialect] (POST
// /chat/completions, POST /messages). It is immutable after [NewClient]
// and safe for concurrent use.
type Client struct {
	opts     Options
	dialect  Dialect
	endpoint string
	allowed  map[string]bool
}

var _ Provider = (*Client)(nil)

// NewClient validates the options, fills their defaults and returns a
// client of the dialect Options.API names. A nil o is the zero Options.
func NewClient(o *Options) (*Client, error) {
	opts, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	d, _ := DialectNamed(opts.API)
	c := &Client{opts: opts, dialect: d, endpoint: endpointOf(opts.BaseURL, d), allowed: make(map[string]bool, len(opts.AllowedOptions))}
	for _, k := range opts.AllowedOptions {
		c.allowed[k] = true
	}
	return c, nil
}

// Options returns the effective options, defaults filled in. The Headers
// and Prices maps and the AllowedOptions slice are copies.
func (c *Client) Options() Options {
	o := c.opts
	o.Headers = make(map[string]string, len(c.opts.Headers))
	for k, v := range c.opts.Headers {
		o.Headers[k] = v
	}
	o.AllowedOptions = slices.Clone(c.opts.AllowedOptions)
	o.Prices = maps.Clone(c.opts.Prices)
	return o
}

// String describes the client without secrets.
func (c *Client) String() string {
	ep := c.endpoint
	if u, err := url.Parse(ep); err == nil {
		ep = u.Redacted()
	}
	return "provider.Client(" + ep + ", " + c.opts.String() + ")"
}

// Dialect returns the client's wire format.
func (c *Client) Dialect() Dialect { return c.dialect }

// Complete sends req and returns the normalized first choice, with the
// body it sent in RequestBody. Errors are [*Error]s: see [Kind] for the
// cases. Retryable failures are retried first (Options.MaxRetries).
func (c *Client) Complete(ctx context.Context, req tokenizer.Request) (Response, error) {
	return c.do(ctx, req, nil, false)
}

// Stream sends req with stream:true and stream_options.include_usage, and
// calls fn for each [Delta] as the server-sent events arrive; fn may be nil.
// Tool-call fragments are delivered as they come and assembled by index
// into the returned [Response]. A mid-stream provider error, a malformed
// chunk or a stream that ends without [DONE] is an [*Error]; the partial
// response is returned with it.
func (c *Client) Stream(ctx context.Context, req tokenizer.Request, fn func(Delta) error) (Response, error) {
	if fn == nil {
		fn = func(Delta) error { return nil }
	}
	return c.do(ctx, req, fn, true)
}

// canceled is the error of a call whose context ended; its message says
// why (the context's cause: a time limit, an interrupt signal).
func canceled(ctx context.Context, attempts int) *Error {
	return &Error{Kind: KindCanceled, Message: context.Cause(ctx).Error(), Attempts: attempts, Err: ctx.Err()}
}

// do encodes req once and sends it, retrying as configured; a success
// carries the body in RequestBody (every attempt sent the same bytes).
func (c *Client) do(ctx context.Context, req tokenizer.Request, fn func(Delta) error, stream bool) (Response, error) {
	if ctx.Err() != nil {
		return Response{}, canceled(ctx, 0)
	}
	req = req.Clone() // prepared below: the caller's stays as it is
	body, err := c.encode(&req, stream)
	if err != nil {
		return Response{}, err
	}
	resp, err := c.send(ctx, body, &req, fn, stream)
	if err == nil {
		resp.RequestBody = body
	}
	return resp, err
}

// send posts body, the encoding of req, until an attempt succeeds or may
// not be retried.
func (c *Client) send(ctx context.Context, body []byte, req *tokenizer.Request, fn func(Delta) error, stream bool) (Response, error) {
	var key string
	if c.opts.Credential != "" {
		key = c.opts.Getenv(c.opts.Credential)
		if key == "" {
			return Response{}, MissingCredential(c.opts.Credential)
		}
	}
	sec := secretsOf(key, c.opts.Headers)
	for attempt := 1; ; attempt++ {
		a := attemptState{c: c, ctx: ctx, key: key, secrets: sec, model: req.Model, fn: fn}
		resp, err := a.run(body, stream)
		if a.sent {
			traceAttempt(ctx, Attempt{Body: body, Dialect: c.dialect.Name(), Request: req, Stream: stream, Status: a.status, Err: err})
		}
		if err == nil {
			return resp, nil
		}
		pe, ours := err.(*Error)
		if !ours {
			return resp, err // the stream callback's own error, unchanged
		}
		pe.Attempts = attempt
		if !pe.Retryable || a.delivered || attempt > c.opts.MaxRetries {
			return resp, pe
		}
		delay, ok := c.backoff(attempt, pe.RetryAfter)
		if !ok {
			return resp, pe
		}
		if dl, has := ctx.Deadline(); has && time.Until(dl) < delay {
			return resp, pe // waiting would outlive the caller
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, canceled(ctx, attempt)
		case <-t.C:
		}
	}
}

// backoff returns the wait before retry number attempt (1-based), or false
// when the server asked for longer than RetryMaxDelay.
func (c *Client) backoff(attempt int, retryAfter time.Duration) (time.Duration, bool) {
	if retryAfter > c.opts.RetryMaxDelay {
		return 0, false
	}
	d := c.opts.RetryBaseDelay
	for i := 1; i < attempt && d < c.opts.RetryMaxDelay; i++ {
		d *= 2
	}
	d = min(d, c.opts.RetryMaxDelay)
	d = d/2 + time.Duration(c.opts.Rand()*float64(d/2))
	return max(d, retryAfter), true
}

// parseRetryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or
// an HTTP date).
func parseRetryAfter(h http.Header, now func() time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now()); d > 0 {
			return d
		}
	}
	return 0
}

// encode validates req, sets its model (Options.Model when it names
// none) and what the dialect requires, checks Extra against the allowed
// options, and renders the body ([Dialect.Body]).
func (c *Client) encode(req *tokenizer.Request, stream bool) ([]byte, error) {
	if err := Validate(req); err != nil {
		return nil, err
	}
	if req.Model == "" {
		req.Model = c.opts.Model // still "" for servers that serve one model
	}
	c.dialect.prepare(req, &c.opts)
	for k := range req.Extra {
		if !c.allowed[k] {
			return nil, invalidf("extra."+k, "is not an allowed option for this provider (allowed: %s)",
				strings.Join(c.opts.AllowedOptions, ", "))
		}
	}
	return c.dialect.Body(req, stream)
}

// snippet quotes the start of a body for an error message. It redacts
// before it truncates, so no prefix of a key cut at the limit survives.
func snippet(body []byte, sec secrets) string {
	const n = 200
	s := redact(string(body), sec)
	if len(s) > n {
		s = s[:n] + "..."
	}
	return strconv.Quote(s)
}

// attemptState is one HTTP exchange.
type attemptState struct {
	c         *Client
	ctx       context.Context // the caller's
	key       string
	secrets   secrets // key and the header values, for redaction
	model     string
	fn        func(Delta) error
	delivered bool // a Delta reached fn: the attempt may not be retried
	sent      bool // the request was handed to the HTTP client
	status    int  // the response's status, 0 before one arrived
}

// Attempt is one HTTP request of a call, as [WithAttemptTrace] reports it.
type Attempt struct {
	Body []byte // the exact bytes sent: the same for every attempt of a call
	// Dialect names the wire format of Body, and Request is what it
	// encodes: the call's request with what the client set (its default
	// model, a dialect's generation cap and cache lifetime), so that a
	// receipt can render Body again ([Dialect.Body]). Shared by the
	// attempts of a call: read it, do not change it.
	Dialect string
	Request *tokenizer.Request
	Stream  bool  // Body is a stream's
	Status  int   // the HTTP status, 0 when no response arrived
	Err     error // why the attempt failed ([*Error], or fn's own error); nil for a success
}

type attemptTraceKey struct{}

// WithAttemptTrace returns a context under which [Client.Complete] and
// [Client.Stream] call fn after each HTTP request they send, failed or not,
// in order. Like net/http/httptrace, it lets a caller several layers up (a
// turn's receipt) see every request that reached the wire, including the
// retries a call's single result hides. fn runs on the calling goroutine.
func WithAttemptTrace(ctx context.Context, fn func(Attempt)) context.Context {
	return context.WithValue(ctx, attemptTraceKey{}, fn)
}

func traceAttempt(ctx context.Context, a Attempt) {
	if fn, ok := ctx.Value(attemptTraceKey{}).(func(Attempt)); ok {
		fn(a)
	}
}

var errAttemptTimeout = errors.New("provider: request timeout")

// priced is u with its cost from Options.Prices, when the table prices
// the requested model and u has the counts a price needs.
func (a *attemptState) priced(u Usage) Usage {
	if p, ok := a.c.opts.Prices.Lookup(a.model); ok {
		if cost, ok := p.Cost(u); ok {
			u.Cost, u.CostKnown = cost, true
		}
	}
	return u
}

func (a *attemptState) run(body []byte, stream bool) (Response, error) {
	o := &a.c.opts
	actx, cancel := context.WithCancelCause(a.ctx)
	defer cancel(nil)
	timer := time.AfterFunc(o.Timeout, func() { cancel(errAttemptTimeout) })
	defer timer.Stop()

	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, a.c.endpoint, bytes.NewReader(body))
	if err != nil {
		return Response{}, &Error{Kind: KindTransport, Message: redact(err.Error(), a.secrets)}
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", o.UserAgent)
	// W3C trace context: a traceparent header when the caller's context
	// carries a recording span (tracing on), nothing otherwise.
	if sc := trace.SpanContextFromContext(actx); sc.IsValid() {
		propagation.TraceContext{}.Inject(actx, propagation.HeaderCarrier(h))
	}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	a.c.dialect.header(h, a.key)
	a.sent = true
	res, err := o.HTTPClient.Do(hreq)
	if err != nil {
		return Response{}, a.transportErr(actx, err, 0)
	}
	defer res.Body.Close()
	a.status = res.StatusCode
	lim := &limitReader{r: res.Body, n: o.MaxResponseBytes}
	ok2xx := res.StatusCode >= 200 && res.StatusCode < 300
	var rd io.Reader = lim
	if stream && ok2xx {
		br := bufio.NewReader(lim)
		if isEventStream(res.Header.Get("Content-Type"), br) {
			return a.readStream(actx, br, res.StatusCode, timer)
		}
		rd = br
	}
	data, err := io.ReadAll(rd)
	if err != nil {
		return Response{}, a.readErr(actx, err, res.StatusCode)
	}
	if !ok2xx {
		return Response{}, statusError(res, data, a.secrets, o.Now)
	}
	r, err := a.c.dialect.decodeResponse(data, res.StatusCode, a.secrets)
	if err != nil {
		return Response{}, err
	}
	if r.Model == "" {
		r.Model = a.model
	}
	r.Usage = a.priced(r.Usage)
	if !stream {
		return r, nil
	}
	// A server that ignored stream:true answered with one JSON body:
	// deliver it as deltas.
	for _, d := range deltasOf(r) {
		a.delivered = true
		if err := a.fn(d); err != nil {
			return r, err
		}
	}
	return r, nil
}

func statusError(res *http.Response, data []byte, sec secrets, now func() time.Time) *Error {
	e := &Error{Kind: KindHTTPStatus, Status: res.StatusCode, Retryable: retryableStatus(res.StatusCode),
		RetryAfter: parseRetryAfter(res.Header, now)}
	if msg, typ, code, ok := parseErrorBody(data); ok {
		e.Kind, e.Message, e.Type, e.Code = KindProviderError, redact(msg, sec), redact(typ, sec), redact(code, sec)
		switch typ {
		case "overloaded_error", "api_error", "rate_limit_error": // Anthropic's, whatever the status
			e.Retryable = true
		}
		contextLength(e)
		return e
	}
	e.Message = http.StatusText(res.StatusCode)
	if s := strings.TrimSpace(string(data)); s != "" {
		e.Message += ": " + snippet([]byte(s), sec)
	}
	return e
}

// isEventStream reports whether a 2xx answer to a stream request is an
// event stream: labeled text/event-stream, or (for servers that mislabel
// it) not starting with a JSON object.
func isEventStream(contentType string, br *bufio.Reader) bool {
	if strings.HasPrefix(strings.ToLower(contentType), "text/event-stream") {
		return true
	}
	for {
		b, err := br.Peek(1)
		if err != nil {
			return false // empty or failed: let the JSON path report it
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte()
		case '{':
			return false
		default:
			return true
		}
	}
}

// errTooLarge is returned by limitReader past Options.MaxResponseBytes.
var errTooLarge = errors.New("provider: response too large")

// limitReader is io.LimitReader that fails, rather than ends, at the limit.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n+1] // one byte more than allowed, to detect the excess
	}
	n, err := l.r.Read(p)
	if int64(n) > l.n {
		n, err = int(l.n), errTooLarge
	}
	l.n -= int64(n)
	return n, err
}

// readErr classifies a failure while reading the body.
func (a *attemptState) readErr(actx context.Context, err error, status int) *Error {
	if errors.Is(err, errTooLarge) || errors.Is(err, bufio.ErrTooLong) {
		return &Error{Kind: KindMalformedResponse, Status: status,
			Message: fmt.Sprintf("response exceeds %d bytes (Options.MaxResponseBytes)", a.c.opts.MaxResponseBytes)}
	}
	return a.transportErr(actx, err, status)
}

// transportErr classifies a failure to send or read: the caller's
// cancellation wins, then our own timeout, then a network timeout, then a
// plain transport error.
func (a *attemptState) transportErr(actx context.Context, err error, status int) *Error {
	if a.ctx.Err() != nil {
		return canceled(a.ctx, 0)
	}
	if context.Cause(actx) == errAttemptTimeout {
		return &Error{Kind: KindTimeout, Status: status, Retryable: true,
			Message: fmt.Sprintf("no response within %v", a.c.opts.Timeout)}
		// NB: no context.DeadlineExceeded cause: the host reads that as the
		// caller's own time limit, which this is not.
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Status: status, Retryable: true, Message: redact(err.Error(), a.secrets), Err: redactErr(err, a.secrets)}
	}
	return &Error{Kind: KindTransport, Status: status, Retryable: true, Message: redact(err.Error(), a.secrets), Err: redactErr(err, a.secrets)}
}
