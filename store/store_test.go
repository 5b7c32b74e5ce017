package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is a deterministic Now: each call advances one millisecond.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func newClock() *testClock { return &testClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func openMem(t testing.TB) *DB {
	t.Helper()
	db, err := Open(&Options{InMemory: true, Now: newClock().Now, IndexDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openDir(t testing.TB, dir string) *DB {
	t.Helper()
	db, err := Open(&Options{Dir: dir, Now: newClock().Now, IndexDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func user(s string) Message      { return Message{Role: RoleUser, Content: TextContent(s)} }
func assistant(s string) Message { return Message{Role: RoleAssistant, Content: TextContent(s)} }

func mustCreate(t testing.TB, db *DB, id string) Conversation {
	t.Helper()
	c, err := db.Create(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustAppend(t testing.TB, db *DB, conv string, m Message) Record {
	t.Helper()
	r, err := db.Append(conv, m, AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func seqs(rs []Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Seq
	}
	return out
}

func TestOptions(t *testing.T) {
	for _, o := range []*Options{{}, {InMemory: true, Dir: "x"}, {InMemory: true, IndexBatch: -1}} {
		if _, err := Open(o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Open(%+v) = %v, want ErrInvalid", o, err)
		}
	}
	db, err := Open(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := db.Create("x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Create after Close = %v, want ErrClosed", err)
	}
	if _, err := db.Append("x", user("hi"), AppendOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
}

func TestConversations(t *testing.T) { eachBackend(t, testConversations) }

func testConversations(t *testing.T, be testBackend) {
	db := be.open(t)
	md := []KV{{"project", []byte(` "x" `)}, {"n", []byte(`{"a": [1, 2]}`)}}
	c, err := db.Create("demo", md)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "demo" || len(c.Metadata) != 2 || string(c.Metadata[0].Value) != `"x"` || string(c.Metadata[1].Value) != `{"a":[1,2]}` {
		t.Errorf("Create = %+v", c)
	}
	if _, err := db.Create("demo", nil); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate Create = %v, want ErrExists", err)
	}
	got, err := db.Conversation("demo")
	if err != nil || got.ID != "demo" || !got.CreatedAt.Equal(c.CreatedAt) || string(got.Metadata[1].Value) != `{"a":[1,2]}` {
		t.Errorf("Conversation = %+v, %v", got, err)
	}
	if _, err := db.Conversation("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Conversation(nope) = %v, want ErrNotFound", err)
	}
	for _, bad := range [][]KV{{{"", []byte("1")}}, {{"a", []byte("{")}}, {{"a", []byte("1")}, {"a", []byte("2")}}} {
		if _, err := db.Create("bad", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Create(metadata %q) = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := db.Conversation("bad"); !errors.Is(err, ErrNotFound) {
		t.Errorf("failed Create left a conversation: %v", err)
	}
	gen, err := db.Create("", nil)
	if err != nil || !strings.HasPrefix(gen.ID, "conversation_") {
		t.Errorf("generated id %q, %v", gen.ID, err)
	}
	mustCreate(t, db, "b")
	asc, err := db.List(Asc, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range asc {
		ids = append(ids, c.ID)
	}
	if want := []string{"demo", gen.ID, "b"}; fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("List(asc) = %v, want %v", ids, want)
	}
	desc, err := db.List(Desc, 2)
	if err != nil || len(desc) != 2 || desc[0].ID != "b" || desc[1].ID != gen.ID {
		t.Errorf("List(desc, 2) = %+v, %v", desc, err)
	}
	if _, err := db.List(Asc, -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("List(limit -1) = %v", err)
	}
}

func TestListSameTimestampOrdersByID(t *testing.T) {
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(&Options{InMemory: true, Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range []string{"b", "c", "a"} {
		mustCreate(t, db, id)
	}
	cs, _ := db.List(Asc, 0)
	if len(cs) != 3 || cs[0].ID != "a" || cs[1].ID != "b" || cs[2].ID != "c" {
		t.Errorf("List(asc) = %+v", cs)
	}
}

func TestAppendAndRead(t *testing.T) { eachBackend(t, testAppendAndRead) }

func testAppendAndRead(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	msgs := []Message{
		{Role: RoleSystem, Content: TextContent("be brief")},
		user("hello"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"x"}`}}},
		{Role: RoleTool, ToolCallID: "call_1", Content: PartsContent(TextPart("result"), ImagePart("https://x/y.png", ""))},
		{Role: RoleAssistant, Content: TextContent("done"), Reasoning: "thought", Name: "bot"},
	}
	for i, m := range msgs {
		r, err := db.Append("c", m, AppendOptions{TokenCounts: map[string]int{"o200k_base": i}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Seq != int64(i+1) || r.Conversation != "c" || r.TokenCounts["o200k_base"] != i {
			t.Errorf("Append #%d = %+v", i, r)
		}
	}
	r, err := db.Message("c", 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Message.Content.Parts; len(got) != 2 || got[1].Detail != "auto" || got[0].Text != "result" || r.Message.ToolCallID != "call_1" {
		t.Errorf("Message(4) = %+v", r)
	}
	if r.TokenCounts["o200k_base"] != 3 {
		t.Errorf("Message(4).TokenCounts = %v", r.TokenCounts)
	}
	r, _ = db.Message("c", 3)
	if r.Message.Content.IsParts() || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Arguments != `{"q":"x"}` {
		t.Errorf("Message(3) = %+v", r)
	}
	if _, err := db.Message("c", 6); !errors.Is(err, ErrNotFound) {
		t.Errorf("Message(6) = %v, want ErrNotFound", err)
	}
	if _, err := db.Message("c", 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("Message(0) = %v, want ErrInvalid", err)
	}
	if _, err := db.Message("zz", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Message(zz) = %v, want ErrNotFound", err)
	}
	if _, err := db.Append("zz", user("x"), AppendOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Append(zz) = %v, want ErrNotFound", err)
	}
	st, err := db.Stats("c")
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Conversation: "c", Messages: 5, System: 1, User: 1, Assistant: 2, Tool: 1,
		ContentBytes: int64(len("be brief") + len("hello") + len("result") + len("done"))}
	gotNoTimes := st
	gotNoTimes.FirstAt, gotNoTimes.LastAt = time.Time{}, time.Time{}
	if gotNoTimes != want || !st.LastAt.After(st.FirstAt) {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
}

func TestSelectors(t *testing.T) { eachBackend(t, testSelectors) }

func testSelectors(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	mustCreate(t, db, "empty")
	for i := 1; i <= 10; i++ {
		m := user(fmt.Sprint("u", i))
		if i%3 == 0 {
			m = assistant(fmt.Sprint("a", i))
		}
		mustAppend(t, db, "c", m)
	}
	cases := []struct {
		sel   Selector
		limit int
		want  string
	}{
		{All(), 0, "[1 2 3 4 5 6 7 8 9 10]"},
		{Selector{}, 3, "[1 2 3]"},
		{Recent(3), 0, "[8 9 10]"},
		{Recent(3), 2, "[8 9]"},
		{Recent(0), 0, "[]"},
		{Recent(50), 0, "[1 2 3 4 5 6 7 8 9 10]"},
		{Range(2, 4), 0, "[2 3 4]"},
		{Range(9, 20), 0, "[9 10]"},
		{Range(11, 20), 0, "[]"},
		{Range(5, 5), 0, "[5]"},
		{Before(4), 0, "[1 2 3]"},
		{Before(1), 0, "[]"},
		{Before(100), 2, "[1 2]"},
		{After(8), 0, "[9 10]"},
		{After(0), 1, "[1]"},
		{After(10), 0, "[]"},
		{Around(2, 3), 0, "[1 2 3 4 5]"},
		{Around(9, 1<<62), 0, "[1 2 3 4 5 6 7 8 9 10]"},
		{Around(5, 0), 0, "[5]"},
		{ByRole(RoleAssistant), 0, "[3 6 9]"},
		{ByRole(RoleAssistant), 2, "[3 6]"},
		{ByRole(RoleTool), 0, "[]"},
	}
	for _, tc := range cases {
		rs, err := db.Messages("c", tc.sel, tc.limit)
		if err != nil {
			t.Errorf("Messages(%v, %d): %v", tc.sel, tc.limit, err)
			continue
		}
		if got := fmt.Sprint(seqs(rs)); got != tc.want {
			t.Errorf("Messages(%v, %d) = %s, want %s", tc.sel, tc.limit, got, tc.want)
		}
	}
	if rs, err := db.Messages("empty", Recent(5), 0); err != nil || len(rs) != 0 {
		t.Errorf("Messages(empty) = %v, %v", rs, err)
	}
	bad := []struct {
		sel  Selector
		want error
	}{
		{Recent(-1), ErrInvalidSelector},
		{Range(0, 3), ErrInvalidSelector},
		{Range(3, 2), ErrInvalidRange},
		{Before(0), ErrInvalidSelector},
		{After(-1), ErrInvalidSelector},
		{Around(0, 1), ErrInvalidSelector},
		{Around(3, -1), ErrInvalidSelector},
		{ByRole(0), ErrInvalidSelector},
		{ByRole(9), ErrInvalidSelector},
		{Selector{kind: 99}, ErrInvalidSelector},
	}
	for _, tc := range bad {
		if _, err := db.Messages("c", tc.sel, 0); !errors.Is(err, tc.want) {
			t.Errorf("Messages(%v) = %v, want %v", tc.sel, err, tc.want)
		}
	}
	if _, err := db.Messages("c", All(), -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("Messages(limit -1) = %v", err)
	}
	if _, err := db.Messages("zz", All(), 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Messages(zz) = %v", err)
	}
	if got := Range(3, 2).Validate().Error(); got != "store: invalid range: range(3,2): start is after end" {
		t.Errorf("range error text = %q", got)
	}

	var rev []int64
	if err := db.Scan("c", 1, 0, true, func(r Record) bool { rev = append(rev, r.Seq); return len(rev) < 3 }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rev) != "[10 9 8]" {
		t.Errorf("reverse Scan = %v", rev)
	}
	var fwd []int64
	db.Scan("c", 4, 6, false, func(r Record) bool { fwd = append(fwd, r.Seq); return true })
	if fmt.Sprint(fwd) != "[4 5 6]" {
		t.Errorf("Scan(4,6) = %v", fwd)
	}
}

func TestIdempotentAppend(t *testing.T) { eachBackend(t, testIdempotentAppend) }

func testIdempotentAppend(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	o := AppendOptions{IdempotencyKey: "turn-1"}
	r1, err := db.Append("c", user("hello"), o)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := db.Append("c", user("hello"), o)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Seq != 1 || r2.Seq != 1 || !r1.CreatedAt.Equal(r2.CreatedAt) || r2.IdempotencyKey != "turn-1" {
		t.Errorf("retry = %+v, first %+v", r2, r1)
	}
	if _, err := db.Append("c", user("other"), o); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("mismatched retry = %v, want ErrIdempotencyMismatch", err)
	}
	st, _ := db.Stats("c")
	if st.Messages != 1 {
		t.Errorf("after retries Messages = %d, want 1", st.Messages)
	}
	// The key is per conversation.
	mustCreate(t, db, "d")
	if r, err := db.Append("d", user("x"), o); err != nil || r.Seq != 1 {
		t.Errorf("same key elsewhere = %+v, %v", r, err)
	}
}

func TestBadMessagesWriteNothing(t *testing.T) { eachBackend(t, testBadMessagesWriteNothing) }

func testBadMessagesWriteNothing(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	bad := []struct {
		m     Message
		field string
	}{
		{Message{Role: 0, Content: TextContent("x")}, "role"},
		{Message{Role: RoleUser, Content: Content{Text: "x", Parts: []Part{}}}, "content"},
		{Message{Role: RoleUser, Content: PartsContent(ImagePart("", ""))}, "content[0].image_url.url"},
		{Message{Role: RoleUser, Content: PartsContent(ImagePart("u", "huge"))}, "content[0].image_url.detail"},
		{Message{Role: RoleUser, Content: PartsContent(ImagePart("javascript:alert(1)", ""))}, "content[0].image_url.url"},
		{Message{Role: RoleUser, Content: PartsContent(ImagePart("file:///etc/passwd", "low"))}, "content[0].image_url.url"},
		{Message{Role: RoleUser, Content: PartsContent(Part{Type: 7})}, "content[0].type"},
		{Message{Role: RoleUser, Content: TextContent("\xff")}, "content"},
		{Message{Role: RoleUser, ToolCallID: "x"}, "tool_call_id"},
		{Message{Role: RoleUser, ToolCalls: []ToolCall{{ID: "a", Name: "f"}}}, "tool_calls"},
		{Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "f", Arguments: "{"}}}, "tool_calls[0].function.arguments"},
		{Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "", Name: "f"}}}, "tool_calls[0].id"},
	}
	for _, tc := range bad {
		_, err := db.Append("c", tc.m, AppendOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) || ve.Field != tc.field {
			t.Errorf("Append(%+v) = %v, want invalid %s", tc.m, err, tc.field)
		}
	}
	if _, err := db.Append("c", user("x"), AppendOptions{TokenCounts: map[string]int{"e": -1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative token count: %v", err)
	}
	if _, err := db.Append("c", user("x"), AppendOptions{IdempotencyKey: strings.Repeat("k", 2000)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("long key: %v", err)
	}
	st, _ := db.Stats("c")
	if st.Messages != 0 {
		t.Errorf("bad appends wrote %d messages", st.Messages)
	}
	if rs, _ := db.Messages("c", All(), 0); len(rs) != 0 {
		t.Errorf("bad appends left %d records", len(rs))
	}
}

func TestTokenCounts(t *testing.T) { eachBackend(t, testTokenCounts) }

func testTokenCounts(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	mustAppend(t, db, "c", user("hello world"))
	mustAppend(t, db, "c", user("again"))
	if err := db.SetTokenCount("c", 1, "cl100k_base", 2); err != nil {
		t.Fatal(err)
	}
	if err := db.SetTokenCount("c", 1, "cl100k_base", 2); err != nil {
		t.Errorf("same count again: %v", err)
	}
	if err := db.SetTokenCount("c", 1, "cl100k_base", 3); !errors.Is(err, ErrTokenCountMismatch) {
		t.Errorf("different count: %v", err)
	}
	if err := db.SetTokenCount("c", 1, "o200k_base", 2); err != nil {
		t.Fatal(err)
	}
	if err := db.SetTokenCount("c", 3, "o200k_base", 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing message: %v", err)
	}
	for _, rev := range []bool{false, true} {
		var got []string
		db.Scan("c", 1, 0, rev, func(r Record) bool { got = append(got, fmt.Sprint(r.Seq, r.TokenCounts)); return true })
		want := "[1 map[cl100k_base:2 o200k_base:2] 2 map[]]"
		if rev {
			want = "[2 map[] 1 map[cl100k_base:2 o200k_base:2]]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("Scan(reverse=%v) = %v, want %v", rev, got, want)
		}
	}
}

func TestConcurrentAppends(t *testing.T) { eachBackend(t, testConcurrentAppends) }

func testConcurrentAppends(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "one")
	mustCreate(t, db, "two")
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for w := 0; w < writers; w++ {
		for _, conv := range []string{"one", "two"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					if _, err := db.Append(conv, user(fmt.Sprintf("w%d-%d", w, i)), AppendOptions{IdempotencyKey: fmt.Sprintf("w%d-%d", w, i%40)}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrIdempotencyMismatch) {
			t.Fatal(err)
		}
	}
	for _, conv := range []string{"one", "two"} {
		rs := denseAndDistinct(t, db, conv)
		st, _ := db.Stats(conv)
		if st.Messages != int64(len(rs)) || len(rs) != writers*40 {
			t.Errorf("%s: Stats.Messages = %d, records %d, want %d", conv, st.Messages, len(rs), writers*40)
		}
	}
}

func TestReopen(t *testing.T) { eachDurableBackend(t, testReopen) }

func testReopen(t *testing.T, be testBackend) {
	o := be.fresh(t)
	db := openWith(t, &o)
	mustCreate(t, db, "c")
	for i := 0; i < 5; i++ {
		mustAppend(t, db, "c", user(fmt.Sprint("m", i)))
	}
	if _, err := db.Append("c", user("keyed"), AppendOptions{IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	if dir := o.Dir; dir != "" {
		if _, err := Open(&Options{Dir: dir}); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
			t.Errorf("second Open = %v, want ErrLocked naming %s", err, dir)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openWith(t, &o)
	defer db.Close()
	st, err := db.Stats("c")
	if err != nil || st.Messages != 6 {
		t.Fatalf("Stats after reopen = %+v, %v", st, err)
	}
	if r, err := db.Append("c", user("keyed"), AppendOptions{IdempotencyKey: "k"}); err != nil || r.Seq != 6 {
		t.Errorf("retry after reopen = %+v, %v", r, err)
	}
	if r := mustAppend(t, db, "c", user("next")); r.Seq != 7 {
		t.Errorf("next seq after reopen = %d, want 7", r.Seq)
	}
	if r, err := db.Message("c", 3); err != nil || r.Message.Content.Text != "m2" {
		t.Errorf("Message(3) after reopen = %+v, %v", r, err)
	}
	if c2, err := db.Create("", nil); err != nil {
		t.Error(err)
	} else if cs, _ := db.conv(c2.ID); cs.num != 2 {
		t.Errorf("conversation number after reopen = %d, want 2", cs.num)
	}
}

func TestExportImport(t *testing.T) { eachBackend(t, testExportImport) }

func testExportImport(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "src")
	msgs := []Message{
		{Role: RoleSystem, Content: TextContent("sys <&>")},
		user("hi"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}},
		{Role: RoleTool, ToolCallID: "c1", Content: PartsContent(TextPart("a"), ImagePart("http://i", "low"))},
	}
	for _, m := range msgs {
		mustAppend(t, db, "src", m)
	}
	var buf bytes.Buffer
	if err := db.Export("src", &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `{"role":"system","content":"sys <&>"}
{"role":"user","content":"hi"}
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}
{"role":"tool","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"http://i","detail":"low"}}],"tool_call_id":"c1"}
`
	if buf.String() != want {
		t.Errorf("Export =\n%s\nwant\n%s", buf.String(), want)
	}
	mustCreate(t, db, "dst")
	var prog []int
	n, err := db.Import("dst", strings.NewReader(buf.String()+"\n"), ImportOptions{Progress: func(n int) { prog = append(prog, n) }})
	if err != nil || n.Imported != 4 || fmt.Sprint(prog) != "[4]" {
		t.Fatalf("Import = %d, %v (progress %v)", n, err, prog)
	}
	var again bytes.Buffer
	db.Export("dst", &again, ExportOptions{})
	if again.String() != want {
		t.Errorf("round trip =\n%s", again.String())
	}
	n, err = db.Import("dst", strings.NewReader(`{"role":"user","content":"ok"}`+"\n"+`{"role":"robot","content":"x"}`+"\n"+`{"role":"user","content":"never"}`), ImportOptions{})
	var ve *ValidationError
	if n.Imported != 0 || !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, "line 2") {
		t.Errorf("Import(bad line) = %d, %v", n, err)
	}
	if st, _ := db.Stats("dst"); st.Messages != 4 {
		t.Errorf("after bad import Messages = %d, want 4 (an import is all or nothing)", st.Messages)
	}
}

// TestImportOfASourceIsIdempotent: importing the same source twice adds
// nothing; a source that grew adds its new lines; a stored line the source
// now says otherwise stops the import. A byte order mark is not content;
// invalid UTF-8 is an error naming its line, never replaced.
func TestImportOfASourceIsIdempotent(t *testing.T) { eachBackend(t, testImportOfASourceIsIdempotent) }

func testImportOfASourceIsIdempotent(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	file := "\xEF\xBB\xBF" + `{"role":"user","content":"one"}` + "\n" + `{"role":"assistant","content":"two"}` + "\n"
	src := ImportOptions{Source: "/data/chat.jsonl"}
	if n, err := db.Import("c", strings.NewReader(file), src); err != nil || n != (ImportResult{Imported: 2}) {
		t.Fatalf("first import = %+v, %v", n, err)
	}
	if r, _ := db.Message("c", 1); r.Message.Content.Text != "one" {
		t.Fatalf("the byte order mark reached the content: %q", r.Message.Content.Text)
	}
	if n, err := db.Import("c", strings.NewReader(file), src); err != nil || n != (ImportResult{Skipped: 2}) {
		t.Fatalf("second import = %+v, %v", n, err)
	}
	grown := file + `{"role":"user","content":"three"}` + "\n"
	if n, err := db.Import("c", strings.NewReader(grown), src); err != nil || n != (ImportResult{Imported: 1, Skipped: 2}) {
		t.Fatalf("grown import = %+v, %v", n, err)
	}
	changed := strings.Replace(grown, "two", "TWO", 1)
	if _, err := db.Import("c", strings.NewReader(changed), src); !errors.Is(err, ErrIdempotencyMismatch) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("changed source: %v", err)
	}
	if n, err := db.Import("c", strings.NewReader(file), ImportOptions{}); err != nil || n.Imported != 2 {
		t.Fatalf("import without a source = %+v, %v", n, err)
	}
	if st, _ := db.Stats("c"); st.Messages != 5 {
		t.Fatalf("messages = %d, want 5", st.Messages)
	}
	bad := `{"role":"user","content":"fine"}` + "\n" + `{"role":"user","content":"caf` + "\xE9" + `"}` + "\n"
	n, err := db.Import("c", strings.NewReader(bad), ImportOptions{})
	var ve *ValidationError
	if n.Imported != 0 || !errors.As(err, &ve) || ve.Field != "line 2" || !strings.Contains(err.Error(), "invalid UTF-8 at byte 29") {
		t.Fatalf("invalid UTF-8: %+v, %v", n, err)
	}
}

func TestImportBatches(t *testing.T) { eachBackend(t, testImportBatches) }

func testImportBatches(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	var b strings.Builder
	for i := 0; i < 2500; i++ {
		fmt.Fprintf(&b, `{"role":"user","content":"m%d"}`+"\n", i)
	}
	var prog []int
	n, err := db.Import("c", strings.NewReader(b.String()), ImportOptions{Progress: func(n int) { prog = append(prog, n) }})
	if err != nil || n.Imported != 2500 || fmt.Sprint(prog) != "[1000 2000 2500]" {
		t.Fatalf("Import = %d, %v, progress %v", n, err, prog)
	}
	r, _ := db.Message("c", 2500)
	if r.Message.Content.Text != "m2499" {
		t.Errorf("last = %+v", r)
	}
}

func removeAll(p string) error { return os.RemoveAll(p) }

// TestCloseStopsGoroutines checks that Close owns every goroutine the store
// (badger, bleve, the indexer) started.
func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, o := range []*Options{{InMemory: true}, {Dir: t.TempDir()}, {Spec: sqliteSpec(t)}} {
		db, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		mustCreate(t, db, "c")
		mustAppend(t, db, "c", user("hello goroutines"))
		if _, _, err := db.Search("c", "hello", SearchOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Wait(context.Background(), "c", 0); err != nil { // a shared store starts listening
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestExportImportDocuments: an export with documents restores every
// version of every document (with its time) in another conversation;
// importing it again restores nothing twice.
func TestExportImportDocuments(t *testing.T) { eachBackend(t, testExportImportDocuments) }

func testExportImportDocuments(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "a")
	db.Append("a", user("hello"), AppendOptions{IdempotencyKey: "turn/t1/user"})
	for _, p := range []DocPut{
		{Collection: "warm", Key: "range_1_1", Body: []byte(`{"summary":"v1"}`)},
		{Collection: "warm", Key: "range_1_1", Body: []byte(`{"summary":"v2"}`)},
		{Collection: "receipt", Key: "turn_1", Body: []byte(`{"status":"completed"}`)},
	} {
		if _, err := db.PutDoc("a", p); err != nil {
			t.Fatal(err)
		}
	}
	var plain, full bytes.Buffer
	db.Export("a", &plain, ExportOptions{})
	db.Export("a", &full, ExportOptions{Documents: true})
	if strings.Contains(plain.String(), "rlmpl_document") || strings.Count(full.String(), `{"rlmpl_document":`) != 3 ||
		strings.Contains(plain.String(), "idempotency_key") || !strings.Contains(full.String(), `"idempotency_key":"turn/t1/user"`) {
		t.Fatalf("exports:\n%s\n%s", plain.String(), full.String())
	}
	mustCreate(t, db, "b")
	n, err := db.Import("b", strings.NewReader(full.String()), ImportOptions{})
	if err != nil || n != (ImportResult{Imported: 1, Documents: 3}) {
		t.Fatalf("import = %+v, %v", n, err)
	}
	for _, coll := range []string{"warm", "receipt"} {
		a, _ := db.Docs("a", coll, true)
		b, _ := db.Docs("b", coll, true)
		if len(a) != len(b) {
			t.Fatalf("%s: %d versions, want %d", coll, len(b), len(a))
		}
		for i := range a {
			if a[i].Key != b[i].Key || a[i].Version != b[i].Version || !a[i].CreatedAt.Equal(b[i].CreatedAt) || string(a[i].Body) != string(b[i].Body) {
				t.Errorf("%s: %+v, want %+v", coll, b[i], a[i])
			}
		}
	}
	// The message keeps its key: a turn retried in the restored
	// conversation finds its user message, and its receipts are listed.
	if r, err := db.Append("b", user("hello"), AppendOptions{IdempotencyKey: "turn/t1/user"}); err != nil || r.Seq != 1 {
		t.Fatalf("the key after the restore: seq %d, %v", r.Seq, err)
	}
	docsOnly := full.String()[strings.Index(full.String(), `{"rlmpl_document":`):]
	if n, err := db.Import("b", strings.NewReader(docsOnly), ImportOptions{}); err != nil || n != (ImportResult{Skipped: 3}) {
		t.Fatalf("import again = %+v, %v", n, err)
	}
	changed := strings.Replace(docsOnly, `"v2"`, `"v3"`, 1)
	if _, err := db.Import("b", strings.NewReader(changed), ImportOptions{}); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Fatalf("changed document: %v", err)
	}
}

// TestAppendAll: a batch is written in order in one transaction, each
// entry with its own key; a retried batch writes nothing; a key reused
// with other content or a bad message refuses the whole batch.
func TestAppendAll(t *testing.T) { eachBackend(t, testAppendAll) }

func testAppendAll(t *testing.T, be testBackend) {
	db := be.open(t)
	mustCreate(t, db, "c")
	if _, err := db.Append("c", user("before"), AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	batch := []Entry{
		{user("a"), AppendOptions{IdempotencyKey: "ka", Session: "s1"}},
		{user("b"), AppendOptions{TokenCounts: map[string]int{"o200k_base": 1}}},
		{user("a"), AppendOptions{IdempotencyKey: "ka", Session: "s1"}}, // the first entry's record
	}
	recs, err := db.AppendAll("c", batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Seq != 2 || recs[1].Seq != 3 || recs[2].Seq != 2 || recs[0].Session != "s1" || recs[1].TokenCounts["o200k_base"] != 1 {
		t.Fatalf("records = %+v", recs)
	}
	again, err := db.AppendAll("c", batch[:1])
	if err != nil || again[0].Seq != 2 {
		t.Fatalf("retry = %+v, %v", again, err)
	}
	if _, err := db.AppendAll("c", []Entry{{user("c"), AppendOptions{}}, {user("other"), AppendOptions{IdempotencyKey: "ka"}}}); !errors.Is(err, ErrIdempotencyMismatch) {
		t.Errorf("reused key = %v, want ErrIdempotencyMismatch", err)
	}
	if _, err := db.AppendAll("c", []Entry{{user("c"), AppendOptions{}}, {Message{Role: RoleUser, ToolCallID: "x"}, AppendOptions{}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad message = %v, want ErrInvalid", err)
	}
	if st, _ := db.Stats("c"); st.Messages != 3 {
		t.Errorf("Messages = %d after refused batches, want 3", st.Messages)
	}
	if recs, err := db.Messages("c", All(), 0); err != nil || len(recs) != 3 || recs[2].Message.Content.Text != "b" {
		t.Errorf("stored = %+v, %v", recs, err)
	}
}

// TestImportIsAllOrNothing: a line that fails (bad JSON, an unknown role,
// invalid UTF-8, a caller's check, a key or document version that
// conflicts with the conversation) fails the import before anything is
// written, however far into the input it is — past the first batch too —
// and an import that would have created the conversation leaves none.
func TestImportIsAllOrNothing(t *testing.T) { eachBackend(t, testImportIsAllOrNothing) }

func testImportIsAllOrNothing(t *testing.T, be testBackend) {
	var many strings.Builder // more than one batch before the bad line
	for i := range importBatchMessages + 500 {
		fmt.Fprintf(&many, `{"role":"user","content":"m%d"}`+"\n", i)
	}
	good := `{"role":"user","content":"one"}` + "\n"
	errOrphan := errors.New("orphan")
	noTool := func(m Message) error {
		if m.Role == RoleTool {
			return errOrphan
		}
		return nil
	}
	cases := []struct {
		name, input string
		opts        ImportOptions
		line        int
		want        error
	}{
		{"bad JSON", good + `{"role":"user",` + "\n", ImportOptions{}, 2, ErrInvalid},
		{"unknown role", good + `{"role":"robot","content":"x"}` + "\n", ImportOptions{}, 2, ErrInvalid},
		{"invalid UTF-8", good + `{"role":"user","content":"caf` + "\xE9" + `"}` + "\n", ImportOptions{}, 2, ErrInvalid},
		{"bad line after a batch", many.String() + `{"role":"robot"}` + "\n", ImportOptions{}, importBatchMessages + 501, ErrInvalid},
		{"check", good + `{"role":"tool","tool_call_id":"c9","content":"x"}` + "\n", ImportOptions{Check: noTool}, 2, errOrphan},
		{"changed source line", many.String(), ImportOptions{Source: "f"}, importBatchMessages + 2, ErrIdempotencyMismatch},
		{"document version", good + `{"rlmpl_document":{"collection":"receipt","key":"t","version":2,"created_at":"2024-01-01T00:00:00Z","body":{}}}` + "\n",
			ImportOptions{}, 2, ErrIdempotencyMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := be.open(t)
			mustCreate(t, db, "c")
			if tc.want == ErrIdempotencyMismatch && tc.opts.Source != "" {
				// The conversation holds line N+2 of the source, saying otherwise.
				if _, err := db.Append("c", user("other"), AppendOptions{IdempotencyKey: fmt.Sprintf("import/f/%d", tc.line)}); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := db.Stats("c")
			n, err := db.Import("c", strings.NewReader(tc.input), tc.opts)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("line %d", tc.line)) {
				t.Fatalf("Import = %v, want %v naming line %d", err, tc.want, tc.line)
			}
			after, _ := db.Stats("c")
			if n != (ImportResult{}) || after.Messages != before.Messages {
				t.Errorf("a failed import wrote %+v: %d messages, had %d", n, after.Messages, before.Messages)
			}
			if docs, _ := db.Docs("c", "receipt", true); len(docs) != 0 {
				t.Errorf("a failed import stored %d documents", len(docs))
			}
			if tc.opts.Source != "" {
				return // a new conversation holds no line of the source
			}
			create := tc.opts
			create.Create = true
			if _, err := db.Import("new", strings.NewReader(tc.input), create); err == nil {
				t.Fatal("the import into a new conversation succeeded")
			}
			if _, err := db.Conversation("new"); !errors.Is(err, ErrNotFound) {
				t.Errorf("a failed import left the conversation it would have created: %v", err)
			}
		})
	}
	db := be.open(t)
	if n, err := db.Import("new", strings.NewReader(good), ImportOptions{Create: true}); err != nil || n.Imported != 1 {
		t.Fatalf("Import(Create) = %+v, %v", n, err)
	}
}

// denseAndDistinct reads conv's messages and fails the test on a gap or a
// repeated sequence, or a text appended twice.
func denseAndDistinct(t *testing.T, db *DB, conv string) []Record {
	t.Helper()
	rs, err := db.Messages(conv, All(), 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, r := range rs {
		if r.Seq != int64(i+1) {
			t.Fatalf("%s: record %d has seq %d (a gap or a duplicate)", conv, i, r.Seq)
		}
		if seen[r.Message.Content.Text] {
			t.Fatalf("%s: %q appended twice", conv, r.Message.Content.Text)
		}
		seen[r.Message.Content.Text] = true
	}
	return rs
}
