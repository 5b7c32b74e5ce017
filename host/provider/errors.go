package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrMissingCredential is wrapped by the [*Error] of kind
// [KindMissingCredential]: the credential's environment variable was unset
// or empty when the request was made. No request was sent.
var ErrMissingCredential = errors.New("provider: missing credential")

// MissingCredential is the [*Error] of a call whose credential's
// environment variable (name) is unset or empty. A caller that resolves a
// provider before writing anything (the CLI) reports it up front, in the
// words a request would.
func MissingCredential(name string) *Error {
	return &Error{Kind: KindMissingCredential, Credential: name,
		Message: "environment variable " + name + " is unset or empty", Err: ErrMissingCredential}
}

// ErrScriptExhausted is returned by [*Scripted] when it receives more calls
// than it has steps and has no Func.
var ErrScriptExhausted = errors.New("provider: scripted: no response left")

// ErrReplayMismatch is wrapped by the [*MismatchError] a [*Replayer] returns
// when a request differs from the recorded one, or no recording is left.
var ErrReplayMismatch = errors.New("provider: replay mismatch")

// Kind classifies an [*Error]. Its String form is the snake_case atom the
// Prolog side sees as the kind of a provider_error record.
type Kind int

// Error kinds.
const (
	// KindHTTPStatus: a non-2xx status without a recognizable error body.
	KindHTTPStatus Kind = iota + 1
	// KindProviderError: the provider reported an error in the body
	// ({"error":{...}}), with any status, or mid-stream.
	KindProviderError
	// KindTransport: the request could not be sent or the response could
	// not be read (connection refused, reset, truncated body).
	KindTransport
	// KindTimeout: the per-request timeout (Options.Timeout) elapsed.
	KindTimeout
	// KindMalformedResponse: a 2xx answer that is not a usable chat
	// completion (invalid JSON, no choices, a stream without [DONE]).
	KindMalformedResponse
	// KindMissingCredential: see [ErrMissingCredential].
	KindMissingCredential
	// KindCanceled: the caller's context was canceled or its deadline
	// passed. The error unwraps to ctx.Err().
	KindCanceled
	// KindInvalidRequest: the request failed validation ([Validate]) or
	// names no model; nothing was sent.
	KindInvalidRequest
	// KindContextLength: the provider refused the request as longer than
	// the model's context window (Anthropic's "prompt is too long",
	// OpenAI's context_length_exceeded). PromptTokens and ContextLimit
	// say what it counted, when it said. Not retryable: the same request
	// fails again.
	KindContextLength
)

var kindNames = [...]string{"", "http_status", "provider_error", "transport", "timeout",
	"malformed_response", "missing_credential", "canceled", "invalid_request", "context_length_exceeded"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText encodes k by name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a name written by [Kind.MarshalText].
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if i > 0 && n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("provider: unknown error kind %q", b)
}

// Error is a structured provider failure. Its text never contains the
// credential: every message taken from a response or a transport error has
// the key replaced by "<redacted>" before it is stored.
type Error struct {
	Kind Kind
	// Status is the HTTP status, or 0 when no response was received.
	Status int
	// Code is the provider's error code (error.code, a string or a number
	// rendered as text), "" when absent.
	Code string
	// Type is the provider's error type (error.type), "" when absent.
	Type string
	// Message is a human-readable description (error.message, or ours).
	Message string
	// Retryable reports whether the same request may succeed later (429,
	// 408, 409, 5xx, transport errors, timeouts). [*Client] has already
	// retried such errors Options.MaxRetries times before returning one.
	Retryable bool
	// RetryAfter is the delay the provider asked for (Retry-After), zero
	// when none was given.
	RetryAfter time.Duration
	// Attempts is how many HTTP requests were made (0 when none was sent).
	Attempts int
	// Credential names the environment variable that was unset or empty
	// ([KindMissingCredential]); "" otherwise.
	Credential string
	// PromptTokens is the prompt as the provider counted it when it
	// refused it as too long ([KindContextLength]), and ContextLimit the
	// most it takes; 0 when it did not say.
	PromptTokens, ContextLimit int
	// Err is the cause, when there is one (a redacted transport error,
	// ctx.Err(), [ErrMissingCredential]).
	Err error
}

func (e *Error) Error() string {
	var sb strings.Builder
	sb.WriteString("provider: ")
	sb.WriteString(e.Kind.String())
	if e.Status != 0 {
		sb.WriteString(" ")
		sb.WriteString(strconv.Itoa(e.Status))
	}
	if e.Code != "" {
		sb.WriteString(" code=")
		sb.WriteString(e.Code)
	}
	if e.Message != "" {
		sb.WriteString(": ")
		sb.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&sb, " (after %d attempts)", e.Attempts)
	}
	return sb.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// MismatchError is returned by a [*Replayer] when a call does not match the
// recording. It wraps [ErrReplayMismatch].
type MismatchError struct {
	Call int    // 0-based call number
	Path string // the first differing field of the request, "" when none is left
	Got  string // the value the call sent, as JSON
	Want string // the recorded value, as JSON
}

func (e *MismatchError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("provider: replay: call %d: %s", e.Call, e.Want)
	}
	return fmt.Sprintf("provider: replay: call %d: request differs from recording at %s: got %s, want %s",
		e.Call, e.Path, e.Got, e.Want)
}

// Unwrap returns [ErrReplayMismatch].
func (e *MismatchError) Unwrap() error { return ErrReplayMismatch }

// The ways providers say a prompt is too long, with what they counted.
var (
	// Anthropic: "prompt is too long: 208193 tokens > 200000 maximum".
	tooLongTokens = regexp.MustCompile(`(?i)prompt is too long: (\d+) tokens? > (\d+)`)
	// Anthropic: "input length and `max_tokens` exceed context limit:
	// 188240 + 21333 > 200000".
	tooLongSum = regexp.MustCompile(`(?i)exceed context limit: (\d+) \+ (\d+) > (\d+)`)
	// OpenAI: "This model's maximum context length is 128000 tokens.
	// However, your messages resulted in 130516 tokens".
	tooLongOpenAI = regexp.MustCompile(`(?i)maximum context length is (\d+) tokens.*?(?:messages resulted in|requested) (\d+) tokens(?: \((\d+) in the messages)?`)
)

// contextLength makes e a [KindContextLength] error when its code or
// message says the prompt was too long, with the counts it states.
func contextLength(e *Error) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	switch m := e.Message; {
	case tooLongTokens.MatchString(m):
		g := tooLongTokens.FindStringSubmatch(m)
		e.PromptTokens, e.ContextLimit = atoi(g[1]), atoi(g[2])
	case tooLongSum.MatchString(m):
		g := tooLongSum.FindStringSubmatch(m)
		e.PromptTokens, e.ContextLimit = atoi(g[1]), atoi(g[3])
	case tooLongOpenAI.MatchString(m):
		g := tooLongOpenAI.FindStringSubmatch(m)
		e.ContextLimit, e.PromptTokens = atoi(g[1]), atoi(g[2])
		if g[3] != "" {
			e.PromptTokens = atoi(g[3]) // the messages' share of what was requested
		}
	case e.Code == "context_length_exceeded" || strings.Contains(strings.ToLower(m), "context length"):
	default:
		return
	}
	e.Kind, e.Retryable = KindContextLength, false
}

// retryableStatus is the openai-python policy: request timeout, conflict,
// rate limit and server errors.
func retryableStatus(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}

// errorBody is the union of the error shapes OpenAI-compatible servers
// return: {"error":{"message","type","code"}} (OpenAI, OpenRouter,
// DeepSeek, llama.cpp), {"error":"text"} (Ollama), and vLLM's top-level
// {"object":"error","message","type","code"}.
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

type errorObject struct {
	Message  string          `json:"message"`
	Type     string          `json:"type"`
	Code     json.RawMessage `json:"code"`
	Metadata struct {
		Raw          any    `json:"raw"`
		ProviderName string `json:"provider_name"`
	} `json:"metadata"`
}

// parseErrorBody extracts a provider error from a response body; ok is
// false when the body carries none.
func parseErrorBody(body []byte) (msg, typ, code string, ok bool) {
	var b errorBody
	if json.Unmarshal(body, &b) != nil {
		return "", "", "", false
	}
	return errorFields(b)
}

func errorFields(b errorBody) (msg, typ, code string, ok bool) {
	if len(b.Error) > 0 && string(b.Error) != "null" {
		var o errorObject
		if json.Unmarshal(b.Error, &o) == nil {
			msg, typ, code = o.Message, o.Type, codeText(o.Code)
			if o.Metadata.ProviderName != "" {
				msg += " [upstream " + o.Metadata.ProviderName + "]"
			}
			return msg, typ, code, true
		}
		var s string
		if json.Unmarshal(b.Error, &s) == nil {
			return s, "", "", true
		}
		return string(b.Error), "", "", true
	}
	if b.Object == "error" {
		return b.Message, b.Type, codeText(b.Code), true
	}
	return "", "", "", false
}

// codeText renders error.code, which is a string (OpenAI), a number
// (OpenRouter, llama.cpp) or null.
func codeText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// secrets are what no error text, event or recording may show: the
// credential's key and the value of every custom header (X-Api-Key,
// api-key and the like carry keys too), longest first so that no part of
// a longer secret survives the replacement of a shorter one.
type secrets []string

// secretsOf lists key and the header values as secrets.
func secretsOf(key string, headers map[string]string) secrets {
	s := secrets{key}
	for _, v := range headers {
		s = append(s, v)
	}
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return s
}

// redact replaces every occurrence of each secret in s. Empty secrets are
// ignored; so are very short ones, which would mangle ordinary text and
// are not credentials anyway.
func redact(s string, sec secrets) string {
	for _, secret := range sec {
		if len(secret) >= 4 && strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, "<redacted>")
		}
	}
	return s
}

// redactedError is a cause whose text has had the credential removed; it
// keeps the original for errors.Is/As (net.Error timeouts, syscall codes)
// but never prints it.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr returns err with the secret removed from its text. When the
// text contained the secret the chain is cut (the original would print it);
// otherwise the original stays reachable for errors.Is/As.
func redactErr(err error, sec secrets) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := redact(msg, sec); r != msg {
		return &redactedError{msg: r}
	}
	return &redactedError{msg: msg, err: err}
}
