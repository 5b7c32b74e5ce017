package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// stores are the conversation stores a Host has open, shared by its
// sessions: a persistent directory can be opened by one process only
// (badger's lock), so opening it twice from one host yields the same
// store; each memory store is its own.
type stores struct {
	mu    sync.Mutex // protects the fields below
	next  int
	byID  map[string]*openStore
	byDir map[string]*openStore
}

type openStore struct {
	id   string
	dir  string // "" for memory
	db   *store.DB
	refs int
}

func (ss *stores) open(dir string, opts store.Options) (*openStore, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID == nil {
		ss.byID, ss.byDir = map[string]*openStore{}, map[string]*openStore{}
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		dir = abs
		if s, ok := ss.byDir[dir]; ok {
			s.refs++
			return s, nil
		}
		opts.Dir = dir
	} else {
		opts.InMemory = true
	}
	db, err := store.Open(&opts)
	if err != nil {
		return nil, err
	}
	ss.next++
	s := &openStore{id: fmt.Sprintf("store_%d", ss.next), dir: dir, db: db, refs: 1}
	ss.byID[s.id] = s
	if dir != "" {
		ss.byDir[dir] = s
	}
	return s, nil
}

func (ss *stores) get(id string) (*openStore, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byID[id]
	return s, ok
}

// close drops one reference; the last closes the database.
func (ss *stores) close(id string) error {
	ss.mu.Lock()
	s, ok := ss.byID[id]
	if !ok {
		ss.mu.Unlock()
		return store.ErrClosed
	}
	s.refs--
	last := s.refs == 0
	if last {
		delete(ss.byID, id)
		delete(ss.byDir, s.dir)
	}
	ss.mu.Unlock()
	if last {
		return s.db.Close()
	}
	return nil
}

// closeAll closes every store (Host.Close).
func (ss *stores) closeAll() error {
	ss.mu.Lock()
	all := make([]*openStore, 0, len(ss.byID))
	for _, s := range ss.byID {
		all = append(all, s)
	}
	ss.byID, ss.byDir = nil, nil
	ss.mu.Unlock()
	var errs []error
	for _, s := range all {
		errs = append(errs, s.db.Close())
	}
	return errors.Join(errs...)
}

// Term conversions between store values and Prolog records.

var (
	atomStore = engine.NewAtom("conversation_store")
	atomConv  = engine.NewAtom("conversation_ref")
)

func storeTerm(s *openStore) engine.Term { return atomStore.Apply(engine.NewAtom(s.id)) }

func millis(t interface{ UnixMilli() int64 }) engine.Term { return engine.Integer(t.UnixMilli()) }

func convTerm(s *openStore, c store.Conversation) engine.Term {
	return record("conversation_ref",
		fld("created_at", millis(c.CreatedAt)),
		fld("id", engine.NewAtom(c.ID)),
		fld("metadata", metadataOf(c.Metadata)),
		fld("store", storeTerm(s)),
	)
}

// metadataOf renders metadata as metadata([key(Value), ...]) with JSON
// values decoded: strings are text, numbers numbers, objects records.
func metadataOf(kvs []store.KV) engine.Term {
	fields := make([]prolog.Field, 0, len(kvs))
	for _, kv := range kvs {
		var v any
		_ = json.Unmarshal(kv.Value, &v)
		fields = append(fields, fld(kv.Key, jsonTerm(v)))
	}
	return record("metadata", fields...)
}

// jsonTerm converts a decoded JSON value: strings to text, numbers to
// integers when integral, booleans and null to atoms, arrays to lists,
// objects to json([key(V), ...]) with keys sorted.
func jsonTerm(v any) engine.Term {
	switch v := v.(type) {
	case nil:
		return engine.NewAtom("null")
	case bool:
		return boolTerm(v)
	case string:
		return prolog.Chars(v)
	case float64:
		if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
			return engine.Integer(int64(v))
		}
		return engine.Float(v)
	case []any:
		ts := make([]engine.Term, len(v))
		for i, e := range v {
			ts[i] = jsonTerm(e)
		}
		return engine.List(ts...)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fs := make([]prolog.Field, len(keys))
		for i, k := range keys {
			fs[i] = fld(k, jsonTerm(v[k]))
		}
		return record("json", fs...)
	}
	return engine.NewAtom(fmt.Sprint(v))
}

// goJSON converts a term to a JSON-encodable value: text to strings, atoms
// to strings (true/false/null to their JSON values), records and
// Key-Value lists to objects.
func goJSON(t engine.Term, env *engine.Env) (any, error) {
	v, err := prolog.Value(t, env)
	if err != nil {
		return nil, err
	}
	return jsonOf(v)
}

func jsonOf(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, prolog.InstantiationError()
	case prolog.Atom:
		switch v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		return string(v), nil
	case string, int64, float64:
		return v, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			j, err := jsonOf(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case prolog.Record:
		m := map[string]any{}
		for _, f := range v.Fields {
			j, err := jsonOf(f.Value)
			if err != nil {
				return nil, err
			}
			m[f.Key] = j
		}
		return m, nil
	case prolog.Compound:
		if v.Functor == "-" && len(v.Args) == 2 {
			return jsonOf(prolog.Record{Tag: "pair", Fields: []prolog.Field{{Key: fmt.Sprint(v.Args[0]), Value: v.Args[1]}}})
		}
	}
	return nil, fmt.Errorf("not JSON data: %v", v)
}

// contentTerm renders content: text, or [text(T), image_url(URL, Detail)].
func contentTerm(c store.Content) engine.Term {
	if !c.IsParts() {
		return prolog.Chars(c.Text)
	}
	ts := make([]engine.Term, len(c.Parts))
	for i, p := range c.Parts {
		if p.Type == store.PartText {
			ts[i] = engine.NewAtom("text").Apply(prolog.Chars(p.Text))
		} else {
			ts[i] = engine.NewAtom("image_url").Apply(prolog.Chars(p.URL), engine.NewAtom(p.Detail))
		}
	}
	return engine.List(ts...)
}

// messageTerm is the normalized message: message([content, role, ...]).
func messageTerm(m store.Message) engine.Term {
	fs := []prolog.Field{fld("content", contentTerm(m.Content)), fld("role", engine.NewAtom(m.Role.String()))}
	if m.Name != "" {
		fs = append(fs, fld("name", prolog.Chars(m.Name)))
	}
	if m.ToolCallID != "" {
		fs = append(fs, fld("tool_call_id", engine.NewAtom(m.ToolCallID)))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]engine.Term, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			calls[i] = record("tool_call", fld("arguments", prolog.Chars(tc.Arguments)),
				fld("id", engine.NewAtom(tc.ID)), fld("name", engine.NewAtom(tc.Name)))
		}
		fs = append(fs, fld("tool_calls", engine.List(calls...)))
	}
	if m.Reasoning != "" {
		fs = append(fs, fld("reasoning", prolog.Chars(m.Reasoning)))
	}
	return record("message", fs...)
}

func recordTerm(r store.Record) engine.Term {
	counts := make([]prolog.Field, 0, len(r.TokenCounts))
	for enc, n := range r.TokenCounts {
		counts = append(counts, fld(enc, engine.Integer(n)))
	}
	conv := engine.NewAtom(r.Conversation)
	return record("conversation_message",
		fld("content", contentTerm(r.Message.Content)),
		fld("conversation_id", conv),
		fld("created_at", millis(r.CreatedAt)),
		fld("message", messageTerm(r.Message)),
		fld("ref", record("conversation_message_ref", fld("conversation_id", conv), fld("sequence", engine.Integer(r.Seq)))),
		fld("role", engine.NewAtom(r.Message.Role.String())),
		fld("sequence", engine.Integer(r.Seq)),
		fld("token_counts", record("token_counts", counts...)),
	)
}

// messageOf reads message(Role, Content) or message([role(R), content(C),
// name(N), tool_call_id(Id), tool_calls([tool_call([id, name, arguments])]),
// reasoning(T)]). Shape errors are *store.ValidationError naming the field.
func messageOf(c *prolog.Call, t engine.Term) (store.Message, error) {
	bad := func(field, format string, a ...any) error {
		return &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	mt, isCompound := c.Resolve(t).(engine.Compound)
	if !isCompound || mt.Functor().String() != "message" || (mt.Arity() != 1 && mt.Arity() != 2) {
		return store.Message{}, bad("message", "must be message(Role, Content) or message([role(R), content(C), ...])")
	}
	f := map[string]engine.Term{}
	if mt.Arity() == 2 {
		f["role"], f["content"] = mt.Arg(0), mt.Arg(1)
	} else {
		var err error
		if f, err = fieldsOf(c, mt.Arg(0)); err != nil {
			return store.Message{}, bad("message", "must be a property list")
		}
	}
	var m store.Message
	roleT, ok := f["role"]
	if !ok {
		return m, bad("role", "is missing")
	}
	roleS, err := prolog.TextOf(roleT, c.Env)
	if err != nil {
		return m, bad("role", "must be system, user, assistant or tool")
	}
	if m.Role, err = store.ParseRole(roleS); err != nil {
		return m, err
	}
	if ct, ok := f["content"]; ok {
		if m.Content, err = contentOf(c, ct); err != nil {
			return m, err
		}
	}
	text := func(key string, dst *string) error {
		v, ok := f[key]
		if !ok {
			return nil
		}
		s, err := prolog.TextOf(v, c.Env)
		if err != nil {
			return bad(key, "must be text")
		}
		*dst = s
		return nil
	}
	if err := errors.Join(text("name", &m.Name), text("tool_call_id", &m.ToolCallID), text("reasoning", &m.Reasoning)); err != nil {
		return m, err
	}
	if tc, ok := f["tool_calls"]; ok {
		calls, err := c.List(tc)
		if err != nil {
			return m, bad("tool_calls", "must be a list of tool_call([id(I), name(N), arguments(JSON)])")
		}
		for i, call := range calls {
			cf, err := recordFields(c, call, "tool_call")
			if err != nil {
				return m, bad(fmt.Sprintf("tool_calls[%d]", i), "must be tool_call([id(I), name(N), arguments(JSON)])")
			}
			var tcall store.ToolCall
			for key, dst := range map[string]*string{"id": &tcall.ID, "name": &tcall.Name, "arguments": &tcall.Arguments} {
				if v, ok := cf[key]; ok {
					if *dst, err = prolog.TextOf(v, c.Env); err != nil {
						return m, bad(fmt.Sprintf("tool_calls[%d].%s", i, key), "must be text")
					}
				}
			}
			m.ToolCalls = append(m.ToolCalls, tcall)
		}
	}
	return m.Normalize()
}

// contentOf reads text or a list of parts [text(T), image_url(URL[, Detail])].
func contentOf(c *prolog.Call, t engine.Term) (store.Content, error) {
	if l, isList := c.Resolve(t).(engine.Compound); isList && l.Functor().String() == "." && l.Arity() == 2 {
		if _, firstCompound := c.Resolve(l.Arg(0)).(engine.Compound); firstCompound {
			elems, err := c.List(t)
			if err != nil {
				return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: "content", Reason: "must be text or a proper list of parts"}
			}
			parts := make([]store.Part, 0, len(elems))
			for i, e := range elems {
				p, isPart := c.Resolve(e).(engine.Compound)
				field := fmt.Sprintf("content[%d]", i)
				switch {
				case isPart && p.Functor().String() == "text" && p.Arity() == 1:
					s, err := prolog.TextOf(p.Arg(0), c.Env)
					if err != nil {
						return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "text(T) needs text"}
					}
					parts = append(parts, store.TextPart(s))
				case isPart && p.Functor().String() == "image_url" && (p.Arity() == 1 || p.Arity() == 2):
					url, err := prolog.TextOf(p.Arg(0), c.Env)
					detail := ""
					if err == nil && p.Arity() == 2 {
						detail, err = prolog.TextOf(p.Arg(1), c.Env)
					}
					if err != nil {
						return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "image_url(URL[, Detail]) needs text"}
					}
					parts = append(parts, store.ImagePart(url, detail))
				default:
					return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "a part is text(T) or image_url(URL[, Detail])"}
				}
			}
			return store.PartsContent(parts...), nil
		}
	}
	s, err := prolog.TextOf(t, c.Env)
	if err != nil {
		return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: "content", Reason: "must be text or a list of parts"}
	}
	return store.TextContent(s), nil
}
