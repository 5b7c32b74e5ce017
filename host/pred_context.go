package host

// Context family: opaque context handles (host/handle) as Prolog outcomes.
// lib/rlm_context.pl wraps them in the public context_* predicates.
//
//	ctx_register(+Source, +Options, -Outcome) is det.
//	ctx_metadata(+Handle, -Outcome) is det.
//	ctx_do(+Op, +Handle, +Args, +Options, -Outcome) is det.
//	ctx_delete(+Handle, -Outcome) is det.
//	ctx_trace(+Handle, +Limit, -Outcome) is det.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/prolog"
)

var (
	atomOK            = engine.NewAtom("ok")
	atomError         = engine.NewAtom("error")
	atomContextHandle = engine.NewAtom("context_handle")
)

func ok(v engine.Term) engine.Term { return atomOK.Apply(v) }

// record builds Tag([key(V), ...]) with keys sorted, the host's record order.
func record(tag string, fields ...prolog.Field) engine.Term {
	prolog.SortFields(fields)
	ts := make([]engine.Term, len(fields))
	for i, f := range fields {
		ts[i] = engine.NewAtom(f.Key).Apply(f.Value.(engine.Term))
	}
	return engine.NewAtom(tag).Apply(engine.List(ts...))
}

func fld(key string, v engine.Term) prolog.Field { return prolog.Field{Key: key, Value: v} }

func refTerm(r handle.Ref) engine.Term {
	return atomContextHandle.Apply(engine.NewAtom(r.ID), engine.Integer(r.Version))
}

// handleRef reads context_handle(Id, Version). A malformed handle is an
// outcome (invalid_handle), not a thrown error: model-authored plans pass
// handles, and a bad one must not abort the host.
func handleRef(c *prolog.Call, t engine.Term) (handle.Ref, bool) {
	h, isCompound := c.Resolve(t).(engine.Compound)
	if !isCompound || h.Functor() != atomContextHandle || h.Arity() != 2 {
		return handle.Ref{}, false
	}
	id, ok1 := c.Resolve(h.Arg(0)).(engine.Atom)
	v, ok2 := c.Resolve(h.Arg(1)).(engine.Integer)
	if !ok1 || !ok2 || v < 1 || v > math.MaxInt32 {
		return handle.Ref{}, false
	}
	return handle.Ref{ID: id.String(), Version: int(v)}, true
}

// contextError renders a *handle.Error as error(context_error([...])).
func contextError(e *handle.Error) engine.Term {
	fields := []prolog.Field{
		fld("kind", engine.NewAtom(string(e.Kind))),
		fld("message", prolog.Chars(e.Message)),
		fld("operation", engine.NewAtom(string(e.Op))),
	}
	for _, d := range e.Details {
		fields = append(fields, fld(d.Key, goTerm(d.Value)))
	}
	return atomError.Apply(record("context_error", fields...))
}

// goTerm converts detail values; strings become atoms (names, kinds).
func goTerm(v any) engine.Term {
	switch v := v.(type) {
	case string:
		return engine.NewAtom(v)
	case int:
		return engine.Integer(v)
	case float64:
		return engine.Float(v)
	case []any:
		ts := make([]engine.Term, len(v))
		for i, e := range v {
			ts[i] = goTerm(e)
		}
		return engine.List(ts...)
	case engine.Term:
		return v
	}
	return engine.NewAtom(fmt.Sprint(v))
}

// outcome unifies out with the error outcome of err when it is a handle
// error; other errors are thrown.
func outcomeOf(c *prolog.Call, out engine.Term, err error) (bool, error) {
	var he *handle.Error
	if errors.As(err, &he) {
		return c.Unify(out, contextError(he)), nil
	}
	return false, err
}

// limits reads the options max_results(N), max_bytes(N), time_limit(Secs),
// plus the search options case_sensitive(Bool) and cursor(N). A bad value
// is an invalid_limit outcome (returned as *handle.Error); an unknown
// option is a thrown domain error.
func limits(c *prolog.Call, options engine.Term, allowed ...string) (handle.Limits, handle.Request, error) {
	var lim handle.Limits
	var req handle.Request
	props, err := c.Props(options)
	if err != nil {
		return lim, req, err
	}
	seen := map[string]bool{}
	for _, p := range props {
		if seen[p.Key] {
			continue // first occurrence wins, as option/2
		}
		seen[p.Key] = true
		v := c.Resolve(p.Value.(engine.Term))
		invalid := func() error {
			return &handle.Error{Op: handle.OpOptions, Kind: handle.KindInvalidLimit, Message: p.Key + " needs a positive value",
				Details: []handle.Field{handle.F("limit", p.Key), handle.F("value", v)}}
		}
		switch p.Key {
		case "max_results", "max_bytes":
			n, isInt := v.(engine.Integer)
			if !isInt || n < 1 || n > math.MaxInt32 {
				return lim, req, invalid()
			}
			if p.Key == "max_results" {
				lim.MaxResults = int(n)
			} else {
				lim.MaxBytes = int(n)
			}
		case "time_limit":
			secs, err := c.Number(v)
			if err != nil || secs <= 0 || secs > 3600 {
				return lim, req, invalid()
			}
			lim.TimeLimit = time.Duration(secs * float64(time.Second))
		default:
			if !slices.Contains(allowed, p.Key) {
				return lim, req, prolog.DomainError("context_option", engine.NewAtom(p.Key).Apply(v))
			}
			switch p.Key {
			case "case_sensitive":
				b, err := c.Bool(v)
				if err != nil {
					return lim, req, err
				}
				req.CaseSensitive = b
			case "exact":
				b, err := c.Bool(v)
				if err != nil {
					return lim, req, err
				}
				req.Exact = b
			case "cursor":
				n, err := c.NonNeg(v)
				if err != nil {
					return lim, req, err
				}
				req.Cursor = int(n)
			}
		}
	}
	return lim, req, nil
}

func (s *Session) ctxRegister(c *prolog.Call, source, options, out engine.Term) (bool, error) {
	lim, _, err := limits(c, options)
	if err != nil {
		return outcomeOf(c, out, err)
	}
	ref, meta, err := s.registerSource(c, source, lim)
	if err != nil {
		return outcomeOf(c, out, err)
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

// registerSource registers text(T) or terms(L); anything else is an
// unsupported_source *handle.Error (files and adapters are never reachable
// this way).
func (s *Session) registerSource(c *prolog.Call, source engine.Term, lim handle.Limits) (handle.Ref, handle.Metadata, error) {
	src, isCompound := c.Resolve(source).(engine.Compound)
	if !isCompound || src.Arity() != 1 || (src.Functor().String() != "text" && src.Functor().String() != "terms") {
		var shape engine.Term = engine.NewAtom("atomic")
		switch t := c.Resolve(source).(type) {
		case engine.Compound:
			shape = engine.NewAtom("/").Apply(t.Functor(), engine.Integer(t.Arity()))
		case engine.Variable:
			shape = engine.NewAtom("var")
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
		fld("backend", engine.NewAtom(m.Backend)),
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

func (s *Session) ctxMetadata(c *prolog.Call, h, out engine.Term) (bool, error) {
	ref, valid := handleRef(c, h)
	if !valid {
		return outcomeOf(c, out, invalidHandle())
	}
	meta, err := s.handles.Metadata(ref)
	if err != nil {
		return outcomeOf(c, out, err)
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

func invalidHandle() error {
	return &handle.Error{Op: handle.OpResolve, Kind: handle.KindInvalidHandle, Message: "not a context_handle(Id, Version)"}
}

func (s *Session) ctxDelete(c *prolog.Call, h, out engine.Term) (bool, error) {
	ref, valid := handleRef(c, h)
	if !valid {
		return outcomeOf(c, out, invalidHandle())
	}
	if err := s.handles.Delete(ref); err != nil {
		return outcomeOf(c, out, err)
	}
	return c.Unify(out, ok(record("deleted", fld("handle", refTerm(ref))))), nil
}

func (s *Session) ctxTrace(c *prolog.Call, h, limit, out engine.Term) (bool, error) {
	ref, valid := handleRef(c, h)
	if !valid {
		return outcomeOf(c, out, invalidHandle())
	}
	n, isInt := c.Resolve(limit).(engine.Integer)
	if !isInt || n < 1 || n > math.MaxInt32 {
		return outcomeOf(c, out, &handle.Error{Op: handle.OpTrace, Kind: handle.KindInvalidLimit, Message: "limit must be a positive integer",
			Details: []handle.Field{handle.F("value", c.Resolve(limit))}})
	}
	evs, err := s.handles.Trace(ref, int(n))
	if err != nil {
		return outcomeOf(c, out, err)
	}
	ts := make([]engine.Term, len(evs))
	for i, e := range evs {
		ts[i] = record("context_trace",
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
	return c.Unify(out, ok(engine.List(ts...))), nil
}

func boolTerm(b bool) engine.Term {
	if b {
		return engine.NewAtom("true")
	}
	return engine.NewAtom("false")
}

// ctxDo runs one operation: Op is peek, slice, search, partition, map or
// reduce; Args is the operation's argument list ([Selector], [S, L],
// [Pattern], [Spec], [Transform], [Reducer]).
func (s *Session) ctxDo(c *prolog.Call, op, h, args, options, out engine.Term) (bool, error) {
	name, err := c.Atom(op)
	if err != nil {
		return false, err
	}
	as, err := c.List(args)
	if err != nil {
		return false, err
	}
	extra := []string(nil)
	if name == "search" {
		extra = []string{"case_sensitive", "cursor", "exact"}
	}
	lim, req, err := limits(c, options, extra...)
	if err != nil {
		return outcomeOf(c, out, err)
	}
	req.Op = handle.Op(name)
	if err := s.request(c, &req, as); err != nil {
		return outcomeOf(c, out, err)
	}
	ref, valid := handleRef(c, h)
	if !valid {
		return outcomeOf(c, out, invalidHandle())
	}
	res, err := s.handles.Do(c.Ctx, ref, req, lim)
	if err != nil {
		return outcomeOf(c, out, err)
	}
	fields := []prolog.Field{
		fld("handle", refTerm(res.Ref)),
		fld("operation", engine.NewAtom(name)),
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
			name = s.in.WriteQ(a, c.Env)
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
		t, err := prolog.ToTerm(v.Value)
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
