package runtime

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/store"
)

// TestPinnedSystemMessageIsSentAndReplays: a turn sends the
// conversation's pinned system message whole (its name too), and its
// receipt's recipe renders it again byte for byte.
func TestPinnedSystemMessageIsSentAndReplays(t *testing.T) {
	sys := store.Message{Role: store.RoleSystem, Name: "ops", Content: store.TextContent("You are Ops Copilot.")}
	c := memConv(t, sys, user("q1"), store.Message{Role: store.RoleAssistant, Content: store.TextContent("a1")})
	p := &planner{answers: []string{final("ok")}}
	opts := turnOpts(p, handle.New(nil))
	opts.Pack.Utilities.PinnedRoles = []string{"system"}
	res, err := c.Turn(context.Background(), user("who are you?"), opts)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range p.reqs[0].Messages {
		found = found || m.Name == "ops" && m.Content == "You are Ops Copilot."
	}
	if !found {
		t.Fatalf("the pinned system message is not in the request: %+v", p.reqs[0].Messages)
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
