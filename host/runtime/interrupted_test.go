package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// TestInterruptedTurnIsNeverSilent: a turn killed between its user message
// and its receipt (the store as kill -9 leaves it: the message under the
// turn's key, nothing else) is listed as interrupted, or running while a
// turn holds the lock; the next turn records its failed receipt, and that
// turn's requests carry the no-reply note right after the unanswered
// message, so the model never sees two user messages in a row unsaid;
// replay renders them again.
func TestInterruptedTurnIsNeverSilent(t *testing.T) { eachBackend(t, testInterruptedTurnIsNeverSilent) }

func testInterruptedTurnIsNeverSilent(t *testing.T, be backend) {
	c := be.conv(t)
	if _, err := c.Append(user("first question"), AppendOptions{IdempotencyKey: turnKey("t1", "user")}); err != nil {
		t.Fatal(err)
	}
	listed := func() Receipt {
		t.Helper()
		rs, err := c.Receipts(false)
		if err != nil || len(rs) != 1 {
			t.Fatalf("receipts %+v, %v", rs, err)
		}
		return rs[0]
	}
	unlock, err := c.st.db.LockConversation(context.Background(), c.id) // a turn in progress
	if err != nil {
		t.Fatal(err)
	}
	if r := listed(); r.Status != StatusRunning || r.Version != 0 || r.UserSeq != 1 {
		t.Errorf("while a turn holds the lock: %+v, want running", r)
	}
	unlock()
	if r := listed(); r.Status != StatusFailed || r.Error == nil || r.Error.Kind != KindInterrupted || r.Version != 0 {
		t.Errorf("after its process died: %+v, want failed (interrupted), not stored yet", r)
	}

	p := &planner{answers: []string{final("answered")}}
	opts := turnOpts(p, handle.New(nil))
	opts.TurnID = "t2"
	opts.Pack.Utilities.NoReplyTemplate = "[no reply to message {seq}]"
	if _, err := c.Turn(context.Background(), user("second question"), opts); err != nil {
		t.Fatal(err)
	}
	r, err := c.Receipt("t1")
	if err != nil || r.Version != 1 || r.Status != StatusFailed || r.Error.Kind != KindInterrupted || r.UserSeq != 1 {
		t.Fatalf("the interrupted turn's receipt after the next turn: %+v, %v", r, err)
	}
	var got []tokenizer.Message
	for _, m := range p.reqs[0].Messages {
		if m.Role == tokenizer.RoleUser || m.Role == tokenizer.RoleAssistant {
			got = append(got, m)
		}
	}
	if len(got) < 3 || got[0].Content != "first question" || got[1].Role != tokenizer.RoleAssistant || got[1].Content != "[no reply to message 1]" ||
		got[2].Content != "second question" {
		t.Fatalf("the next request's conversation: %+v", got)
	}
	if _, err := c.Replay(context.Background(), "t2"); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if id, err := c.RecordInterrupted(context.Background()); id != "" || err != nil {
		t.Errorf("RecordInterrupted after the turn = %q, %v; want nothing to record", id, err)
	}
}

// TestRecordInterrupted: RecordInterrupted stores the failed receipt of a
// last turn left without one, once, and leaves a turn in progress alone.
func TestRecordInterrupted(t *testing.T) {
	c := memConv(t)
	c.Append(user("q"), AppendOptions{IdempotencyKey: turnKey("t1", "user")})
	c.Append(store.Message{Role: store.RoleSystem, Content: store.TextContent("a note appended meanwhile")}, AppendOptions{})
	unlock, _ := c.st.db.LockConversation(context.Background(), c.id)
	if id, err := c.RecordInterrupted(context.Background()); id != "" || err != nil {
		t.Errorf("while a turn runs = %q, %v", id, err)
	}
	unlock()
	if id, err := c.RecordInterrupted(context.Background()); id != "t1" || err != nil {
		t.Fatalf("RecordInterrupted = %q, %v", id, err)
	}
	if id, err := c.RecordInterrupted(context.Background()); id != "" || err != nil {
		t.Errorf("again = %q, %v", id, err)
	}
	if _, err := c.Receipt("t1"); err != nil {
		t.Fatal(err)
	}
}

// TestNoReplyNote: a turn that failed leaves its user message unanswered;
// the next turn's request says so after it, and a message appended outside
// a turn (an imported transcript's consecutive user messages) gets no note.
func TestNoReplyNote(t *testing.T) {
	c := memConv(t, user("imported one"), user("imported two"))
	failing := &planner{err: errors.New("the planner is down")}
	opts := turnOpts(failing, handle.New(nil))
	opts.Completion.PlannerAttempts = 1
	if _, err := c.Turn(context.Background(), user("lost"), opts); err == nil {
		t.Fatal("the turn succeeded without a planner")
	}
	p := &planner{answers: []string{final("ok")}}
	opts = turnOpts(p, handle.New(nil))
	opts.Pack.Utilities.NoReplyTemplate = "[no reply to message {seq}]"
	if _, err := c.Turn(context.Background(), user("again"), opts); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, m := range p.reqs[0].Messages {
		if m.Role == tokenizer.RoleAssistant {
			notes = append(notes, m.Content)
		}
	}
	if len(notes) != 1 || notes[0] != "[no reply to message 3]" {
		t.Fatalf("assistant messages in the request: %q, want the one note after message 3", notes)
	}
	cp, err := c.Pack(context.Background(), PackOptions{Policy: testPolicy(100000, 12, 0), Utilities: opts.Pack.Utilities})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cp.Ledger.Stages {
		if s.Name == pack.NoReplyID(3) {
			return // the note is a stage of its own
		}
	}
	t.Errorf("no ledger stage %s in %+v", pack.NoReplyID(3), cp.Ledger.Stages)
}
