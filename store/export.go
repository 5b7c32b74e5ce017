package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// ExportOptions are the options of [DB.Export]. The zero value is valid.
type ExportOptions struct {
	// Documents adds every version of every document of the conversation
	// (turn receipts, warm artifacts) after the messages, one
	// {"rlmpl_document": {...}} line each, so that [DB.Import] restores
	// them. Tools that read chat messages skip what they do not know; keep
	// it false for a plain chat-messages file.
	Documents bool
}

// docLine is the object of a document line of an export.
type docLine struct {
	Collection string          `json:"collection"`
	Key        string          `json:"key"`
	Version    int             `json:"version"`
	CreatedAt  time.Time       `json:"created_at"`
	Body       json.RawMessage `json:"body"`
}

// Export writes the messages of conv to w as JSONL: one OpenAI
// chat-messages object per line ([Message.MarshalJSON]), in sequence
// order. What the caller said about a message at append is kept as extra
// keys, present only when set: "timestamp" ([Record.Time], RFC 3339),
// "session" and "metadata" (an object). It returns [ErrNotFound] for an
// unknown conversation.
func (db *DB) Export(conv string, w io.Writer, opts ExportOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var werr error
	err := db.Scan(conv, 1, 0, false, func(r Record) bool {
		b, err := exportLine(r)
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
	if opts.Documents {
		docs, err := db.allDocs(conv)
		if err != nil {
			return err
		}
		for _, d := range docs {
			if !json.Valid(d.Body) {
				return fmt.Errorf("store: export %q: document %s/%s v%d is not JSON", conv, d.Collection, d.Key, d.Version)
			}
			b, err := json.Marshal(map[string]docLine{"rlmpl_document": {d.Collection, d.Key, d.Version, d.CreatedAt.UTC(), d.Body}})
			if err != nil {
				return err
			}
			if _, err := bw.Write(append(b, '\n')); err != nil {
				return fmt.Errorf("store: export %q: %w", conv, err)
			}
		}
	}
	return bw.Flush()
}

// exportLine is r's message object with the envelope keys Export adds.
func exportLine(r Record) ([]byte, error) {
	b, err := r.Message.MarshalJSON()
	if err != nil || r.Time.IsZero() && r.Session == "" && r.Metadata == nil {
		return b, err
	}
	var x bytes.Buffer
	x.Write(b[:len(b)-1]) // reopen the object
	if !r.Time.IsZero() {
		x.WriteString(`,"timestamp":"` + r.Time.UTC().Format(time.RFC3339Nano) + `"`)
	}
	if r.Session != "" {
		s, _ := marshalNoEscape(r.Session)
		x.WriteString(`,"session":`)
		x.Write(s)
	}
	if r.Metadata != nil {
		x.WriteString(`,"metadata":{`)
		for i, kv := range r.Metadata {
			if i > 0 {
				x.WriteByte(',')
			}
			k, _ := marshalNoEscape(kv.Key)
			x.Write(k)
			x.WriteByte(':')
			x.Write(kv.Value)
		}
		x.WriteByte('}')
	}
	x.WriteByte('}')
	return x.Bytes(), nil
}

// envelope holds the keys Export adds to a message object.
type envelope struct {
	Timestamp *string         `json:"timestamp"`
	Session   string          `json:"session"`
	Metadata  json.RawMessage `json:"metadata"`
}

// importLine decodes one JSONL line into a normalized message and the
// append options its envelope keys give.
func importLine(b []byte) (Message, AppendOptions, error) {
	var m Message
	if !utf8.Valid(b) {
		return m, AppendOptions{}, invalid("", "invalid UTF-8 at byte %d", invalidUTF8At(b))
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, AppendOptions{}, err
	}
	m, err := m.Normalize()
	if err != nil {
		return m, AppendOptions{}, err
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return m, AppendOptions{}, invalid("", "not a chat message object: %v", err)
	}
	opts := AppendOptions{Session: env.Session}
	if env.Timestamp != nil {
		if opts.Time, err = time.Parse(time.RFC3339Nano, *env.Timestamp); err != nil {
			return m, opts, invalid("timestamp", "not an RFC 3339 time: %q", *env.Timestamp)
		}
	}
	if len(env.Metadata) > 0 && string(env.Metadata) != "null" {
		if opts.Metadata, err = objectKVs(env.Metadata); err != nil {
			return m, opts, err
		}
	}
	opts, err = opts.normalize()
	return m, opts, err
}

// documentLine reads a {"rlmpl_document": {...}} line of an export; isDoc
// is false for any other line.
func documentLine(b []byte) (d docLine, isDoc bool, err error) {
	const prefix = `{"rlmpl_document":`
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return d, false, nil
	}
	var line struct {
		Doc *docLine `json:"rlmpl_document"`
	}
	if err := json.Unmarshal(b, &line); err != nil || line.Doc == nil {
		return d, true, invalid("rlmpl_document", "not a document line: %v", err)
	}
	if err := (DocPut{Collection: line.Doc.Collection, Key: line.Doc.Key, Body: line.Doc.Body}).validate(); err != nil {
		return d, true, err
	}
	if line.Doc.Version < 1 {
		return d, true, invalid("rlmpl_document.version", "must be >= 1 (got %d)", line.Doc.Version)
	}
	return *line.Doc, true, nil
}

// importDoc restores one document version: written when it is the next
// version of its key, skipped when that version is there with the same
// body (an import run again), refused otherwise.
func (db *DB) importDoc(cs *convState, d docLine, res *ImportResult) error {
	return db.kv.Update(func(t kvTxn) error {
		prefix := docPrefix(cs.num, d.Collection, d.Key)
		latest := 0
		var same bool
		err := t.Iterate(prefix, prefixEnd(prefix), false, func(k, v []byte) (bool, error) {
			if len(k) != len(prefix)+8 {
				return true, nil
			}
			version := int(binary.BigEndian.Uint64(k[len(prefix):]))
			latest = max(latest, version)
			if version == d.Version {
				_, body, err := decodeDoc(v)
				if err != nil {
					return false, err
				}
				same = bytes.Equal(body, d.Body)
			}
			return true, nil
		})
		switch {
		case err != nil:
			return err
		case d.Version <= latest && same:
			res.Skipped++
			return nil
		case d.Version != latest+1:
			return fmt.Errorf("%w: document %s/%s version %d: the conversation holds versions 1..%d", ErrIdempotencyMismatch, d.Collection, d.Key, d.Version, latest)
		}
		if err := t.Set(documentKey(cs.num, d.Collection, d.Key, d.Version), encodeDoc(d.CreatedAt.UnixNano(), d.Body)); err != nil {
			return err
		}
		res.Documents++
		return nil
	})
}

// lineError names the input line of err: a *ValidationError's field
// becomes "line N[.field]".
func lineError(line int, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		ve2 := *ve
		ve2.Field = fmt.Sprintf("line %d", line) + dotField(ve.Field)
		return &ve2
	}
	return fmt.Errorf("line %d: %w", line, err)
}

// invalidUTF8At is the offset of b's first invalid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// objectKVs returns the members of JSON object b in their order.
func objectKVs(b []byte) ([]KV, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, invalid("metadata", "must be an object")
	}
	out := []KV{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, invalid("metadata", "%v", err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalid("metadata."+t.(string), "%v", err)
		}
		out = append(out, KV{Key: t.(string), Value: v})
	}
	return out, nil
}

// Import batch limits: a batch is one transaction.
const (
	importBatchMessages = 1000
	importBatchBytes    = 4 << 20
	maxImportLine       = 64 << 20
)

// ImportOptions are the options of [DB.Import]. The zero value is valid.
type ImportOptions struct {
	// Progress, when set, is called with the running count of lines
	// handled (imported or already there) after each batch.
	Progress func(n int)
	// TokenCounts, when set, gives each message's content token counts per
	// encoding, stored with it as [AppendOptions.TokenCounts] would.
	TokenCounts func(Message) map[string]int
	// Source names what is imported (a file). Line N is then appended under
	// the idempotency key "import/Source/N": importing the same source
	// again skips the lines already stored and appends the new ones (a file
	// that grew), and a stored line the source now says otherwise stops the
	// import with [ErrIdempotencyMismatch]. Empty means no keys: every
	// import appends.
	Source string
}

// ImportResult counts what an import did.
type ImportResult struct {
	Imported  int // messages appended
	Documents int // document versions restored (an export with Documents)
	Skipped   int // lines an earlier import stored
}

// utf8BOM is the byte order mark some editors put first in UTF-8 files.
var utf8BOM = []byte("\xEF\xBB\xBF")

// Import appends the OpenAI-format JSONL messages read from r to conv, in
// order, in batches of up to 1000 messages per transaction (an order of
// magnitude faster than one Append each). Blank lines are skipped, and a
// UTF-8 byte order mark before the first; the envelope keys [DB.Export]
// writes ("timestamp", "session", "metadata") become the messages'
// [AppendOptions].
//
// A malformed line (bad JSON, invalid UTF-8, not a message) stops the
// import with an error naming the line and wrapping [ErrInvalid]; the
// messages before it are stored, the bad line and everything after are
// not. It returns [ErrNotFound] for an unknown conversation.
func (db *DB) Import(conv string, r io.Reader, opts ImportOptions) (ImportResult, error) {
	var res ImportResult
	if err := db.enter(); err != nil {
		return res, err
	}
	defer db.leave()
	defer func() { db.analyzeAfter(res.Imported) }()
	cs, err := db.conv(conv)
	if err != nil {
		return res, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	type item struct {
		line int
		m    Message
		opts AppendOptions
	}
	var (
		batch  []item
		bytes_ int
		line   int
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var last int64
		var imported, skipped int
		err := db.kv.Update(func(t kvTxn) error {
			imported, skipped = 0, 0
			h, err := getHead(t, cs.num)
			if err != nil {
				return err
			}
			for _, it := range batch {
				if _, found, err := db.earlier(t, cs, it.m, it.opts); found || err != nil {
					if err != nil {
						return lineError(it.line, err)
					}
					skipped++
					continue
				}
				if opts.TokenCounts != nil {
					it.opts.TokenCounts = opts.TokenCounts(it.m)
				}
				if _, err := db.writeMessage(t, cs, &h, it.m, it.opts); err != nil {
					return lineError(it.line, err)
				}
				imported++
			}
			last = h.lastSeq
			return t.Set(headKey(cs.num), encodeHead(h))
		})
		if err != nil {
			return fmt.Errorf("store: import into %q: %w", conv, err)
		}
		if imported > 0 {
			cs.advance(last)
			db.appended(cs)
			db.watch.changed(cs.num)
		}
		res.Imported += imported
		res.Skipped += skipped
		batch, bytes_ = batch[:0], 0
		if opts.Progress != nil {
			opts.Progress(res.Imported + res.Skipped)
		}
		return nil
	}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		if len(b) == 0 {
			continue
		}
		if d, isDoc, err := documentLine(b); isDoc || err != nil {
			if err == nil {
				if err = flush(); err == nil {
					err = db.importDoc(cs, d, &res)
				}
			}
			if err != nil {
				return res, lineError(line, err)
			}
			continue
		}
		m, ao, err := importLine(b)
		if err != nil {
			if ferr := flush(); ferr != nil {
				return res, ferr
			}
			var ve *ValidationError
			if errors.As(err, &ve) {
				return res, lineError(line, err)
			}
			return res, invalid(fmt.Sprintf("line %d", line), "%v", err)
		}
		if opts.Source != "" {
			ao.IdempotencyKey = fmt.Sprintf("import/%s/%d", opts.Source, line)
		}
		batch = append(batch, item{line, m, ao})
		bytes_ += len(b)
		if len(batch) >= importBatchMessages || bytes_ >= importBatchBytes {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if ferr := flush(); ferr != nil {
			return res, ferr
		}
		return res, fmt.Errorf("store: import into %q: line %d: %w", conv, line+1, err)
	}
	return res, flush()
}

func dotField(f string) string {
	if f == "" {
		return ""
	}
	return ": " + f
}
