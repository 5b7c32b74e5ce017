package store_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rlmpl/rlmpl/store"
)

func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func Example() {
	db, err := store.Open(&store.Options{InMemory: true, Now: fixedClock()})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	md, _ := store.MetadataFromMap(map[string]any{"project": "tour"})
	conv, _ := db.Create("demo", md)
	fmt.Println(conv.ID, conv.CreatedAt.Format(time.RFC3339), string(conv.Metadata[0].Value))

	for _, text := range []string{"hello", "hi, how can I help?", "tell me about badgers"} {
		role := store.RoleUser
		if strings.HasPrefix(text, "hi") {
			role = store.RoleAssistant
		}
		rec, _ := db.Append("demo", store.Message{Role: role, Content: store.TextContent(text)}, store.AppendOptions{})
		fmt.Println(rec.Seq, rec.Message.Role, rec.Message.Content.Text)
	}
	st, _ := db.Stats("demo")
	fmt.Printf("%d messages, %d user, %d assistant\n", st.Messages, st.User, st.Assistant)
	// Output:
	// demo 2026-01-01T12:00:01Z "tour"
	// 1 user hello
	// 2 assistant hi, how can I help?
	// 3 user tell me about badgers
	// 3 messages, 2 user, 1 assistant
}

func ExampleDB_Append_idempotent() {
	db, _ := store.Open(nil)
	defer db.Close()
	db.Create("c", nil)
	msg := store.Message{Role: store.RoleUser, Content: store.TextContent("run the tests")}
	first, _ := db.Append("c", msg, store.AppendOptions{IdempotencyKey: "turn-7"})
	retry, _ := db.Append("c", msg, store.AppendOptions{IdempotencyKey: "turn-7"})
	_, err := db.Append("c", store.Message{Role: store.RoleUser, Content: store.TextContent("other")},
		store.AppendOptions{IdempotencyKey: "turn-7"})
	st, _ := db.Stats("c")
	fmt.Println(first.Seq, retry.Seq, st.Messages, errors.Is(err, store.ErrIdempotencyMismatch))
	// Output: 1 1 1 true
}

func ExampleDB_Messages() {
	db, _ := store.Open(nil)
	defer db.Close()
	db.Create("c", nil)
	for i := 1; i <= 10; i++ {
		db.Append("c", store.Message{Role: store.RoleUser, Content: store.TextContent(fmt.Sprint("m", i))}, store.AppendOptions{})
	}
	for _, sel := range []store.Selector{store.Recent(3), store.Range(4, 6), store.Before(3), store.After(8), store.Around(5, 1), store.Range(6, 4)} {
		rs, err := db.Messages("c", sel, 0)
		if err != nil {
			fmt.Println(sel, "error:", err)
			continue
		}
		var seqs []int64
		for _, r := range rs {
			seqs = append(seqs, r.Seq)
		}
		fmt.Println(sel, seqs)
	}
	// Output:
	// recent(3) [8 9 10]
	// range(4,6) [4 5 6]
	// before(3) [1 2]
	// after(8) [9 10]
	// around(5,1) [4 5 6]
	// range(6,4) error: store: invalid range: range(6,4): start is after end
}

func ExampleDB_Search() {
	db, _ := store.Open(nil)
	defer db.Close()
	db.Create("c", nil)
	for _, text := range []string{"the user asked about badger compaction", "bleve builds the index", "badger badger badger"} {
		db.Append("c", store.Message{Role: store.RoleUser, Content: store.TextContent(text)}, store.AppendOptions{})
	}
	// Found at once: the search scans what the indexer has not reached yet.
	hits, _, _ := db.Search("c", "badger", store.SearchOptions{})
	for _, h := range hits {
		fmt.Println(h.Seq, h.Message.Content.Text)
	}
	// Content only: "user" matches the one message that says it, not every
	// message of role user.
	hits, _, _ = db.Search("c", "user", store.SearchOptions{})
	fmt.Println(len(hits), hits[0].Seq)
	// Output:
	// 3 badger badger badger
	// 1 the user asked about badger compaction
	// 1 1
}

func ExampleDB_Export() {
	db, _ := store.Open(nil)
	defer db.Close()
	db.Create("src", nil)
	db.Import("src", strings.NewReader(`{"role":"user","content":"hi"}
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}
{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"a.go"}]}
`), store.ImportOptions{})
	db.Export("src", os.Stdout, store.ExportOptions{})
	// Output:
	// {"role":"user","content":"hi"}
	// {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}
	// {"role":"tool","content":[{"type":"text","text":"a.go"}],"tool_call_id":"c1"}
}

func ExampleDB_Find() {
	db, _ := store.Open(nil)
	defer db.Close()
	db.Create("c", nil)
	may := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)
	for _, t := range []struct{ who, text string }{
		{"Melanie", "What are you painting these days?"},
		{"Caroline", "A sunrise over the lake, painted in watercolors."},
		{"Melanie", "I painted the same lake last year!"},
		{"Caroline", "Anyway, the adoption agency called back."},
	} {
		db.Append("c", store.Message{Role: store.RoleUser, Name: t.who, Content: store.TextContent(t.text)},
			store.AppendOptions{Time: may, Session: "session_1"})
	}
	// The query names a speaker: her messages rank first. Each hit comes
	// with the turn before and after it in its session.
	res, _ := db.Find("c", "What did Caroline paint?", store.SearchOptions{MaxResults: 1, Window: 1})
	for _, h := range res.Hits {
		fmt.Println(h.Seq, h.Message.Name+":", h.Message.Content.Text)
		for _, w := range h.Window {
			fmt.Println("  ", w.Seq, w.Message.Name+":", w.Message.Content.Text)
		}
	}
	// Filters: roles, a session, a date range.
	res, _ = db.Find("c", "lake", store.SearchOptions{Since: may.AddDate(0, 1, 0)})
	fmt.Println(len(res.Hits), "hits since June")
	// Output:
	// 2 Caroline: A sunrise over the lake, painted in watercolors.
	//    1 Melanie: What are you painting these days?
	//    3 Melanie: I painted the same lake last year!
	// 0 hits since June
}
