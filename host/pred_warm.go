package host

// Warm family: versioned summaries of old ranges (host/runtime), published
// explicitly and offered to packs and turns that name a warm store.
//
//	conversation_warm_derive(+Conversation, +Range, +Options, -Outcome) is det.
//	conversation_warm_publish(+Conversation, +Store, +Range, +Options, -Outcome) is det.
//	conversation_warm_list(+Conversation, +Store, +Options, -Outcome) is det.
//	conversation_warm_context_units(+Conversation, +Store, +Signals, +Options, -Outcome) is det.
//	conversation_warm_retire(+Conversation, +Store, +Range, -Outcome) is det.
//	artifact_store_open(+Spec, -Outcome) is det.
//	artifact_store_close(+Store, -Outcome) is det.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// ErrWarmStoreMismatch: a conversation store holds the warm artifacts of
// its own conversations only (in their transactions and backups); a store
// for those of any conversation is opened by artifact_store_open/2.
var ErrWarmStoreMismatch = errors.New("host: a conversation store is the warm store of its own conversations only (artifact_store_open/2 opens a separate one)")

var atomArtifactStore = engine.NewAtom("artifact_store")

// warmStoreArg reads the artifact store argument of cv's warm predicates
// and returns the store its artifacts live in: cv's own store, or an
// artifact_store(Id) that artifact_store_open/2 opened from a spec, which
// holds the artifacts of any conversation published to it (upstream's
// separate artifact store).
func (s *Session) warmStoreArg(c *prolog.Call, cv runtime.Conversation, t engine.Term) (*runtime.Store, error) {
	if a, isCompound := c.Resolve(t).(engine.Compound); isCompound && a.Functor() == atomArtifactStore && a.Arity() == 1 {
		return s.artifactStoreArg(c, a)
	}
	st, err := s.storeArg(c, t)
	if err != nil {
		return nil, err
	}
	if st != cv.Store() {
		return nil, ErrWarmStoreMismatch
	}
	return st, nil
}

// artifactStoreArg reads artifact_store(Id); a store closed since is an
// outcome (store.ErrClosed).
func (s *Session) artifactStoreArg(c *prolog.Call, t engine.Compound) (*runtime.Store, error) {
	id, err := c.Atom(t.Arg(0))
	if err != nil {
		return nil, prolog.TypeError("artifact_store", prolog.Resolved(t, c.Env))
	}
	st, open := s.host.rt.Store(id)
	if !open {
		return nil, store.ErrClosed
	}
	return st, nil
}

// artifactStoreOpen opens the store warm artifacts live in, by name. Spec
// is a conversation's store (an open store, or a conversation_ref: its
// store), which holds its own conversations' artifacts in their
// transactions and backups; or a store spec as conversation_store_open/2
// takes (memory, persist(Dir), sqlite(File), postgres(...)), opened as artifact_store(Id),
// a separate store for the artifacts of any conversation. Either way the
// outcome holds a reference that artifact_store_close/2 releases.
func (s *Session) artifactStoreOpen(c *prolog.Call, spec, out engine.Term) (bool, error) {
	if t, isCompound := c.Resolve(spec).(engine.Compound); isCompound && t.Arity() == 1 {
		switch {
		case t.Functor() == atomStore || t.Functor() == atomArtifactStore:
			st, err := s.storeArg(c, atomStore.Apply(t.Arg(0)))
			if err == nil {
				_, err = s.host.rt.ShareStore(st.ID())
			}
			if err != nil {
				return s.fail(c, out, phArtifactStore, err)
			}
			return c.Unify(out, ok(prolog.Resolved(t, c.Env))), nil
		case t.Functor().String() == "conversation_ref":
			f, err := recordFields(c, t, "conversation_ref")
			if err != nil || f["store"] == nil {
				return false, prolog.TypeError("artifact_store_spec", prolog.Resolved(spec, c.Env))
			}
			return s.artifactStoreOpen(c, f["store"], out)
		}
	}
	ss, err := s.storeSpecOf(c, spec)
	if err != nil {
		return false, err
	}
	st, err := s.host.rt.OpenStore(ss)
	if err != nil {
		return s.fail(c, out, phStoreOpen, err, redactedSpec(c, spec))
	}
	return c.Unify(out, ok(atomArtifactStore.Apply(engine.NewAtom(st.ID())))), nil
}

// artifactStoreClose releases the reference artifact_store_open/2 took:
// the last one closes the store (a memory store's artifacts are then gone).
func (s *Session) artifactStoreClose(c *prolog.Call, t, out engine.Term) (bool, error) {
	var st *runtime.Store
	var err error
	if a, isCompound := c.Resolve(t).(engine.Compound); isCompound && a.Functor() == atomArtifactStore && a.Arity() == 1 {
		st, err = s.artifactStoreArg(c, a)
	} else {
		st, err = s.storeArg(c, t)
	}
	if err == nil {
		err = s.host.rt.CloseStore(st.ID())
	}
	if err != nil {
		return s.fail(c, out, phStoreClose, err)
	}
	return c.Unify(out, ok(engine.NewAtom("closed"))), nil
}

// rangeArg reads range(From, To) with positive integers; anything else is
// a type error (From > To is an outcome of the store).
func rangeArg(c *prolog.Call, t engine.Term) (int64, int64, error) {
	r, isCompound := c.Resolve(t).(engine.Compound)
	if _, isVar := c.Resolve(t).(engine.Variable); isVar {
		return 0, 0, prolog.InstantiationError()
	}
	if !isCompound || r.Functor().String() != "range" || r.Arity() != 2 {
		return 0, 0, prolog.TypeError("range", prolog.Resolved(t, c.Env))
	}
	from, err := c.Int(r.Arg(0))
	if err != nil {
		return 0, 0, err
	}
	to, err := c.Int(r.Arg(1))
	return from, to, err
}

// generator decodes generator(G): a trusted callable, call(G, Source,
// Options, Raw), or rlm, a completion over a terms context of the range
// with completion_options as rlm_completion/4 takes them (the model sees
// the range only through the handle).
func (s *Session) generator(c *prolog.Call, op opts) (runtime.WarmGenerator, error) {
	g := op.term("generator")
	if a, isAtom := g.(engine.Atom); isAtom && a.String() == "rlm" {
		sp, err := s.decode(c, "rlm_completion/4", op.term("completion_options"))
		if err == nil {
			err = s.decodeCompletion(c, sp)
		}
		if err != nil {
			return nil, err
		}
		return runtime.CompletionGenerator(s.handles, sp.in, sp.deps), nil
	}
	return func(ctx context.Context, src runtime.WarmSource) (runtime.WarmFields, runtime.WarmGeneration, error) {
		raw, err := callOnce(c, engine.NewAtom("call").Apply(g, warmSourceTerm(src), op.term("completion_options"), engine.NewVariable()))
		if err != nil {
			return runtime.WarmFields{}, runtime.WarmGeneration{}, &warmError{kind: "generator_exception", msg: s.in.Describe(exceptionTerm(err), nil)}
		}
		if raw == nil {
			return runtime.WarmFields{}, runtime.WarmGeneration{}, &warmError{kind: "generator_failed", msg: "the generator failed"}
		}
		f, err := warmFieldsOf(c, raw.(engine.Compound).Arg(3))
		return f, runtime.WarmGeneration{Kind: "callback"}, err
	}, nil
}

// warmError is a warm failure with its kind.
type warmError struct{ kind, msg string }

func (e *warmError) Error() string { return "host: warm: " + e.kind + ": " + e.msg }

func exceptionTerm(err error) engine.Term {
	var ex engine.Exception
	if errors.As(err, &ex) {
		return ex.Term()
	}
	return prolog.Chars(err.Error())
}

// warmFieldsOf reads a generator's answer: JSON text, or a record whose
// fields are the schema's (warm_context([summary(S), decisions(L), ...])).
func warmFieldsOf(c *prolog.Call, raw engine.Term) (runtime.WarmFields, error) {
	if text, err := prolog.TextOf(raw, nil); err == nil {
		return runtime.ParseWarmFields([]byte(text))
	}
	props, err := c.Props(optionList(c, raw))
	if err != nil {
		return runtime.WarmFields{}, &runtime.SchemaError{Kind: "invalid_json", Field: "not JSON text or a record of the schema's fields"}
	}
	obj := map[string]any{}
	for _, p := range props {
		if obj[p.Key], err = goJSON(p.Value.(engine.Term), nil); err != nil {
			return runtime.WarmFields{}, &runtime.SchemaError{Kind: "invalid_field", Field: p.Key}
		}
	}
	b, _ := json.Marshal(obj)
	return runtime.ParseWarmFields(b)
}

func warmSourceTerm(src runtime.WarmSource) engine.Term {
	msgs := make([]engine.Term, len(src.Messages))
	refs := make([]engine.Term, len(src.Messages))
	for i, r := range src.Messages {
		msgs[i], refs[i] = recordTerm(r), engine.Integer(r.Seq)
	}
	return record("warm_source", fld("conversation_id", engine.NewAtom(src.Conversation)), fld("messages", engine.List(msgs...)),
		fld("range", rangeTerm(src.From, src.To)), fld("refs", engine.List(refs...)), fld("text", prolog.Chars(src.Text)))
}

func rangeTerm(from, to int64) engine.Term {
	return engine.NewAtom("range").Apply(engine.Integer(from), engine.Integer(to))
}

func (s *Session) conversationWarmDerive(c *prolog.Call, conv, rng, options, out engine.Term) (bool, error) {
	return s.warmProduce(c, "conversation_warm_derive/4", conv, nil, rng, options, out)
}

func (s *Session) conversationWarmPublish(c *prolog.Call, conv, st, rng, options, out engine.Term) (bool, error) {
	return s.warmProduce(c, "conversation_warm_publish/5", conv, st, rng, options, out)
}

// warmProduce derives, and with a store publishes, the artifact of a range.
func (s *Session) warmProduce(c *prolog.Call, pred string, conv, st, rng, options, out engine.Term) (bool, error) {
	ph := phDerive
	if st != nil {
		ph = phPublish
	}
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, ph, err)
	}
	if st != nil {
		ws, err := s.warmStoreArg(c, cv, st)
		if err != nil {
			return s.fail(c, out, ph, err)
		}
		cv = cv.WithWarmStore(ws)
	}
	from, to, err := rangeArg(c, rng)
	if err != nil {
		return false, err
	}
	op, err := s.options(c, pred, options)
	if err != nil {
		return false, err
	}
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	produce := cv.WarmDerive
	if st != nil {
		produce = cv.WarmPublish
	}
	gen, err := s.generator(c, op)
	if err != nil {
		return s.fail(c, out, ph, err, rangeTerm(from, to))
	}
	encs, err := s.warmEncodings(c, op, pol.CountEncodings)
	if err != nil {
		return false, err
	}
	a, err := produce(c.Ctx, from, to, gen, encs)
	if err != nil {
		return s.fail(c, out, ph, err, rangeTerm(from, to))
	}
	if st == nil {
		return c.Unify(out, ok(artifactTerm(a))), nil
	}
	// Upstream's warm_publication names the stored artifact and the
	// artifact itself: artifact(rlm_artifact([...])) and warm(W) stand
	// beside our fields.
	extra := []prolog.Field{
		fld("artifact", record("rlm_artifact", fld("key", engine.NewAtom(a.Key)), fld("kind", engine.NewAtom("warm_context")),
			fld("namespace", artifactNamespace(a)), fld("ref", artifactRef(a)), fld("version", engine.Integer(a.Version)))),
		fld("warm", artifactTerm(a)),
	}
	if len(a.Overlaps) > 0 {
		keys := make([]engine.Term, len(a.Overlaps))
		for i, k := range a.Overlaps {
			keys[i] = engine.NewAtom(k)
		}
		extra = append(extra, fld("overlaps", engine.List(keys...)))
	}
	return c.Unify(out, ok(artifactTerm(a, extra...))), nil
}

// warmEncodings are the encodings an artifact's representations are
// counted in: lib's, and the one token_options names (model(M) or
// encoding(E), as token_count_text/3 takes them). A token_counter(C) there
// is accepted and not called: a pack counting with C counts the
// representations it offers with C.
func (s *Session) warmEncodings(c *prolog.Call, op opts, lib []string) ([]string, error) {
	tok, err := s.options(c, "token_count_text/3", optionList(c, op.term("token_options")))
	if err != nil {
		return nil, err
	}
	enc := tok.atom("encoding")
	if tok.has("model") {
		counter, err := s.host.tokenizers().Counter(tok.atom("model"))
		if err == nil && counter.Encoding() != nil {
			enc = counter.Encoding().Name()
		}
	}
	if enc == "" || slices.Contains(lib, enc) {
		return lib, nil
	}
	return append(slices.Clone(lib), enc), nil
}

// conversationWarmRetire stops offering an artifact to packs (a new,
// retired version; idempotent; not undone on backtracking).
func (s *Session) conversationWarmRetire(c *prolog.Call, conv, st, rng, out engine.Term) (bool, error) {
	cv, err := s.warmConvArg(c, conv, st)
	if err != nil {
		return s.fail(c, out, phRetire, err)
	}
	from, to, err := rangeArg(c, rng)
	if err != nil {
		return false, err
	}
	a, err := cv.WarmRetire(from, to)
	if err != nil {
		return s.fail(c, out, phRetire, err, rangeTerm(from, to))
	}
	return c.Unify(out, ok(artifactTerm(a))), nil
}

// warmConvArg reads a warm predicate's conversation and artifact store:
// the conversation, its artifacts in that store.
func (s *Session) warmConvArg(c *prolog.Call, conv, st engine.Term) (runtime.Conversation, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return cv, err
	}
	ws, err := s.warmStoreArg(c, cv, st)
	return cv.WithWarmStore(ws), err
}

func (s *Session) conversationWarmList(c *prolog.Call, conv, st, options, out engine.Term) (bool, error) {
	cv, err := s.warmConvArg(c, conv, st)
	if err != nil {
		return s.fail(c, out, phList, err)
	}
	op, err := s.options(c, "conversation_warm_list/4", options)
	if err != nil {
		return false, err
	}
	arts, err := cv.WarmList(op.bool("history"))
	if err != nil {
		return s.fail(c, out, phList, err)
	}
	ts := make([]engine.Term, len(arts))
	for i, a := range arts {
		ts[i] = artifactTerm(a)
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

// warmOptions reads warm_signals(L) and the policy overlay of
// warm_options([policy(P)]) over lib's default_warm_policy/1.
func (s *Session) warmOptions(c *prolog.Call, signals, options engine.Term) (runtime.WarmOptions, error) {
	op, err := s.options(c, "conversation_warm_context_units/5", options)
	if err != nil {
		return runtime.WarmOptions{}, err
	}
	pol, err := s.policy(c)
	if err != nil {
		return runtime.WarmOptions{}, err
	}
	wp, err := s.options(c, "warm_policy/1", optionList(c, op.term("policy")))
	if err != nil {
		return runtime.WarmOptions{}, err
	}
	w := runtime.WarmOptions{Policy: runtime.WarmPolicy{MaxCandidates: int(min(wp.int("max_candidates"), 1<<20)),
		Fidelity: overlay(c, pol.Warm.Fidelity, wp.term("fidelity")), Weights: overlay(c, pol.Warm.Weights, wp.term("weights"))}}
	elems, err := c.List(signals)
	if err != nil {
		return w, err
	}
	for _, e := range elems {
		sig, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound || sig.Functor().String() != "warm_signal" || sig.Arity() != 3 {
			return w, prolog.TypeError("warm_signal", prolog.Resolved(e, c.Env))
		}
		key, err1 := c.Text(sig.Arg(0))
		kind, err2 := c.Text(sig.Arg(1))
		strength, err3 := c.NonNeg(sig.Arg(2))
		if err := errors.Join(err1, err2, err3); err != nil {
			return w, prolog.TypeError("warm_signal", prolog.Resolved(e, c.Env))
		}
		w.Signals = append(w.Signals, runtime.WarmSignal{Key: key, Kind: kind, Strength: strength})
	}
	return w, nil
}

// overlay copies base and sets each Key(Value) of t (an option list).
func overlay(c *prolog.Call, base map[string]int64, t engine.Term) map[string]int64 {
	out := make(map[string]int64, len(base))
	for k, v := range base {
		out[k] = v
	}
	props, _ := c.Props(t) // the schema checked it is a list of Key(nonneg)
	for _, p := range props {
		if n, isInt := c.Resolve(p.Value.(engine.Term)).(engine.Integer); isInt {
			out[p.Key] = int64(n)
		}
	}
	return out
}

// conversationWarmContextUnits returns the units a pack would be offered,
// for programs that pass them explicitly (context_units) or inspect them.
func (s *Session) conversationWarmContextUnits(c *prolog.Call, conv, st, signals, options, out engine.Term) (bool, error) {
	cv, err := s.warmConvArg(c, conv, st)
	if err != nil {
		return s.fail(c, out, phUnits, err)
	}
	w, err := s.warmOptions(c, signals, options)
	if err != nil {
		return false, err
	}
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	counter := s.host.tokenizers().Estimator()
	units, arts, _, err := cv.WarmUnits(w, counter, pol.Utilities) // a pack reports the status

	if err != nil {
		return s.fail(c, out, phUnits, err)
	}
	ts := make([]engine.Term, len(units))
	for i, u := range units {
		vs := make([]engine.Term, len(u.Variants))
		for j, v := range u.Variants {
			vs[j] = record("context_variant", fld("kind", engine.NewAtom(v.Kind)), fld("tokens", engine.Integer(v.Count.Tokens)),
				fld("utility", engine.Integer(v.Utility)), fld("value", prolog.Chars(v.Value.(tokenizer.Message).Content)))
		}
		var covered []engine.Term
		for seq := arts[i].From; seq <= arts[i].To; seq++ {
			covered = append(covered, engine.NewAtom(pack.UnitID(seq)))
		}
		for j, b := range arts {
			if j != i && arts[i].Intersects(b) {
				covered = append(covered, engine.NewAtom(b.Key))
			}
		}
		ts[i] = record("context_unit", fld("excludes", engine.List(covered...)), fld("id", engine.NewAtom(u.ID)),
			fld("mandatory", boolTerm(u.Mandatory)), fld("order", engine.Integer(u.Order)), fld("section", engine.NewAtom(u.Section)),
			fld("variants", engine.List(vs...)))
	}
	return c.Unify(out, ok(engine.List(ts...))), nil
}

// artifactNamespace is upstream's namespace of a conversation's warm
// artifacts: [conversation, Id, warm].
func artifactNamespace(a runtime.WarmArtifact) engine.Term {
	return engine.List(engine.NewAtom("conversation"), engine.NewAtom(a.Conversation), engine.NewAtom("warm"))
}

// artifactRef is upstream's artifact_ref([key, namespace, version]) of a
// stored artifact version.
func artifactRef(a runtime.WarmArtifact) engine.Term {
	return record("artifact_ref", fld("key", engine.NewAtom(a.Key)), fld("namespace", artifactNamespace(a)),
		fld("version", engine.Integer(a.Version)))
}

// artifactTerm is the warm_context record of a, with its ref when it is
// stored (version 1 on) and extra fields (a publish's).
func artifactTerm(a runtime.WarmArtifact, extra ...prolog.Field) engine.Term {
	if a.Version > 0 {
		extra = append(extra, fld("ref", artifactRef(a)))
	}
	// Upstream's source_refs are message references; the sequence numbers
	// stay available as source_sequences.
	refs := make([]engine.Term, len(a.SourceRefs))
	seqs := make([]engine.Term, len(a.SourceRefs))
	for i, r := range a.SourceRefs {
		refs[i] = record("conversation_message_ref", fld("conversation_id", engine.NewAtom(a.Conversation)), fld("sequence", engine.Integer(r)))
		seqs[i] = engine.Integer(r)
	}
	vs := make([]engine.Term, len(a.Variants))
	for i, v := range a.Variants {
		counts := make([]prolog.Field, 0, len(v.Counts))
		for enc, n := range v.Counts {
			counts = append(counts, fld(enc, engine.Integer(n)))
		}
		vs[i] = record("warm_variant", fld("kind", engine.NewAtom(v.Kind)), fld("text", prolog.Chars(v.Text)),
			fld("token_counts", record("token_counts", counts...)))
	}
	text := func(l []string) engine.Term {
		ts := make([]engine.Term, len(l))
		for i, s := range l {
			ts[i] = prolog.Chars(s)
		}
		return engine.List(ts...)
	}
	f := a.Fields
	gen := []prolog.Field{fld("kind", engine.NewAtom(a.Generation.Kind))}
	if a.Generation.Usage != nil {
		gen = append(gen, fld("usage", jsonTerm(a.Generation.Usage)))
	}
	return record("warm_context", append(extra,
		fld("conversation_id", engine.NewAtom(a.Conversation)),
		fld("created_at", engine.Integer(a.CreatedAt)),
		fld("fields", record("warm_fields", fld("decisions", text(f.Decisions)), fld("entities", text(f.Entities)),
			fld("facts", text(f.Facts)), fld("files", text(f.Files)), fld("summary", prolog.Chars(f.Summary)),
			fld("symbols", text(f.Symbols)), fld("topics", text(f.Topics)), fld("unresolved", text(f.Unresolved)))),
		fld("generation", record("warm_generation", gen...)),
		fld("key", engine.NewAtom(a.Key)),
		fld("producer", engine.NewAtom(a.Producer)),
		fld("retired", boolTerm(a.Retired)),
		fld("source_hash", engine.NewAtom(a.SourceHash)),
		fld("source_range", rangeTerm(a.From, a.To)),
		fld("source_refs", engine.List(refs...)),
		fld("source_sequences", engine.List(seqs...)),
		fld("variants", engine.List(vs...)),
		fld("version", engine.Integer(a.Version)),
	)...)
}
