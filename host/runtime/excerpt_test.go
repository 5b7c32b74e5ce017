package runtime

import (
	"context"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/store"
)

// TestTurnAfterAnOversizedReply: a stored reply far larger than the
// ceiling leaves the next turn working (it sees an excerpt and the note),
// its receipt replays byte for byte, and the transcript keeps it whole.
func TestTurnAfterAnOversizedReply(t *testing.T) {
	huge := strings.Repeat("the lease protocol needs fencing tokens. ", 750)
	c := memConv(t, user("explain leases"), store.Message{Role: store.RoleAssistant, Content: store.TextContent(huge)})
	p := &planner{answers: []string{final("ok")}}
	opts := turnOpts(p, handle.New(nil))
	opts.Pack.Policy.MaxContextTokens, opts.Pack.Policy.MinRecentTurns = 4000, 3
	opts.Pack.Utilities.ExcerptTokens, opts.Pack.Utilities.ExcerptTemplate = 512, "[excerpt of message {seq}: read item {item}]"
	res, err := c.Turn(context.Background(), user("shorter please"), opts)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range p.reqs[0].Messages {
		found = found || m.Role == "assistant" && strings.HasSuffix(m.Content, "[excerpt of message 2: read item 1]")
	}
	if !found {
		t.Fatal("the planner did not get the excerpt")
	}
	if _, err := c.Replay(context.Background(), res.TurnID); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if r, _ := c.Message(2); r.Message.Content.Text != huge {
		t.Fatal("the stored reply changed")
	}
}
