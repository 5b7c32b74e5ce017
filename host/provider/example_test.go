package provider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// A client for an OpenAI-compatible server (here an in-process stand-in for
// llama.cpp's llama-server, which needs no credential).
func ExampleNewClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","model":"tiny","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":28,"completion_tokens":3,"total_tokens":31}}`)
	}))
	defer srv.Close()

	p, err := provider.NewClient(&provider.Options{BaseURL: srv.URL + "/v1", Model: "tiny"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := p.Complete(context.Background(), tokenizer.Request{
		Messages:    []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "Say hello."}},
		MaxTokens:   16,
		Temperature: new(0.0),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.FinishReason)
	fmt.Println(resp.Usage)
	// Output:
	// Hello! stop
	// prompt=28 completion=3 total=31 cost=?
}

// The credential is an environment variable name, read when a call is made.
func ExampleOptions_credential() {
	p, _ := provider.NewClient(&provider.Options{
		BaseURL:    "https://openrouter.ai/api/v1",
		Model:      "openrouter/free",
		Credential: "OPENROUTER_API_KEY",
		Getenv:     func(string) string { return "" }, // os.Getenv in a real program
	})
	_, err := p.Complete(context.Background(), tokenizer.Request{
		Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "hi"}},
	})
	fmt.Println(errors.Is(err, provider.ErrMissingCredential))
	fmt.Println(err)
	// Output:
	// true
	// provider: missing_credential: environment variable OPENROUTER_API_KEY is unset or empty
}

// Classifying a failure.
func ExampleError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	}))
	defer srv.Close()
	p, _ := provider.NewClient(&provider.Options{BaseURL: srv.URL, Model: "m", MaxRetries: -1})
	_, err := p.Complete(context.Background(), tokenizer.Request{
		Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "hi"}},
	})
	var pe *provider.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.Kind, pe.Status, pe.Code, pe.Retryable)
	}
	// Output:
	// provider_error 429 rate_limit_exceeded true
}

// A scripted provider answers in call order and records what it was asked.
func ExampleScripted() {
	s := provider.NewScripted(
		provider.Response{Content: `plan([final(literal("direct-ok"))])`, Usage: provider.TokenUsage(1, 1).WithCost(0)},
		provider.Response{Content: "FAKE_MODEL_OK", Usage: provider.TokenUsage(2, 1)},
	)
	ctx := context.Background()
	plan, _ := s.Complete(ctx, tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "Goal: ..."}}})
	step, _ := s.Complete(ctx, tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "summarize"}}})
	fmt.Println(plan.Content, plan.Usage)
	fmt.Println(step.Content, step.Usage)
	for i, r := range s.Requests() {
		fmt.Println(i, r.Messages[0].Content)
	}
	// Output:
	// plan([final(literal("direct-ok"))]) prompt=1 completion=1 total=2 cost=0
	// FAKE_MODEL_OK prompt=2 completion=1 total=3 cost=?
	// 0 Goal: ...
	// 1 summarize
}

// Streaming delivers deltas as they arrive and returns the assembled
// response.
func ExampleClient_Stream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+e+"\n\n")
		}
	}))
	defer srv.Close()
	p, _ := provider.NewClient(&provider.Options{BaseURL: srv.URL + "/v1", Model: "m"})
	resp, err := p.Stream(context.Background(),
		tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "hi"}}},
		func(d provider.Delta) error {
			fmt.Printf("%v %q\n", d.Kind, d.Text)
			return nil
		})
	fmt.Println(resp.Content, resp.Usage, err)
	// Output:
	// text "Hel"
	// text "lo"
	// finish ""
	// usage ""
	// Hello prompt=5 completion=2 total=7 cost=? <nil>
}

// A recording replays without a network, and a changed request is reported
// by field.
func ExampleReplayer() {
	rec := `{"call":0,"op":"complete","request":{"model":"m","messages":[{"role":"user","content":"hi"}]},"response":{"content":"hello","usage":{"prompt_tokens":1}}}`
	rp, _ := provider.NewReplayer(strings.NewReader(rec))
	_, err := rp.Complete(context.Background(), tokenizer.Request{Model: "m",
		Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "hey"}}})
	fmt.Println(err)
	resp, _ := rp.Complete(context.Background(), tokenizer.Request{Model: "m",
		Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "hi"}}})
	fmt.Println(resp.Content, resp.Usage)
	// Output:
	// provider: replay: call 0: request differs from recording at request.messages[0].content: got "hey", want "hi"
	// hello prompt=1 completion=? total=? cost=?
}
