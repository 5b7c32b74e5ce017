package host

// Pack family: the budget policy and the generic packer over host/pack.
// lib/rlm_context_budget.pl wraps them in context_policy/2 and
// context_pack/4.
//
//	pack_policy_check_(+Policy, -Outcome) is det.
//	pack_solve_(+Units, +Sections, +Policy, -Outcome) is det.

import (
	"errors"
	"math"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// budgetError renders error(context_budget_error([...])).
func budgetError(phase, kind string, details ...prolog.Field) engine.Term {
	fields := append([]prolog.Field{fld("kind", engine.NewAtom(kind)), fld("phase", engine.NewAtom(phase))}, details...)
	return atomError.Apply(record("context_budget_error", fields...))
}

// fieldsOf reads a record's property list as a key → term map (first
// occurrence wins).
func fieldsOf(c *prolog.Call, t engine.Term) (map[string]engine.Term, error) {
	props, err := c.Props(t)
	if err != nil {
		return nil, err
	}
	m := make(map[string]engine.Term, len(props))
	for _, p := range props {
		if _, dup := m[p.Key]; !dup {
			m[p.Key] = c.Resolve(p.Value.(engine.Term))
		}
	}
	return m, nil
}

// recordFields reads Tag([...]) for the expected tag.
func recordFields(c *prolog.Call, t engine.Term, tag string) (map[string]engine.Term, error) {
	r, isCompound := c.Resolve(t).(engine.Compound)
	if !isCompound || r.Functor().String() != tag || r.Arity() != 1 {
		return nil, prolog.TypeError(tag, t)
	}
	return fieldsOf(c, r.Arg(0))
}

// policyOf decodes a context_policy record; a bad value is a *pack.FieldError.
func policyOf(c *prolog.Call, t engine.Term) (pack.Policy, error) {
	f, err := recordFields(c, t, "context_policy")
	if err != nil {
		return pack.Policy{}, err
	}
	p := pack.DefaultPolicy()
	num := func(key string, dst *int64) error {
		v, present := f[key]
		if !present {
			return nil
		}
		n, isInt := v.(engine.Integer)
		if !isInt {
			return &pack.FieldError{Field: key, Value: prolog.Resolved(v, c.Env), Msg: "must be an integer"}
		}
		*dst = int64(n)
		return nil
	}
	var minRecent, maxCand int64 = int64(p.MinRecentTurns), int64(p.MaxCandidates)
	for key, dst := range map[string]*int64{
		"max_context_tokens": &p.MaxContextTokens, "provider_context_tokens": &p.ProviderContextTokens,
		"reserve_output_tokens": &p.ReserveOutputTokens, "safety_margin_tokens": &p.SafetyMarginTokens,
		"min_recent_turns": &minRecent, "max_candidates": &maxCand,
	} {
		if err := num(key, dst); err != nil {
			return p, err
		}
	}
	if minRecent > math.MaxInt32 || maxCand > math.MaxInt32 {
		return p, &pack.FieldError{Field: "min_recent_turns", Value: minRecent, Msg: "too large"}
	}
	p.MinRecentTurns, p.MaxCandidates = int(minRecent), int(maxCand)
	if v, present := f["overflow"]; present {
		a, isAtom := v.(engine.Atom)
		if !isAtom {
			return p, &pack.FieldError{Field: "overflow", Value: prolog.Resolved(v, c.Env), Msg: "must be deny"}
		}
		p.Overflow = a.String()
	}
	return p, p.Validate()
}

func policyTerm(p pack.Policy) engine.Term {
	return record("context_policy",
		fld("effective_context_tokens", engine.Integer(p.Effective())),
		fld("max_candidates", engine.Integer(p.MaxCandidates)),
		fld("max_context_tokens", engine.Integer(p.MaxContextTokens)),
		fld("min_recent_turns", engine.Integer(p.MinRecentTurns)),
		fld("overflow", engine.NewAtom(p.Overflow)),
		fld("provider_context_tokens", engine.Integer(p.ProviderContextTokens)),
		fld("reserve_output_tokens", engine.Integer(p.ReserveOutputTokens)),
		fld("safety_margin_tokens", engine.Integer(p.SafetyMarginTokens)),
	)
}

func policyError(err error) (engine.Term, bool) {
	var fe *pack.FieldError
	if !errors.As(err, &fe) {
		return nil, false
	}
	return budgetError("policy", "validation_error", fld("field", engine.NewAtom(fe.Field)), fld("message", prolog.Chars(fe.Msg))), true
}

func (s *Session) packPolicyCheck(c *prolog.Call, policy, out engine.Term) (bool, error) {
	p, err := policyOf(c, policy)
	if t, isPolicyErr := policyError(err); isPolicyErr {
		return c.Unify(out, t), nil
	}
	if err != nil {
		return false, err
	}
	return c.Unify(out, ok(policyTerm(p))), nil
}

// countOf reads a token count: an integer (taken as exact, the caller's
// number) or a token_count record.
func countOf(c *prolog.Call, t engine.Term) (tokenizer.Count, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Integer:
		if v < 0 || v > solver.MaxValue {
			return tokenizer.Count{}, prolog.DomainError("token_count", v)
		}
		return tokenizer.Count{Tokens: int(v), Method: tokenizer.Exact, Basis: "caller"}, nil
	}
	f, err := recordFields(c, t, "token_count")
	if err != nil {
		return tokenizer.Count{}, err
	}
	n, isInt := f["tokens"].(engine.Integer)
	if !isInt || n < 0 {
		return tokenizer.Count{}, prolog.DomainError("token_count", t)
	}
	cnt := tokenizer.Count{Tokens: int(n), Method: tokenizer.Estimated, Basis: "caller"}
	if m, _ := f["method"].(engine.Atom); m.String() == "exact" {
		cnt.Method = tokenizer.Exact
	}
	if b, isAtom := f["basis"].(engine.Atom); isAtom {
		cnt.Basis = b.String()
	}
	return cnt, nil
}

// packSolve decodes units and sections, solves, and renders the pack.
func (s *Session) packSolve(c *prolog.Call, units, sections, policy, out engine.Term) (bool, error) {
	p, err := policyOf(c, policy)
	if t, isPolicyErr := policyError(err); isPolicyErr {
		return c.Unify(out, t), nil
	}
	if err != nil {
		return false, err
	}
	in := pack.Input{Policy: p}
	secs, err := c.List(sections)
	if err != nil {
		return false, err
	}
	for _, st := range secs {
		f, err := recordFields(c, st, "context_section")
		if err != nil {
			return false, err
		}
		name, _ := f["name"].(engine.Atom)
		vis, _ := f["visibility"].(engine.Atom)
		cnt, err := countOf(c, f["token_count"])
		if err != nil {
			return false, err
		}
		if vis.String() != "model" && vis.String() != "host" {
			return false, prolog.DomainError("section_visibility", vis)
		}
		in.Sections = append(in.Sections, pack.Section{Name: name.String(), Visibility: pack.Visibility(vis.String()), Count: cnt})
	}
	us, err := c.List(units)
	if err != nil {
		return false, err
	}
	values := make([][]engine.Term, len(us))
	for i, ut := range us {
		u, vals, cons, err := unitOf(c, ut, int64(i))
		if err != nil {
			return false, err
		}
		if len(u.Variants) == 0 {
			return c.Unify(out, budgetError("pack", "validation_error", fld("detail", engine.NewAtom("empty_variants").Apply(engine.NewAtom(u.ID))))), nil
		}
		in.Units = append(in.Units, u)
		in.Constraints = append(in.Constraints, cons...)
		values[i] = vals
	}
	res, err := pack.Solve(c.Ctx, in)
	var pe *pack.Error
	if errors.As(err, &pe) {
		return c.Unify(out, packErrorTerm(pe)), nil
	}
	if err != nil {
		return false, err
	}
	sel := make([]engine.Term, len(res.Selected))
	for i, x := range res.Selected {
		u, v := in.Units[x.Unit], in.Units[x.Unit].Variants[x.Variant]
		sel[i] = record("context_selection",
			fld("id", engine.NewAtom(u.ID)), fld("kind", engine.NewAtom(v.Kind)),
			fld("section", engine.NewAtom(u.Section)), fld("tokens", engine.Integer(v.Count.Tokens)),
			fld("utility", engine.Integer(v.Utility)), fld("value", values[x.Unit][x.Variant]))
	}
	return c.Unify(out, ok(record("context_pack",
		fld("ledger", ledgerTerm(res.Ledger)),
		fld("policy", policyTerm(p)),
		fld("selected", engine.List(sel...)),
		fld("solver", solverTerm(res)),
		fld("utility", engine.Integer(res.Utility)),
	))), nil
}

// unitOf decodes context_unit([id(I), section(S), mandatory(B),
// variants([context_variant([kind(K), tokens(T), utility(U), value(V)])]),
// requires(Ids), excludes(Ids), group(G)]).
func unitOf(c *prolog.Call, t engine.Term, order int64) (pack.Unit, []engine.Term, []solver.Constraint, error) {
	f, err := recordFields(c, t, "context_unit")
	if err != nil {
		return pack.Unit{}, nil, nil, err
	}
	id, isAtom := f["id"].(engine.Atom)
	if !isAtom {
		return pack.Unit{}, nil, nil, prolog.TypeError("unit_id", t)
	}
	u := pack.Unit{ID: id.String(), Section: "context", Order: order}
	if sec, isAtom := f["section"].(engine.Atom); isAtom {
		u.Section = sec.String()
	}
	if m, isAtom := f["mandatory"].(engine.Atom); isAtom && m.String() == "true" {
		u.Mandatory = true
	}
	if o, isInt := f["order"].(engine.Integer); isInt {
		u.Order = int64(o)
	}
	vs, err := c.List(f["variants"])
	if err != nil {
		return u, nil, nil, err
	}
	var vals []engine.Term
	for _, vt := range vs {
		vf, err := recordFields(c, vt, "context_variant")
		if err != nil {
			return u, nil, nil, err
		}
		kind, _ := vf["kind"].(engine.Atom)
		if kind.String() == "omitted" {
			continue // the solver adds omission itself, for optional units
		}
		cnt, err := countOf(c, vf["tokens"])
		if err != nil {
			return u, nil, nil, err
		}
		util, isInt := vf["utility"].(engine.Integer)
		if !isInt || util < 0 {
			return u, nil, nil, prolog.DomainError("utility", t)
		}
		u.Variants = append(u.Variants, pack.Variant{Kind: kind.String(), Count: cnt, Utility: int64(util)})
		val := vf["value"]
		if val == nil {
			val = engine.NewAtom("none")
		}
		vals = append(vals, prolog.Resolved(val, c.Env))
	}
	var cons []solver.Constraint
	for _, key := range []string{"requires", "excludes"} {
		if v, present := f[key]; present {
			ids, err := c.List(v)
			if err != nil {
				return u, nil, nil, err
			}
			for _, other := range ids {
				o, err := c.Atom(other)
				if err != nil {
					return u, nil, nil, err
				}
				if key == "requires" {
					cons = append(cons, solver.Requires(u.ID, o))
				} else {
					cons = append(cons, solver.Excludes(u.ID, o))
				}
			}
		}
	}
	return u, vals, cons, nil
}

func packErrorTerm(e *pack.Error) engine.Term {
	ids := make([]engine.Term, len(e.Units))
	for i, u := range e.Units {
		ids[i] = engine.NewAtom(u)
	}
	return budgetError("pack", e.Kind,
		fld("available", engine.Integer(e.Available)), fld("base", engine.Integer(e.Base)),
		fld("excess", engine.Integer(e.Excess)), fld("limit", engine.Integer(e.Effective)),
		fld("units", engine.List(ids...)))
}

func solverTerm(p pack.Pack) engine.Term {
	return record("solver",
		fld("bound", engine.Integer(p.Bound)), fld("core", engine.Integer(p.Stats.Core)),
		fld("elapsed_ms", engine.Float(float64(p.Stats.Elapsed.Microseconds())/1000)),
		fld("phase", engine.NewAtom(p.Stats.Phase)), fld("status", engine.NewAtom(p.Status.String())))
}

func ledgerTerm(l pack.Ledger) engine.Term {
	stages := make([]engine.Term, len(l.Stages))
	for i, s := range l.Stages {
		fs := []prolog.Field{
			fld("charged_to_window", boolTerm(s.Visibility != pack.Host)),
			fld("charged_tokens", engine.Integer(s.Charged)),
			fld("cumulative_tokens", engine.Integer(s.Cumulative)),
			fld("kind", engine.NewAtom(s.Kind)),
			fld("method", engine.NewAtom(s.Count.Method.String())),
			fld("name", engine.NewAtom(s.Name)),
			fld("observed_tokens", engine.Integer(s.Observed)),
			fld("visibility", engine.NewAtom(string(s.Visibility))),
		}
		if s.Kind == "context_unit" {
			fs = append(fs, fld("representation", engine.NewAtom(s.Representation)), fld("section", engine.NewAtom(s.Section)))
		}
		stages[i] = record("token_stage", fs...)
	}
	return record("token_ledger",
		fld("host_only_metadata_tokens", engine.Integer(l.HostOnly)),
		fld("limit", engine.Integer(l.Limit)),
		fld("method", engine.NewAtom(l.Method.String())),
		fld("operator_limit", engine.Integer(l.OperatorLimit)),
		fld("provider_limit", engine.Integer(l.ProviderLimit)),
		fld("remaining_tokens", engine.Integer(l.Remaining)),
		fld("reserve_output_tokens", engine.Integer(l.Reserve)),
		fld("safety_margin_tokens", engine.Integer(l.Safety)),
		fld("selected_context_tokens", engine.Integer(l.Selected)),
		fld("stages", engine.List(stages...)),
		fld("total_tokens", engine.Integer(l.Total)),
		fld("visible_fixed_tokens", engine.Integer(l.VisibleFixed)),
	)
}
