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
	"errors"
	"fmt"
	"math"
	"path"
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
		return s.fail(c, out, phStoreOpen, err, redactedSpec(c, spec))
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
		return s.fail(c, out, phStoreClose, err)
	}
	return c.Unify(out, ok(engine.NewAtom("closed"))), nil
}

func (s *Session) conversationCreate(c *prolog.Call, st, options, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err != nil {
		return s.fail(c, out, phCreate, err)
	}
	op, err := s.options(c, "conversation_create/3", options)
	if err != nil {
		return false, err
	}
	meta, err := metadataFrom(c, op.term("metadata"))
	if err != nil {
		return false, err
	}
	if op.has("id") && op.text("id") == "" {
		// Create("") means a fresh id: id('') is not a request for one.
		return s.fail(c, out, phCreate, &store.ValidationError{Kind: store.ErrInvalid, Field: "id",
			Reason: "must not be empty (leave id(_) out for a fresh one)"})
	}
	conv, err := o.Create(op.text("id"), meta)
	if err != nil {
		return s.fail(c, out, phCreate, err, engine.NewAtom(op.text("id")))
	}
	return c.Unify(out, ok(convTerm(o, conv))), nil
}

func (s *Session) conversationOpen(c *prolog.Call, st, id, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err != nil {
		return s.fail(c, out, phOpen, err)
	}
	name, err := c.Text(id)
	if err != nil {
		return false, err
	}
	conv, err := o.Conversation(name).Info()
	if err != nil {
		return s.fail(c, out, phOpen, err, engine.NewAtom(name))
	}
	return c.Unify(out, ok(convTerm(o, conv))), nil
}

func (s *Session) conversationList(c *prolog.Call, st, options, out engine.Term) (bool, error) {
	o, err := s.storeArg(c, st)
	if err != nil {
		return s.fail(c, out, phList, err)
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
		return s.fail(c, out, phList, err)
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
		return s.fail(c, out, phAppend, err)
	}
	op, err := s.options(c, "conversation_append/4", options)
	if err != nil {
		return false, err
	}
	m, err := messageOf(c, msg)
	if err != nil {
		return s.fail(c, out, phAppend, err)
	}
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	so, err := appendOptionsOf(c, op)
	if err != nil {
		return false, err
	}
	rec, err := cv.Append(m, runtime.AppendOptions{IdempotencyKey: so.IdempotencyKey, Encodings: pol.CountEncodings,
		Session: so.Session, Time: so.Time, Metadata: so.Metadata})
	if err != nil {
		return s.fail(c, out, phAppend, err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordTerm(rec))), nil
}

// appendOptionsOf reads conversation_append/4's options.
func appendOptionsOf(c *prolog.Call, op opts) (store.AppendOptions, error) {
	ao := store.AppendOptions{IdempotencyKey: op.text("idempotency_key"), Session: op.text("session")}
	var err error
	if op.has("time") {
		if ao.Time, err = timeOf(c, op.term("time")); err != nil {
			return ao, err
		}
	}
	ao.Metadata, err = metadataFrom(c, op.term("metadata"))
	return ao, err
}

var atomMinus = engine.NewAtom("-")

// conversationAppendAll appends a list of messages in one transaction:
// each item is a message or Message-Options (conversation_append/4's
// options, for that message alone).
func (s *Session) conversationAppendAll(c *prolog.Call, conv, items, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phAppend, err)
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
			return s.fail(c, out, phAppend, err)
		}
	}
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	recs, err := cv.AppendAll(entries, pol.CountEncodings)
	if err != nil {
		return s.fail(c, out, phAppend, err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordsTerm(recs))), nil
}

func (s *Session) conversationMessage(c *prolog.Call, conv, seq, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phMessage, err)
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
		return c.Unify(out, convError(phMessage, engine.NewAtom("message_not_found").Apply(engine.NewAtom(cv.ID()), engine.Integer(n)), err.Error())), nil
	}
	if err != nil {
		return s.fail(c, out, phMessage, err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordTerm(rec))), nil
}

func (s *Session) conversationMessages(c *prolog.Call, conv, selector, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phMessages, err)
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
		return s.fail(c, out, phMessages, err, prolog.Resolved(selector, c.Env))
	}
	return c.Unify(out, ok(recordsTerm(recs))), nil
}

func (s *Session) conversationWait(c *prolog.Call, conv, afterSeq, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phWait, err)
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
		return s.fail(c, out, phWait, err, engine.NewAtom(cv.ID()))
	}
	recs, err := cv.Messages(store.After(after), op.limit("limit"))
	if err != nil {
		return s.fail(c, out, phWait, err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(recordsTerm(recs))), nil
}

func (s *Session) conversationStats(c *prolog.Call, conv, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phStats, err)
	}
	st, err := cv.Stats()
	if err != nil {
		return s.fail(c, out, phStats, err, engine.NewAtom(cv.ID()))
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
		return s.fail(c, out, phExport, err)
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
			return s.fail(c, out, phExport, err, subject)
		}
		recs, err := cv.Messages(store.All(), 0)
		if err != nil {
			return s.fail(c, out, phExport, err, subject)
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
			return s.fail(c, out, phExport, err, subject)
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
		return s.fail(c, out, phSearch, err)
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
	roles, err := c.List(op.term("roles"))
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
			if *b.t, err = timeOf(c, op.term(b.name)); err != nil {
				return false, err
			}
		}
	}
	res, err := cv.Find(q, so)
	if err != nil {
		return s.fail(c, out, phSearch, err, engine.NewAtom(cv.ID()))
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

// conversationColdContext is an opaque handle over the conversation
// through the trusted conversation adapter.
func (s *Session) conversationColdContext(c *prolog.Call, conv, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phColdContext, err)
	}
	lim, _, err := s.limits(c, "conversation_cold_context/3", options)
	if err != nil {
		return false, err
	}
	ref, meta, err := cv.ColdContext(c.Ctx, s.handles, lim)
	if err != nil {
		return s.fail(c, out, phColdContext, err, engine.NewAtom(cv.ID()))
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
		return s.fail(c, out, phImport, err)
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
	n, err := cv.Import(f, runtime.ImportOptions{Encodings: pol.CountEncodings, WaitIndexed: importIndexWait, Source: path.Clean(name)})
	if err != nil {
		return s.fail(c, out, phImport, err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(record("import_result", fld("documents", engine.Integer(n.Documents)),
		fld("messages", engine.Integer(n.Imported)), fld("skipped", engine.Integer(n.Skipped))))), nil
}

// conversationPin pins message(Seq) or range(From, To), or unpins them
// under unpin(Target): durable, idempotent (changed(false) when nothing
// changed), not undone on backtracking.
func (s *Session) conversationPin(c *prolog.Call, conv, target, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phPin, err)
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
		return s.fail(c, out, phPin, err, engine.NewAtom(cv.ID()), engine.Integer(from), engine.Integer(to))
	}
	return c.Unify(out, ok(record("conversation_pin", fld("changed", boolTerm(changed)),
		fld("conversation_id", engine.NewAtom(cv.ID())), fld("from", engine.Integer(from)),
		fld("pinned", boolTerm(pinned)), fld("to", engine.Integer(to))))), nil
}
