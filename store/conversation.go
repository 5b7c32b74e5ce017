package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// KV is one metadata entry: a key and a JSON value.
type KV struct {
	Key   string
	Value json.RawMessage
}

// Conversation is a conversation header. Metadata keeps the order given to
// [DB.Create]; its values are compact JSON.
type Conversation struct {
	ID        string
	CreatedAt time.Time
	Metadata  []KV
}

// MetadataFromMap returns m as metadata sorted by key, each value encoded
// as JSON. It returns an error wrapping [ErrInvalid] if a value does not
// encode.
func MetadataFromMap(m map[string]any) ([]KV, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]KV, len(keys))
	for i, k := range keys {
		v, err := marshalNoEscape(m[k])
		if err != nil {
			return nil, invalid("metadata."+k, "%v", err)
		}
		out[i] = KV{Key: k, Value: v}
	}
	return out, nil
}

// maxMetadataBytes bounds a conversation's encoded metadata.
const maxMetadataBytes = 1 << 20

// normalizeMetadata checks md (unique keys, JSON values, at most limit
// bytes of keys and compact values) and returns it with compact values.
func normalizeMetadata(md []KV, limit int) ([]KV, error) {
	out := make([]KV, len(md))
	seen := make(map[string]bool, len(md))
	size := 0
	for i, kv := range md {
		f := fmt.Sprintf("metadata[%d]", i)
		if err := checkID(f+".key", kv.Key); err != nil {
			return nil, err
		}
		if seen[kv.Key] {
			return nil, invalid(f+".key", "duplicate key %q", kv.Key)
		}
		seen[kv.Key] = true
		var b bytes.Buffer
		if err := json.Compact(&b, kv.Value); err != nil {
			return nil, invalid("metadata."+kv.Key, "not valid JSON: %v", err)
		}
		size += len(kv.Key) + b.Len()
		out[i] = KV{Key: kv.Key, Value: b.Bytes()}
	}
	if size > limit {
		return nil, invalid("metadata", "larger than %d bytes", limit)
	}
	return out, nil
}

// Create creates a conversation. An empty id asks for a generated one
// (Options.NewID). It returns an error wrapping [ErrExists] if the id is
// taken and [ErrInvalid] for a bad id or metadata (keys must be unique,
// values valid JSON).
func (db *DB) Create(id string, metadata []KV) (Conversation, error) {
	if err := db.enter(); err != nil {
		return Conversation{}, err
	}
	defer db.leave()
	return db.create(id, metadata)
}

// create is Create inside a call (db.enter held).
func (db *DB) create(id string, metadata []KV) (Conversation, error) {
	if id == "" {
		id = db.opts.NewID()
	}
	if err := checkID("id", id); err != nil {
		return Conversation{}, err
	}
	md, err := normalizeMetadata(metadata, maxMetadataBytes)
	if err != nil {
		return Conversation{}, err
	}
	db.createMu.Lock()
	defer db.createMu.Unlock()
	var rec conversationRec
	err = db.kv.Update(func(t kvTxn) error {
		if _, err := t.Get(convKey(id)); err == nil {
			return fmt.Errorf("%w: conversation %q", ErrExists, id)
		} else if !errors.Is(err, errKeyNotFound) {
			return err
		}
		var next uint64 = 1
		if b, err := t.Get(metaKey(metaNextConv)); err == nil {
			if next, err = decodeU64(b, "next conversation number"); err != nil {
				return err
			}
		} else if !errors.Is(err, errKeyNotFound) {
			return err
		}
		rec = conversationRec{num: next, createdAt: db.now(), metadata: md}
		for _, kv := range []struct{ k, v []byte }{
			{metaKey(metaNextConv), encodeU64(next + 1)},
			{convKey(id), encodeConversation(rec)},
			{numKey(next), []byte(id)},
			{listKey(rec.createdAt, id), encodeU64(next)},
		} {
			if err := t.Set(kv.k, kv.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrExists) {
			return Conversation{}, err
		}
		return Conversation{}, fmt.Errorf("store: create %q: %w", id, err)
	}
	db.remember(id, rec, 0, 0)
	return conversationOf(id, rec), nil
}

func conversationOf(id string, rec conversationRec) Conversation {
	return Conversation{ID: id, CreatedAt: timeOf(rec.createdAt), Metadata: rec.metadata}
}

// Conversation returns the header of conversation id, or an error wrapping
// [ErrNotFound].
func (db *DB) Conversation(id string) (Conversation, error) {
	if err := db.enter(); err != nil {
		return Conversation{}, err
	}
	defer db.leave()
	var c Conversation
	err := db.kv.View(func(t kvTxn) error {
		var err error
		c, err = getConversation(t, id)
		return err
	})
	return c, err
}

func getConversation(t kvTxn, id string) (Conversation, error) {
	b, err := t.Get(convKey(id))
	if errors.Is(err, errKeyNotFound) {
		return Conversation{}, notFound("conversation %q", id)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("store: conversation %q: %w", id, err)
	}
	rec, err := decodeConversation(b)
	if err != nil {
		return Conversation{}, fmt.Errorf("store: conversation %q: %w", id, err)
	}
	return conversationOf(id, rec), nil
}

// Order is the order of [DB.List].
type Order uint8

const (
	// Desc lists the newest conversation first (the upstream default).
	Desc Order = iota
	// Asc lists the oldest conversation first.
	Asc
)

func (o Order) String() string {
	switch o {
	case Desc:
		return "desc"
	case Asc:
		return "asc"
	}
	return fmt.Sprintf("order(%d)", uint8(o))
}

// List returns up to limit conversations ordered by created_at, then id
// (ascending or descending as a whole). limit 0 means all. It costs
// O(result), not O(conversations). It returns [ErrInvalid] for a negative
// limit or an unknown order.
func (db *DB) List(order Order, limit int) ([]Conversation, error) {
	if order != Asc && order != Desc {
		return nil, invalid("order", "must be asc or desc (got %v)", order)
	}
	if limit < 0 {
		return nil, invalid("limit", "must be >= 0 (got %d)", limit)
	}
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	var out []Conversation
	err := db.kv.View(func(t kvTxn) error {
		lo := []byte{kindList}
		return t.Iterate(lo, prefixEnd(lo), order == Desc, func(k, _ []byte) (bool, error) {
			_, id, ok := parseListKey(k)
			if !ok {
				return false, corrupt("list key %x", k)
			}
			c, err := getConversation(t, id)
			if err != nil {
				return false, err
			}
			out = append(out, c)
			return limit == 0 || len(out) < limit, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("store: list: %w", err)
	}
	return out, nil
}
