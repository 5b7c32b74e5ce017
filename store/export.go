package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Export writes the messages of conv to w as JSONL: one OpenAI
// chat-messages object per line ([Message.MarshalJSON]), in sequence
// order. It reads one snapshot and returns [ErrNotFound] for an unknown
// conversation.
func (db *DB) Export(conv string, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var werr error
	err := db.Scan(conv, 1, 0, false, func(r Record) bool {
		b, err := r.Message.MarshalJSON()
		if err != nil {
			werr = fmt.Errorf("store: export %q: message %d: %w", conv, r.Seq, err)
			return false
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			werr = fmt.Errorf("store: export %q: %w", conv, err)
			return false
		}
		return true
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return bw.Flush()
}

// Import batch limits: a batch is one transaction.
const (
	importBatchMessages = 1000
	importBatchBytes    = 4 << 20
	maxImportLine       = 64 << 20
)

// ImportOptions are the options of [DB.Import]. The zero value is valid.
type ImportOptions struct {
	// Progress, when set, is called with the running count after each batch.
	Progress func(n int)
	// TokenCounts, when set, gives each message's content token counts per
	// encoding, stored with it as [AppendOptions.TokenCounts] would.
	TokenCounts func(Message) map[string]int
}

// Import appends the OpenAI-format JSONL messages read from r to conv, in
// order, in batches of up to 1000 messages per transaction (an order of
// magnitude faster than one Append each). Blank lines are skipped. It
// calls progress (if not nil) with the running count after each batch and
// returns the number of messages imported.
//
// A malformed line stops the import with an error naming the line and
// wrapping [ErrInvalid]; the messages before it are stored, the bad line and
// everything after are not. It returns [ErrNotFound] for an unknown
// conversation.
func (db *DB) Import(conv string, r io.Reader, opts ImportOptions) (int, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return 0, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	var (
		batch  []Message
		bytes_ int
		total  int
		line   int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var last int64
		err := db.kv.Update(func(t kvTxn) error {
			h, err := getHead(t, cs.num)
			if err != nil {
				return err
			}
			for _, m := range batch {
				var ao AppendOptions
				if opts.TokenCounts != nil {
					ao.TokenCounts = opts.TokenCounts(m)
				}
				if _, err := db.writeMessage(t, cs, &h, m, ao); err != nil {
					return err
				}
			}
			last = h.lastSeq
			return t.Set(headKey(cs.num), encodeHead(h))
		})
		if err != nil {
			return fmt.Errorf("store: import into %q: %w", conv, err)
		}
		cs.head.Store(last)
		db.appended(cs)
		total += len(batch)
		batch, bytes_ = batch[:0], 0
		if opts.Progress != nil {
			opts.Progress(total)
		}
		return nil
	}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var m Message
		err := json.Unmarshal(b, &m)
		if err == nil {
			m, err = m.Normalize()
		}
		if err != nil {
			if ferr := flush(); ferr != nil {
				return total, ferr
			}
			var ve *ValidationError
			if errors.As(err, &ve) {
				ve2 := *ve
				ve2.Field = fmt.Sprintf("line %d", line) + dotField(ve.Field)
				return total, &ve2
			}
			return total, invalid(fmt.Sprintf("line %d", line), "%v", err)
		}
		batch = append(batch, m)
		bytes_ += len(b)
		if len(batch) >= importBatchMessages || bytes_ >= importBatchBytes {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if ferr := flush(); ferr != nil {
			return total, ferr
		}
		return total, fmt.Errorf("store: import into %q: line %d: %w", conv, line+1, err)
	}
	return total, flush()
}

func dotField(f string) string {
	if f == "" {
		return ""
	}
	return ": " + f
}
