package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/rlmpl/rlmpl/store"
)

// A turn whose process dies (kill -9, a crash, a power cut) between its
// user message and its receipt leaves that message with no receipt. It is
// never silent (I8):
//
//   - EachReceipt gives such a turn a receipt of its state: running while
//     a turn holds the conversation's lock, else the failed receipt of an
//     interrupted turn (Version 0: not stored yet);
//   - the next turn on the conversation, and RecordInterrupted (chat calls
//     it when it opens one), store that failed receipt;
//   - packs send lib's no-reply note after the message, once another user
//     message follows it (pack.Turn.NoReply), as for a turn that failed.

// KindInterrupted is the error kind of the failed receipt of a turn whose
// process ended before it stored an answer or a receipt.
const KindInterrupted = "turn_interrupted"

// StatusRunning is the status EachReceipt gives a turn still in progress:
// it holds the conversation's turn lock and has stored no receipt yet.
const StatusRunning = "running"

// interruptedScan bounds how far back from the end of a conversation a
// turn looks for the previous turn's user message (other appends may
// follow it).
const interruptedScan = 64

// turnOf parses a turn's idempotency key: turn/<id>/<role>.
func turnOf(key string) (id, role string, ok bool) {
	rest, ok := strings.CutPrefix(key, "turn/")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// interruptedReceipt is the failed receipt of turn id, whose process ended
// after storing its user message and before anything else: what it sent,
// if anything, is unknown.
func interruptedReceipt(id string, user store.Record) Receipt {
	return Receipt{TurnID: id, Status: StatusFailed, Attempt: 1, UserSeq: user.Seq, Calls: []ReceiptCall{},
		Error: &ReceiptError{Kind: KindInterrupted,
			Message: "the process running the turn ended (killed, crashed or lost power) before it stored an answer or a receipt; what it sent is unknown"},
		CreatedAt: user.CreatedAt.UnixMilli()}
}

// RecordInterrupted stores the failed receipt of the conversation's last
// turn when its process ended before storing one, and returns that turn's
// id ("" when there was none to record). A turn in progress (holding the
// conversation's turn lock, in this process or another) is left alone.
func (c Conversation) RecordInterrupted(ctx context.Context) (string, error) {
	unlock, free, err := c.st.db.TryLockConversation(ctx, c.id)
	if err != nil || !free {
		return "", err
	}
	defer unlock()
	return c.recordInterrupted("")
}

// recordInterrupted is RecordInterrupted under the conversation's turn
// lock: it finds the last turn's user message among the conversation's
// last interruptedScan messages and, when that turn (other than skip, a
// turn about to run again) has no receipt, stores its failed receipt.
func (c Conversation) recordInterrupted(skip string) (string, error) {
	// Newest first, stopping at the first message of a turn: usually the
	// one before, the previous turn's answer.
	var user store.Record
	var id string
	seen := 0
	err := c.st.db.Scan(c.id, 1, 0, true, func(m store.Record) bool {
		seen++
		turn, role, isTurn := turnOf(m.IdempotencyKey)
		if isTurn && role == "user" && turn != skip {
			user, id = m, turn
		}
		return !isTurn && seen < interruptedScan
	})
	if err != nil || id == "" {
		return "", err // no turn, or the last one answered or runs again now
	}
	if _, err := c.Receipt(id); !errors.Is(err, store.ErrNotFound) {
		return "", err // it has one (nil), or the read failed
	}
	body, err := json.Marshal(interruptedReceipt(id, user))
	if err != nil {
		return "", err
	}
	if _, err := c.st.db.PutDoc(c.id, store.DocPut{Collection: receiptCollection, Key: id, Body: body}); err != nil {
		return "", err
	}
	return id, nil
}

// pendingReceipt is the receipt EachReceipt gives turn id, whose user
// message has no stored receipt: running when it is the conversation's
// last turn and holds the turn lock, else (the lock taken, the receipt
// still absent) the failed receipt of an interrupted turn, unstored.
func (c Conversation) pendingReceipt(ctx context.Context, id string, user store.Record) (Receipt, error) {
	last, err := c.lastTurn(user.Seq)
	if err != nil {
		return Receipt{}, err
	}
	if last {
		unlock, free, err := c.st.db.TryLockConversation(ctx, c.id)
		if err != nil {
			return Receipt{}, err
		}
		if !free {
			return Receipt{TurnID: id, Status: StatusRunning, Attempt: 1, UserSeq: user.Seq, Calls: []ReceiptCall{},
				CreatedAt: user.CreatedAt.UnixMilli()}, nil
		}
		defer unlock()
		// The turn may have stored its receipt since it was looked for.
		if r, err := c.Receipt(id); !errors.Is(err, store.ErrNotFound) {
			return r, err
		}
	}
	return interruptedReceipt(id, user), nil
}

// lastTurn reports whether no turn's user message follows seq: only the
// last turn can be in progress (turns of a conversation run one at a
// time, and a turn's user message is stored under its lock).
func (c Conversation) lastTurn(seq int64) (bool, error) {
	last := true
	err := c.st.db.Scan(c.id, seq+1, 0, false, func(m store.Record) bool {
		if _, role, isTurn := turnOf(m.IdempotencyKey); isTurn && role == "user" {
			last = false
		}
		return last
	})
	return last, err
}
