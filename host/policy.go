package host

// The session's policy from lib/rlm_policy.pl: the value model of packs,
// the encodings counted at append and the boundary text. A program may
// change these facts (they are dynamic); the session reads them once, at
// first use, so a pack evaluates no Prolog clauses per unit.

import (
	"context"
	"fmt"
	"sync"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/runtime"
	"github.com/rlmpl/rlmpl/prolog"
)

// policy reads lib's policy facts once per session: a program may assert
// its own before its first pack.
func (s *Session) policy(c *prolog.Call) (*Defaults, error) {
	if s.pol != nil {
		return s.pol, nil
	}
	p := &Defaults{}
	class, base, per := engine.NewVariable(), engine.NewVariable(), engine.NewVariable()
	var bad engine.Term
	err := callAll(c, engine.NewAtom("context_utility").Apply(class, base, per), func(env *engine.Env) {
		b, ok1 := env.Resolve(base).(engine.Integer)
		k, ok2 := env.Resolve(per).(engine.Integer)
		name, _ := env.Resolve(class).(engine.Atom)
		u := &p.Utilities
		switch {
		case !ok1 || !ok2:
			bad = prolog.Resolved(engine.NewAtom("context_utility").Apply(class, base, per), env)
		case name.String() == "hot_message":
			u.HotBase, u.HotPerSeq = int64(b), int64(k)
		case name.String() == "older_message":
			u.OlderBase, u.OlderPerSeq = int64(b), int64(k)
		case name.String() == "cold_history_boundary":
			u.Boundary = int64(b)
		default:
			bad = prolog.Resolved(engine.NewAtom("context_utility").Apply(class, base, per), env)
		}
	})
	if err == nil && bad != nil {
		err = prolog.DomainError("context_utility", bad)
	}
	enc := engine.NewVariable()
	if err == nil {
		err = callAll(c, engine.NewAtom("conversation_count_encoding").Apply(enc), func(env *engine.Env) {
			if a, isAtom := env.Resolve(enc).(engine.Atom); isAtom {
				p.CountEncodings = append(p.CountEncodings, a.String())
			} else {
				bad = prolog.Resolved(enc, env)
			}
		})
	}
	if err == nil && bad != nil {
		err = prolog.TypeError("atom", bad)
	}
	role := engine.NewVariable()
	if err == nil {
		err = callAll(c, engine.NewAtom("context_pinned_role").Apply(role), func(env *engine.Env) {
			if a, isAtom := env.Resolve(role).(engine.Atom); isAtom {
				p.Utilities.PinnedRoles = append(p.Utilities.PinnedRoles, a.String())
			} else {
				bad = prolog.Resolved(role, env)
			}
		})
	}
	if err == nil && bad != nil {
		err = prolog.TypeError("atom", bad)
	}
	size, note := engine.NewVariable(), engine.NewVariable()
	if err == nil {
		err = callAll(c, engine.NewAtom("context_excerpt").Apply(size, note), func(env *engine.Env) {
			n, isInt := env.Resolve(size).(engine.Integer)
			text, terr := prolog.TextOf(note, env)
			if !isInt || n < 1 || terr != nil {
				bad = prolog.Resolved(engine.NewAtom("context_excerpt").Apply(size, note), env)
			} else if p.Utilities.ExcerptTokens == 0 {
				p.Utilities.ExcerptTokens, p.Utilities.ExcerptTemplate = int(n), text
			}
		})
	}
	if err == nil && bad != nil {
		err = prolog.DomainError("context_excerpt", bad)
	}
	if err == nil {
		err = callAll(c, engine.NewAtom("context_tool_excerpt").Apply(size, note), func(env *engine.Env) {
			n, isInt := env.Resolve(size).(engine.Integer)
			text, terr := prolog.TextOf(note, env)
			if !isInt || n < 1 || n > 100 || terr != nil {
				bad = prolog.Resolved(engine.NewAtom("context_tool_excerpt").Apply(size, note), env)
			} else if p.Utilities.ToolExcerptPercent == 0 {
				p.Utilities.ToolExcerptPercent, p.Utilities.ToolExcerptTemplate = int(n), text
			}
		})
	}
	if err == nil && bad != nil {
		err = prolog.DomainError("context_tool_excerpt", bad)
	}
	tmpl := engine.NewVariable()
	if err == nil {
		p.BoundaryTemplates, err = templates(c, "context_boundary_template")
	}
	if err == nil {
		p.DirectBoundaryTemplates, err = templates(c, "direct_boundary_template")
	}
	if err == nil {
		err = callAll(c, engine.NewAtom("context_no_reply_note").Apply(tmpl), func(env *engine.Env) {
			if p.Utilities.NoReplyTemplate == "" {
				p.Utilities.NoReplyTemplate, _ = prolog.TextOf(tmpl, env)
			}
		})
	}
	p.Warm = runtime.WarmPolicy{Fidelity: map[string]int64{}, Weights: map[string]int64{}}
	for name, dst := range map[string]map[string]int64{"warm_fidelity": p.Warm.Fidelity, "warm_signal_weight": p.Warm.Weights} {
		k, v := engine.NewVariable(), engine.NewVariable()
		if err == nil {
			err = callAll(c, engine.NewAtom(name).Apply(k, v), func(env *engine.Env) {
				key, isAtom := env.Resolve(k).(engine.Atom)
				n, isInt := env.Resolve(v).(engine.Integer)
				if !isAtom || !isInt || n < 0 {
					bad = prolog.Resolved(engine.NewAtom(name).Apply(k, v), env)
					return
				}
				dst[key.String()] = int64(n)
			})
		}
	}
	if err == nil && bad != nil {
		err = prolog.DomainError("warm_policy", bad)
	}
	if err == nil {
		p.Policy, err = s.policyOf(c, atomNil)
	}
	if err != nil {
		return nil, err
	}
	s.pol = p
	return p, nil
}

// Defaults is lib's policy: the default pack policy, the value model, the
// boundary's forms, the encodings counted at append and the warm policy.
// lib is the one source: a session reads it for its predicates, and
// Host.Defaults for Go callers that run no Prolog of their own (the CLI,
// embedding programs).
type Defaults struct {
	Policy    pack.Policy
	Utilities pack.Utilities
	// BoundaryTemplates are the cold-history boundary's forms, fullest
	// first (a pack sends the first that fits); DirectBoundaryTemplates
	// those of a direct turn, which reaches cold history through tools.
	BoundaryTemplates       []string
	DirectBoundaryTemplates []string
	CountEncodings          []string
	Warm                    runtime.WarmPolicy // fidelity and weights
}

// PackOptions are the options every pack starts from, whoever builds it
// (the conversation predicates, rlmpl chat and rlmpl pack), so a pack
// means the same whichever asked: lib's policy and value model, and the
// cold-history boundary in the forms of mode (runtime.ModeDirect or the
// planner's). Callers add what is theirs: a model, sections, warm
// artifacts.
func (d Defaults) PackOptions(mode string) runtime.PackOptions {
	po := runtime.PackOptions{Policy: d.Policy, Boundary: true, BoundaryTemplates: d.BoundaryTemplates, Utilities: d.Utilities}
	if mode == runtime.ModeDirect {
		po.BoundaryTemplates = d.DirectBoundaryTemplates
	}
	return po
}

// Defaults reads lib's policy facts once, in a session of its own.
func (h *Host) Defaults(ctx context.Context) (Defaults, error) {
	h.defaults.once.Do(func() {
		s, err := h.NewSession(ctx)
		if err == nil {
			defer s.Close()
			_, err = s.Once(ctx, "'$rlm_defaults'")
			h.defaults.d = s.defaults
		}
		h.defaults.err = err
	})
	return h.defaults.d, h.defaults.err
}

// defaultsCache holds what Host.Defaults read.
type defaultsCache struct {
	once sync.Once
	d    Defaults
	err  error
}

// readDefaults is '$rlm_defaults': it reads lib's policy into s.defaults.
func (s *Session) readDefaults(c *prolog.Call) (bool, error) {
	pol, err := s.policy(c)
	if err != nil {
		return false, err
	}
	w, err := s.warmOptions(c, atomNil, atomNil)
	if err != nil {
		return false, err
	}
	s.defaults = *pol
	s.defaults.Warm = w.Policy
	return true, nil
}

// templates reads every solution of Name(-Text), in clause order: a
// program may assert its own forms, and retracting them all is an error.
func templates(c *prolog.Call, name string) ([]string, error) {
	var out []string
	tmpl := engine.NewVariable()
	err := callAll(c, engine.NewAtom(name).Apply(tmpl), func(env *engine.Env) {
		if t, err := prolog.TextOf(tmpl, env); err == nil && t != "" {
			out = append(out, t)
		}
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("host: %s/1 gives no text", name)
	}
	return out, err
}
