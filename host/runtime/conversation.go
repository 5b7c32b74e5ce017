package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rlmpl/rlmpl/store"
)

// Conversation is one conversation of an open [Store]: a small value
// naming it. Every method reads or writes the store; a conversation that
// does not exist is an error wrapping [store.ErrNotFound].
type Conversation struct {
	st   *Store
	id   string
	warm *Store // where its warm artifacts live; nil: st (see WithWarmStore)
}

// ID is the conversation's id.
func (c Conversation) ID() string { return c.id }

// Store is the store the conversation lives in.
func (c Conversation) Store() *Store { return c.st }

// Info reads the conversation's creation time and metadata.
func (c Conversation) Info() (store.Conversation, error) { return c.st.db.Conversation(c.id) }

// AppendOptions are the options of [Conversation.Append].
type AppendOptions struct {
	// IdempotencyKey makes the append retry-safe (see store.AppendOptions).
	IdempotencyKey string
	// Encodings are counted at append and stored with the message, so packs
	// for models of these encodings never re-tokenize history (the policy's
	// choice: lib's conversation_count_encoding/1). Unknown names are an
	// error and nothing is written.
	Encodings []string
	// Docs, when set, gives documents written in the same transaction as
	// the message (a turn's receipt), from the record (see store).
	Docs func(store.Record) ([]store.DocPut, error)
	// Time, Session and Metadata say when the message was said, which
	// session it belongs to and what else is known of it (see
	// store.AppendOptions): search filters and ranks by them.
	Time     time.Time
	Session  string
	Metadata []store.KV
	// Before are messages written right before this one in the same
	// transaction (a direct turn's tool calls and results), counted like
	// it (see store.AppendOptions.Before).
	Before []store.Message
}

// ErrOrphanToolResult is a tool message that answers no tool call of the
// messages before it: a provider rejects it, so storing it would make every
// later turn of the conversation carry a message that cannot be sent.
var ErrOrphanToolResult = errors.New("runtime: a tool result must answer a tool call of the messages before it")

// callWindow holds the tool-call ids of the last maxToolExtension messages
// (the reach of a pack's hot tail back to a call): a tool result must
// answer one of them.
type callWindow struct {
	recent [][]string // the call ids of each message, oldest first
	open   map[string]int
}

// push adds m as the newest message.
func (w *callWindow) push(m store.Message) {
	if w.open == nil {
		w.open = map[string]int{}
	}
	ids := make([]string, len(m.ToolCalls))
	for i, tc := range m.ToolCalls {
		ids[i] = tc.ID
		w.open[tc.ID]++
	}
	w.recent = append(w.recent, ids)
	if len(w.recent) > maxToolExtension {
		for _, id := range w.recent[0] {
			if w.open[id]--; w.open[id] == 0 {
				delete(w.open, id)
			}
		}
		w.recent = w.recent[1:]
	}
}

// check refuses a tool message whose call is not in the window.
func (w *callWindow) check(m store.Message) error {
	if m.Role != store.RoleTool || w.open[m.ToolCallID] > 0 {
		return nil
	}
	return fmt.Errorf("%w (tool_call_id %q)", ErrOrphanToolResult, m.ToolCallID)
}

// callWindow reads the window of the conversation's last messages.
func (c Conversation) callWindow() (*callWindow, error) {
	recs, err := c.Messages(store.Recent(maxToolExtension), 0)
	w := &callWindow{}
	for _, r := range recs {
		w.push(r.Message)
	}
	return w, err
}

// Append normalizes m, counts its content in every encoding of opts, and
// appends it durably. Everything is validated before the write: a tool
// result must answer a call of the maxToolExtension messages before it.
func (c Conversation) Append(m store.Message, opts AppendOptions) (store.Record, error) {
	m, err := m.Normalize()
	if err != nil {
		return store.Record{}, err
	}
	if m.Role == store.RoleTool {
		w, err := c.callWindow()
		if err == nil {
			err = w.check(m)
		}
		if err != nil {
			return store.Record{}, err
		}
	}
	counts, err := c.st.rt.contentCounts(m, opts.Encodings)
	if err != nil {
		return store.Record{}, err
	}
	before := make([]store.Prior, len(opts.Before))
	for i, p := range opts.Before {
		before[i].Message = p
		if before[i].TokenCounts, err = c.st.rt.contentCounts(p, opts.Encodings); err != nil {
			return store.Record{}, err
		}
	}
	return c.st.db.Append(c.id, m, store.AppendOptions{IdempotencyKey: opts.IdempotencyKey, TokenCounts: counts, Docs: opts.Docs,
		Time: opts.Time, Session: opts.Session, Metadata: opts.Metadata, Before: before})
}

// AppendAll appends entries in order in one transaction (see
// [store.DB.AppendAll]: all durable or none, one sync), counting each
// message's content once in every encoding. A tool result may answer a
// call earlier in the batch; everything is validated before the write.
func (c Conversation) AppendAll(entries []store.Entry, encodings []string) ([]store.Record, error) {
	var w *callWindow
	batch := make([]store.Entry, len(entries))
	for i, e := range entries {
		m, err := e.Message.Normalize()
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		if m.Role == store.RoleTool && w == nil {
			if w, err = c.callWindow(); err != nil {
				return nil, err
			}
			for _, prior := range batch[:i] {
				w.push(prior.Message)
			}
		}
		if w != nil {
			if err := w.check(m); err != nil {
				return nil, fmt.Errorf("entry %d: %w", i+1, err)
			}
			w.push(m)
		}
		if e.Options.TokenCounts, err = c.st.rt.contentCounts(m, encodings); err != nil {
			return nil, err
		}
		batch[i] = store.Entry{Message: m, Options: e.Options}
	}
	return c.st.db.AppendAll(c.id, batch)
}

// contentCounts counts m's content text in each encoding.
func (r *Runtime) contentCounts(m store.Message, encodings []string) (map[string]int, error) {
	if len(encodings) == 0 {
		return nil, nil
	}
	reg := r.Tokenizers()
	text := m.Content.PlainText()
	counts := make(map[string]int, len(encodings))
	for _, enc := range encodings {
		counter, err := reg.CounterForEncoding(enc)
		if err != nil {
			return nil, err
		}
		counts[enc] = counter.Count(text).Tokens
	}
	return counts, nil
}

// Message reads the message at seq.
func (c Conversation) Message(seq int64) (store.Record, error) { return c.st.db.Message(c.id, seq) }

// Messages reads the messages sel selects, in sequence order; limit > 0
// keeps the first limit.
func (c Conversation) Messages(sel store.Selector, limit int) ([]store.Record, error) {
	return c.st.db.Messages(c.id, sel, limit)
}

// Wait blocks until the conversation has a message after sequence after
// and returns its last sequence, or returns ctx's error (with the last
// sequence seen) when none comes first. It sees appends of this process
// on every store and, on a PostgreSQL store, of every process (LISTEN/
// NOTIFY, no polling). Read what arrived with Messages(store.After(after), n).
func (c Conversation) Wait(ctx context.Context, after int64) (int64, error) {
	return c.st.db.Wait(ctx, c.id, after)
}

// Stats reads the conversation's counters (O(1)).
func (c Conversation) Stats() (store.Stats, error) { return c.st.db.Stats(c.id) }

// listDocs reads a collection of the conversation's documents (the latest
// version of each key, or every version with history), each decoded.
func listDocs[T any](c Conversation, collection string, history bool, decode func(store.Doc) (T, error)) ([]T, error) {
	docs, err := c.st.db.Docs(c.id, collection, history)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(docs))
	for i, d := range docs {
		if out[i], err = decode(d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Find is Search with everything the store returns: context lifts,
// windows around each hit, the words a broad query dropped (see
// store.DB.Find).
func (c Conversation) Find(q string, opts store.SearchOptions) (store.Result, error) {
	return c.st.db.Find(c.id, q, opts)
}

// Search finds messages matching q, best first (see store.DB.Search).
func (c Conversation) Search(q string, opts store.SearchOptions) ([]store.Hit, error) {
	hits, _, err := c.st.db.Search(c.id, q, opts)
	return hits, err
}

// Export writes the conversation as OpenAI chat-messages JSONL.
func (c Conversation) Export(w io.Writer, opts store.ExportOptions) error {
	return c.st.db.Export(c.id, w, opts)
}

// ImportOptions are the options of [Conversation.Import].
type ImportOptions struct {
	// Progress, when set, is called with the running count after each batch.
	Progress func(n int)
	// Source names the source, so that importing it again adds only its
	// new lines (see store.ImportOptions.Source).
	Source string
	// Encodings are counted for each message, as by Append.
	Encodings []string
	// WaitIndexed bounds how long Import waits for the full-text index to
	// catch up, since a bulk load is usually followed by searches (which
	// are correct either way, only slower on the unindexed tail). Zero
	// does not wait.
	WaitIndexed time.Duration
	// Lenient stores tool results that answer no call before them (a
	// transcript as it was), which a pack then leaves out and says so
	// (orphan_tool_result). By default such a line fails the import and
	// nothing is written.
	Lenient bool
	// Create creates the conversation when it does not exist, once every
	// line has passed the check: a failed import leaves none behind.
	Create bool
}

// Import appends the messages of OpenAI chat-messages JSONL in batches,
// counted in opts.Encodings like appends, and says how many it appended
// and skipped. It is all or nothing (see store.DB.Import): every line is
// checked before anything is written — and unless opts.Lenient, a tool
// result must answer a call of the messages before it (in the stored
// tail or the lines above it, as for Append).
func (c Conversation) Import(r io.Reader, opts ImportOptions) (store.ImportResult, error) {
	reg := c.st.rt.Tokenizers()
	for _, enc := range opts.Encodings {
		if _, err := reg.CounterForEncoding(enc); err != nil {
			return store.ImportResult{}, err
		}
	}
	so := store.ImportOptions{Progress: opts.Progress, Source: opts.Source, Create: opts.Create, TokenCounts: func(m store.Message) map[string]int {
		counts, _ := c.st.rt.contentCounts(m, opts.Encodings) // the encodings are known: checked above
		return counts
	}}
	if !opts.Lenient {
		w, err := c.callWindow()
		if errors.Is(err, store.ErrNotFound) && opts.Create {
			w, err = &callWindow{}, nil // a conversation to create holds no call
		}
		if err != nil {
			return store.ImportResult{}, err
		}
		so.Check = func(m store.Message) error {
			if err := w.check(m); err != nil {
				return err
			}
			w.push(m)
			return nil
		}
	}
	n, err := c.st.db.Import(c.id, r, so)
	if err == nil && opts.WaitIndexed > 0 {
		err = c.st.db.WaitIndexed(opts.WaitIndexed)
	}
	return n, err
}
