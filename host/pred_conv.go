package host

// Conversation family: durable conversations (store/) as Prolog outcomes.
// lib/rlm_conversation.pl wraps them in the public conversation_*
// predicates. Writes (append) are det and idempotent under a key, and are
// not undone on backtracking.
//
//	conv_store_open_(+Spec, -Outcome) is det.
//	conv_store_close_(+Store, -Outcome) is det.
//	conv_create_(+Store, +Options, -Outcome) is det.
//	conv_open_(+Store, +Id, -Outcome) is det.
//	conv_list_(+Store, +Options, -Outcome) is det.
//	conv_append_(+Conversation, +Message, +Options, -Outcome) is det.
//	conv_message_(+Conversation, +Seq, -Outcome) is det.
//	conv_messages_(+Conversation, +Selector, +Options, -Outcome) is det.
//	conv_search_(+Conversation, +Query, +Options, -Outcome) is det.
//	conv_cold_(+Conversation, +Options, -Outcome) is det.
//	conv_stats_(+Conversation, -Outcome) is det.
//	conv_export_(+Conversation, +Format, -Outcome) is det.
//	conv_import_(+Conversation, +File, -Outcome) is det.

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// convError is error(conversation_error([detail(D), kind(K), message(M), phase(P)])).
func convError(phase string, detail engine.Term, msg string) engine.Term {
	return atomError.Apply(record("conversation_error",
		fld("detail", detail), fld("kind", engine.NewAtom("conversation_error")),
		fld("message", prolog.Chars(msg)), fld("phase", engine.NewAtom(phase))))
}

// storeErr renders a store error as an outcome; subject names what the
// operation was about (the conversation id, the store).
func storeErr(c *prolog.Call, out engine.Term, phase string, err error, subject ...engine.Term) (bool, error) {
	var ve *store.ValidationError
	var d engine.Term
	switch {
	case errors.Is(err, store.ErrNotFound):
		d = engine.NewAtom("not_found").Apply(subject...)
	case errors.Is(err, store.ErrExists):
		d = engine.NewAtom("conversation_exists").Apply(subject...)
	case errors.Is(err, store.ErrClosed):
		d = engine.NewAtom("closed_store")
	case errors.Is(err, store.ErrLocked):
		d = engine.NewAtom("store_locked")
	case errors.Is(err, store.ErrIdempotencyMismatch):
		d = engine.NewAtom("idempotency_key_reused")
	case errors.Is(err, store.ErrInvalidRange):
		d = engine.NewAtom("invalid_range").Apply(subject...)
	case errors.Is(err, store.ErrInvalidSelector):
		d = engine.NewAtom("invalid_selector").Apply(subject...)
	case errors.As(err, &ve):
		name := "invalid_argument"
		if phase == "append" {
			name = "invalid_message"
		}
		d = engine.NewAtom(name).Apply(engine.NewAtom(ve.Field))
	default:
		return false, err
	}
	return c.Unify(out, convError(phase, d, err.Error())), nil
}

func (s *Session) storeOf(c *prolog.Call, t engine.Term) (*openStore, bool) {
	st, isCompound := c.Resolve(t).(engine.Compound)
	if !isCompound || st.Functor() != atomStore || st.Arity() != 1 {
		return nil, false
	}
	id, isAtom := c.Resolve(st.Arg(0)).(engine.Atom)
	if !isAtom {
		return nil, false
	}
	return s.host.stores.get(id.String())
}

// convOf reads a conversation_ref record: its store (open) and id.
func (s *Session) convOf(c *prolog.Call, t engine.Term) (*openStore, string, bool) {
	f, err := recordFields(c, t, "conversation_ref")
	if err != nil {
		return nil, "", false
	}
	st, ok := s.storeOf(c, f["store"])
	id, isAtom := f["id"].(engine.Atom)
	if !ok || !isAtom {
		return nil, "", false
	}
	return st, id.String(), true
}

func invalidConv(c *prolog.Call, out engine.Term, phase string, t engine.Term) (bool, error) {
	return c.Unify(out, convError(phase, engine.NewAtom("invalid_conversation").Apply(prolog.Resolved(t, c.Env)),
		"not a conversation_ref of an open store")), nil
}

func (s *Session) convStoreOpen(c *prolog.Call, spec, out engine.Term) (bool, error) {
	dir := ""
	switch t := c.Resolve(spec).(type) {
	case engine.Atom:
		if t.String() != "memory" {
			return c.Unify(out, convError("store_open", engine.NewAtom("invalid_store_spec").Apply(t), "a store is memory or persist(Dir)")), nil
		}
	case engine.Compound:
		d, err := prolog.TextOf(t.Arg(0), c.Env)
		if t.Functor().String() != "persist" || t.Arity() != 1 || err != nil || d == "" {
			return c.Unify(out, convError("store_open", engine.NewAtom("invalid_store_spec").Apply(prolog.Resolved(t, c.Env)), "a store is memory or persist(Dir)")), nil
		}
		dir = d
	default:
		return false, prolog.TypeError("store_spec", spec)
	}
	st, err := s.host.stores.open(dir, store.Options{Now: s.host.opts.Now})
	if err != nil {
		return storeErr(c, out, "store_open", err)
	}
	return c.Unify(out, ok(storeTerm(st))), nil
}

func (s *Session) convStoreClose(c *prolog.Call, st, out engine.Term) (bool, error) {
	o, isOpen := s.storeOf(c, st)
	if !isOpen {
		return c.Unify(out, convError("store_close", engine.NewAtom("invalid_store").Apply(prolog.Resolved(st, c.Env)), "not an open store")), nil
	}
	if err := s.host.stores.close(o.id); err != nil {
		return storeErr(c, out, "store_close", err)
	}
	return c.Unify(out, ok(engine.NewAtom("closed"))), nil
}

func (s *Session) convCreate(c *prolog.Call, st, options, out engine.Term) (bool, error) {
	o, isOpen := s.storeOf(c, st)
	if !isOpen {
		return c.Unify(out, convError("create", engine.NewAtom("closed_store"), "not an open store")), nil
	}
	opts, err := optionMap(c, options, map[string]bool{"id": true, "metadata": true}, "conversation_option")
	if err != nil {
		return false, err
	}
	id := ""
	if t, present := opts["id"]; present {
		if id, err = prolog.TextOf(t, c.Env); err != nil {
			return false, prolog.TypeError("text", t)
		}
	}
	var meta []store.KV
	if t, present := opts["metadata"]; present {
		if meta, err = metadataFrom(c, t); err != nil {
			return c.Unify(out, convError("create", engine.NewAtom("invalid_metadata").Apply(prolog.Resolved(t, c.Env)), err.Error())), nil
		}
	}
	conv, err := o.db.Create(id, meta)
	if err != nil {
		return storeErr(c, out, "create", err, engine.NewAtom(id))
	}
	return c.Unify(out, ok(convTerm(o, conv))), nil
}

// metadataFrom reads metadata as [key(V), ...], [Key-V, ...] or a record
// metadata([...]); values must be ground JSON-like data.
func metadataFrom(c *prolog.Call, t engine.Term) ([]store.KV, error) {
	r := c.Resolve(t)
	if rec, isCompound := r.(engine.Compound); isCompound && rec.Arity() == 1 && rec.Functor().String() != "." {
		r = c.Resolve(rec.Arg(0))
	}
	elems, err := c.List(r)
	if err != nil {
		return nil, err
	}
	var kvs []store.KV
	for _, e := range elems {
		p, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound {
			return nil, prolog.TypeError("metadata_entry", e)
		}
		var key string
		var val engine.Term
		switch {
		case p.Functor().String() == "-" && p.Arity() == 2:
			k, err := prolog.TextOf(p.Arg(0), c.Env)
			if err != nil {
				return nil, err
			}
			key, val = k, p.Arg(1)
		case p.Arity() == 1:
			key, val = p.Functor().String(), p.Arg(0)
		default:
			return nil, prolog.TypeError("metadata_entry", e)
		}
		v, err := goJSON(val, c.Env)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		kvs = append(kvs, store.KV{Key: key, Value: b})
	}
	return kvs, nil
}

func (s *Session) convOpen(c *prolog.Call, st, id, out engine.Term) (bool, error) {
	o, isOpen := s.storeOf(c, st)
	if !isOpen {
		return c.Unify(out, convError("open", engine.NewAtom("closed_store"), "not an open store")), nil
	}
	name, err := c.Text(id)
	if err != nil {
		return false, err
	}
	conv, err := o.db.Conversation(name)
	if err != nil {
		return storeErr(c, out, "open", err, engine.NewAtom(name))
	}
	return c.Unify(out, ok(convTerm(o, conv))), nil
}

func (s *Session) convList(c *prolog.Call, st, options, out engine.Term) (bool, error) {
	o, isOpen := s.storeOf(c, st)
	if !isOpen {
		return c.Unify(out, convError("list", engine.NewAtom("closed_store"), "not an open store")), nil
	}
	opts, err := optionMap(c, options, map[string]bool{"order": true, "limit": true}, "conversation_list_option")
	if err != nil {
		return false, err
	}
	order := store.Desc
	if t, present := opts["order"]; present {
		switch a, _ := t.(engine.Atom); a.String() {
		case "asc":
			order = store.Asc
		case "desc":
		default:
			return c.Unify(out, convError("list", engine.NewAtom("invalid_conversation_order").Apply(prolog.Resolved(t, c.Env)), "order is asc or desc")), nil
		}
	}
	limit, err := limitOf(c, opts)
	if err != nil {
		return c.Unify(out, convError("list", engine.NewAtom("invalid_limit").Apply(prolog.Resolved(opts["limit"], c.Env)), "limit is a non-negative integer or all")), nil
	}
	convs, err := o.db.List(order, limit)
	if err != nil {
		return storeErr(c, out, "list", err)
	}
	ts := make([]engine.Term, len(convs))
	for i, cv := range convs {
		ts[i] = convTerm(o, cv)
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

// limitOf reads limit(N|all); 0 means all.
func limitOf(c *prolog.Call, opts map[string]engine.Term) (int, error) {
	t, present := opts["limit"]
	if !present {
		return 0, nil
	}
	if a, isAtom := t.(engine.Atom); isAtom && a.String() == "all" {
		return 0, nil
	}
	n, isInt := t.(engine.Integer)
	if !isInt || n < 1 || n > math.MaxInt32 {
		return 0, errors.New("bad limit")
	}
	return int(n), nil
}

func (s *Session) convAppend(c *prolog.Call, conv, msg, options, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "append", conv)
	}
	opts, err := optionMap(c, options, map[string]bool{"idempotency_key": true}, "conversation_append_option")
	if err != nil {
		return false, err
	}
	var ao store.AppendOptions
	if t, present := opts["idempotency_key"]; present {
		if ao.IdempotencyKey, err = prolog.TextOf(t, c.Env); err != nil {
			return false, prolog.TypeError("text", t)
		}
	}
	m, err := messageOf(c, msg)
	if err != nil {
		return storeErr(c, out, "append", err)
	}
	ao.TokenCounts = s.contentCounts(m)
	rec, err := o.db.Append(id, m, ao)
	if err != nil {
		return storeErr(c, out, "append", err, engine.NewAtom(id))
	}
	return c.Unify(out, ok(recordTerm(rec))), nil
}

// countEncodings are counted at append, so packing for the usual models
// never re-tokenizes history; other encodings are counted at first use
// and recorded then.
var countEncodings = []string{"o200k_base", "cl100k_base"}

func (s *Session) contentCounts(m store.Message) map[string]int {
	text := m.Content.PlainText()
	counts := make(map[string]int, len(countEncodings))
	for _, enc := range countEncodings {
		if counter, err := s.host.tokenizers().CounterForEncoding(enc); err == nil {
			counts[enc] = counter.Count(text).Tokens
		}
	}
	return counts
}

func (s *Session) convMessage(c *prolog.Call, conv, seq, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "message", conv)
	}
	n, isInt := c.Resolve(seq).(engine.Integer)
	if !isInt || n < 1 {
		return c.Unify(out, convError("message", engine.NewAtom("expected_positive_integer").Apply(prolog.Resolved(seq, c.Env)), "a sequence is a positive integer")), nil
	}
	rec, err := o.db.Message(id, int64(n))
	if errors.Is(err, store.ErrNotFound) {
		return c.Unify(out, convError("message", engine.NewAtom("message_not_found").Apply(engine.NewAtom(id), n), err.Error())), nil
	}
	if err != nil {
		return storeErr(c, out, "message", err, engine.NewAtom(id))
	}
	return c.Unify(out, ok(recordTerm(rec))), nil
}

// selectorOf reads all, recent(N), range(S,E), before(S), after(S),
// around(S,R) or role(R).
func selectorOf(c *prolog.Call, t engine.Term) (store.Selector, bool) {
	r := c.Resolve(t)
	if a, isAtom := r.(engine.Atom); isAtom && a.String() == "all" {
		return store.All(), true
	}
	sel, isCompound := r.(engine.Compound)
	if !isCompound {
		return store.Selector{}, false
	}
	ints := make([]int64, sel.Arity())
	for i := range ints {
		n, isInt := c.Resolve(sel.Arg(i)).(engine.Integer)
		if !isInt && sel.Functor().String() != "role" {
			return store.Selector{}, false
		}
		ints[i] = int64(n)
	}
	switch name, n := sel.Functor().String(), sel.Arity(); {
	case name == "recent" && n == 1:
		return store.Recent(ints[0]), true
	case name == "range" && n == 2:
		return store.Range(ints[0], ints[1]), true
	case name == "before" && n == 1:
		return store.Before(ints[0]), true
	case name == "after" && n == 1:
		return store.After(ints[0]), true
	case name == "around" && n == 2:
		return store.Around(ints[0], ints[1]), true
	case name == "role" && n == 1:
		role, err := prolog.TextOf(sel.Arg(0), c.Env)
		if err != nil {
			return store.Selector{}, false
		}
		r, err := store.ParseRole(role)
		if err != nil {
			return store.Selector{}, false
		}
		return store.ByRole(r), true
	}
	return store.Selector{}, false
}

func (s *Session) convMessages(c *prolog.Call, conv, selector, options, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "messages", conv)
	}
	opts, err := optionMap(c, options, map[string]bool{"limit": true}, "conversation_messages_option")
	if err != nil {
		return false, err
	}
	sel, known := selectorOf(c, selector)
	if !known {
		return c.Unify(out, convError("messages", engine.NewAtom("invalid_selector").Apply(prolog.Resolved(selector, c.Env)),
			"a selector is all, recent(N), range(S,E), before(S), after(S), around(S,R) or role(R)")), nil
	}
	limit, err := limitOf(c, opts)
	if err != nil {
		return c.Unify(out, convError("messages", engine.NewAtom("invalid_limit").Apply(prolog.Resolved(opts["limit"], c.Env)), "limit is a positive integer or all")), nil
	}
	recs, err := o.db.Messages(id, sel, limit)
	if err != nil {
		return storeErr(c, out, "messages", err, prolog.Resolved(selector, c.Env))
	}
	ts := make([]engine.Term, len(recs))
	for i, r := range recs {
		ts[i] = recordTerm(r)
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

func (s *Session) convStats(c *prolog.Call, conv, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "stats", conv)
	}
	st, err := o.db.Stats(id)
	if err != nil {
		return storeErr(c, out, "stats", err, engine.NewAtom(id))
	}
	return c.Unify(out, ok(record("conversation_stats",
		fld("assistant_messages", engine.Integer(st.Assistant)),
		fld("content_bytes", engine.Integer(st.ContentBytes)),
		fld("conversation_id", engine.NewAtom(id)),
		fld("messages", engine.Integer(st.Messages)),
		fld("system_messages", engine.Integer(st.System)),
		fld("tool_messages", engine.Integer(st.Tool)),
		fld("user_messages", engine.Integer(st.User)),
	))), nil
}

func (s *Session) convExport(c *prolog.Call, conv, format, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "export", conv)
	}
	f, _ := c.Resolve(format).(engine.Atom)
	switch f.String() {
	case "term":
		recs, err := o.db.Messages(id, store.All(), 0)
		if err != nil {
			return storeErr(c, out, "export", err, engine.NewAtom(id))
		}
		ms := make([]engine.Term, len(recs))
		for i, r := range recs {
			ms[i] = messageTerm(r.Message)
		}
		cv, err := o.db.Conversation(id)
		if err != nil {
			return storeErr(c, out, "export", err, engine.NewAtom(id))
		}
		return c.Unify(out, ok(record("conversation_export",
			fld("conversation", convTerm(o, cv)), fld("conversation_id", engine.NewAtom(id)), fld("messages", engine.List(ms...))))), nil
	case "jsonl":
		var b bytes.Buffer
		if err := o.db.Export(id, &b); err != nil {
			return storeErr(c, out, "export", err, engine.NewAtom(id))
		}
		return c.Unify(out, ok(prolog.Chars(b.String()))), nil
	}
	return c.Unify(out, convError("export", engine.NewAtom("unsupported_export_format").Apply(prolog.Resolved(format, c.Env)), "formats are term and jsonl")), nil
}

// convSearch is conversation_search/4: ranked (BM25) by default;
// exact(true) or case_sensitive(Bool) select substring matching.
func (s *Session) convSearch(c *prolog.Call, conv, query, options, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "search", conv)
	}
	opts, err := optionMap(c, options, map[string]bool{"max_results": true, "offset": true, "exact": true, "case_sensitive": true}, "conversation_search_option")
	if err != nil {
		return false, err
	}
	q, err := c.Text(query)
	if err != nil {
		return false, err
	}
	so := store.SearchOptions{}
	for key, dst := range map[string]*int{"max_results": &so.MaxResults, "offset": &so.Offset} {
		if t, present := opts[key]; present {
			n, isInt := t.(engine.Integer)
			if !isInt || n < 0 || n > math.MaxInt32 || key == "max_results" && n == 0 {
				return c.Unify(out, convError("search", engine.NewAtom("invalid_"+key).Apply(prolog.Resolved(t, c.Env)), key+" must be a positive integer")), nil
			}
			*dst = int(n)
		}
	}
	if t, present := opts["exact"]; present {
		if so.Exact, err = c.Bool(t); err != nil {
			return false, err
		}
	}
	if t, present := opts["case_sensitive"]; present {
		if so.CaseSensitive, err = c.Bool(t); err != nil {
			return false, err
		}
		so.Exact = true
	}
	hits, _, err := o.db.Search(id, q, so)
	if err != nil {
		return storeErr(c, out, "search", err, engine.NewAtom(id))
	}
	ts := make([]engine.Term, len(hits))
	for i, h := range hits {
		ts[i] = withField(recordTerm(h.Record), fld("score", engine.Float(h.Score)))
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

// convCold is conversation_cold_context/3: an opaque handle over the
// conversation through the trusted conversation adapter.
func (s *Session) convCold(c *prolog.Call, conv, options, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "cold_context", conv)
	}
	lim, _, err := limits(c, options)
	if err != nil {
		return outcomeOf(c, out, err)
	}
	if err := s.handles.RegisterAdapter(conversationAdapter{}); err != nil {
		return outcomeOf(c, out, err)
	}
	ref, meta, err := s.handles.RegisterSource(c.Ctx, "conversation", coldSource{st: o, conv: id}, lim)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return storeErr(c, out, "cold_context", err, engine.NewAtom(id))
		}
		return outcomeOf(c, out, err)
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

// importIndexWait bounds how long an import waits for the index.
const importIndexWait = 5 * time.Minute

// convImport is conversation_import/3: OpenAI chat-messages JSONL read
// from the session's file system, appended in batches.
func (s *Session) convImport(c *prolog.Call, conv, file, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "import", conv)
	}
	name, err := c.Atom(file)
	if err != nil {
		return false, err
	}
	if s.host.opts.FS == nil {
		return false, prolog.ExistenceError("source_sink", file)
	}
	f, err := s.host.opts.FS.Open(name)
	if err != nil {
		return false, prolog.ExistenceError("source_sink", file)
	}
	defer f.Close()
	n, err := o.db.Import(id, f, nil)
	if err == nil {
		// A bulk load is followed by searches: let the index catch up so
		// they are indexed, not tail scans (correct either way).
		err = o.db.WaitIndexed(importIndexWait)
	}
	if err != nil {
		return storeErr(c, out, "import", err, engine.NewAtom(id))
	}
	return c.Unify(out, ok(engine.NewAtom("imported").Apply(engine.Integer(n)))), nil
}
