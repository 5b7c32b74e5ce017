package store

import (
	"errors"
	"fmt"
	"testing"
)

// TestDocsAreVersionedAndDurable: every put is a new immutable version;
// latest, a given version and the listing (latest per key, or the whole
// history) read back, across a reopen.
func TestDocsAreVersionedAndDurable(t *testing.T) {
	eachDurableBackend(t, testDocsAreVersionedAndDurable)
}

func testDocsAreVersionedAndDurable(t *testing.T, be testBackend) {
	o := be.fresh(t)
	db := openWith(t, &o)
	mustCreate(t, db, "c")
	for i, p := range []DocPut{
		{"warm", "range_1_20", []byte("v1")},
		{"warm", "range_1_20", []byte("v2")},
		{"warm", "range_21_40", []byte("w1")},
		{"warm", "b", []byte("short key")},
		{"receipt", "turn_1", []byte("r")},
	} {
		d, err := db.PutDoc("c", p)
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if want := map[int]int{1: 2}[i]; want != 0 && d.Version != want {
			t.Fatalf("put %d: version %d, want %d", i, d.Version, want)
		}
	}
	db.Close()
	db = openWith(t, &o)
	defer db.Close()
	latest, err := db.GetDoc("c", "warm", "range_1_20", 0)
	if err != nil || latest.Version != 2 || string(latest.Body) != "v2" {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	first, err := db.GetDoc("c", "warm", "range_1_20", 1)
	if err != nil || string(first.Body) != "v1" {
		t.Fatalf("version 1 = %+v, %v", first, err)
	}
	if _, err := db.GetDoc("c", "warm", "range_1_20", 3); !errors.Is(err, ErrNotFound) {
		t.Fatalf("version 3: %v", err)
	}
	if _, err := db.GetDoc("c", "warm", "range_1", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a prefix of a key matched: %v", err)
	}
	docs, err := db.Docs("c", "warm", false)
	if err != nil || len(docs) != 3 || docs[0].Key != "b" || docs[1].Key != "range_1_20" || docs[1].Version != 2 || docs[2].Key != "range_21_40" {
		t.Fatalf("Docs = %+v, %v", docs, err)
	}
	all, err := db.Docs("c", "warm", true)
	if err != nil || len(all) != 4 || all[1].Version != 1 || all[2].Version != 2 {
		t.Fatalf("history = %+v, %v", all, err)
	}
	if rs, _ := db.Docs("c", "receipt", true); len(rs) != 1 {
		t.Fatalf("collections mix: %+v", rs)
	}
}

// TestAppendWritesDocsAtomically: a message and its documents are written
// in one transaction; a bad document writes nothing; a retry under the
// idempotency key writes no second version.
func TestAppendWritesDocsAtomically(t *testing.T) { eachBackend(t, testAppendWritesDocsAtomically) }

func testAppendWritesDocsAtomically(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	bad := func(Record) ([]DocPut, error) { return []DocPut{{"receipt", "", []byte("r")}}, nil }
	if _, err := db.Append("c", user("x"), AppendOptions{Docs: bad}); err == nil {
		t.Fatal("a document without a key was accepted")
	}
	if st, _ := db.Stats("c"); st.Messages != 0 {
		t.Fatalf("a rejected append wrote %d messages", st.Messages)
	}
	receipt := func(r Record) ([]DocPut, error) {
		return []DocPut{{"receipt", "turn_1", []byte(fmt.Sprintf("assistant %d", r.Seq))}}, nil
	}
	opts := AppendOptions{IdempotencyKey: "turn_1/assistant", Docs: receipt}
	for range 2 {
		if _, err := db.Append("c", user("answer"), opts); err != nil {
			t.Fatal(err)
		}
	}
	docs, _ := db.Docs("c", "receipt", true)
	if len(docs) != 1 || string(docs[0].Body) != "assistant 1" {
		t.Fatalf("receipts = %+v", docs)
	}
	if _, err := db.PutDoc("nobody", DocPut{"receipt", "k", nil}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown conversation: %v", err)
	}
}

// TestAppendWritesPriorMessagesAtomically: a turn's tool call and result
// are written with its answer in one transaction, at the sequences before
// it; a bad document writes none of them; a retry writes nothing again.
func TestAppendWritesPriorMessagesAtomically(t *testing.T) {
	db := openMem(t)
	mustCreate(t, db, "c")
	call := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "history_search", Arguments: `{"query":"x"}`}}}
	result := Message{Role: RoleTool, ToolCallID: "c1", Content: TextContent("found x")}
	before := []Prior{{Message: call}, {Message: result, TokenCounts: map[string]int{"o200k_base": 2}}}
	bad := func(Record) ([]DocPut, error) { return []DocPut{{"receipt", "", nil}}, nil }
	if _, err := db.Append("c", Message{Role: RoleAssistant, Content: TextContent("x it is")}, AppendOptions{Before: before, Docs: bad}); err == nil {
		t.Fatal("a document without a key was accepted")
	}
	if st, _ := db.Stats("c"); st.Messages != 0 {
		t.Fatalf("a rejected append wrote %d messages", st.Messages)
	}
	opts := AppendOptions{IdempotencyKey: "turn/t/assistant", Before: before}
	for range 2 {
		r, err := db.Append("c", Message{Role: RoleAssistant, Content: TextContent("x it is")}, opts)
		if err != nil || r.Seq != 3 {
			t.Fatalf("append = %+v, %v", r, err)
		}
	}
	m1, _ := db.Message("c", 1)
	m2, _ := db.Message("c", 2)
	if st, _ := db.Stats("c"); st.Messages != 3 || len(m1.Message.ToolCalls) != 1 || m2.Message.ToolCallID != "c1" || m2.TokenCounts["o200k_base"] != 2 {
		t.Fatalf("stored %+v / %+v", m1, m2)
	}
}
