package host

// Adapter family: context backends written in Prolog. A program exposes
// its own data (files it reads through granted paths, facts, a database it
// queries) as an opaque handle; the registry (host/handle) bounds every
// operation, caps the metadata and re-bounds whatever the callbacks return,
// exactly as for the built-in conversation adapter.
//
//	context_adapter_register(+Name, +Capabilities, +MetadataHandler, +OperationHandler, -Outcome) is det.
//	context_adapter_unregister(+Name, -Outcome) is det.
//	context_adapter_info(+Name, -Outcome) is det.
//	context_register_adapter(+Name, +Source, +Options, -Outcome) is det.
//	context_backend(+Backend, -Info) is semidet.

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/prolog"
)

// Kinds of the adapter family beyond host/handle's.
const (
	kindAdapterMetadataFailed  handle.Kind = "adapter_metadata_failed"
	kindInvalidAdapterMetadata handle.Kind = "invalid_adapter_metadata"
	kindInvalidAdapterWork     handle.Kind = "invalid_adapter_work"
	kindInvalidAdapterSource   handle.Kind = "invalid_adapter_source"
)

// adapterCaps are an adapter's declared capabilities.
type adapterCaps struct {
	ops                           []handle.Op
	filesystem, network, persists bool
}

func (a adapterCaps) term() engine.Term {
	ops := make([]engine.Term, len(a.ops))
	for i, o := range a.ops {
		ops[i] = engine.NewAtom(string(o))
	}
	return record("capabilities", fld("filesystem", boolTerm(a.filesystem)), fld("network", boolTerm(a.network)),
		fld("operations", engine.List(ops...)), fld("persistent", boolTerm(a.persists)))
}

// prologAdapter is a handle.Adapter whose metadata and operations are
// Prolog closures: call(Meta, Source, Metadata) and call(Op, Operation,
// Source, Limits, Work). It runs only under a Prolog call (the callbacks in
// ctx), never from another goroutine on its own.
type prologAdapter struct {
	name     string
	caps     adapterCaps
	meta, op engine.Term // resolved closures
	desc     string      // description(Text), "" when none
	// def is the whole definition, compared as a term to tell a repeated
	// registration: writing it out costs a text of the whole handler
	// terms (and the engine's writer was quadratic in their depth).
	def engine.Term
}

func (a *prologAdapter) Name() string            { return a.name }
func (a *prologAdapter) Operations() []handle.Op { return slices.Clone(a.caps.ops) }

// termValue is a metadata field's term; String is its canonical text, what
// the metadata cap measures.
type termValue struct {
	t    engine.Term
	text string
}

func (v termValue) String() string { return v.text }

func (a *prologAdapter) Describe(ctx context.Context, source any) (kind string, items, bytes int64, desc []handle.Field, err error) {
	cb := callbacksFrom(ctx)
	src, isTerm := source.(engine.Term)
	if cb == nil || !isTerm {
		return "", 0, 0, nil, &handle.Error{Op: handle.OpRegister, Kind: handle.KindAdapterFailed,
			Message: "a Prolog adapter runs only under a Prolog call", Details: []handle.Field{handle.F("adapter", a.name)}}
	}
	kind, items, bytes = a.name, -1, -1
	err = cb.call(ctx, a.meta, src, func(c *prolog.Call, reply engine.Term) error {
		bad := &handle.Error{Op: handle.OpRegister, Kind: kindInvalidAdapterMetadata,
			Message: "adapter metadata must be a ground record or property list",
			Details: []handle.Field{handle.F("adapter", a.name)}}
		if !prolog.Acyclic(reply, nil) || !prolog.Ground(reply, nil) {
			return bad
		}
		props, err := c.Props(optionList(c, reply))
		if err != nil {
			return bad
		}
		for _, p := range props {
			v := p.Value.(engine.Term)
			switch p.Key {
			case "kind":
				if k, err := c.Text(v); err == nil && k != "" {
					kind = k
				}
			case "items", "bytes":
				if n, isInt := v.(engine.Integer); isInt && n >= 0 {
					if p.Key == "items" {
						items = int64(n)
					} else {
						bytes = int64(n)
					}
				}
			}
			desc = append(desc, handle.F(p.Key, termValue{t: v, text: c.In.WriteQ(v, nil)}))
		}
		return nil
	})
	var he *handlerError
	if errors.As(err, &he) {
		err = &handle.Error{Op: handle.OpRegister, Kind: kindAdapterMetadataFailed, Message: he.Error(),
			Details: []handle.Field{handle.F("adapter", a.name)}}
	}
	return kind, items, bytes, desc, err
}

// opTerm is the operation as the handler receives it.
func opTerm(q handle.Request) engine.Term {
	a := engine.NewAtom
	switch q.Op {
	case handle.OpPeek:
		return a("peek").Apply(a(q.Selector).Apply(engine.Integer(q.N)))
	case handle.OpSlice:
		return a("slice").Apply(engine.Integer(q.Start), engine.Integer(q.Length))
	case handle.OpSearch:
		return a("search").Apply(prolog.Chars(q.Pattern))
	case handle.OpPartition:
		return a("partition").Apply(a(q.Partition).Apply(engine.Integer(q.N)))
	case handle.OpMap:
		return a("map").Apply(a(q.Transform))
	case handle.OpReduce:
		return a("reduce").Apply(a(q.Reducer))
	}
	return a(string(q.Op))
}

func (a *prologAdapter) Do(ctx context.Context, source any, q handle.Request, lim handle.Limits) (handle.Work, error) {
	cb := callbacksFrom(ctx)
	src, isTerm := source.(engine.Term)
	if cb == nil || !isTerm {
		return handle.Work{}, &handle.Error{Op: q.Op, Kind: handle.KindAdapterFailed,
			Message: "a Prolog adapter runs only under a Prolog call", Details: []handle.Field{handle.F("adapter", a.name)}}
	}
	limits := record("limits", fld("max_bytes", engine.Integer(lim.MaxBytes)), fld("max_results", engine.Integer(lim.MaxResults)),
		fld("time_limit", engine.Float(lim.TimeLimit.Seconds())))
	var w handle.Work
	goal := engine.NewAtom("call").Apply(a.op, opTerm(q), src, limits, engine.NewVariable())
	out := goal.(engine.Compound).Arg(4)
	err := cb.run(ctx, goal, a.op, func(c *prolog.Call, env *engine.Env) error {
		reply := prolog.Resolved(out, env)
		bad := &handle.Error{Op: q.Op, Kind: kindInvalidAdapterWork,
			Message: "adapter work must be a ground record of value(V), bytes_inspected(N), items_inspected(N), truncated(Bool)",
			Details: []handle.Field{handle.F("adapter", a.name)}}
		if !prolog.Acyclic(reply, nil) || !prolog.Ground(reply, nil) {
			return bad
		}
		f, err := fieldsOf(c, optionList(c, reply))
		if err != nil || f["value"] == nil {
			return bad
		}
		for _, k := range []string{"bytes_inspected", "items_inspected"} {
			if v, given := f[k]; given {
				n, isInt := v.(engine.Integer)
				if !isInt || n < 0 {
					return bad
				}
				if k == "bytes_inspected" {
					w.BytesInspected = int(min(n, 1<<31-1))
				} else {
					w.ItemsInspected = int(min(n, 1<<31-1))
				}
			}
		}
		if t, given := f["truncated"]; given {
			switch t {
			case engine.NewAtom("true"):
				w.Truncated = true
			case engine.NewAtom("false"):
			default:
				return bad
			}
		}
		w.Value = workValue(c, f["value"])
		return nil
	})
	var he *handlerError
	if errors.As(err, &he) {
		err = &handle.Error{Op: q.Op, Kind: handle.KindAdapterFailed, Message: he.Error(),
			Details: []handle.Field{handle.F("adapter", a.name)}}
	}
	return w, err
}

// workValue maps a handler's value to what the registry bounds: text to a
// string, an integer to int64, a list to items (each keeping its term),
// anything else to one item.
func workValue(c *prolog.Call, v engine.Term) any {
	switch t := v.(type) {
	case engine.Integer:
		return int64(t)
	case engine.Atom:
		if t != engine.NewAtom("[]") {
			return t.String()
		}
		return []handle.Item{}
	}
	if text, err := c.Text(v); err == nil {
		return text
	}
	if elems, err := c.List(v); err == nil {
		items := make([]handle.Item, len(elems))
		for i, e := range elems {
			items[i] = handle.Item{Text: c.In.WriteQ(e, nil), Value: e}
		}
		return items
	}
	return handle.Item{Text: c.In.WriteQ(v, nil), Value: v}
}

// adapters remembers the Prolog adapters a session registered, for
// "the same definition again" and for their declared capabilities.
type adapters struct {
	mu sync.Mutex
	m  map[string]*prologAdapter
}

func (s *Session) adapterName(c *prolog.Call, t engine.Term) (string, error) {
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return "", prolog.InstantiationError()
	}
	name, err := c.Text(t)
	if err != nil {
		return "", err
	}
	return name, nil
}

// contextAdapterRegister takes upstream's order (Name, Capabilities,
// MetadataHandler, OperationHandler, Outcome) and the (Name,
// Meta/Op or Module/[metadata(M), operation(O)], Capabilities, Options,
// Outcome).
func (s *Session) contextAdapterRegister(c *prolog.Call, name, a2, a3, a4, out engine.Term) (bool, error) {
	n, err := s.adapterName(c, name)
	if err != nil {
		return false, err
	}
	sl, isCompound := c.Resolve(a2).(engine.Compound)
	if !isCompound || sl.Functor().String() != "/" || sl.Arity() != 2 {
		return s.adapterRegister(c, n, a2, a3, a4, "", out) // upstream's order
	}
	op, err := s.options(c, "context_adapter_register/5", a4)
	if err != nil {
		return false, err
	}
	metaH, opH := sl.Arg(0), sl.Arg(1)
	if isListTerm(c, opH) {
		f, err := fieldsOf(c, opH)
		if err != nil {
			return false, err
		}
		if f["metadata"] == nil || f["operation"] == nil {
			return false, prolog.DomainError("adapter_callbacks", prolog.Resolved(opH, c.Env))
		}
		metaH, opH = f["metadata"], f["operation"]
	}
	return s.adapterRegister(c, n, a3, metaH, opH, op.text("description"), out)
}

func (s *Session) adapterRegister(c *prolog.Call, name string, capsArg, meta, op engine.Term, desc string, out engine.Term) (bool, error) {
	// The handlers are called as call(Meta, Source, Metadata) and
	// call(Op, Operation, Source, Limits, Work): each must name a defined
	// procedure with that many more arguments (message(user, 42) does not).
	for _, h := range []struct {
		t     engine.Term
		extra int
	}{{meta, 2}, {op, 4}} {
		if _, err := c.Callable(h.t); err != nil {
			return false, err
		}
		if isListTerm(c, h.t) { // callable to ISO, never a closure here
			return false, prolog.TypeError("callable", prolog.Resolved(h.t, c.Env))
		}
		if !prolog.Ground(h.t, c.Env) || !prolog.Acyclic(h.t, c.Env) {
			return false, prolog.TypeError("ground_callable", prolog.Resolved(h.t, c.Env))
		}
		if err := c.CheckClosure(h.t, h.extra); err != nil {
			return false, err
		}
	}
	invalid := func(msg string) (bool, error) {
		return s.fail(c, out, phAdapter, &handle.Error{Op: handle.OpAdapter, Kind: handle.KindInvalidAdapter, Message: msg,
			Details: []handle.Field{handle.F("adapter", name)}})
	}
	if name == "" {
		return invalid("an adapter needs a non-empty name")
	}
	if !prolog.Acyclic(capsArg, c.Env) {
		return invalid("capabilities must be an acyclic record")
	}
	f, err := fieldsOf(c, optionList(c, capsArg))
	if err != nil {
		return invalid("capabilities must be a record or property list with operations([...])")
	}
	var caps adapterCaps
	if f["operations"] != nil {
		elems, err := c.List(f["operations"])
		if err != nil {
			return invalid("operations must be a list")
		}
		for _, e := range elems {
			o, isAtom := c.Resolve(e).(engine.Atom)
			if !isAtom || !slices.Contains([]string{"peek", "slice", "search", "partition", "map", "reduce"}, o.String()) {
				return invalid("operations are peek, slice, search, partition, map and reduce")
			}
			if !slices.Contains(caps.ops, handle.Op(o.String())) {
				caps.ops = append(caps.ops, handle.Op(o.String()))
			}
		}
	}
	if len(caps.ops) == 0 {
		return invalid("an adapter declares at least one operation")
	}
	for k, dst := range map[string]*bool{"filesystem": &caps.filesystem, "network": &caps.network, "persistent": &caps.persists} {
		if v, given := f[k]; given {
			*dst = v == engine.NewAtom("true")
		}
	}
	a := &prologAdapter{name: name, caps: caps, meta: prolog.Resolved(meta, c.Env), op: prolog.Resolved(op, c.Env), desc: desc}
	a.def = engine.NewAtom("def").Apply(caps.term(), a.meta, a.op, prolog.Chars(desc))
	s.adapters.mu.Lock()
	defer s.adapters.mu.Unlock()
	if s.adapters.m == nil {
		s.adapters.m = map[string]*prologAdapter{}
	}
	if prev, known := s.adapters.m[name]; known {
		if _, _, live := s.handles.Adapter(name); live && prev.def.Compare(a.def, nil) == 0 {
			return c.Unify(out, ok(engine.NewAtom("existing").Apply(engine.NewAtom(name)))), nil
		}
	}
	if err := s.handles.RegisterAdapter(a); err != nil {
		return s.fail(c, out, phAdapter, err)
	}
	s.adapters.m[name] = a
	return c.Unify(out, ok(engine.NewAtom("registered").Apply(engine.NewAtom(name)))), nil
}

func (s *Session) contextAdapterUnregister(c *prolog.Call, name, out engine.Term) (bool, error) {
	n, err := s.adapterName(c, name)
	if err != nil {
		return false, err
	}
	if err := s.handles.UnregisterAdapter(n); err != nil {
		return s.fail(c, out, phAdapter, err)
	}
	s.adapters.mu.Lock()
	delete(s.adapters.m, n)
	s.adapters.mu.Unlock()
	return c.Unify(out, ok(engine.NewAtom("unregistered").Apply(engine.NewAtom(n)))), nil
}

// backendCaps are the declared capabilities of a registered adapter: a
// Prolog one's as declared, a Go one's (the conversation adapter) its
// operations, persistent, no filesystem or network.
func (s *Session) backendCaps(name string) (adapterCaps, string, bool) {
	_, ops, live := s.handles.Adapter(name)
	if !live {
		return adapterCaps{}, "", false
	}
	s.adapters.mu.Lock()
	a, mine := s.adapters.m[name]
	s.adapters.mu.Unlock()
	if mine {
		return a.caps, a.desc, true
	}
	return adapterCaps{ops: ops, persists: true}, "", true
}

func (s *Session) contextAdapterInfo(c *prolog.Call, name, out engine.Term) (bool, error) {
	n, err := s.adapterName(c, name)
	if err != nil {
		return false, err
	}
	caps, desc, live := s.backendCaps(n)
	if !live {
		return s.fail(c, out, phAdapter, &handle.Error{Op: handle.OpAdapter, Kind: handle.KindAdapterNotRegistered,
			Message: "no such adapter", Details: []handle.Field{handle.F("adapter", n)}})
	}
	fs := []prolog.Field{fld("capabilities", caps.term()), fld("name", engine.NewAtom(n))}
	if desc != "" {
		fs = append(fs, fld("description", prolog.Chars(desc)))
	}
	return c.Unify(out, ok(record("context_adapter", fs...))), nil
}

func (s *Session) contextRegisterAdapter(c *prolog.Call, name, source, options, out engine.Term) (bool, error) {
	n, err := s.adapterName(c, name)
	if err != nil {
		return false, err
	}
	lim, _, err := s.limits(c, "context_register/3", options)
	if err != nil {
		return false, err
	}
	if !prolog.Acyclic(source, c.Env) || !prolog.Ground(source, c.Env) {
		return s.fail(c, out, phRegister, &handle.Error{Op: handle.OpRegister, Kind: kindInvalidAdapterSource,
			Message: "an adapter source must be a ground, acyclic term", Details: []handle.Field{handle.F("adapter", n)}})
	}
	cb := &callbacks{c: c}
	ref, meta, err := s.handles.RegisterSource(withCallbacks(c.Ctx, cb), n, prolog.Resolved(source, c.Env), lim)
	cb.close()
	if errors.Is(err, context.DeadlineExceeded) && c.Ctx.Err() == nil {
		err = &handle.Error{Op: handle.OpRegister, Kind: handle.KindTimeLimitExceeded, Message: "the metadata callback exceeded the time limit",
			Details: []handle.Field{handle.F("adapter", n), handle.F("time_limit", lim.TimeLimit.Seconds())}}
	}
	if err != nil {
		return s.fail(c, out, phRegister, err)
	}
	return c.Unify(out, ok(contextRef(ref, meta))), nil
}

var memoryBackend = adapterCaps{ops: []handle.Op{handle.OpPeek, handle.OpSlice, handle.OpSearch, handle.OpPartition, handle.OpMap, handle.OpReduce}}

// contextBackend reports a backend's declared capabilities: Backend is
// memory, adapter(Name) or a live handle (its backend). It fails for an
// unknown adapter or handle.
func (s *Session) contextBackend(c *prolog.Call, backend, info engine.Term) (bool, error) {
	b := c.Resolve(backend)
	if _, isVar := b.(engine.Variable); isVar {
		return false, prolog.InstantiationError()
	}
	name := ""
	switch t := b.(type) {
	case engine.Atom:
		if t.String() != "memory" {
			return false, prolog.DomainError("context_backend", t)
		}
	case engine.Compound:
		switch {
		case t.Functor().String() == "adapter" && t.Arity() == 1:
			n, err := c.Text(t.Arg(0))
			if err != nil {
				return false, err
			}
			name = n
		case t.Functor() == atomContextHandle:
			ref, err := handleArg(c, t)
			if err != nil {
				return false, err
			}
			meta, err := s.handles.Metadata(ref)
			if err != nil {
				return false, nil
			}
			name = meta.Adapter
		default:
			return false, prolog.DomainError("context_backend", prolog.Resolved(t, c.Env))
		}
	default:
		return false, prolog.DomainError("context_backend", b)
	}
	if name == "" {
		t := memoryBackend.term()
		t = withField(t, fld("source_kinds", engine.List(engine.NewAtom("text"), engine.NewAtom("terms"))))
		return c.Unify(info, t), nil
	}
	caps, _, live := s.backendCaps(name)
	if !live {
		return false, nil
	}
	return c.Unify(info, caps.term()), nil
}
