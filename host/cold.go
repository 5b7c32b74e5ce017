package host

import (
	"context"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// conversationAdapter is the trusted adapter behind cold-history handles:
// a handle reads one conversation (its source names it; it cannot reach
// another) through bounded store operations — peek, slice over sequence
// indexes (0-based: index i is sequence i+1) and indexed search — and never
// replays the transcript.
type conversationAdapter struct{}

// coldSource is a handle's source: one conversation of one open store.
type coldSource struct {
	st   *openStore
	conv string
}

func (conversationAdapter) Name() string { return "conversation" }

func (conversationAdapter) Operations() []handle.Op {
	return []handle.Op{handle.OpPeek, handle.OpSlice, handle.OpSearch}
}

// Describe gives the model-visible metadata: no payload, only the id,
// message count, revision and backend.
func (conversationAdapter) Describe(ctx context.Context, source any) (string, int64, int64, []handle.Field, error) {
	src := source.(coldSource)
	st, err := src.st.db.Stats(src.conv)
	if err != nil {
		return "", 0, 0, nil, err
	}
	backend := "memory"
	if src.st.dir != "" {
		backend = "persist"
	}
	return "conversation", st.Messages, -1, []handle.Field{
		handle.F("conversation_id", src.conv),
		handle.F("source_revision", int(st.Messages)),
		handle.F("store_backend", backend),
	}, nil
}

// viewItem is a message as a cold operation returns it.
func viewItem(r store.Record) handle.Item {
	text := r.Message.Content.PlainText()
	return handle.Item{Text: text, Value: record("conversation_message_view",
		fld("content", prolog.Chars(text)), fld("role", engine.NewAtom(r.Message.Role.String())),
		fld("sequence", engine.Integer(r.Seq)))}
}

func (conversationAdapter) Do(ctx context.Context, source any, q handle.Request, lim handle.Limits) (handle.Work, error) {
	src := source.(coldSource)
	db := src.st.db
	st, err := db.Stats(src.conv)
	if err != nil {
		return handle.Work{}, err
	}
	total := st.Messages
	read := func(from, to int64) ([]handle.Item, error) {
		if to < from {
			return []handle.Item{}, nil
		}
		recs, err := db.Messages(src.conv, store.Range(from, to), 0)
		if err != nil {
			return nil, err
		}
		items := make([]handle.Item, len(recs))
		for i, r := range recs {
			items[i] = viewItem(r)
		}
		return items, nil
	}
	outOfRange := func(what string, v int) error {
		return &handle.Error{Op: q.Op, Kind: handle.KindOutOfRange, Message: what + " is beyond the conversation",
			Details: []handle.Field{handle.F("index", v), handle.F("messages", int(total))}}
	}
	want := func(n int64) int64 { return min(n, int64(lim.MaxResults)) }
	switch q.Op {
	case handle.OpPeek:
		switch q.Selector {
		case "head":
			items, err := read(1, want(min(int64(q.N), total)))
			return handle.Work{Value: items, ItemsInspected: len(items), Truncated: int64(len(items)) < min(int64(q.N), total)}, err
		case "tail":
			n := want(min(int64(q.N), total))
			items, err := read(total-n+1, total)
			return handle.Work{Value: items, ItemsInspected: len(items), Truncated: int64(len(items)) < min(int64(q.N), total)}, err
		case "item":
			if int64(q.N) >= total {
				return handle.Work{}, outOfRange("item", q.N)
			}
			items, err := read(int64(q.N)+1, int64(q.N)+1)
			if err != nil {
				return handle.Work{}, err
			}
			return handle.Work{Value: items[0], ItemsInspected: 1}, nil
		}
	case handle.OpSlice:
		if int64(q.Start) > total {
			return handle.Work{}, outOfRange("start", q.Start)
		}
		asked := min(int64(q.Length), total-int64(q.Start))
		items, err := read(int64(q.Start)+1, int64(q.Start)+want(asked))
		return handle.Work{Value: items, ItemsInspected: len(items), Truncated: int64(len(items)) < asked}, err
	case handle.OpSearch:
		// One extra hit tells whether the result was cut.
		hits, _, err := db.Search(src.conv, q.Pattern, store.SearchOptions{MaxResults: lim.MaxResults + 1, Offset: q.Cursor,
			Exact: q.Exact || q.CaseSensitive, CaseSensitive: q.CaseSensitive})
		if err != nil {
			return handle.Work{}, err
		}
		w := handle.Work{ItemsInspected: len(hits)}
		if len(hits) > lim.MaxResults {
			hits, w.Truncated, w.Next = hits[:lim.MaxResults], true, q.Cursor+lim.MaxResults
		}
		matches := make([]handle.Match, len(hits))
		for i, h := range hits {
			matches[i] = handle.Match{Index: int(h.Seq - 1), Value: viewItem(h.Record)}
		}
		w.Value = matches
		return w, nil
	}
	return handle.Work{}, &handle.Error{Op: q.Op, Kind: handle.KindCapabilityDenied, Message: "the conversation adapter answers peek, slice and search"}
}
