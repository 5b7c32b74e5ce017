package store

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Doc is one immutable version of a keyed document that belongs to a
// conversation: a turn receipt, a warm artifact. The store keeps its bytes
// in the conversation's transactions and backups; the caller owns their
// schema. Versions of one key are dense from 1; a put never rewrites one.
type Doc struct {
	Conversation string
	Collection   string
	Key          string
	Version      int
	CreatedAt    time.Time
	Body         []byte
}

// DocPut is a document version to write.
type DocPut struct {
	Collection string
	Key        string
	Body       []byte
}

// maxDocBody bounds one document (a receipt or an artifact is small; a
// bound keeps a bad caller from writing a transaction badger refuses).
const maxDocBody = 8 << 20

func (p DocPut) validate() error {
	if err := checkID("collection", p.Collection); err != nil {
		return err
	}
	if len(p.Collection) > 255 {
		return invalid("collection", "must be at most 255 bytes")
	}
	if err := checkID("key", p.Key); err != nil {
		return err
	}
	if len(p.Key) > 1024 {
		return invalid("key", "must be at most 1024 bytes")
	}
	if len(p.Body) > maxDocBody {
		return invalid("body", "must be at most %d bytes (got %d)", maxDocBody, len(p.Body))
	}
	return nil
}

// docPrefix is the prefix of every version of (collection, key) — or, with
// key "", of every document of the collection.
func docPrefix(num uint64, collection, key string) []byte {
	k := be64(append(make([]byte, 0, 12+len(collection)+len(key)), kindDoc), num)
	k = append(k, byte(len(collection)))
	k = append(k, collection...)
	if key == "" {
		return k
	}
	k = binary.BigEndian.AppendUint16(k, uint16(len(key)))
	return append(k, key...)
}

func documentKey(num uint64, collection, key string, version int) []byte {
	return be64(docPrefix(num, collection, key), uint64(version))
}

// parseDocKey returns the key and version of a key of docPrefix(num, c, "").
func parseDocKey(k []byte, prefixLen int) (string, int, bool) {
	rest := k[prefixLen:]
	if len(rest) < 2 {
		return "", 0, false
	}
	n := int(binary.BigEndian.Uint16(rest))
	if len(rest) != 2+n+8 {
		return "", 0, false
	}
	return string(rest[2 : 2+n]), int(binary.BigEndian.Uint64(rest[2+n:])), true
}

// encodeDoc is a document's value: its creation time and bytes.
func encodeDoc(createdAt int64, body []byte) []byte {
	e := newEncoder(recDoc, 10+len(body))
	e.int(createdAt)
	e.string(string(body))
	return e.b
}

func decodeDoc(b []byte) (int64, []byte, error) {
	d := newDecoder(b, recDoc)
	at := d.int("created_at")
	body := d.string("body")
	return at, []byte(body), d.done()
}

// putDoc writes the next version of p in t.
func (db *DB) putDoc(t kvTxn, cs *convState, p DocPut) (Doc, error) {
	version := 1
	prefix := docPrefix(cs.num, p.Collection, p.Key)
	err := t.Iterate(prefix, prefixEnd(prefix), true, func(k, _ []byte) (bool, error) {
		if len(k) == len(prefix)+8 {
			version = int(binary.BigEndian.Uint64(k[len(prefix):])) + 1
		}
		return false, nil
	})
	if err != nil {
		return Doc{}, err
	}
	now := db.now()
	if err := t.Set(documentKey(cs.num, p.Collection, p.Key, version), encodeDoc(now, p.Body)); err != nil {
		return Doc{}, err
	}
	return Doc{Conversation: cs.id, Collection: p.Collection, Key: p.Key, Version: version, CreatedAt: timeOf(now), Body: p.Body}, nil
}

// PutDoc stores a new version of a document of conversation conv and
// returns it. Writes to one conversation are serialized with its appends.
func (db *DB) PutDoc(conv string, p DocPut) (Doc, error) {
	if err := p.validate(); err != nil {
		return Doc{}, err
	}
	if err := db.enter(); err != nil {
		return Doc{}, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return Doc{}, err
	}
	defer db.lockWrites(cs)()
	var doc Doc
	err = db.kv.Update(func(t kvTxn) error {
		doc, err = db.putDoc(t, cs, p)
		return err
	})
	if err != nil {
		return Doc{}, fmt.Errorf("store: put %s/%s of %q: %w", p.Collection, p.Key, conv, err)
	}
	return doc, nil
}

// GetDoc reads a version of a document; version 0 means the latest. A
// missing document is [ErrNotFound].
func (db *DB) GetDoc(conv, collection, key string, version int) (Doc, error) {
	if err := (DocPut{Collection: collection, Key: key}).validate(); err != nil {
		return Doc{}, err
	}
	if version < 0 {
		return Doc{}, invalid("version", "must be >= 0 (got %d)", version)
	}
	if err := db.enter(); err != nil {
		return Doc{}, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return Doc{}, err
	}
	doc := Doc{Conversation: conv, Collection: collection, Key: key}
	found := false
	err = db.kv.View(func(t kvTxn) error {
		prefix := docPrefix(cs.num, collection, key)
		lo, hi := prefix, prefixEnd(prefix)
		if version > 0 {
			lo, hi = documentKey(cs.num, collection, key, version), documentKey(cs.num, collection, key, version+1)
		}
		return t.Iterate(lo, hi, true, func(k, v []byte) (bool, error) {
			if len(k) != len(prefix)+8 {
				return true, nil
			}
			at, body, err := decodeDoc(v)
			if err != nil {
				return false, err
			}
			doc.Version, doc.CreatedAt, doc.Body, found = int(binary.BigEndian.Uint64(k[len(prefix):])), timeOf(at), body, true
			return false, nil
		})
	})
	if err != nil {
		return Doc{}, fmt.Errorf("store: get %s/%s of %q: %w", collection, key, conv, err)
	}
	if !found {
		return Doc{}, notFound("document %s/%s of %q", collection, key, conv)
	}
	return doc, nil
}

// allDocs reads every version of every document of conv, ordered by
// collection, key and version.
func (db *DB) allDocs(conv string) ([]Doc, error) { return db.docs(conv, "") }

// Docs lists a collection of a conversation: the latest version of each
// key, or with history every version, ordered by key then version. The
// cost is O(documents of the collection).
func (db *DB) Docs(conv, collection string, history bool) ([]Doc, error) {
	if err := (DocPut{Collection: collection, Key: "k"}).validate(); err != nil {
		return nil, err
	}
	all, err := db.docs(conv, collection)
	if err != nil || history {
		return all, err
	}
	var out []Doc
	for _, d := range all {
		if n := len(out); n > 0 && out[n-1].Key == d.Key {
			out[n-1] = d // a later version of the same key
		} else {
			out = append(out, d)
		}
	}
	return out, nil
}

// docs reads every version of the documents of one collection of conv (of
// every collection when collection is ""), ordered by collection, key and
// version.
func (db *DB) docs(conv, collection string) ([]Doc, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	cs, err := db.conv(conv)
	if err != nil {
		return nil, err
	}
	var out []Doc
	err = db.kv.View(func(t kvTxn) error {
		prefix := be64([]byte{kindDoc}, cs.num)
		if collection != "" {
			prefix = docPrefix(cs.num, collection, "")
		}
		base := len(be64([]byte{kindDoc}, cs.num))
		return t.Iterate(prefix, prefixEnd(prefix), false, func(k, v []byte) (bool, error) {
			rest := k[base:]
			if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
				return false, corrupt("document key %x", k)
			}
			coll := string(rest[1 : 1+int(rest[0])])
			key, version, ok := parseDocKey(k, base+1+len(coll))
			if !ok {
				return false, corrupt("document key %x", k)
			}
			at, body, err := decodeDoc(v)
			if err != nil {
				return false, err
			}
			out = append(out, Doc{Conversation: conv, Collection: coll, Key: key, Version: version, CreatedAt: timeOf(at), Body: body})
			return true, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: documents of %q: %w", conv, err)
	}
	// Keys are grouped by length first in the key layout; callers get them
	// in plain order.
	slices.SortStableFunc(out, func(a, b Doc) int {
		return cmp.Or(strings.Compare(a.Collection, b.Collection), strings.Compare(a.Key, b.Key), a.Version-b.Version)
	})
	return out, nil
}
