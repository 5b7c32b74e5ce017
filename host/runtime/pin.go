package runtime

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/rlmpl/rlmpl/store"
)

// Pinned context: messages every pack of the conversation holds, first,
// whatever the pressure. The conversation's own system messages are pinned
// by default (the roles are lib's policy, pack.Utilities.PinnedRoles); a
// program pins or unpins any range of messages. Pins are durable: one
// versioned document holds the log of pin operations, applied in order.

// pinCollection and pinKey name the document of a conversation's pins.
const (
	pinCollection = "pin"
	pinKey        = "pins"
)

// PinOp is one pin operation: From..To (inclusive) pinned or unpinned.
type PinOp struct {
	From   int64 `json:"from"`
	To     int64 `json:"to"`
	Pinned bool  `json:"pinned"`
}

// ErrUnpinnable is a pin of a tool-call group member (an assistant
// message with tool calls, or a tool result): pinned messages render
// first, which would separate a result from its call.
var ErrUnpinnable = errors.New("runtime: a tool call or tool result cannot be pinned")

// PinOps reads the conversation's pin operations, oldest first.
func (c Conversation) PinOps() ([]PinOp, error) {
	d, err := c.st.db.GetDoc(c.id, pinCollection, pinKey, 0)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := c.Info(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ops []PinOp
	if err := json.Unmarshal(d.Body, &ops); err != nil {
		return nil, fmt.Errorf("%w: pins of %s v%d: %v", store.ErrCorrupt, c.id, d.Version, err)
	}
	return ops, nil
}

// Pin pins (or, with pinned false, unpins) the stored messages from..to,
// and says whether anything changed: pinning what a pin already covers
// writes nothing (idempotent). An unpin overrides the default pin of a
// system message, so a program that replaces its instructions appends the
// new system message and unpins the old one. Not undone on backtracking.
func (c Conversation) Pin(from, to int64, pinned bool) (bool, error) {
	st, err := c.Stats()
	if err != nil {
		return false, err
	}
	if from < 1 || to < from || to > st.Messages {
		return false, fmt.Errorf("%w: range(%d, %d) of %d stored", store.ErrInvalidRange, from, to, st.Messages)
	}
	ops, err := c.PinOps()
	if err != nil {
		return false, err
	}
	state := pinState(ops)
	changed := false
	for s := from; s <= to && !changed; s++ {
		p, set := state[s]
		changed = !set || p != pinned
	}
	if !changed {
		return false, nil
	}
	if pinned {
		recs, err := c.Messages(store.Range(from, to), 0)
		if err != nil {
			return false, err
		}
		for _, r := range recs {
			if r.Message.Role == store.RoleTool || len(r.Message.ToolCalls) > 0 {
				return false, fmt.Errorf("%w: message %d", ErrUnpinnable, r.Seq)
			}
		}
	}
	body, err := json.Marshal(append(ops, PinOp{From: from, To: to, Pinned: pinned}))
	if err != nil {
		return false, err
	}
	_, err = c.st.db.PutDoc(c.id, store.DocPut{Collection: pinCollection, Key: pinKey, Body: body})
	return err == nil, err
}

// pinState is the explicit pin state of each sequence an operation named:
// the last operation covering it wins.
func pinState(ops []PinOp) map[int64]bool {
	state := map[int64]bool{}
	for _, op := range ops {
		for s := op.From; s <= op.To; s++ {
			state[s] = op.Pinned
		}
	}
	return state
}

// pinned reads the pinned messages, ascending: those of the pinned roles
// (through the store's role index, O(their number)) not unpinned, and
// those a program pinned.
func (c Conversation) pinned(roles []string) ([]store.Record, error) {
	ops, err := c.PinOps()
	if err != nil {
		return nil, err
	}
	state := pinState(ops)
	var out []store.Record
	have := map[int64]bool{}
	for _, name := range roles {
		role, err := store.ParseRole(name)
		if err != nil {
			return nil, err
		}
		recs, err := c.Messages(store.ByRole(role), 0)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if p, set := state[r.Seq]; !set || p {
				out, have[r.Seq] = append(out, r), true
			}
		}
	}
	seqs := make([]int64, 0, len(state))
	for s, p := range state {
		if p && !have[s] {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	for _, s := range seqs {
		r, err := c.Message(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b store.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}
