package provider_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func TestRecordReplay(t *testing.T) {
	f := newFake(t,
		reply(200, `{"id":"r1","model":"m","choices":[{"message":{"content":"one"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"cost":0.5}}`),
		sse(`{"id":"r2","model":"m","choices":[{"delta":{"content":"t"}}]}`, `{"id":"r2","model":"m","choices":[{"delta":{"content":"wo"},"finish_reason":"stop"}]}`, `[DONE]`),
		reply(400, `{"error":{"message":"bad","code":"invalid_value","type":"invalid_request_error"}}`),
	)
	c := newClient(t, f, nil)
	path := filepath.Join(t.TempDir(), "session.jsonl")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := provider.NewRecorder(c, file)
	ctx := context.Background()
	r1, err1 := rec.Complete(ctx, userReq("first"))
	var d2 []provider.Delta
	r2, err2 := rec.Stream(ctx, userReq("second"), collect(&d2))
	_, err3 := rec.Complete(ctx, userReq("third"))
	file.Close()
	if err1 != nil || err2 != nil || err3 == nil {
		t.Fatalf("recording calls: %v, %v, %v", err1, err2, err3)
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Errorf("recording has %d lines, want 3:\n%s", n, data)
	}
	if strings.Contains(string(data), testKey) || strings.Contains(string(data), "TEST_API_KEY") {
		t.Errorf("recording mentions the credential:\n%s", data)
	}

	rp := open(t, path)
	g1, gerr1 := rp.Complete(ctx, userReq("first"))
	var g2d []provider.Delta
	g2, gerr2 := rp.Stream(ctx, userReq("second"), collect(&g2d))
	_, gerr3 := rp.Complete(ctx, userReq("third"))
	if !reflect.DeepEqual(g1, r1) || gerr1 != nil {
		t.Errorf("replay 0 = %+v, %v; want %+v", g1, gerr1, r1)
	}
	if !reflect.DeepEqual(g2, r2) || gerr2 != nil || !reflect.DeepEqual(g2d, d2) {
		t.Errorf("replay 1 = %+v %v, %v; want %+v %v", g2, deltaString(g2d), gerr2, r2, deltaString(d2))
	}
	if gerr3 == nil || gerr3.Error() != err3.Error() {
		t.Errorf("replay 2 error = %v, want %v", gerr3, err3)
	}
	if pe := asError(t, gerr3); pe.Kind != provider.KindProviderError || pe.Status != 400 || pe.Code != "invalid_value" {
		t.Errorf("replayed error = %+v", pe)
	}
	if rp.Remaining() != 0 {
		t.Errorf("Remaining = %d", rp.Remaining())
	}
	_, err = rp.Complete(ctx, userReq("fourth"))
	var me *provider.MismatchError
	if !errors.As(err, &me) || !errors.Is(err, provider.ErrReplayMismatch) || !strings.Contains(err.Error(), "no recorded call left") {
		t.Errorf("replay past the end = %v", err)
	}
}

func open(t *testing.T, path string) *provider.Replayer {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rp, err := provider.NewReplayer(f)
	if err != nil {
		t.Fatalf("NewReplayer: %v", err)
	}
	return rp
}

func TestReplayMismatch(t *testing.T) {
	rp := open(t, "testdata/replay.jsonl")
	ctx := context.Background()
	req := planRequest()
	req.Messages[1].Content = "Goal: count the lines"
	_, err := rp.Complete(ctx, req)
	want := `provider: replay: call 0: request differs from recording at request.messages[1].content: got "Goal: count the lines", want "Goal: count the words"`
	if err == nil || err.Error() != want {
		t.Errorf("mismatch error =\n%v\nwant\n%s", err, want)
	}
	// The mismatched call consumed nothing.
	if _, err := rp.Stream(ctx, planRequest(), nil); err == nil || !strings.Contains(err.Error(), `at op: got "stream", want "complete"`) {
		t.Errorf("op mismatch = %v", err)
	}
	if r, err := rp.Complete(ctx, planRequest()); err != nil || r.Content != `plan([final(literal("3"))])` || !r.Usage.PromptKnown || r.Usage.CostKnown {
		t.Errorf("replay = %+v, %v", r, err)
	}
	// Unordered: the model step can be matched before the second planner call.
	rp = open(t, "testdata/replay.jsonl")
	rp.Unordered = true
	step := tokenizer.Request{Model: "fake", Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: "summarize chunk 1"}}}
	if r, err := rp.Complete(ctx, step); err != nil || r.Content != "FAKE_MODEL_OK" {
		t.Errorf("unordered replay = %+v, %v", r, err)
	}
	if _, err := rp.Complete(ctx, planRequest()); err != nil {
		t.Errorf("unordered replay of call 0: %v", err)
	}
	_, err = rp.Complete(ctx, step)
	if !errors.Is(err, provider.ErrReplayMismatch) {
		t.Errorf("replaying a used line = %v", err)
	}
}

func planRequest() tokenizer.Request {
	return tokenizer.Request{Model: "fake", MaxTokens: 512, Temperature: new(0.0), Messages: []tokenizer.Message{
		{Role: tokenizer.RoleSystem, Content: "You write plans."},
		{Role: tokenizer.RoleUser, Content: "Goal: count the words"},
	}}
}

func TestReplayerBadInput(t *testing.T) {
	for _, in := range []string{"{not json}\n", `{"op":"delete","request":{"messages":[]}}` + "\n"} {
		if _, err := provider.NewReplayer(strings.NewReader(in)); err == nil || !strings.HasPrefix(err.Error(), "provider: replay: line 1") {
			t.Errorf("NewReplayer(%q) = %v", in, err)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRecorderWriteFailure(t *testing.T) {
	rec := provider.NewRecorder(provider.NewScripted(provider.Response{Content: "x"}), failWriter{})
	r, err := rec.Complete(context.Background(), userReq("q"))
	if r.Content != "x" || err == nil || !strings.Contains(err.Error(), "provider: record: disk full") {
		t.Errorf("Complete = %+v, %v; want the response and the write error", r, err)
	}
}
