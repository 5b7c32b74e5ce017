package provider_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// testKey is the secret the fake environment holds; no error text,
// String() or recording may contain it.
const testKey = "sk-test-SECRET-7f3a9c2e51"

// newFake starts a scripted OpenAI-compatible server (see providertest).
func newFake(t *testing.T, handlers ...http.HandlerFunc) *fakeServer {
	t.Helper()
	s := providertest.NewServer(handlers...)
	t.Cleanup(s.Close)
	return &fakeServer{s}
}

// fakeServer adapts providertest.Server to the names the tests use.
type fakeServer struct{ *providertest.Server }

func (f *fakeServer) requests() []providertest.Received { return f.Requests() }
func (f *fakeServer) url() string                       { return f.BaseURL() }

var (
	reply  = providertest.Reply
	sse    = providertest.SSE
	rawSSE = providertest.RawSSE
	hang   = providertest.Hang
)

// echoKey answers with status and a body that quotes the Authorization
// header back, as a careless server might.
func echoKey(status int, format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, format, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}
}

// env is the injected environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// newClient returns a client for f with fast retries and the test key.
func newClient(t *testing.T, f *fakeServer, edit func(*provider.Options)) *provider.Client {
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
	c, err := provider.NewClient(&o)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

func userReq(text string) tokenizer.Request {
	return tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: text}}}
}

const okBody = `{"id":"chatcmpl-1","object":"chat.completion","model":"test-model-0613",
 "choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],
 "usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`

// withoutBody returns r without its RequestBody, for comparisons with
// scripted responses.
func withoutBody(r provider.Response) provider.Response {
	r.RequestBody = nil
	return r
}
