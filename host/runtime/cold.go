package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/store"
)

// MessageView is a stored message as a cold-history operation returns it
// (the Value of a handle.Item): what a planner needs to read a turn. A
// search hit carries its Window: the turns around it in its session.
type MessageView struct {
	Sequence int64
	Role     string
	Content  string
	Window   []MessageView
}

// coldWindow is how many turns on each side of a search hit a cold search
// returns with it: the answer next to a matching question (and the
// question of a matching answer), which is where half of plain BM25's
// misses are (store's retrieval eval; its LoCoMo figures with and without
// the window are in docs/performance.md).
const coldWindow = 1

// ColdContext registers an opaque handle on the conversation's history in
// reg, through the trusted conversation adapter: peek, slice (0-based:
// index i is sequence i+1) and indexed search, bounded by the limits, never
// a replay of the transcript, and no way to reach another conversation.
// Delete the handle when done.
func (c Conversation) ColdContext(ctx context.Context, reg *handle.Registry, lim handle.Limits) (handle.Ref, handle.Metadata, error) {
	if err := reg.RegisterAdapter(conversationAdapter{}); err != nil {
		return handle.Ref{}, handle.Metadata{}, err
	}
	return reg.RegisterSource(ctx, conversationAdapter{}.Name(), c, lim)
}

// conversationAdapter is the trusted adapter behind cold-history handles;
// its source is one Conversation.
type conversationAdapter struct{}

func (conversationAdapter) Name() string { return "conversation" }

func (conversationAdapter) Operations() []handle.Op {
	return []handle.Op{handle.OpPeek, handle.OpSlice, handle.OpSearch}
}

// Describe gives the model-visible metadata: no payload, only the id,
// message count, revision and backend.
func (conversationAdapter) Describe(ctx context.Context, source any) (string, int64, int64, []handle.Field, error) {
	c := source.(Conversation)
	st, err := c.Stats()
	if err != nil {
		return "", 0, 0, nil, err
	}
	return "conversation", st.Messages, -1, []handle.Field{
		handle.F("conversation_id", c.id),
		handle.F("source_revision", int(st.Messages)),
		handle.F("store_backend", c.st.kind),
	}, nil
}

// viewItem is a message as a cold operation returns it: the text a model
// reads is what the message holds (readText); its view's content is the
// plain text.
func viewItem(r store.Record) handle.Item {
	return handle.Item{Text: readText(r.Message), Value: MessageView{Sequence: r.Seq, Role: r.Message.Role.String(), Content: r.Message.Content.PlainText()}}
}

// readText is a message as a model reads it in cold history: its text,
// then its images ("[image: caption]") and tool calls ("→ name(arguments)"),
// so that a message found by its caption or its call's arguments does not
// read as nothing.
func readText(m store.Message) string {
	var parts []string
	if text := m.Content.PlainText(); text != "" {
		parts = append(parts, text)
	}
	for _, p := range m.Content.Parts {
		switch {
		case p.Type == store.PartText:
		case p.Alt != "":
			parts = append(parts, "[image: "+p.Alt+"]")
		default:
			parts = append(parts, "[image]")
		}
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, fmt.Sprintf("→ %s(%s)", tc.Name, tc.Arguments))
	}
	return strings.Join(parts, " ")
}

// hitLine is one message's line in a hit's text.
func hitLine(r store.Record) string {
	return fmt.Sprintf("[%d] %s: %s", r.Seq, r.Message.Role, readText(r.Message))
}

// hitItem is a search hit as a cold search returns it: its text is the
// excerpt a model reads, one "[sequence] role: text" line per message of
// its window (the hit and the turns around it), in order.
func hitItem(h store.Hit) handle.Item {
	v := viewItem(h.Record).Value.(MessageView)
	var lines []string
	hitDone := false
	for _, r := range h.Window {
		if !hitDone && r.Seq > h.Seq {
			lines = append(lines, hitLine(h.Record))
			hitDone = true
		}
		v.Window = append(v.Window, viewItem(r).Value.(MessageView))
		lines = append(lines, hitLine(r))
	}
	if !hitDone {
		lines = append(lines, hitLine(h.Record))
	}
	return handle.Item{Text: strings.Join(lines, "\n"), Value: v}
}

// hitLineSize is the size of a message's line in a hit's text, so that
// the store's window budget and the handle's byte limit agree.
func hitLineSize(r store.Record) int { return len(hitLine(r)) + 1 }

func (conversationAdapter) Do(ctx context.Context, source any, q handle.Request, lim handle.Limits) (handle.Work, error) {
	c := source.(Conversation)
	st, err := c.Stats()
	if err != nil {
		return handle.Work{}, err
	}
	total := st.Messages
	read := func(from, to int64) ([]handle.Item, error) {
		if to < from {
			return []handle.Item{}, nil
		}
		recs, err := c.Messages(store.Range(from, to), 0)
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
		res, err := c.Find(q.Pattern, store.SearchOptions{MaxResults: lim.MaxResults + 1, Offset: q.Cursor,
			Exact: q.Exact || q.CaseSensitive, CaseSensitive: q.CaseSensitive,
			Window: coldWindow, MaxBytes: lim.MaxBytes, Size: hitLineSize})
		if errors.Is(err, store.ErrInvalid) {
			// The pattern is the only argument the caller wrote: too long
			// (store.MaxQueryBytes, store.MaxQueryTerms).
			return handle.Work{}, &handle.Error{Op: q.Op, Kind: handle.KindInvalidPattern, Message: err.Error()}
		}
		if err != nil {
			return handle.Work{}, err
		}
		hits := res.Hits
		w := handle.Work{ItemsInspected: len(hits), Truncated: res.Truncated}
		if len(hits) > lim.MaxResults {
			hits, w.Truncated, w.Next = hits[:lim.MaxResults], true, q.Cursor+lim.MaxResults
		}
		matches := make([]handle.Match, len(hits))
		for i, h := range hits {
			matches[i] = handle.Match{Index: int(h.Seq - 1), Value: hitItem(h)}
		}
		w.Value = matches
		return w, nil
	}
	return handle.Work{}, &handle.Error{Op: q.Op, Kind: handle.KindCapabilityDenied, Message: "the conversation adapter answers peek, slice and search"}
}
