package provider_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
)

// testKey is the secret the fake environment holds; no error text,
// String() or recording may contain it.
const testKey = "sk-test-SECRET-7f3a9c2e51"

// got is one request the fake server received.
type got struct {
	Header http.Header
	Body   map[string]any
	Raw    string
}

// fakeServer is an in-process OpenAI-compatible server scripted by a queue
// of handlers: request i is served by handlers[i] (the last one repeats).
type fakeServer struct {
	*httptest.Server
	t        *testing.T
	handlers []http.HandlerFunc

	mu   sync.Mutex // protects reqs
	reqs []got
}

func newFake(t *testing.T, handlers ...http.HandlerFunc) *fakeServer {
	t.Helper()
	f := &fakeServer{t: t, handlers: handlers}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		f.t.Errorf("fake server: %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("fake server: request body is not JSON: %v: %s", err, raw)
	}
	f.mu.Lock()
	i := len(f.reqs)
	f.reqs = append(f.reqs, got{Header: r.Header.Clone(), Body: body, Raw: string(raw)})
	f.mu.Unlock()
	h := f.handlers[min(i, len(f.handlers)-1)]
	h(w, r)
}

// requests returns what the server received so far.
func (f *fakeServer) requests() []got {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]got(nil), f.reqs...)
}

func (f *fakeServer) url() string { return f.URL + "/v1" }

// reply answers with a status, a JSON (or any) body and header pairs.
func reply(status int, body string, headers ...string) http.HandlerFunc {
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

// echoKey answers with status and a body that quotes the Authorization
// header back, as a careless server might.
func echoKey(status int, format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, format, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}
}

// sse answers with a server-sent-event stream: each event is written as
// "data: <event>\n\n" and flushed.
func sse(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

// rawSSE writes a stream body verbatim.
func rawSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(200)
		io.WriteString(w, body)
	}
}

// hang blocks until the request is canceled (or 10s pass), after closing
// started if it is non-nil.
func hang(started chan<- struct{}) http.HandlerFunc {
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

// env is the injected environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// newClient returns a client for f with fast retries and the test key.
func newClient(t *testing.T, f *fakeServer, edit func(*provider.Options)) *provider.OpenAI {
	t.Helper()
	o := provider.Options{
		BaseURL:        f.url(),
		Model:          "test-model",
		Credential:     "TEST_API_KEY",
		Getenv:         env(map[string]string{"TEST_API_KEY": testKey}),
		Timeout:        2 * time.Second,
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  time.Second,
		Rand:           func() float64 { return 0.5 },
	}
	if edit != nil {
		edit(&o)
	}
	c, err := provider.NewOpenAI(&o)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return c
}

func userReq(text string) provider.Request {
	return provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: text}}}
}

const okBody = `{"id":"chatcmpl-1","object":"chat.completion","model":"test-model-0613",
 "choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],
 "usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`
