package host

// Pack family: the budget policy and the exact packer (host/pack), for
// explicit units and for conversations (host/runtime).
//
//	context_policy(+Overlay, -Outcome) is det.
//	context_pack(+Units, +Sections, +Policy, -Outcome) is det.
//	conversation_context_pack(+Conversation, +Options, -Outcome) is det.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// policyOf reads a policy overlay — an option list or a context_policy
// record — over lib's defaults (rlm_option(context_policy/2, ...)). Types
// are checked by the schema (thrown errors); the cross-field rules of
// pack.Policy.Validate give a *pack.FieldError (an outcome).
func (s *Session) policyOf(c *prolog.Call, t engine.Term) (pack.Policy, error) {
	op, err := s.options(c, "context_policy/2", optionList(c, t, "context_policy"))
	if err != nil {
		return pack.Policy{}, err
	}
	p := pack.Policy{
		MaxContextTokens: op.int("max_context_tokens"), ProviderContextTokens: op.int("provider_context_tokens"),
		ReserveOutputTokens: op.int("reserve_output_tokens"), SafetyMarginTokens: op.int("safety_margin_tokens"),
		MinRecentTurns: int(min(op.int("min_recent_turns"), 1<<30)), MaxCandidates: int(min(op.int("max_candidates"), 1<<30)),
		Overflow: op.atom("overflow"), Window: pack.Window(op.atom("window")),
		CategoryLimits: map[string]int64{"instructions": op.int("max_instruction_tokens"), "skills": op.int("max_skill_tokens"),
			"tools": op.int("max_tool_tokens")},
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
		fld("window", engine.NewAtom(string(p.Window))),
		fld("max_instruction_tokens", engine.Integer(p.CategoryLimits["instructions"])),
		fld("max_skill_tokens", engine.Integer(p.CategoryLimits["skills"])),
		fld("max_tool_tokens", engine.Integer(p.CategoryLimits["tools"])),
		fld("provider_context_tokens", engine.Integer(p.ProviderContextTokens)),
		fld("reserve_output_tokens", engine.Integer(p.ReserveOutputTokens)),
		fld("safety_margin_tokens", engine.Integer(p.SafetyMarginTokens)),
	)
}

func (s *Session) contextPolicy(c *prolog.Call, overlay, out engine.Term) (bool, error) {
	p, err := s.policyOf(c, overlay)
	if err != nil {
		return s.fail(c, out, phPolicy, err)
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

// contextPack decodes units and sections, solves, and renders the pack.
func (s *Session) contextPack(c *prolog.Call, units, sections, policy, out engine.Term) (bool, error) {
	p, err := s.policyOf(c, policy)
	if err != nil {
		return s.fail(c, out, phPolicy, err)
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
		tc, has := f["token_count"]
		if !has { // upstream's sections may declare a bare count
			tc, has = f["tokens"]
		}
		if !has {
			return false, prolog.DomainError("context_section", st)
		}
		cnt, err := countOf(c, tc)
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
		in.Units = append(in.Units, u)
		in.Constraints = append(in.Constraints, cons...)
		values[i] = vals
	}
	res, err := pack.Solve(c.Ctx, in)
	if err != nil {
		return s.fail(c, out, phPack, err)
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

// conversationContextPack compiles a conversation's provider-visible
// context: options are decoded and checked whole, then host/runtime reads
// the bounded candidates, runs the program's hook and solves.
func (s *Session) conversationContextPack(c *prolog.Call, conv, options, out engine.Term) (bool, error) {
	cv, err := s.convArg(c, conv)
	if err != nil {
		return s.fail(c, out, phContextPack, err)
	}
	op, err := s.options(c, "conversation_context_pack/3", options)
	if err != nil {
		return false, err
	}
	var countErr error
	po, err := s.packOptions(c, cv, op, runtime.ModePlanner, &countErr)
	if err != nil {
		return s.fail(c, out, phContextPack, err)
	}
	cp, err := cv.Pack(c.Ctx, po)
	if countErr != nil {
		return false, countErr
	}
	if err != nil {
		return s.fail(c, out, phContextPack, err, engine.NewAtom(cv.ID()))
	}
	return c.Unify(out, ok(s.convPackTerm(cv.ID(), po.Policy, cp))), nil
}

// packOptions decodes the options of a conversation pack. Shape errors are
// thrown ISO errors; a policy that breaks a cross-field rule is a
// *pack.FieldError. With countErr, token_counter(C) is the caller's own
// counter, called on this goroutine, its first failure kept in *countErr;
// without (a turn, whose packs run where Prolog cannot be called), it is
// refused.
func (s *Session) packOptions(c *prolog.Call, cv runtime.Conversation, op opts, mode string, countErr *error) (runtime.PackOptions, error) {
	pol, err := s.policy(c)
	if err != nil {
		return runtime.PackOptions{}, err
	}
	po := pol.PackOptions(mode)
	po.Boundary = op.bool("cold_history_boundary")
	tok, err := s.options(c, "token_count_text/3", optionList(c, op.term("token_options")))
	if err != nil {
		return po, err
	}
	if tok.has("token_counter") {
		if countErr == nil {
			return po, prolog.DomainError("conversation_context_pack_token_option", engine.NewAtom("token_counter").Apply(tok.term("token_counter")))
		}
		po.CountText = s.callerCount(c, tok.term("token_counter"), countErr)
	}
	po.Model, po.Encoding = tok.atom("model"), tok.atom("encoding")
	secs, err := c.List(op.term("visible_sections"))
	if err != nil {
		return po, err
	}
	for _, st := range secs {
		sec, isCompound := c.Resolve(st).(engine.Compound)
		if !isCompound || sec.Functor().String() != "section" || sec.Arity() != 3 {
			return po, prolog.TypeError("section", prolog.Resolved(st, c.Env))
		}
		name, err1 := c.Atom(sec.Arg(0))
		vis, err2 := c.Atom(sec.Arg(1))
		text, err3 := c.Text(sec.Arg(2))
		if err := errors.Join(err1, err2, err3); err != nil {
			return po, err1
		}
		if vis != "model" && vis != "host" {
			return po, prolog.DomainError("section_visibility", sec.Arg(1))
		}
		po.Sections = append(po.Sections, pack.TextSection{Name: name, Visibility: pack.Visibility(vis), Text: text})
	}
	more, tools, err := s.promptParts(c, op)
	if err != nil {
		return po, err
	}
	po.Sections, po.Tools = append(po.Sections, more...), tools
	us, err := c.List(op.term("context_units"))
	if err != nil {
		return po, err
	}
	for i, ut := range us {
		u, vals, cons, err := unitOf(c, ut, int64(i))
		if err != nil {
			return po, err
		}
		for j := range u.Variants {
			text, err := c.Text(vals[j])
			if err != nil {
				return po, prolog.TypeError("text", vals[j])
			}
			// The rendered message is counted by the pack's counter: a
			// declared count could not be trusted to match what is sent.
			u.Variants[j].Value, u.Variants[j].Count = tokenizer.Message{Role: "system", Content: text}, tokenizer.Count{}
		}
		po.Units = append(po.Units, u)
		po.Constraints = append(po.Constraints, cons...)
	}
	if po.Policy, err = s.policyOf(c, op.term("policy")); err != nil {
		return po, err
	}
	if op.has("warm_store") {
		ws, err := s.warmStoreArg(c, cv, op.term("warm_store"))
		if err != nil {
			return po, err
		}
		w, err := s.warmOptions(c, op.term("warm_signals"), op.term("warm_options"))
		if err != nil {
			return po, err
		}
		w.Store = ws
		po.Warm = &w
	}
	if hasClauses(c, atomHook.Apply(engine.NewVariable(), engine.NewVariable())) {
		po.Hook = func(ctx context.Context, units []runtime.HookUnit) ([]pack.Adjustment, []solver.Constraint, error) {
			return s.callHook(c, units)
		}
	}
	return po, nil
}

var atomHook = engine.NewAtom("context_pack_hook")

// hasClauses tells whether the predicate of head, declared dynamic by lib,
// has clauses: asserted ones, or a program's that made it static (clause/2
// then refuses it as private).
func hasClauses(c *prolog.Call, head engine.Term) bool {
	found, err := solve(c.Ctx, c, engine.NewAtom("clause").Apply(head, engine.NewVariable()), func(*engine.Env) bool { return false })
	var ex engine.Exception
	if errors.As(err, &ex) {
		e, isError := ex.Term().(engine.Compound)
		if !isError || e.Arity() != 2 {
			return false
		}
		formal, isCompound := e.Arg(0).(engine.Compound)
		return isCompound && formal.Functor().String() == "permission_error"
	}
	return found
}

// ErrHookFailed is the cause of a pack whose context_pack_hook/2 failed.
var ErrHookFailed = errors.New("host: context_pack_hook/2 failed")

// callHook calls context_pack_hook(+Units, -Adjustments) once on the
// candidate batch. Failure is an error (never "no adjustments"); malformed
// adjustments are thrown type and domain errors.
func (s *Session) callHook(c *prolog.Call, batch []runtime.HookUnit) ([]pack.Adjustment, []solver.Constraint, error) {
	units := make([]engine.Term, len(batch))
	for i, u := range batch {
		units[i] = engine.NewAtom("unit").Apply(engine.NewAtom(u.ID), engine.NewAtom("conversation"), engine.Integer(u.Seq), boolTerm(u.Mandatory))
	}
	called, err := callOnce(c, atomHook.Apply(engine.List(units...), engine.NewVariable()))
	if err != nil {
		return nil, nil, err
	}
	if called == nil {
		return nil, nil, ErrHookFailed
	}
	got := called.(engine.Compound).Arg(1)
	if a, isAtom := got.(engine.Atom); isAtom && a == atomNil {
		return nil, nil, nil
	}
	elems, err := c.List(got)
	if err != nil {
		return nil, nil, err
	}
	var adjs []pack.Adjustment
	var cons []solver.Constraint
	for _, e := range elems {
		a, isCompound := e.(engine.Compound)
		if !isCompound {
			return nil, nil, prolog.TypeError("pack_adjustment", e)
		}
		ids := make([]string, a.Arity())
		for i := range ids {
			if i == 1 && a.Functor().String() == "utility" {
				continue
			}
			id, err := c.Atom(a.Arg(i))
			if err != nil {
				return nil, nil, err
			}
			ids[i] = id
		}
		switch name, n := a.Functor().String(), a.Arity(); {
		case name == "utility" && n == 2:
			d, err := c.Int(a.Arg(1))
			if err != nil {
				return nil, nil, err
			}
			adjs = append(adjs, pack.Adjustment{ID: ids[0], Utility: d})
		case name == "mandatory" && n == 1:
			adjs = append(adjs, pack.Adjustment{ID: ids[0], Mandatory: true})
		case name == "requires" && n == 2:
			cons = append(cons, solver.Requires(ids[0], ids[1]))
		case name == "excludes" && n == 2:
			cons = append(cons, solver.Excludes(ids[0], ids[1]))
		default:
			return nil, nil, prolog.DomainError("pack_adjustment", a)
		}
	}
	return adjs, cons, nil
}

func (s *Session) convPackTerm(id string, p pack.Policy, cp runtime.Packed) engine.Term {
	sel := make([]engine.Term, len(cp.Selected))
	for i, x := range cp.Selected {
		u := cp.Units[x.Unit]
		v := u.Variants[x.Variant]
		fs := []prolog.Field{fld("id", engine.NewAtom(u.ID)), fld("kind", engine.NewAtom(v.Kind)),
			fld("section", engine.NewAtom(u.Section)), fld("tokens", engine.Integer(v.Count.Tokens)),
			fld("utility", engine.Integer(v.Utility))}
		stored := u.Section == "conversation" || u.Section == pack.PinnedSection
		if stored {
			fs = append(fs, fld("sequence", engine.Integer(u.Order)))
		}
		if m, isMsg := v.Value.(tokenizer.Message); isMsg && (!stored || v.Kind != "verbatim") { // an excerpt is not the stored text
			fs = append(fs, fld("text", prolog.Chars(m.Content)))
		}
		// Upstream's value(V), what the unit stands for: the same
		// sequence and text as a record (docs/upstream.md, field names).
		vfs := make([]prolog.Field, 0, 2)
		for _, f := range fs {
			if f.Key == "sequence" || f.Key == "text" {
				vfs = append(vfs, f)
			}
		}
		sel[i] = record("context_selection", append(fs, fld("value", record("context_value", vfs...)))...)
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
	leftOut := make([]engine.Term, len(b.LeftOut))
	for i, l := range b.LeftOut {
		leftOut[i] = engine.NewAtom("left_out").Apply(engine.Integer(l.Seq), engine.NewAtom(l.Reason))
	}
	bfs := []prolog.Field{fld("active", boolTerm(b.Active)), fld("configured", boolTerm(b.Configured)),
		fld("left_out", engine.List(leftOut...)),
		fld("projected_messages", engine.Integer(b.Projected)), fld("reason", engine.NewAtom(b.Reason))}
	if b.Active {
		omitted := make([]engine.Term, len(b.Omitted))
		for i, r := range b.Omitted {
			omitted[i] = engine.NewAtom("range").Apply(engine.Integer(r.From), engine.Integer(r.To))
		}
		bfs = append(bfs, fld("cold_range", engine.NewAtom("range").Apply(engine.Integer(1), engine.Integer(b.ColdThrough))),
			fld("form", engine.Integer(b.Form)), fld("guaranteed_hot_start", engine.Integer(b.HotStart)), fld("omitted_ranges", engine.List(omitted...)),
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
		fld("warm_context_status", warmStatusTerm(cp.Warm)),
	)
}

func warmStatusTerm(w runtime.WarmStatus) engine.Term {
	return record("warm_context_status", fld("available", engine.Integer(w.Available)), fld("configured", boolTerm(w.Configured)),
		fld("loaded_units", engine.Integer(w.Loaded)), fld("stale", engine.Integer(w.Stale)))
}

func solverTerm(p pack.Pack) engine.Term {
	return record("solver",
		fld("bound", engine.Integer(p.Bound)), fld("core", engine.Integer(p.Stats.Core)),
		fld("elapsed_ms", engine.Float(float64(p.Stats.Elapsed.Microseconds())/1000)),
		fld("limit", engine.NewAtom(p.Stats.Limit.String())),
		fld("phase", engine.NewAtom(p.Stats.Phase)), fld("status", engine.NewAtom(p.Status.String())),
		fld("work", engine.Integer(p.Stats.Work)))
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

// storeParts is runtime.ChatMessage's inverse for parts, for rendering a
// request as stored content is rendered.
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

// promptParts reads the prompt compiler's parts from the program's files
// and options, in a cache-stable order: project instructions, then skills
// (a directory's files, by name), as system sections of their categories;
// tool definitions (tools(L) and an MCP tools/list file) as the request's
// tools, by name.
func (s *Session) promptParts(c *prolog.Call, op opts) ([]pack.TextSection, []tokenizer.Tool, error) {
	var secs []pack.TextSection
	if op.has("project_instructions") {
		text, err := s.readFile(c, op.term("project_instructions"))
		if err != nil {
			return nil, nil, err
		}
		secs = append(secs, pack.TextSection{Name: "project_instructions", Visibility: pack.Model, Text: text, Category: "instructions"})
	}
	if op.has("skills") {
		dir := op.text("skills")
		entries, err := fs.ReadDir(s.fsys(), dir)
		if err != nil {
			return nil, nil, prolog.FileError("directory", op.term("skills"), err)
		}
		for _, e := range entries { // ReadDir sorts by name
			if e.IsDir() {
				continue
			}
			b, err := fs.ReadFile(s.fsys(), path.Join(dir, e.Name()))
			if err != nil {
				return nil, nil, prolog.FileError("source_sink", prolog.Chars(path.Join(dir, e.Name())), err)
			}
			secs = append(secs, pack.TextSection{Name: "skill:" + e.Name(), Visibility: pack.Model, Text: string(b), Category: "skills"})
		}
	}
	elems, err := c.List(op.term("tools"))
	if err != nil {
		return nil, nil, err
	}
	var tools []tokenizer.Tool
	for _, e := range elems {
		t, isCompound := c.Resolve(e).(engine.Compound)
		if !isCompound || t.Functor().String() != "tool" || t.Arity() != 3 {
			return nil, nil, prolog.TypeError("tool_definition", prolog.Resolved(e, c.Env))
		}
		name, err1 := c.Text(t.Arg(0))
		desc, err2 := c.Text(t.Arg(1))
		schema, err3 := c.Text(t.Arg(2))
		if err := errors.Join(err1, err2, err3); err != nil || !json.Valid([]byte(schema)) {
			return nil, nil, prolog.TypeError("tool_definition", prolog.Resolved(e, c.Env))
		}
		tools = append(tools, tokenizer.Tool{Type: "function", Function: tokenizer.FunctionDef{Name: name, Description: desc, Parameters: json.RawMessage(schema)}})
	}
	if op.has("mcp_tools") {
		text, err := s.readFile(c, op.term("mcp_tools"))
		if err != nil {
			return nil, nil, err
		}
		mcp, err := mcpTools([]byte(text))
		if err != nil {
			return nil, nil, prolog.DomainError("mcp_tools_list", op.term("mcp_tools"))
		}
		tools = append(tools, mcp...)
	}
	slices.SortStableFunc(tools, func(a, b tokenizer.Tool) int { return strings.Compare(a.Function.Name, b.Function.Name) })
	return secs, tools, nil
}

// mcpTools reads an MCP tools/list result ({"tools": [{"name",
// "description", "inputSchema"}]}, or the bare list) as tool definitions.
func mcpTools(b []byte) ([]tokenizer.Tool, error) {
	type mcpTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var list []mcpTool
	var wrapped struct {
		Tools []mcpTool `json:"tools"`
	}
	if err := json.Unmarshal(b, &wrapped); err == nil && wrapped.Tools != nil {
		list = wrapped.Tools
	} else if err := json.Unmarshal(b, &list); err != nil {
		return nil, err
	}
	out := make([]tokenizer.Tool, len(list))
	for i, t := range list {
		if t.Name == "" {
			return nil, fmt.Errorf("tool %d has no name", i)
		}
		out[i] = tokenizer.Tool{Type: "function", Function: tokenizer.FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}}
	}
	return out, nil
}

// fsys is the program's read-only file system (nil reads fail).
func (s *Session) fsys() fs.FS {
	if s.host.opts.FS == nil {
		return emptyFS{}
	}
	return s.host.opts.FS
}

// readFile reads a text file of the program's directory.
func (s *Session) readFile(c *prolog.Call, name engine.Term) (string, error) {
	n, err := c.Text(name)
	if err != nil {
		return "", err
	}
	b, err := fs.ReadFile(s.fsys(), n)
	if err != nil {
		return "", prolog.FileError("source_sink", prolog.Resolved(name, c.Env), err)
	}
	return string(b), nil
}

// emptyFS has no files.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) { return nil, fs.ErrNotExist }
