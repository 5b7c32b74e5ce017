package host

// Conversation pack family: the bounded rolling context of a conversation
// (host/pack) as Prolog outcomes. lib/rlm_conversation_runtime.pl wraps it
// in conversation_context_pack/3 and conversation_token_ledger/3.
//
//	conv_pack_(+Conversation, +Options, -Outcome) is det.

import (
	"errors"
	"fmt"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

var convPackOptions = map[string]bool{
	"policy": true, "token_options": true, "visible_sections": true,
	"context_units": true, "cold_history_boundary": true, "pending": true,
}

// utilities reads the value model declared in Prolog once per session:
// context_utility(Class, Base, PerSequence) facts (lib defaults; a program
// may redefine them).
func (s *Session) utilities(c *prolog.Call) pack.Utilities {
	if s.util != nil {
		return *s.util
	}
	u := pack.DefaultUtilities()
	for _, class := range []string{"hot_message", "older_message", "cold_history_boundary"} {
		base, per := engine.NewVariable(), engine.NewVariable()
		var b, p int64
		found := false
		goal := engine.NewAtom("context_utility").Apply(engine.NewAtom(class), base, per)
		_, _ = engine.Call(c.VM, goal, func(env *engine.Env) *engine.Promise {
			bi, ok1 := env.Resolve(base).(engine.Integer)
			pi, ok2 := env.Resolve(per).(engine.Integer)
			if ok1 && ok2 {
				b, p, found = int64(bi), int64(pi), true
			}
			return engine.Bool(true)
		}, c.Env).Force(c.Ctx)
		if !found {
			continue
		}
		switch class {
		case "hot_message":
			u.HotBase, u.HotPerSeq = b, p
		case "older_message":
			u.OlderBase, u.OlderPerSeq = b, p
		default:
			u.Boundary = b
		}
	}
	s.util = &u
	return u
}

// counterOf picks the counter from token_options: model(M) or
// encoding(E), else the estimator.
func (s *Session) counterOf(c *prolog.Call, opts map[string]engine.Term) (tokenizer.Counter, error) {
	reg := s.host.tokenizers()
	t, present := opts["token_options"]
	if !present {
		return reg.Estimator(), nil
	}
	to, err := optionMap(c, t, map[string]bool{"model": true, "encoding": true}, "token_option")
	if err != nil {
		return tokenizer.Counter{}, err
	}
	if e, present := to["encoding"]; present {
		name, err := c.Atom(e)
		if err != nil {
			return tokenizer.Counter{}, err
		}
		return reg.CounterForEncoding(name)
	}
	if m, present := to["model"]; present {
		name, err := c.Atom(m)
		if err != nil {
			return tokenizer.Counter{}, err
		}
		counter, err := reg.Counter(name)
		if errors.Is(err, tokenizer.ErrUnknownModel) {
			return reg.Estimator(), nil // counted, and labelled, as estimated
		}
		return counter, err
	}
	return reg.Estimator(), nil
}

// chatMessage renders a stored message as the provider sees it: text, or
// content parts, whose images the tokenizer charges by the model's image
// rule (never as the text of their URL).
func chatMessage(m store.Message) tokenizer.Message {
	tm := tokenizer.Message{Role: m.Role.String(), Name: m.Name, ToolCallID: m.ToolCallID, Content: m.Content.Text}
	for _, p := range m.Content.Parts {
		if p.Type == store.PartText {
			tm.Parts = append(tm.Parts, tokenizer.TextPart(p.Text))
		} else {
			tm.Parts = append(tm.Parts, tokenizer.ImagePart(p.URL, p.Detail))
		}
	}
	for _, tc := range m.ToolCalls {
		tm.ToolCalls = append(tm.ToolCalls, tokenizer.ToolCall{ID: tc.ID, Type: "function",
			Function: tokenizer.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return tm
}

// storeParts is chatMessage's inverse for parts, for rendering a request.
func storeParts(ps []tokenizer.Part) []store.Part {
	out := make([]store.Part, len(ps))
	for i, p := range ps {
		out[i] = store.TextPart(p.Text)
		if p.Type == tokenizer.PartImageURL {
			out[i] = store.ImagePart(p.ImageURL, p.Detail)
		}
	}
	return out
}

// candidates reads the hot tail (extended back so it never starts with a
// tool result cut from its call) and at most maxCandidates older turns:
// O(candidates), whatever the history length.
func candidates(db *store.DB, conv string, total int64, p pack.Policy) ([]store.Record, error) {
	if total == 0 {
		return nil, nil
	}
	tailStart := max(1, total-int64(p.MinRecentTurns)+1)
	from := max(1, tailStart-int64(p.MaxCandidates))
	recs, err := db.Messages(conv, store.Range(from, total), 0)
	if err != nil {
		return nil, err
	}
	return recs, nil
}

func (s *Session) convPack(c *prolog.Call, conv, options, out engine.Term) (bool, error) {
	o, id, valid := s.convOf(c, conv)
	if !valid {
		return invalidConv(c, out, "context_pack", conv)
	}
	opts, err := optionMap(c, options, convPackOptions, "context_pack_option")
	if err != nil {
		return false, err
	}
	p := pack.DefaultPolicy()
	if t, present := opts["policy"]; present {
		if p, err = policyOf(c, t); err != nil {
			if pt, isPolicyErr := policyError(err); isPolicyErr {
				return c.Unify(out, pt), nil
			}
			return false, err
		}
	}
	counter, err := s.counterOf(c, opts)
	if err != nil {
		if errors.Is(err, tokenizer.ErrUnknownEncoding) {
			return c.Unify(out, tokenError("unknown_encoding", err.Error())), nil
		}
		return false, err
	}
	boundary := true
	if t, present := opts["cold_history_boundary"]; present {
		if boundary, err = c.Bool(t); err != nil {
			return false, err
		}
	}
	var pending int64
	if t, present := opts["pending"]; present {
		n, err := c.NonNeg(t)
		if err != nil {
			return false, err
		}
		pending = n
	}
	st, err := o.db.Stats(id)
	if err != nil {
		return storeErr(c, out, "context_pack", err, engine.NewAtom(id))
	}
	recs, err := candidates(o.db, id, st.Messages, p)
	if err != nil {
		return storeErr(c, out, "context_pack", err, engine.NewAtom(id))
	}
	in := pack.ConversationInput{ConversationID: id, Total: st.Messages, Pending: pending, Policy: p,
		Boundary: boundary, Counter: counter, Utilities: s.utilities(c)}
	enc := ""
	if e := counter.Encoding(); e != nil {
		enc = e.Name()
	}
	for _, r := range recs {
		t := pack.Turn{Seq: r.Seq, Message: chatMessage(r.Message)}
		if n, cached := r.TokenCounts[enc]; cached && enc != "" && !r.Message.Content.IsParts() {
			t.Content, t.Cached = tokenizer.Count{Tokens: n, Method: tokenizer.Exact, Basis: tokenizer.BasisBPE, Encoding: enc}, true
		} else if enc != "" && !r.Message.Content.IsParts() {
			t.Content, t.Cached = counter.Count(t.Message.Content), true
			_ = o.db.SetTokenCount(id, r.Seq, enc, t.Content.Tokens) // recorded at first use
		}
		in.Turns = append(in.Turns, t)
	}
	if t, present := opts["visible_sections"]; present {
		secs, err := c.List(t)
		if err != nil {
			return false, err
		}
		for _, st := range secs {
			sec, isCompound := c.Resolve(st).(engine.Compound)
			if !isCompound || sec.Functor().String() != "section" || sec.Arity() != 3 {
				return false, prolog.TypeError("section", st)
			}
			name, err1 := c.Atom(sec.Arg(0))
			vis, err2 := c.Atom(sec.Arg(1))
			text, err3 := c.Text(sec.Arg(2))
			if err := errors.Join(err1, err2, err3); err != nil {
				return false, err
			}
			if vis != "model" && vis != "host" {
				return false, prolog.DomainError("section_visibility", sec.Arg(1))
			}
			in.Sections = append(in.Sections, pack.TextSection{Name: name, Visibility: pack.Visibility(vis), Text: text})
		}
	}
	if t, present := opts["context_units"]; present {
		us, err := c.List(t)
		if err != nil {
			return false, err
		}
		for i, ut := range us {
			u, vals, cons, err := unitOf(c, ut, int64(i))
			if err != nil {
				return false, err
			}
			for j := range u.Variants {
				text, _ := prolog.TextOf(vals[j], nil)
				m := tokenizer.Message{Role: "system", Content: text}
				u.Variants[j].Value = m
			}
			in.Extra = append(in.Extra, u)
			in.Constraints = append(in.Constraints, cons...)
		}
	}
	if err := s.applyHook(c, &in); err != nil {
		return false, err
	}
	cp, err := pack.Conversation(c.Ctx, in)
	var pe *pack.Error
	if errors.As(err, &pe) {
		return c.Unify(out, packErrorTerm(pe)), nil
	}
	if err != nil {
		return false, err
	}
	return c.Unify(out, ok(s.convPackTerm(id, p, cp))), nil
}

// applyHook calls the program's context_pack_hook(+Units, -Adjustments),
// when it defines one, once per pack on the bounded candidate batch:
// Units are unit(Id, Section, Sequence, Mandatory), Adjustments a list of
// utility(Id, Delta), mandatory(Id), requires(A, B) and excludes(A, B).
func (s *Session) applyHook(c *prolog.Call, in *pack.ConversationInput) error {
	pi := engine.NewAtom("/").Apply(engine.NewAtom("context_pack_hook"), engine.Integer(2))
	defined, _ := engine.Call(c.VM, engine.NewAtom("current_predicate").Apply(pi), engine.Success, c.Env).Force(c.Ctx)
	if !defined {
		return nil
	}
	units := make([]engine.Term, len(in.Turns))
	for i, t := range in.Turns {
		units[i] = engine.NewAtom("unit").Apply(engine.NewAtom(fmt.Sprintf("conversation_message_%d", t.Seq)),
			engine.NewAtom("conversation"), engine.Integer(t.Seq), boolTerm(t.Seq > in.Total-int64(in.Policy.MinRecentTurns)))
	}
	adj := engine.NewVariable()
	var got engine.Term
	_, err := engine.Call(c.VM, engine.NewAtom("context_pack_hook").Apply(engine.List(units...), adj), func(env *engine.Env) *engine.Promise {
		got = prolog.Resolved(adj, env)
		return engine.Bool(true)
	}, c.Env).Force(c.Ctx)
	if err != nil || got == nil {
		return err
	}
	it := engine.ListIterator{List: got}
	for it.Next() {
		a, isCompound := it.Current().(engine.Compound)
		if !isCompound {
			return prolog.TypeError("pack_adjustment", it.Current())
		}
		atomArg := func(i int) string { x, _ := a.Arg(i).(engine.Atom); return x.String() }
		switch a.Functor().String() {
		case "utility":
			d, _ := a.Arg(1).(engine.Integer)
			in.Adjust = append(in.Adjust, pack.Adjustment{ID: atomArg(0), Utility: int64(d)})
		case "mandatory":
			in.Adjust = append(in.Adjust, pack.Adjustment{ID: atomArg(0), Mandatory: true})
		case "requires":
			in.Constraints = append(in.Constraints, solver.Requires(atomArg(0), atomArg(1)))
		case "excludes":
			in.Constraints = append(in.Constraints, solver.Excludes(atomArg(0), atomArg(1)))
		default:
			return prolog.DomainError("pack_adjustment", a)
		}
	}
	return nil
}

func (s *Session) convPackTerm(id string, p pack.Policy, cp pack.ConversationPack) engine.Term {
	sel := make([]engine.Term, len(cp.Selected))
	for i, x := range cp.Selected {
		u := cp.Units[x.Unit]
		v := u.Variants[x.Variant]
		fs := []prolog.Field{fld("id", engine.NewAtom(u.ID)), fld("kind", engine.NewAtom(v.Kind)),
			fld("section", engine.NewAtom(u.Section)), fld("tokens", engine.Integer(v.Count.Tokens)),
			fld("utility", engine.Integer(v.Utility))}
		if u.Section == "conversation" {
			fs = append(fs, fld("sequence", engine.Integer(u.Order)))
		}
		if m, isMsg := v.Value.(tokenizer.Message); isMsg && u.Section != "conversation" {
			fs = append(fs, fld("text", prolog.Chars(m.Content)))
		}
		sel[i] = record("context_selection", fs...)
	}
	msgs := make([]engine.Term, len(cp.Request.Messages))
	for i, m := range cp.Request.Messages {
		content := prolog.Chars(m.Content)
		if len(m.Parts) > 0 {
			content = contentTerm(store.PartsContent(storeParts(m.Parts)...))
		}
		fs := []prolog.Field{fld("content", content), fld("role", engine.NewAtom(m.Role))}
		if m.ToolCallID != "" {
			fs = append(fs, fld("tool_call_id", engine.NewAtom(m.ToolCallID)))
		}
		msgs[i] = record("message", fs...)
	}
	b := cp.Boundary
	bfs := []prolog.Field{fld("active", boolTerm(b.Active)), fld("configured", boolTerm(b.Configured)),
		fld("projected_messages", engine.Integer(b.Projected)), fld("reason", engine.NewAtom(b.Reason))}
	if b.Active {
		omitted := make([]engine.Term, len(b.Omitted))
		for i, r := range b.Omitted {
			omitted[i] = engine.NewAtom("range").Apply(engine.Integer(r.From), engine.Integer(r.To))
		}
		bfs = append(bfs, fld("cold_range", engine.NewAtom("range").Apply(engine.Integer(1), engine.Integer(b.ColdThrough))),
			fld("guaranteed_hot_start", engine.Integer(b.HotStart)), fld("omitted_ranges", engine.List(omitted...)),
			fld("tokens", engine.Integer(b.Tokens)))
	}
	return record("conversation_context_pack",
		fld("cold_history_boundary", record("cold_history_boundary", bfs...)),
		fld("conversation_id", engine.NewAtom(id)),
		fld("ledger", ledgerTerm(cp.Ledger)),
		fld("policy", policyTerm(p)),
		fld("request", engine.List(msgs...)),
		fld("selected", engine.List(sel...)),
		fld("solver", solverTerm(cp.Pack)),
		fld("utility", engine.Integer(cp.Utility)),
	)
}
