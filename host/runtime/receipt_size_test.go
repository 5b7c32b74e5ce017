package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/store"
)

// TestReceiptBytesPerTurn measures what receipts add to the store per
// turn of a growing conversation: a 4 KB system prompt, a plan of one
// model step (two calls a turn), 70 turns. Receipts that copied every
// literal text and a record per message of the window took 27,118 bytes
// a turn over 60 turns (31,182 over the last 30); kept by reference and
// in runs they take about 5,000. Run with -v for the figures.
func TestReceiptBytesPerTurn(t *testing.T) {
	c := memConv(t)
	const turns = 70
	opts := turnOpts(&planner{answers: []string{`{"steps":[{"op":"model","provider":"local","prompt":{"ref":"input","name":"query"},"bind":"a"},{"op":"final","value":{"ref":"var","name":"a"}}]}`}}, handle.New(nil))
	opts.Deps.Models = &models{}
	opts.Pack.Sections = []pack.TextSection{{Name: "system", Visibility: pack.Model, Role: "system", Text: strings.Repeat("You are a careful assistant. ", 150)}}
	var half, total int
	var last string
	for i := range turns {
		res, err := c.Turn(context.Background(), user(strings.Repeat("question ", 20)), opts)
		if err != nil {
			t.Fatal(err)
		}
		if total, last = receiptBytes(t, c), res.TurnID; i == turns/2-1 {
			half = total
		}
	}
	perTurn, lastHalf := total/turns, (total-half)/(turns/2)
	t.Logf("receipt bytes stored: %d for %d turns, %d a turn (%d a turn over the last %d)", total, turns, perTurn, lastHalf, turns/2)
	if lastHalf > 8000 {
		t.Errorf("receipts take %d bytes a turn", lastHalf)
	}
	if _, err := c.Replay(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	// More turns than EachReceipt finds per scan: all are listed, in order.
	if rs, err := c.Receipts(false); err != nil || len(rs) != turns || rs[turns-1].TurnID != last {
		t.Fatalf("%d receipts listed, %v", len(rs), err)
	}
}

// receiptBytes is the size of the conversation's receipts and of the
// texts they refer to.
func receiptBytes(t *testing.T, c Conversation) int {
	t.Helper()
	n := 0
	for _, coll := range []string{receiptCollection, textCollection} {
		docs, err := c.st.db.Docs(c.id, coll, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			n += len(d.Body)
		}
	}
	return n
}

// TestOldReceiptsStillReadAndReplay: a receipt stored before references
// and runs — every literal text inline, a record per message — reads as
// the same receipt and replays byte for byte.
func TestOldReceiptsStillReadAndReplay(t *testing.T) {
	c := memConv(t, user("earlier"), store.Message{Role: store.RoleAssistant, Content: store.TextContent("answer")})
	opts := turnOpts(&planner{answers: []string{final("hi")}}, handle.New(nil))
	opts.Pack.Sections = []pack.TextSection{{Name: "system", Visibility: pack.Model, Role: "system", Text: strings.Repeat("Be brief. ", 100)}}
	res, err := c.Turn(context.Background(), user("hello"), opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Receipt(res.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	// The old form: literals inline, messages, units and stages one by one.
	var m map[string]any
	b, _ := json.Marshal(r)
	json.Unmarshal(b, &m)
	refs := 0
	calls := m["calls"].([]any)
	for i, call := range r.Calls {
		msgs := make([]RecipeMessage, len(call.Recipe.Messages))
		for j, rm := range call.Recipe.Messages {
			if rm.Ref != "" {
				refs++
				msg, err := c.recipeMessage(rm, nil)
				if err != nil {
					t.Fatal(err)
				}
				rm = RecipeMessage{Role: msg.Role, Text: msg.Content, Tokens: rm.Tokens}
			}
			msgs[j] = rm
		}
		calls[i].(map[string]any)["recipe"].(map[string]any)["messages"] = msgs
	}
	ctxm := m["context"].(map[string]any)
	ctxm["selected"], ctxm["stages"] = []ReceiptUnit(r.Context.Selected), []ReceiptStage(r.Context.Stages)
	old, _ := json.Marshal(m)
	if refs < 3 || len(r.Context.Selected) < 3 || strings.Contains(string(old), `"through"`) || !strings.Contains(string(old), "Be brief.") {
		t.Fatalf("not the old form (%d refs): %s", refs, old)
	}
	if _, err := c.st.db.PutDoc(c.id, store.DocPut{Collection: receiptCollection, Key: res.TurnID, Body: old}); err != nil {
		t.Fatal(err)
	}
	back, err := c.Receipt(res.TurnID)
	if err != nil || back.Version != 2 || len(back.Context.Selected) != len(r.Context.Selected) || len(back.Context.Stages) != len(r.Context.Stages) {
		t.Fatalf("old receipt read as %+v, %v", back, err)
	}
	bodies, err := c.Replay(context.Background(), res.TurnID)
	if err != nil || len(bodies) != 1 {
		t.Fatalf("replay of an old receipt: %v", err)
	}
}

// TestEachReceiptPages: receipts come in the order of their user
// messages, a page at a time; history gives every run of a turn, status
// keeps those of one status, and a page starts after a user sequence.
func TestEachReceiptPages(t *testing.T) {
	c := memConv(t)
	reg := handle.New(nil)
	failing := turnOpts(&planner{err: errors.New("down")}, reg)
	failing.TurnID = "t1"
	if _, err := c.Turn(context.Background(), user("q1"), failing); err == nil {
		t.Fatal("the failing planner succeeded")
	}
	for _, id := range []string{"t1", "t2", "t3", "t4"} {
		opts := turnOpts(&planner{answers: []string{final("a")}}, reg)
		opts.TurnID = id
		if _, err := c.Turn(context.Background(), user("q"+id[1:]), opts); err != nil {
			t.Fatal(err)
		}
	}
	list := func(q ReceiptQuery) string {
		var got []string
		if err := c.EachReceipt(q, func(r Receipt) error {
			got = append(got, fmt.Sprintf("%s/%d:%s@%d", r.TurnID, r.Version, r.Status, r.UserSeq))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, " ")
	}
	for _, tc := range []struct {
		q    ReceiptQuery
		want string
	}{
		{ReceiptQuery{}, "t1/2:completed@1 t2/1:completed@3 t3/1:completed@5 t4/1:completed@7"},
		{ReceiptQuery{History: true, Limit: 3}, "t1/1:failed@1 t1/2:completed@1 t2/1:completed@3"},
		{ReceiptQuery{History: true, Status: "failed"}, "t1/1:failed@1"},
		{ReceiptQuery{After: 3, Limit: 1}, "t3/1:completed@5"},
		{ReceiptQuery{After: 7}, ""},
	} {
		if got := list(tc.q); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.q, got, tc.want)
		}
	}
}
