package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
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
	// Documents makes the export a backup: every version of every
	// document of the conversation (turn receipts, warm artifacts) follows
	// the messages, one {"rlmpl_document": {...}} line each, and each
	// message keeps its idempotency key ("idempotency_key"), which is how
	// the receipts of turns find their messages; [DB.Import] restores both.
	// Tools that read chat messages skip what they do not know; keep it
	// false for a plain chat-messages file.
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
// "session" and "metadata" (an object), and with opts.Documents
// "idempotency_key". It returns [ErrNotFound] for an unknown
// conversation.
func (db *DB) Export(conv string, w io.Writer, opts ExportOptions) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var werr error
	err := db.Scan(conv, 1, 0, false, func(r Record) bool {
		if !opts.Documents {
			r.IdempotencyKey = ""
		}
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
	if err != nil || r.Time.IsZero() && r.Session == "" && r.Metadata == nil && r.IdempotencyKey == "" {
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
	if r.IdempotencyKey != "" {
		k, _ := marshalNoEscape(r.IdempotencyKey)
		x.WriteString(`,"idempotency_key":`)
		x.Write(k)
	}
	x.WriteByte('}')
	return x.Bytes(), nil
}

// envelope holds the keys Export adds to a message object.
type envelope struct {
	Timestamp      *string         `json:"timestamp"`
	Session        string          `json:"session"`
	Metadata       json.RawMessage `json:"metadata"`
	IdempotencyKey string          `json:"idempotency_key"`
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
	opts := AppendOptions{Session: env.Session, IdempotencyKey: env.IdempotencyKey}
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
	// the idempotency key "import/Source/N", unless the line carries its
	// own ("idempotency_key", as an export with Documents writes it):
	// importing the same source again skips the lines already stored and
	// appends the new ones (a file that grew), and a stored line the
	// source now says otherwise fails the import with
	// [ErrIdempotencyMismatch]. Empty means no keys but the lines' own:
	// every import appends.
	Source string
	// Create creates the conversation when it does not exist, once every
	// line has passed the check: an import that fails leaves no
	// conversation behind. Without it an unknown conversation is
	// [ErrNotFound].
	Create bool
	// Check, when set, is called with each message in order while the
	// input is checked, before anything is written (a caller's own rule,
	// such as tool results answering a call); its error fails the import,
	// named by its line.
	Check func(Message) error
}

// ImportResult counts what an import did.
type ImportResult struct {
	Imported  int // messages appended
	Documents int // document versions restored (an export with Documents)
	Skipped   int // lines an earlier import stored
}

// utf8BOM is the byte order mark some editors put first in UTF-8 files.
var utf8BOM = []byte("\xEF\xBB\xBF")

// importItem is one message line of an import.
type importItem struct {
	line int
	m    Message
	opts AppendOptions
}

// Import appends the OpenAI-format JSONL messages read from r to conv, in
// order, in batches of up to 1000 messages per transaction (an order of
// magnitude faster than one Append each). Blank lines are skipped, and a
// UTF-8 byte order mark before the first; the envelope keys [DB.Export]
// writes ("timestamp", "session", "metadata", "idempotency_key") become
// the messages' [AppendOptions], and document lines restore documents.
//
// An import is all or nothing: r is read twice, first to check every line
// — its JSON, UTF-8 and message shape, opts.Check, its idempotency key and
// document version against what conv holds — then to write. A line that
// fails stops the import before anything is written, with an error naming
// the line (wrapping [ErrInvalid], or [ErrIdempotencyMismatch]); only the
// store failing while it writes (a disk or connection error) can leave
// the batches before it stored, which running the same import again with
// Source completes. r is rewound when it is an [io.ReadSeeker] and held in
// memory otherwise. It returns [ErrNotFound] for an unknown conversation
// unless opts.Create.
func (db *DB) Import(conv string, r io.Reader, opts ImportOptions) (ImportResult, error) {
	var res ImportResult
	if err := db.enter(); err != nil {
		return res, err
	}
	defer db.leave()
	defer func() { db.search.wrote(res.Imported) }()
	cs, err := db.conv(conv)
	if errors.Is(err, ErrNotFound) && opts.Create {
		cs, err = nil, checkID("id", conv)
	}
	if err != nil {
		return res, err
	}
	if cs != nil {
		cs.mu.Lock()
		defer cs.mu.Unlock()
	}
	rs, err := rewindable(r)
	if err != nil {
		return res, fmt.Errorf("store: import into %q: %w", conv, err)
	}
	size, err := db.checkImport(cs, rs, opts)
	if err != nil {
		return res, importError(conv, err)
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return res, fmt.Errorf("store: import into %q: %w", conv, err)
	}
	if cs == nil {
		if _, err := db.create(conv, nil); err != nil && !errors.Is(err, ErrExists) {
			return res, err
		}
		if cs, err = db.conv(conv); err != nil {
			return res, err
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
	}
	// Only what was checked is written, should the input grow meanwhile.
	err = db.writeImport(cs, io.LimitReader(rs, size), opts, &res)
	return res, importError(conv, err)
}

// importError is err as Import returns it: a line's validation error as
// it is (it names the line), anything else named by the conversation.
func importError(conv string, err error) error {
	var ve *ValidationError
	if err == nil || errors.As(err, &ve) {
		return err
	}
	return fmt.Errorf("store: import into %q: %w", conv, err)
}

// rewindable is r if it can seek, else its bytes in memory.
func rewindable(r io.Reader) (io.ReadSeeker, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		return rs, nil
	}
	b, err := io.ReadAll(r)
	return bytes.NewReader(b), err
}

// importLines calls fn with each non-blank line of r and its number (a
// byte order mark before the first removed) and returns the bytes read.
func importLines(r io.Reader, fn func(line int, b []byte) error) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	var n int64
	line := 0
	for sc.Scan() {
		line++
		n += int64(len(sc.Bytes())) + 1
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		if len(b) == 0 {
			continue
		}
		if err := fn(line, b); err != nil {
			return n, err
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("line %d: %w", line+1, err)
	}
	return n, nil
}

// messageItem decodes a message line of an import, under the key Source
// gives it when the line carries none.
func messageItem(line int, b []byte, source string) (importItem, error) {
	m, ao, err := importLine(b)
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		return importItem{}, lineError(line, err)
	case err != nil:
		return importItem{}, invalid(fmt.Sprintf("line %d", line), "%v", err)
	}
	if source != "" && ao.IdempotencyKey == "" {
		ao.IdempotencyKey = fmt.Sprintf("import/%s/%d", source, line)
	}
	return importItem{line, m, ao}, nil
}

// walkImport reads the lines of r, in order: message lines go to flush in
// batches (up to importBatchMessages messages or importBatchBytes bytes,
// each transaction's worth), document lines to doc, after the messages
// before them are flushed. It returns the bytes read. Both passes of an
// import walk alike, so the check sees each line as the write will.
func walkImport(r io.Reader, source string, flush func([]importItem) error, doc func(docLine) error) (int64, error) {
	var batch []importItem
	batchBytes := 0
	flushed := func() error {
		err := flush(batch)
		batch, batchBytes = batch[:0], 0
		return err
	}
	size, err := importLines(r, func(line int, b []byte) error {
		if d, isDoc, err := documentLine(b); isDoc || err != nil {
			if err == nil {
				if err = flushed(); err == nil {
					err = doc(d)
				}
			}
			if err != nil {
				return lineError(line, err)
			}
			return nil
		}
		it, err := messageItem(line, b, source)
		if err != nil {
			return err
		}
		batch = append(batch, it)
		if batchBytes += len(b); len(batch) >= importBatchMessages || batchBytes >= importBatchBytes {
			return flushed()
		}
		return nil
	})
	if err != nil {
		return size, err
	}
	return size, flushed()
}

// checkImport walks r as writeImport will and returns the first line that
// would fail: a malformed line, one opts.Check refuses, a key or a
// document version that conflicts with what cs holds (nil: a conversation
// to create, which holds nothing). It writes nothing and returns the
// bytes it read.
func (db *DB) checkImport(cs *convState, r io.Reader, opts ImportOptions) (int64, error) {
	docs := docVersions{}
	return walkImport(r, opts.Source, func(batch []importItem) error {
		if opts.Check != nil {
			for _, it := range batch {
				if err := opts.Check(it.m); err != nil {
					return lineError(it.line, err)
				}
			}
		}
		if cs == nil || cs.head.Load() == 0 {
			return nil // a conversation with no message holds no key
		}
		// The keyed lines against the messages stored under their keys,
		// in one read.
		return db.kv.View(func(t kvTxn) error {
			for _, it := range batch {
				if _, _, err := db.earlier(t, cs, it.m, it.opts); err != nil {
					return lineError(it.line, err)
				}
			}
			return nil
		})
	}, func(d docLine) error { return db.checkDoc(cs, d, docs) })
}

// docVersions are the versions an import's check has seen of each
// document (collection and key): the latest, stored or in an earlier
// line, and the SHA-256 of the bodies of the lines'.
type docVersions map[string]*docSeen

type docSeen struct {
	latest int
	bodies map[int][sha256.Size]byte
}

// checkDoc checks a document line as importDoc will apply it: the next
// version of its key, or one the conversation (or an earlier line)
// holds with the same body.
func (db *DB) checkDoc(cs *convState, d docLine, seen docVersions) error {
	id := d.Collection + "\x00" + d.Key
	s := seen[id]
	if s == nil {
		s = &docSeen{bodies: map[int][sha256.Size]byte{}}
		if cs != nil {
			stored, err := db.storedDocVersions(cs, d.Collection, d.Key)
			if err != nil {
				return err
			}
			s.latest = len(stored)
			for v, body := range stored {
				s.bodies[v+1] = sha256.Sum256(body)
			}
		}
		seen[id] = s
	}
	switch {
	case d.Version <= s.latest && s.bodies[d.Version] == sha256.Sum256(d.Body):
		return nil
	case d.Version != s.latest+1:
		return fmt.Errorf("%w: document %s/%s version %d: the conversation holds versions 1..%d", ErrIdempotencyMismatch, d.Collection, d.Key, d.Version, s.latest)
	}
	s.latest = d.Version
	s.bodies[d.Version] = sha256.Sum256(d.Body)
	return nil
}

// storedDocVersions are the bodies of every version of a document of cs,
// version 1 first.
func (db *DB) storedDocVersions(cs *convState, collection, key string) ([][]byte, error) {
	var out [][]byte
	err := db.kv.View(func(t kvTxn) error {
		prefix := docPrefix(cs.num, collection, key)
		return t.Iterate(prefix, prefixEnd(prefix), false, func(k, v []byte) (bool, error) {
			if len(k) != len(prefix)+8 {
				return true, nil
			}
			_, body, err := decodeDoc(v)
			out = append(out, body)
			return err == nil, err
		})
	})
	return out, err
}

// writeImport appends the lines of r to cs in batches, one transaction
// each (checkImport passed them), and counts what it did in res.
func (db *DB) writeImport(cs *convState, r io.Reader, opts ImportOptions, res *ImportResult) error {
	_, err := walkImport(r, opts.Source, func(batch []importItem) error {
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
			return err
		}
		if imported > 0 {
			cs.advance(last)
			db.search.appended(cs)
			db.watch.changed(cs.num)
		}
		res.Imported += imported
		res.Skipped += skipped
		if opts.Progress != nil {
			opts.Progress(res.Imported + res.Skipped)
		}
		return nil
	}, func(d docLine) error { return db.importDoc(cs, d, res) })
	return err
}

func dotField(f string) string {
	if f == "" {
		return ""
	}
	return ": " + f
}
