package host

// Conversation family: durable conversations (host/runtime over store/).
// Writes (append, import) are det, idempotent under a key, and not undone
// on backtracking.
//
//	conversation_store_open(+Spec, -Outcome) is det.
//	conversation_store_close(+Store, -Outcome) is det.
//	conversation_create(+Store, +Options, -Outcome) is det.
//	conversation_open(+Store, +Id, -Outcome) is det.
//	conversation_list(+Store, +Options, -Outcome) is det.
//	conversation_append(+Conversation, +Message, -Outcome) is det.
//	conversation_append(+Conversation, +Message, +Options, -Outcome) is det.
//	conversation_append_all(+Conversation, +Items, +Options, -Outcome) is det.
//	conversation_message(+Conversation, +Seq, -Outcome) is det.
//	conversation_messages(+Conversation, +Selector, +Options, -Outcome) is det.
//	conversation_search(+Conversation, +Query, +Options, -Outcome) is det.
//	conversation_cold_context(+Conversation, +LimitOptions, -Outcome) is det.
//	conversation_stats(+Conversation, -Outcome) is det.
//	conversation_wait(+Conversation, +AfterSeq, +Options, -Outcome) is det.
//	conversation_export(+Conversation, +Format, -Outcome) is det.
//	conversation_import(+Conversation, +File, -Outcome) is det.
//	conversation_pin(+Conversation, +Target, -Outcome) is det.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

var atomStore = engine.NewAtom("conversation_store")

func storeTerm(st *runtime.Store) engine.Term { return atomStore.Apply(engine.NewAtom(st.ID())) }

// storeArg reads conversation_store(Id). A store closed since is an
// outcome (store.ErrClosed); anything else is a thrown type error.
func (s *Session) storeArg(c *prolog.Call, t engine.Term) (*runtime.Store, error) {
	st, isCompound := c.Resolve(t).(engine.Compound)
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return nil, prolog.InstantiationError()
	}
	if !isCompound || st.Functor() != atomStore || st.Arity() != 1 {
		return nil, prolog.TypeError("conversation_store", prolog.Resolved(t, c.Env))
	}
	id, err := c.Atom(st.Arg(0))
	if err != nil {
		return nil, prolog.TypeError("conversation_store", prolog.Resolved(t, c.Env))
	}
	o, open := s.host.rt.Store(id)
	if !open {
		return nil, store.ErrClosed
	}
	return o, nil
}

// convArg reads a conversation_ref record (only its store and id matter).
func (s *Session) convArg(c *prolog.Call, t engine.Term) (runtime.Conversation, error) {
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return runtime.Conversation{}, prolog.InstantiationError()
	}
	f, err := recordFields(c, t, "conversation_ref")
	id, isAtom := f["id"].(engine.Atom)
	if err != nil || !isAtom || f["store"] == nil {
		return runtime.Conversation{}, prolog.TypeError("conversation", prolog.Resolved(t, c.Env))
	}
	st, err := s.storeArg(c, f["store"])
	if err != nil {
		return runtime.Conversation{}, err
	}
	return st.Conversation(id.String()), nil
}

func (s *Session) conversationStoreOpen(c *prolog.Call, spec, out engine.Term) (bool, error) {
	ss, err := s.storeSpecOf(c, spec)
	if err != nil {
		return false, err
	}
	st, err := s.host.rt.OpenStore(ss)
	if err != nil {
		return s.fail(c, out, "store_open", err, redactedSpec(c, spec))
	}
	return c.Unify(out, ok(storeTerm(st))), nil
}

// storeSpecOf reads a store spec: the text of one (store.ParseSpec: memory,
// sqlite:PATH, postgres://…, badger:PATH; a bare name is persist(Name)),
// or Scheme(Target) and Scheme(Target, Options) for a registered scheme
// (sqlite, postgres, badger) or persist, the badger directory of
// runtime.Resolve's rule. Options are those of Scheme/2 in lib's
// rlm_option/4 when it has any (postgres/2: the pool and timeouts), else
// conversation_store_open/2's.
func (s *Session) storeSpecOf(c *prolog.Call, spec engine.Term) (runtime.StoreSpec, error) {
	var ss runtime.StoreSpec
	bad := func() error { return prolog.DomainError("conversation_store_spec", redactedSpec(c, spec)) }
	t := c.Resolve(spec)
	if _, isVar := t.(engine.Variable); isVar {
		return ss, prolog.InstantiationError()
	}
	if text, isText := specText(c, t); isText {
		if text != "memory" && !strings.Contains(text, ":") {
			return ss, bad() // a name alone is persist(Name)
		}
		var err error
		if ss.Store, err = store.ParseSpec(text); err != nil {
			return ss, bad()
		}
		return ss, nil
	}
	ct, isCompound := t.(engine.Compound)
	if !isCompound {
		return ss, prolog.TypeError("conversation_store_spec", t)
	}
	if ct.Arity() != 1 && ct.Arity() != 2 {
		return ss, bad()
	}
	f := ct.Functor().String()
	where, err := c.Text(ct.Arg(0))
	if err != nil {
		return ss, err
	}
	if f == "persist" {
		ss.Dir = where
	} else if ss.Store, err = store.NewSpec(f, where); err != nil {
		return ss, bad()
	}
	if ct.Arity() == 1 {
		return ss, nil
	}
	schemas, err := s.schemas(c)
	if err != nil {
		return ss, err
	}
	schema := f + "/2"
	if _, own := schemas[schema]; !own {
		schema = "conversation_store_open/2"
	}
	op, err := s.options(c, schema, ct.Arg(1))
	if err != nil {
		return ss, err
	}
	ss.Language = op.atom("language")
	if op.has("pool_size") || op.has("statement_timeout") || op.has("connect_timeout") {
		ss.Postgres = &store.PostgresOptions{
			MaxConns:         int32(min(op.int("pool_size"), math.MaxInt32)),
			StatementTimeout: time.Duration(min(op.number("statement_timeout"), 86400) * float64(time.Second)),
			ConnectTimeout:   time.Duration(min(op.number("connect_timeout"), 86400) * float64(time.Second)),
		}
	}
	return ss, nil
}

// specText is the text of a spec written as an atom or a list of chars or
// codes.
func specText(c *prolog.Call, t engine.Term) (string, bool) {
	switch t := t.(type) {
	case engine.Atom:
		return t.String(), true
	case engine.Compound:
		if t.Functor().String() == "." && t.Arity() == 2 {
			text, err := c.Text(t)
			return text, err == nil
		}
	}
	return "", false
}

// redactedSpec is a store spec as errors and outcomes show it: the text
// of a DSN in it without its password (store.RedactDSN).
func redactedSpec(c *prolog.Call, spec engine.Term) engine.Term {
	t := prolog.Resolved(spec, c.Env)
	if text, isText := specText(c, t); isText {
		return engine.NewAtom(store.RedactDSN(text))
	}
	ct, isCompound := t.(engine.Compound)
	if !isCompound {
		return t
	}
	args := make([]engine.Term, ct.Arity())
	for i := range args {
		args[i] = ct.Arg(i)
	}
	if dsn, err := c.Text(args[0]); err == nil {
		args[0] = engine.NewAtom(store.RedactDSN(dsn))
	}
	return ct.Functor().Apply(args...)
}

func (s *Session) conversationStoreClose(c *prolog.Call, st, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err == nil {
		err = s.host.rt.CloseStore(o.ID())
	}
	if err != nil {
		return s.fail(c, out, "store_close", err)
	}
	return c.Unify(out, ok(engine.NewAtom("closed"))), nil
}

func (s *Session) conversationCreate(c *prolog.Call, st, options, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err != nil {
		return s.fail(c, out, "create", err)
	}
	op, err := s.options(c, "conversation_create/3", options)
	if err != nil {
		return false, err
	}
	meta, err := metadataFrom(c, op["metadata"])
	if err != nil {
		return false, err
	}
	if op.has("id") && op.text("id") == "" {
		// Create("") means a fresh id: id('') is not a request for one.
		return s.fail(c, out, "create", &store.ValidationError{Kind: store.ErrInvalid, Field: "id",
			Reason: "must not be empty (leave id(_) out for a fresh one)"})
	}
	conv, err := o.Create(op.text("id"), meta)
	if err != nil {
		return s.fail(c, out, "create", err, engine.NewAtom(op.text("id")))
	}
	return c.Unify(out, ok(convTerm(o, conv))), nil
}

func (s *Session) conversationOpen(c *prolog.Call, st, id, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err != nil {
		return s.fail(c, out, "open", err)
	}
	name, err := c.Text(id)
	if err != nil {
		return false, err
	}
	conv, err := o.Conversation(name).Info()
	if err != nil {
		return s.fail(c, out, "open", err, engine.NewAtom(name))
	}
	return c.Unify(out, ok(convTerm(o, conv))), nil
}

func (s *Session) conversationList(c *prolog.Call, st, options, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err != nil {
		return s.fail(c, out, "list", err)
	}
	op, err := s.options(c, "conversation_list/3", options)
	if err != nil {
		return false, err
	}
	order := store.Desc
	if op.atom("order") == "asc" {
		order = store.Asc
	}
	convs, err := o.Conversations(order, op.limit("limit"))
	if err != nil {
		return s.fail(c, out, "list", err)
	}
	ts := make([]engine.Term, len(convs))
	for i, cv := range convs {
		ts[i] = convTerm(o, cv)
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

func (s *Session) conversationAppend3(c *prolog.Call, conv, msg, out engine.Term) (bool, error) {
	return s.conversationAppend(c, conv, msg, atomNil, out)
}

var atomNil = engine.NewAtom("[]")

func (s *Session) conversationAppend(c *prolog.Call, conv, msg, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "append", err)
	}
	op, err := s.options(c, "conversation_append/4", options)
	if err != nil {
		return false, err
	}
	m, err := messageOf(c, msg)
	if err != nil {
		return s.fail(c, out, "append", err)
	}
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	so, err := appendOptionsOf(c, op)
	if err != nil {
		return false, err
	}
	rec, err := cv.Append(m, runtime.AppendOptions{IdempotencyKey: so.IdempotencyKey, Encodings: pol.encodings,
		Session: so.Session, Time: so.Time, Metadata: so.Metadata})
	if err != nil {
		return s.fail(c, out, "append", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordTerm(rec))), nil
}

// appendOptionsOf reads conversation_append/4's options.
func appendOptionsOf(c *prolog.Call, op opts) (store.AppendOptions, error) {
	ao := store.AppendOptions{IdempotencyKey: op.text("idempotency_key"), Session: op.text("session")}
	var err error
	if op.has("time") {
		if ao.Time, err = timeOf(c, op["time"]); err != nil {
			return ao, err
		}
	}
	ao.Metadata, err = metadataFrom(c, op["metadata"])
	return ao, err
}

var atomMinus = engine.NewAtom("-")

// conversationAppendAll appends a list of messages in one transaction:
// each item is a message or Message-Options (conversation_append/4's
// options, for that message alone).
func (s *Session) conversationAppendAll(c *prolog.Call, conv, items, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "append", err)
	}
	switch batchOpts, err := c.List(options); { // none yet: each item has its own
	case err != nil:
		return false, err
	case len(batchOpts) > 0:
		return false, prolog.DomainError("conversation_append_all_option", prolog.Resolved(batchOpts[0], c.Env))
	}
	list, err := c.List(items)
	if err != nil {
		return false, err
	}
	entries := make([]store.Entry, len(list))
	for i, item := range list {
		msg, itemOpts := item, engine.Term(atomNil)
		if p, isPair := c.Resolve(item).(engine.Compound); isPair && p.Functor() == atomMinus && p.Arity() == 2 {
			msg, itemOpts = p.Arg(0), p.Arg(1)
		}
		op, err := s.options(c, "conversation_append/4", itemOpts)
		if err != nil {
			return false, err
		}
		if entries[i].Options, err = appendOptionsOf(c, op); err != nil {
			return false, err
		}
		if entries[i].Message, err = messageOf(c, msg); err != nil {
			if _, isInvalid := errors.AsType[*store.ValidationError](err); isInvalid {
				err = fmt.Errorf("entry %d: %w", i+1, err) // which of a long batch
			}
			return s.fail(c, out, "append", err)
		}
	}
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	recs, err := cv.AppendAll(entries, pol.encodings)
	if err != nil {
		return s.fail(c, out, "append", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordsTerm(recs))), nil
}

func (s *Session) conversationMessage(c *prolog.Call, conv, seq, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "message", err)
	}
	n, err := c.Int(seq)
	if err != nil {
		return false, err
	}
	if n < 1 {
		return false, prolog.TypeError("positive_integer", engine.Integer(n))
	}
	rec, err := cv.Message(n)
	if errors.Is(err, store.ErrNotFound) {
		return c.Unify(out, convError("message", engine.NewAtom("message_not_found").Apply(engine.NewAtom(cv.ID()), engine.Integer(n)), err.Error())), nil
	}
	if err != nil {
		return s.fail(c, out, "message", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordTerm(rec))), nil
}

// selectorOf reads all, recent(N), range(S,E), before(S), after(S),
// around(S,R) or role(R); anything else is a domain error.
func selectorOf(c *prolog.Call, t engine.Term) (store.Selector, error) {
	bad := func() (store.Selector, error) {
		return store.Selector{}, prolog.DomainError("conversation_selector", prolog.Resolved(t, c.Env))
	}
	switch sel := c.Resolve(t).(type) {
	case engine.Variable:
		return store.Selector{}, prolog.InstantiationError()
	case engine.Atom:
		if sel.String() == "all" {
			return store.All(), nil
		}
	case engine.Compound:
		name, n := sel.Functor().String(), sel.Arity()
		if name == "role" && n == 1 {
			role, err := c.Text(sel.Arg(0))
			if err != nil {
				return store.Selector{}, err
			}
			r, err := store.ParseRole(role)
			if err != nil {
				return bad()
			}
			return store.ByRole(r), nil
		}
		ints := make([]int64, n)
		for i := range ints {
			v, err := c.Int(sel.Arg(i))
			if err != nil {
				return store.Selector{}, err
			}
			ints[i] = v
		}
		switch {
		case name == "recent" && n == 1:
			return store.Recent(ints[0]), nil
		case name == "range" && n == 2:
			return store.Range(ints[0], ints[1]), nil
		case name == "before" && n == 1:
			return store.Before(ints[0]), nil
		case name == "after" && n == 1:
			return store.After(ints[0]), nil
		case name == "around" && n == 2:
			return store.Around(ints[0], ints[1]), nil
		}
	}
	return bad()
}

func (s *Session) conversationMessages(c *prolog.Call, conv, selector, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "messages", err)
	}
	sel, err := selectorOf(c, selector)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "conversation_messages/4", options)
	if err != nil {
		return false, err
	}
	recs, err := cv.Messages(sel, op.limit("limit"))
	if err != nil {
		return s.fail(c, out, "messages", err, prolog.Resolved(selector, c.Env))
	}
	return c.Unify(out, ok(recordsTerm(recs))), nil
}

func (s *Session) conversationWait(c *prolog.Call, conv, afterSeq, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "wait", err)
	}
	after, err := c.NonNeg(afterSeq)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "conversation_wait/4", options)
	if err != nil {
		return false, err
	}
	ctx := c.Ctx
	if op.has("timeout") {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(op.number("timeout")*float64(time.Second)))
		defer cancel()
	}
	if _, err := cv.Wait(ctx, after); err != nil {
		if c.Ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return c.Unify(out, ok(engine.List())), nil // the timeout: nothing new
		}
		return s.fail(c, out, "wait", err, engine.NewAtom(cv.ID()))
	}
	recs, err := cv.Messages(store.After(after), op.limit("limit"))
	if err != nil {
		return s.fail(c, out, "wait", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordsTerm(recs))), nil
}

func (s *Session) conversationStats(c *prolog.Call, conv, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "stats", err)
	}
	st, err := cv.Stats()
	if err != nil {
		return s.fail(c, out, "stats", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(record("conversation_stats",
		fld("assistant_messages", engine.Integer(st.Assistant)),
		fld("content_bytes", engine.Integer(st.ContentBytes)),
		fld("conversation_id", engine.NewAtom(cv.ID())),
		fld("messages", engine.Integer(st.Messages)),
		fld("system_messages", engine.Integer(st.System)),
		fld("tool_messages", engine.Integer(st.Tool)),
		fld("user_messages", engine.Integer(st.User)),
	))), nil
}

func (s *Session) conversationExport(c *prolog.Call, conv, format, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "export", err)
	}
	f, err := c.Atom(format)
	if err != nil {
		return false, err
	}
	subject := engine.NewAtom(cv.ID())
	switch f {
	case "term":
		info, err := cv.Info()
		if err != nil {
			return s.fail(c, out, "export", err, subject)
		}
		recs, err := cv.Messages(store.All(), 0)
		if err != nil {
			return s.fail(c, out, "export", err, subject)
		}
		ms := make([]engine.Term, len(recs))
		for i, r := range recs {
			ms[i] = messageTerm(r.Message)
		}
		return c.Unify(out, ok(record("conversation_export",
			fld("conversation", convTerm(cv.Store(), info)), fld("conversation_id", subject), fld("messages", engine.List(ms...))))), nil
	case "jsonl", "rlmpl_jsonl":
		var b bytes.Buffer
		if err := cv.Export(&b, store.ExportOptions{Documents: f == "rlmpl_jsonl"}); err != nil {
			return s.fail(c, out, "export", err, subject)
		}
		return c.Unify(out, ok(prolog.Chars(b.String()))), nil
	}
	return false, prolog.DomainError("conversation_export_format", engine.NewAtom(f))
}

// conversationSearch ranks (BM25) by default; exact(true) or
// case_sensitive(Bool) select substring matching.
func (s *Session) conversationSearch(c *prolog.Call, conv, query, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "search", err)
	}
	q, err := textArg(c, query)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, "conversation_search/4", options)
	if err != nil {
		return false, err
	}
	so := store.SearchOptions{MaxResults: int(op.int("max_results")), Offset: int(op.int("offset")),
		Exact: op.bool("exact") || op.has("case_sensitive"), CaseSensitive: op.bool("case_sensitive"),
		Session: op.text("session"), NoContext: !op.bool("context"), Window: int(min(op.int("window"), math.MaxInt32)),
		MaxBytes: int(min(op.int("max_bytes"), math.MaxInt32))}
	roles, err := c.List(op["roles"])
	if err != nil {
		return false, err
	}
	for _, r := range roles {
		name, err := c.Text(r)
		if err != nil {
			return false, err
		}
		role, err := store.ParseRole(name)
		if err != nil {
			return false, prolog.DomainError("role", prolog.Resolved(r, c.Env))
		}
		so.Roles = append(so.Roles, role)
	}
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"since", &so.Since}, {"until", &so.Until}} {
		if op.has(b.name) {
			if *b.t, err = timeOf(c, op[b.name]); err != nil {
				return false, err
			}
		}
	}
	res, err := cv.Find(q, so)
	if err != nil {
		return s.fail(c, out, "search", err, engine.NewAtom(cv.ID()))
	}
	ts := make([]engine.Term, len(res.Hits))
	for i, h := range res.Hits {
		t := withField(recordTerm(h.Record), fld("score", engine.Float(h.Score)))
		t = withField(t, fld("lift", engine.Float(h.Lift)))
		if h.Partial {
			t = withField(t, fld("partial", engine.NewAtom("true")))
		}
		if len(h.Window) > 0 {
			t = withField(t, fld("window", recordsTerm(h.Window)))
		}
		ts[i] = t
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

// timeOf reads a moment: a number of milliseconds since the epoch (as a
// record's created_at and time), or text in RFC 3339 ("2023-05-08T13:56:00Z")
// or a date ("2023-05-08", midnight UTC).
func timeOf(c *prolog.Call, t engine.Term) (time.Time, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return time.Time{}, prolog.InstantiationError()
	case engine.Integer:
		return time.UnixMilli(int64(v)).UTC(), nil
	case engine.Float:
		return time.UnixMicro(int64(float64(v) * 1000)).UTC(), nil
	}
	s, err := c.Text(t)
	if err != nil {
		return time.Time{}, prolog.TypeError("time", prolog.Resolved(t, c.Env))
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if tm, err := time.Parse(layout, s); err == nil {
			return tm, nil
		}
	}
	return time.Time{}, prolog.DomainError("time", prolog.Resolved(t, c.Env))
}

// conversationColdContext is an opaque handle over the conversation
// through the trusted conversation adapter.
func (s *Session) conversationColdContext(c *prolog.Call, conv, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "cold_context", err)
	}
	lim, _, err := s.limits(c, "conversation_cold_context/3", options)
	if err != nil {
		return false, err
	}
	ref, meta, err := cv.ColdContext(c.Ctx, s.handles, lim)
	if err != nil {
		return s.fail(c, out, "cold_context", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

// importIndexWait bounds how long an import waits for the index.
const importIndexWait = 5 * time.Minute

// conversationImport appends OpenAI chat-messages JSONL read from the
// session's file system, in batches.
func (s *Session) conversationImport(c *prolog.Call, conv, file, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "import", err)
	}
	name, err := c.Text(file)
	if err != nil {
		return false, err
	}
	if s.host.opts.FS == nil {
		return false, prolog.ExistenceError("source_sink", prolog.Resolved(file, c.Env))
	}
	f, err := s.host.opts.FS.Open(name)
	if err != nil {
		return false, prolog.FileError("source_sink", prolog.Resolved(file, c.Env), err)
	}
	defer f.Close()
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	n, err := cv.Import(f, runtime.ImportOptions{Encodings: pol.encodings, WaitIndexed: importIndexWait, Source: path.Clean(name)})
	if err != nil {
		return s.fail(c, out, "import", err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(record("import_result", fld("documents", engine.Integer(n.Documents)),
		fld("messages", engine.Integer(n.Imported)), fld("skipped", engine.Integer(n.Skipped))))), nil
}

// Term conversions between store values and Prolog records.

func convTerm(st *runtime.Store, c store.Conversation) engine.Term {
	return record("conversation_ref",
		fld("created_at", millis(c.CreatedAt)),
		fld("id", engine.NewAtom(c.ID)),
		fld("metadata", metadataOf(c.Metadata)),
		fld("store", storeTerm(st)),
	)
}

// metadataFrom reads metadata as [key(V), ...], [Key-V, ...] or a record
// metadata([...]); values must be ground JSON-like data.
func metadataFrom(c *prolog.Call, t engine.Term) ([]store.KV, error) {
	elems, err := c.List(optionList(c, t, "metadata"))
	if err != nil {
		return nil, err
	}
	var kvs []store.KV
	for _, e := range elems {
		p, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound {
			return nil, prolog.TypeError("metadata_entry", prolog.Resolved(e, c.Env))
		}
		var key string
		var val engine.Term
		switch {
		case p.Functor().String() == "-" && p.Arity() == 2:
			k, err := c.Text(p.Arg(0))
			if err != nil {
				return nil, err
			}
			key, val = k, p.Arg(1)
		case p.Arity() == 1:
			key, val = p.Functor().String(), p.Arg(0)
		default:
			return nil, prolog.TypeError("metadata_entry", prolog.Resolved(e, c.Env))
		}
		v, err := goJSON(val, c.Env)
		if err != nil {
			return nil, prolog.TypeError("json", prolog.Resolved(val, c.Env))
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("host: metadata %s: %w", key, err)
		}
		kvs = append(kvs, store.KV{Key: key, Value: b})
	}
	return kvs, nil
}

// contentTerm renders content: text, or [text(T), image_url(URL, Detail)]
// (image_url(URL, Detail, Alt) when the image has a caption).
func contentTerm(c store.Content) engine.Term {
	if !c.IsParts() {
		return prolog.Chars(c.Text)
	}
	ts := make([]engine.Term, len(c.Parts))
	for i, p := range c.Parts {
		switch {
		case p.Type == store.PartText:
			ts[i] = engine.NewAtom("text").Apply(prolog.Chars(p.Text))
		case p.Alt != "":
			ts[i] = engine.NewAtom("image_url").Apply(prolog.Chars(p.URL), engine.NewAtom(p.Detail), prolog.Chars(p.Alt))
		default:
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

// recordsTerm is the list of recs' records, in order.
func recordsTerm(recs []store.Record) engine.Term {
	ts := make([]engine.Term, len(recs))
	for i, r := range recs {
		ts[i] = recordTerm(r)
	}
	return engine.List(ts...)
}

func recordTerm(r store.Record) engine.Term {
	counts := make([]prolog.Field, 0, len(r.TokenCounts))
	for enc, n := range r.TokenCounts {
		counts = append(counts, fld(enc, engine.Integer(n)))
	}
	conv := engine.NewAtom(r.Conversation)
	fs := []prolog.Field{
		fld("content", contentTerm(r.Message.Content)),
		fld("conversation_id", conv),
		fld("created_at", millis(r.CreatedAt)),
		fld("message", messageTerm(r.Message)),
		fld("ref", record("conversation_message_ref", fld("conversation_id", conv), fld("sequence", engine.Integer(r.Seq)))),
		fld("role", engine.NewAtom(r.Message.Role.String())),
		fld("sequence", engine.Integer(r.Seq)),
		fld("token_counts", record("token_counts", counts...)),
	}
	// What the caller said about the message, when it said something.
	if len(r.Metadata) > 0 {
		fs = append(fs, fld("metadata", metadataOf(r.Metadata)))
	}
	if r.Session != "" {
		fs = append(fs, fld("session", prolog.Chars(r.Session)))
	}
	if !r.Time.IsZero() {
		fs = append(fs, fld("time", millis(r.Time)))
	}
	return record("conversation_message", fs...)
}

// messageOf reads message(Role, Content) or message([role(R), content(C),
// name(N), tool_call_id(Id), tool_calls([tool_call([id, name, arguments])]),
// reasoning(T)]). The options rule holds for its fields: a term that is
// no message, or a field of the wrong type (content(42)), is a type error,
// an unknown field domain_error(message_field, F); values the store
// refuses (an unknown role, a bad part) are *store.ValidationError naming
// the field (outcomes).
func messageOf(c *prolog.Call, t engine.Term) (store.Message, error) {
	bad := func(field, format string, a ...any) error {
		return &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	mt, isCompound := c.Resolve(t).(engine.Compound)
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return store.Message{}, prolog.InstantiationError()
	}
	if !isCompound || mt.Functor().String() != "message" || (mt.Arity() != 1 && mt.Arity() != 2) {
		return store.Message{}, prolog.TypeError("message", prolog.Resolved(t, c.Env))
	}
	f := map[string]engine.Term{}
	if mt.Arity() == 2 {
		f["role"], f["content"] = mt.Arg(0), mt.Arg(1)
	} else {
		var err error
		if f, err = fieldsOf(c, mt.Arg(0)); err != nil {
			return store.Message{}, bad("message", "must be a property list")
		}
		for _, key := range slices.Sorted(maps.Keys(f)) { // the same error whatever the map's order
			if !slices.Contains(messageFields, key) {
				return store.Message{}, prolog.DomainError("message_field", engine.NewAtom(key).Apply(f[key]))
			}
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
	for _, fd := range []struct {
		key string
		dst *string
	}{{"name", &m.Name}, {"tool_call_id", &m.ToolCallID}, {"reasoning", &m.Reasoning}} {
		if v, ok := f[fd.key]; ok {
			if *fd.dst, err = messageText(c, v); err != nil {
				return m, err
			}
		}
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

// contentOf reads text or a list of parts [text(T), image_url(URL[, Detail[,
// Alt]])], Alt an image's caption (searched).
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
				case isPart && p.Functor().String() == "image_url" && p.Arity() >= 1 && p.Arity() <= 3:
					var texts [3]string // URL, Detail, Alt
					for k := range p.Arity() {
						if texts[k], err = prolog.TextOf(p.Arg(k), c.Env); err != nil {
							return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "image_url(URL[, Detail[, Alt]]) needs text"}
						}
					}
					parts = append(parts, store.CaptionedImagePart(texts[0], texts[1], texts[2]))
				default:
					return store.Content{}, &store.ValidationError{Kind: store.ErrInvalid, Field: field, Reason: "a part is text(T) or image_url(URL[, Detail[, Alt]])"}
				}
			}
			return store.PartsContent(parts...), nil
		}
	}
	s, err := messageText(c, t)
	return store.TextContent(s), err
}

// messageFields are the fields of message([...]).
var messageFields = []string{"role", "content", "name", "tool_call_id", "tool_calls", "reasoning"}

// messageText reads a text field of a message: an atom, chars or codes. A
// number is not text here (TextOf would print it): message(user, 42) is a
// type error, like any other non-text.
func messageText(c *prolog.Call, t engine.Term) (string, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Integer, *engine.BigInt, engine.Float:
		return "", prolog.TypeError("text", v)
	}
	return prolog.TextOf(t, c.Env)
}

// conversationPin pins message(Seq) or range(From, To), or unpins them
// under unpin(Target): durable, idempotent (changed(false) when nothing
// changed), not undone on backtracking.
func (s *Session) conversationPin(c *prolog.Call, conv, target, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, "pin", err)
	}
	t, pinned := c.Resolve(target), true
	if u, isCompound := t.(engine.Compound); isCompound && u.Functor().String() == "unpin" && u.Arity() == 1 {
		t, pinned = c.Resolve(u.Arg(0)), false
	}
	var from, to int64
	tc, _ := t.(engine.Compound)
	switch _, unbound := t.(engine.Variable); {
	case unbound:
		return false, prolog.InstantiationError()
	case tc != nil && tc.Functor().String() == "message" && tc.Arity() == 1:
		if from, err = c.Int(tc.Arg(0)); err != nil {
			return false, err
		}
		to = from
	case tc != nil && tc.Functor().String() == "range" && tc.Arity() == 2:
		if from, err = c.Int(tc.Arg(0)); err == nil {
			to, err = c.Int(tc.Arg(1))
		}
		if err != nil {
			return false, err
		}
	default:
		return false, prolog.DomainError("pin_target", prolog.Resolved(target, c.Env))
	}
	changed, err := cv.Pin(from, to, pinned)
	if err != nil {
		return s.fail(c, out, "pin", err, engine.NewAtom(cv.ID()), engine.Integer(from), engine.Integer(to))
	}
	return c.Unify(out, ok(record("conversation_pin", fld("changed", boolTerm(changed)),
		fld("conversation_id", engine.NewAtom(cv.ID())), fld("from", engine.Integer(from)),
		fld("pinned", boolTerm(pinned)), fld("to", engine.Integer(to))))), nil
}
