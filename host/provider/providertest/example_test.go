package providertest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/host/provider/providertest"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func TestServer(t *testing.T) {
	srv := providertest.NewServer(providertest.Reply(503, ""), providertest.Completion("plan", 12, 3))
	defer srv.Close()
	p, err := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m", RetryBaseDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "goal"}}})
	if err != nil || resp.Content != "plan" || resp.Usage != provider.TokenUsage(12, 3) {
		t.Fatalf("Complete = %+v, %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Path != "/v1/chat/completions" || reqs[1].Body["model"] != "m" {
		t.Errorf("Requests = %+v", reqs)
	}
	// Both attempts sent the bytes the response reports.
	if string(resp.RequestBody) != reqs[0].Raw || reqs[0].Raw != reqs[1].Raw {
		t.Errorf("RequestBody = %s; the server received %s and %s", resp.RequestBody, reqs[0].Raw, reqs[1].Raw)
	}
	msgs := reqs[1].Body["messages"].([]any)
	if got := msgs[0].(map[string]any)["content"]; got != "goal" {
		t.Errorf("the model saw %v, want goal", got)
	}
}

func ExampleNewServer() {
	srv := providertest.NewServer(providertest.Completion("hello", 5, 1))
	defer srv.Close()
	p, _ := provider.NewClient(&provider.Options{BaseURL: srv.BaseURL(), Model: "m"})
	resp, _ := p.Complete(context.Background(), tokenizer.Request{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "hi"}}})
	fmt.Println(resp.Content, resp.Usage)
	fmt.Println(srv.Requests()[0].Raw)
	// Output:
	// hello prompt=5 completion=1 total=6 cost=?
	// {"model":"m","messages":[{"role":"user","content":"hi"}]}
}
