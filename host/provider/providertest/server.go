// Package providertest provides an in-process model server for tests: a
// queue of scripted handlers that records every request it receives, with
// answers in the chat-completions shape ([Completion], [SSE]) or, from
// [Anthropic], in the Messages API's (with its prompt cache and its
// context window). Tests of the provider client, the completion engine
// and the CLI point a [provider.Client] (or a --provider endpoint) at
// [Server.BaseURL].
//
// A Server is safe for concurrent use.
package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Received is one request the server received.
type Received struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any // the JSON body decoded; nil if it was not JSON
	Raw    string         // the body as sent
}

// Server is an httptest.Server scripted by handlers: request i is served by
// handlers[i], and the last handler serves every request after it.
type Server struct {
	*httptest.Server
	handlers []http.HandlerFunc

	mu   sync.Mutex // protects reqs
	reqs []Received
}

// NewServer starts a Server, like httptest.NewServer; the caller must
// Close it. It panics without handlers.
func NewServer(handlers ...http.HandlerFunc) *Server {
	if len(handlers) == 0 {
		panic("providertest: NewServer needs at least one handler")
	}
	s := &Server{handlers: handlers}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil {
		body = nil
	}
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, Received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: string(raw)})
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(raw)) // for the handler to read again
	s.handlers[min(i, len(s.handlers)-1)](w, r)
}

// BaseURL is the API root to configure a client with: URL + "/v1".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far, in arrival order. The
// caller owns the returned slice.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.reqs...)
}

// Reply answers with a status, a body and header name/value pairs. The
// Content-Type is application/json unless the pairs set one.
func Reply(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// Completion answers 200 with a chat completion whose content is text and
// whose usage reports the given token counts.
func Completion(text string, promptTokens, completionTokens int) http.HandlerFunc {
	content, _ := json.Marshal(text)
	return Reply(200, fmt.Sprintf(`{"id":"chatcmpl-test","object":"chat.completion","model":"test",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		content, promptTokens, completionTokens, promptTokens+completionTokens))
}

// CompletionUsage answers 200 with a chat completion whose content is
// text and whose usage object is the given JSON verbatim (cache and
// reasoning details, a provider's own fields).
func CompletionUsage(text, usage string) http.HandlerFunc {
	content, _ := json.Marshal(text)
	return Reply(200, fmt.Sprintf(`{"id":"chatcmpl-test","object":"chat.completion","model":"test",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":%s}`,
		content, usage))
}

// SSE answers with an event stream, writing each event as
// "data: <event>\n\n" and flushing it. Pass "[DONE]" last to end the stream
// properly.
func SSE(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

// RawSSE answers with an event stream whose body is written verbatim.
func RawSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(200)
		io.WriteString(w, body)
	}
}

// Hang never answers: it blocks until the client gives up (its request
// context ends) or 10s pass. If started is non-nil it is closed when the
// first request arrives, so a test can cancel during the call.
func Hang(started chan<- struct{}) http.HandlerFunc {
	var once sync.Once
	return func(w http.ResponseWriter, r *http.Request) {
		if started != nil {
			once.Do(func() { close(started) })
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}
