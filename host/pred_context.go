package host

// Context family: opaque context handles (host/handle).
//
//	context_register(+Source, +Options, -Outcome) is det.
//	context_metadata(+Handle, -Outcome) is det.
//	context_peek(+Handle, +Selector, +Options, -Outcome) is det.
//	context_slice(+Handle, +Start, +Length, +Options, -Outcome) is det.
//	context_search(+Handle, +Pattern, +Options, -Outcome) is det.
//	context_partition(+Handle, +Spec, +Options, -Outcome) is det.
//	context_map(+Handle, +Transform, +Options, -Outcome) is det.
//	context_reduce(+Handle, +Reducer, +Options, -Outcome) is det.
//	context_delete(+Handle, -Outcome) is det.
//	context_trace(+Handle, +Limit, -Outcome) is det.

import (
	"fmt"
	"math"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/planterm"
	"github.com/rlmpl/rlmpl/prolog"
)

func refTerm(r handle.Ref) engine.Term {
	return atomContextHandle.Apply(engine.NewAtom(r.ID), engine.Integer(r.Version))
}

// handleArg reads context_handle(Id, Version); anything else is a thrown
// type error. A well-formed handle that is unknown or deleted is an outcome
// of the operation.
func handleArg(c *prolog.Call, t engine.Term) (handle.Ref, error) {
	h, isCompound := c.Resolve(t).(engine.Compound)
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return handle.Ref{}, prolog.InstantiationError()
	}
	if isCompound && h.Functor() == atomContextHandle && h.Arity() == 2 {
		id, ok1 := c.Resolve(h.Arg(0)).(engine.Atom)
		v, ok2 := c.Resolve(h.Arg(1)).(engine.Integer)
		if ok1 && ok2 && v >= 1 && v <= math.MaxInt32 {
			return handle.Ref{ID: id.String(), Version: int(v)}, nil
		}
	}
	return handle.Ref{}, prolog.TypeError("context_handle", prolog.Resolved(t, c.Env))
}

// limits reads the limit options of pred (max_results, max_bytes,
// time_limit) and, for searches, case_sensitive, exact and cursor, checked
// against lib's schema.
func (s *Session) limits(c *prolog.Call, pred string, options engine.Term) (handle.Limits, handle.Request, error) {
	op, err := s.options(c, pred, options)
	if err != nil {
		return handle.Limits{}, handle.Request{}, err
	}
	lim := handle.Limits{MaxResults: int(min(op.int("max_results"), math.MaxInt32)), MaxBytes: int(min(op.int("max_bytes"), math.MaxInt32)),
		TimeLimit: time.Duration(min(op.number("time_limit"), 3600) * float64(time.Second))}
	req := handle.Request{CaseSensitive: op.bool("case_sensitive"), Exact: op.bool("exact"), Cursor: int(min(op.int("cursor"), math.MaxInt32))}
	return lim, req, nil
}

func (s *Session) contextRegister(c *prolog.Call, source, options, out engine.Term) (bool, error) {
	lim, _, err := s.limits(c, "context_register/3", options)
	if err != nil {
		return false, err
	}
	ref, meta, err := s.registerSource(c, source, lim)
	if err != nil {
		return s.fail(c, out, phRegister, err)
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

// registerSource registers text(T) or terms(L); anything else is an
// unsupported_source *handle.Error (files and adapters are never reachable
// this way).
func (s *Session) registerSource(c *prolog.Call, source engine.Term, lim handle.Limits) (handle.Ref, handle.Metadata, error) {
	if _, isVar := c.Resolve(source).(engine.Variable); isVar {
		return handle.Ref{}, handle.Metadata{}, prolog.InstantiationError()
	}
	src, isCompound := c.Resolve(source).(engine.Compound)
	if !isCompound || src.Arity() != 1 || (src.Functor().String() != "text" && src.Functor().String() != "terms") {
		var shape engine.Term = engine.NewAtom("atomic")
		if t, isCompound := c.Resolve(source).(engine.Compound); isCompound {
			shape = engine.NewAtom("/").Apply(t.Functor(), engine.Integer(t.Arity()))
		}
		return handle.Ref{}, handle.Metadata{}, &handle.Error{Op: handle.OpRegister, Kind: handle.KindUnsupportedSource,
			Message: "a context source is text(Text) or terms(List)", Details: []handle.Field{handle.F("source_shape", shape)}}
	}
	if src.Functor().String() == "text" {
		text, err := c.Text(src.Arg(0))
		if err != nil {
			return handle.Ref{}, handle.Metadata{}, &handle.Error{Op: handle.OpRegister, Kind: handle.KindInvalidSource, Message: "text(T) needs text"}
		}
		return s.handles.RegisterText(text, lim)
	}
	elems, err := c.List(src.Arg(0))
	if err != nil {
		return handle.Ref{}, handle.Metadata{}, &handle.Error{Op: handle.OpRegister, Kind: handle.KindInvalidSource, Message: "terms(L) needs a proper list"}
	}
	items := make([]handle.Item, len(elems))
	for i, e := range elems {
		v := prolog.Resolved(e, c.Env)
		items[i] = handle.Item{Text: s.in.WriteQ(v, nil), Value: v}
	}
	return s.handles.RegisterTerms(items, lim)
}

func contextRef(ref handle.Ref, meta handle.Metadata) engine.Term {
	return record("context_ref", fld("handle", refTerm(ref)), fld("metadata", metadataTerm(meta)))
}

func metadataTerm(m handle.Metadata) engine.Term {
	count := func(n int64) engine.Term {
		if n < 0 {
			return engine.NewAtom("unknown")
		}
		return engine.Integer(n)
	}
	ops := make([]engine.Term, len(m.Operations))
	for i, o := range m.Operations {
		ops[i] = engine.NewAtom(string(o))
	}
	fields := []prolog.Field{
		fld("backend", backendTerm(m)),
		fld("bytes", count(m.Bytes)),
		fld("created_at", engine.Integer(m.CreatedAt.UnixMilli())),
		fld("items", count(m.Items)),
		fld("kind", engine.NewAtom(m.Kind)),
		fld("operations", engine.List(ops...)),
		fld("version", engine.Integer(m.Version)),
	}
	if m.Adapter != "" {
		src := make([]prolog.Field, len(m.Source))
		for i, f := range m.Source {
			src[i] = fld(f.Key, goTerm(f.Value))
		}
		fields = append(fields, fld("adapter", engine.NewAtom(m.Adapter)), fld("source", record("source", src...)))
	}
	return record("context_metadata", fields...)
}

// backendTerm is memory or adapter(Name), a term (never the atom
// 'adapter(Name)').
func backendTerm(m handle.Metadata) engine.Term {
	if m.Adapter != "" {
		return engine.NewAtom("adapter").Apply(engine.NewAtom(m.Adapter))
	}
	return engine.NewAtom(m.Backend)
}

func (s *Session) contextMetadata(c *prolog.Call, h, out engine.Term) (bool, error) {
	ref, err := handleArg(c, h)
	if err != nil {
		return false, err
	}
	meta, err := s.handles.Metadata(ref)
	if err != nil {
		return s.fail(c, out, phMetadata, err)
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

func (s *Session) contextDelete(c *prolog.Call, h, out engine.Term) (bool, error) {
	ref, err := handleArg(c, h)
	if err != nil {
		return false, err
	}
	if err := s.handles.Delete(ref); err != nil {
		return s.fail(c, out, phDelete, err)
	}
	return c.Unify(out, ok(record("deleted", fld("handle", refTerm(ref))))), nil
}

func (s *Session) contextTrace(c *prolog.Call, h, limit, out engine.Term) (bool, error) {
	ref, err := handleArg(c, h)
	if err != nil {
		return false, err
	}
	if err := s.mustBe(c, engine.NewAtom("positive_integer"), limit); err != nil {
		return false, err
	}
	n, _ := c.Resolve(limit).(engine.Integer)
	evs, err := s.handles.Trace(ref, int(min(n, math.MaxInt32)))
	if err != nil {
		return s.fail(c, out, phTrace, err)
	}
	ts := make([]engine.Term, len(evs))
	for i, e := range evs {
		ts[i] = traceEventTerm(e)
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

// traceEventTerm is a context_trace record: one operation on a handle.
func traceEventTerm(e handle.Event) engine.Term {
	return record("context_trace",
		fld("bytes_inspected", engine.Integer(e.BytesInspected)),
		fld("bytes_returned", engine.Integer(e.BytesReturned)),
		fld("elapsed_ms", engine.Float(float64(e.Elapsed.Microseconds())/1000)),
		fld("handle", refTerm(e.Ref)),
		fld("items_inspected", engine.Integer(e.ItemsInspected)),
		fld("operation", engine.NewAtom(string(e.Op))),
		fld("sequence", engine.Integer(e.Seq)),
		fld("timestamp", engine.Integer(e.At.UnixMilli())),
		fld("truncated", boolTerm(e.Truncated)),
	)
}

// The operations: each reads its arguments, then runs through contextDo.

func (s *Session) contextPeek(c *prolog.Call, h, sel, options, out engine.Term) (bool, error) {
	return s.contextDo(c, "context_peek/4", handle.OpPeek, h, []engine.Term{sel}, options, out)
}

func (s *Session) contextSlice(c *prolog.Call, h, start, length, options, out engine.Term) (bool, error) {
	return s.contextDo(c, "context_slice/5", handle.OpSlice, h, []engine.Term{start, length}, options, out)
}

func (s *Session) contextSearch(c *prolog.Call, h, pattern, options, out engine.Term) (bool, error) {
	return s.contextDo(c, "context_search/4", handle.OpSearch, h, []engine.Term{pattern}, options, out)
}

func (s *Session) contextPartition(c *prolog.Call, h, spec, options, out engine.Term) (bool, error) {
	return s.contextDo(c, "context_partition/4", handle.OpPartition, h, []engine.Term{spec}, options, out)
}

func (s *Session) contextMap(c *prolog.Call, h, transform, options, out engine.Term) (bool, error) {
	return s.contextDo(c, "context_map/4", handle.OpMap, h, []engine.Term{transform}, options, out)
}

func (s *Session) contextReduce(c *prolog.Call, h, reducer, options, out engine.Term) (bool, error) {
	return s.contextDo(c, "context_reduce/4", handle.OpReduce, h, []engine.Term{reducer}, options, out)
}

// contextDo runs one operation of pred with its arguments.
func (s *Session) contextDo(c *prolog.Call, pred string, op handle.Op, h engine.Term, args []engine.Term, options, out engine.Term) (bool, error) {
	ref, err := handleArg(c, h)
	if err != nil {
		return false, err
	}
	lim, req, err := s.limits(c, pred, options)
	if err != nil {
		return false, err
	}
	req.Op = op
	if err := s.request(c, &req, args); err != nil {
		return s.fail(c, out, opPhase(op), err)
	}
	cb := &callbacks{c: c}
	res, err := s.handles.Do(withCallbacks(c.Ctx, cb), ref, req, lim)
	cb.close()
	if err != nil {
		return s.fail(c, out, opPhase(op), err)
	}
	fields := []prolog.Field{
		fld("handle", refTerm(res.Ref)),
		fld("operation", engine.NewAtom(string(op))),
		fld("trace", traceEventTerm(res.Trace)),
		fld("truncated", boolTerm(res.Truncated)),
		fld("value", s.valueTerm(res.Value)),
	}
	if req.Op == handle.OpSearch {
		fields = append(fields, fld("next", engine.Integer(res.Next)))
	}
	return c.Unify(out, ok(record("context_result", fields...))), nil
}

// request decodes the operation's arguments; shapes the model may get
// wrong are outcomes (invalid_argument, unsupported_selector, ...).
func (s *Session) request(c *prolog.Call, req *handle.Request, args []engine.Term) error {
	bad := func(kind handle.Kind, msg string, culprit engine.Term) error {
		return &handle.Error{Op: req.Op, Kind: kind, Message: msg, Details: []handle.Field{handle.F("value", prolog.Resolved(culprit, c.Env))}}
	}
	arity := map[handle.Op]int{handle.OpSlice: 2}[req.Op]
	if arity == 0 {
		arity = 1
	}
	if len(args) != arity {
		return bad(handle.KindInvalidArgument, "wrong number of arguments", engine.List(args...))
	}
	a := c.Resolve(args[0])
	intArg := func(t engine.Term) (int, bool) {
		n, isInt := c.Resolve(t).(engine.Integer)
		return int(n), isInt && n >= 0 && n <= math.MaxInt32
	}
	unary := func() (string, int, bool) {
		switch t := a.(type) {
		case engine.Atom:
			return t.String(), 0, true
		case engine.Compound:
			if t.Arity() == 1 {
				n, valid := intArg(t.Arg(0))
				return t.Functor().String(), n, valid
			}
			return t.Functor().String(), 0, false
		}
		return "", 0, false
	}
	switch req.Op {
	case handle.OpPeek:
		sel, n, valid := unary()
		if !valid && sel != "" {
			return bad(handle.KindInvalidArgument, "selector needs a non-negative integer", a)
		}
		if sel == "metadata" && !isAtom(a) || sel != "metadata" && isAtom(a) {
			return bad(handle.KindUnsupportedSelector, "selector must be metadata, head(N), tail(N) or item(I)", a)
		}
		req.Selector, req.N = sel, n
	case handle.OpSlice:
		start, ok1 := intArg(args[0])
		length, ok2 := intArg(args[1])
		if !ok1 || !ok2 {
			return bad(handle.KindInvalidArgument, "slice needs non-negative integers", engine.List(args...))
		}
		req.Start, req.Length = start, length
	case handle.OpSearch:
		text, err := c.Text(a)
		if err != nil {
			text = ""
		}
		req.Pattern = text
	case handle.OpPartition:
		spec, n, valid := unary()
		if !valid || isAtom(a) {
			if spec == "fixed" || spec == "lines" {
				return bad(handle.KindInvalidArgument, "partition size must be a positive integer", a)
			}
			return bad(handle.KindUnsupportedPartition, "partition must be fixed(N) or lines(N)", a)
		}
		req.Partition, req.N = spec, n
	case handle.OpMap, handle.OpReduce:
		name := ""
		if at, isA := a.(engine.Atom); isA {
			name = at.String()
		}
		if name == "" {
			name = s.in.Describe(a, c.Env)
		}
		if req.Op == handle.OpMap {
			req.Transform = name
		} else {
			req.Reducer = name
		}
	default:
		return &handle.Error{Op: req.Op, Kind: handle.KindInvalidArgument, Message: "unknown operation"}
	}
	return nil
}

func isAtom(t engine.Term) bool {
	_, a := t.(engine.Atom)
	return a
}

// valueTerm converts a result value to a term.
func (s *Session) valueTerm(v any) engine.Term {
	switch v := v.(type) {
	case string:
		return prolog.Chars(v)
	case int64:
		return engine.Integer(v)
	case handle.Item:
		if t, isTerm := v.Value.(engine.Term); isTerm {
			return t
		}
		if v.Value == nil {
			return record("truncated_term", fld("preview", prolog.Chars(v.Text)))
		}
		t, err := planterm.ToTerm(v.Value)
		if err != nil {
			return prolog.Chars(v.Text)
		}
		return t
	case handle.Match:
		return record("match", fld("index", engine.Integer(v.Index)), fld("value", s.valueTerm(v.Value)))
	case handle.Part:
		return record("partition", fld("index", engine.Integer(v.Index)), fld("length", engine.Integer(v.Length)),
			fld("start", engine.Integer(v.Start)), fld("value", s.valueTerm(v.Value)))
	case handle.Metadata:
		return metadataTerm(v)
	case []any:
		return listTerm(s, v)
	case []string:
		return listTerm(s, v)
	case []handle.Item:
		return listTerm(s, v)
	case []handle.Match:
		return listTerm(s, v)
	case []handle.Part:
		return listTerm(s, v)
	}
	return engine.NewAtom(fmt.Sprint(v))
}

func listTerm[T any](s *Session, v []T) engine.Term {
	ts := make([]engine.Term, len(v))
	for i, e := range v {
		ts[i] = s.valueTerm(e)
	}
	return engine.List(ts...)
}
