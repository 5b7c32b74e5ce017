package host

// Options of the public predicates: one checker driven by lib's
// rlm_option/4 facts (lib/rlm_policy.pl), read once per host. Types,
// defaults and the allowed names live in Prolog, where programs can read
// them; the check runs in Go, where it is cheap.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// optionSpec is one option of one predicate.
type optionSpec struct {
	name string
	typ  engine.Term
	def  engine.Term // nil: optional, absent means not given
}

// optionSchemas are every predicate's options, by indicator ("name/arity").
type optionSchemas map[string][]optionSpec

// schemaCache holds the schemas of a host, read from the first session
// that needs them (the facts are static lib data).
type schemaCache struct {
	once    sync.Once
	schemas optionSchemas
	err     error
}

func (s *Session) schemas(c *prolog.Call) (optionSchemas, error) {
	sc := &s.host.schema
	sc.once.Do(func() {
		p, n, t, d := engine.NewVariable(), engine.NewVariable(), engine.NewVariable(), engine.NewVariable()
		sc.schemas = optionSchemas{}
		sc.err = callAll(c, engine.NewAtom("rlm_option").Apply(p, n, t, d), func(env *engine.Env) {
			pi := prolog.Resolved(p, env)
			spec := optionSpec{typ: prolog.Resolved(t, env)}
			if a, isAtom := env.Resolve(n).(engine.Atom); isAtom {
				spec.name = a.String()
			}
			if dc, isCompound := env.Resolve(d).(engine.Compound); isCompound && dc.Functor().String() == "default" && dc.Arity() == 1 {
				spec.def = prolog.Resolved(dc.Arg(0), env)
			}
			key := s.in.WriteQ(pi, nil)
			sc.schemas[key] = append(sc.schemas[key], spec)
		})
	})
	return sc.schemas, sc.err
}

// opts are one call's checked options: every option of the schema that was
// given or has a default, by name, resolved.
type opts map[string]engine.Term

// options checks list against the schema of pred (the public predicate,
// "name/arity") and fills in defaults. Errors are the ISO errors must_be/2
// would throw; an unknown option is domain_error(Name_option, Opt).
func (s *Session) options(c *prolog.Call, pred string, list engine.Term) (opts, error) {
	schemas, err := s.schemas(c)
	if err != nil {
		return nil, err
	}
	specs, known := schemas[pred]
	if !known {
		return nil, fmt.Errorf("host: no option schema for %s in lib (rlm_option/4)", pred)
	}
	elems, err := c.List(list)
	if err != nil {
		return nil, err
	}
	domain := pred[:strings.LastIndexByte(pred, '/')] + "_option"
	out := make(opts, len(specs))
	for _, e := range elems {
		o, isCompound := c.Resolve(e).(engine.Compound)
		if _, isVar := c.Resolve(e).(engine.Variable); isVar {
			return nil, prolog.InstantiationError()
		}
		var spec *optionSpec
		var value engine.Term
		if isCompound {
			i := slices.IndexFunc(specs, func(sp optionSpec) bool { return sp.name == o.Functor().String() })
			switch {
			case i < 0:
			case o.Arity() == 1:
				spec, value = &specs[i], o.Arg(0)
			case o.Arity() == 2 && isProviderType(specs[i].typ):
				// provider(Name, Settings) is itself the provider option's
				// value, as the docs write it: provider(provider(Name,
				// Settings)) need not be spelled out.
				spec, value = &specs[i], o
			}
		}
		if spec == nil {
			return nil, prolog.DomainError(domain, prolog.Resolved(e, c.Env))
		}
		if _, dup := out[spec.name]; dup {
			continue // the first occurrence wins, as option/2
		}
		if err := s.mustBe(c, spec.typ, value); err != nil {
			return nil, err
		}
		out[spec.name] = prolog.Resolved(value, c.Env)
	}
	for _, sp := range specs {
		if _, given := out[sp.name]; !given && sp.def != nil {
			out[sp.name] = sp.def
		}
	}
	return out, nil
}

// isProviderType reports whether typ is the schema type provider.
func isProviderType(typ engine.Term) bool {
	a, isAtom := typ.(engine.Atom)
	return isAtom && a.String() == "provider"
}

// mustBe checks v against a type of the schema vocabulary (see
// lib/rlm_policy.pl), with must_be/2's errors.
func (s *Session) mustBe(c *prolog.Call, typ, v engine.Term) error {
	name, args := "", []engine.Term(nil)
	switch t := typ.(type) {
	case engine.Atom:
		name = t.String()
	case engine.Compound:
		name = t.Functor().String()
		for i := range t.Arity() {
			args = append(args, t.Arg(i))
		}
	}
	v = c.Resolve(v)
	if _, isVar := v.(engine.Variable); isVar && name != "any" {
		return prolog.InstantiationError()
	}
	typeErr := func() error {
		return &prolog.ISOError{Formal: engine.NewAtom("type_error").Apply(typ, prolog.Resolved(v, c.Env))}
	}
	integer := func(min int64) error {
		n, isInt := v.(engine.Integer)
		if !isInt || int64(n) < min {
			return typeErr()
		}
		return nil
	}
	switch {
	case name == "any":
		return nil
	case name == "atom":
		if _, isAtom := v.(engine.Atom); !isAtom {
			return typeErr()
		}
	case name == "text":
		if _, err := c.Text(v); err != nil {
			return typeErr()
		}
	case name == "boolean":
		if a, isAtom := v.(engine.Atom); !isAtom || a.String() != "true" && a.String() != "false" {
			return typeErr()
		}
	case name == "integer":
		return integer(math.MinInt64)
	case name == "nonneg":
		return integer(0)
	case name == "positive_integer":
		return integer(1)
	case name == "limit":
		if a, isAtom := v.(engine.Atom); isAtom && a.String() == "all" {
			return nil
		}
		return integer(1)
	case name == "number", name == "positive_number":
		f, err := c.Number(v)
		if err != nil || name == "positive_number" && f <= 0 {
			return typeErr()
		}
	case name == "oneof" && len(args) == 1:
		allowed, _ := c.List(args[0])
		if !slices.ContainsFunc(allowed, func(a engine.Term) bool { return a.Compare(v, c.Env) == 0 }) {
			return &prolog.ISOError{Formal: engine.NewAtom("domain_error").Apply(typ, prolog.Resolved(v, c.Env))}
		}
	case name == "list":
		elems, err := c.List(v)
		if err != nil {
			return err
		}
		if len(args) == 1 {
			for _, e := range elems {
				if err := s.mustBe(c, args[0], e); err != nil {
					return err
				}
			}
		}
	case name == "provider":
		// A name, or provider(Name, Settings) with Settings checked
		// against provider/2's schema.
		if _, isAtom := v.(engine.Atom); isAtom {
			return nil
		}
		p, isCompound := v.(engine.Compound)
		if !isCompound || p.Functor().String() != "provider" || p.Arity() != 2 {
			return typeErr()
		}
		if _, isAtom := c.Resolve(p.Arg(0)).(engine.Atom); !isAtom {
			return typeErr()
		}
		_, err := s.options(c, "provider/2", p.Arg(1))
		return err
	case name == "properties":
		_, err := c.List(optionList(c, v))
		return err
	case name == "callable":
		_, err := c.Callable(v)
		return err
	case name == "options" && len(args) == 1:
		_, err := s.options(c, s.in.WriteQ(args[0], nil), optionList(c, v))
		return err
	default:
		return fmt.Errorf("host: unknown option type %s in lib (rlm_option/4)", s.in.WriteQ(typ, nil))
	}
	return nil
}

// optionList accepts an option list or a record Tag(List) of one: of any
// tag, or of one of tags when some are given (a record of another kind,
// conversation_ref([]) for a policy, is then not a list and the caller's
// type error names it), or an anonymous one, dict(List): upstream's
// anonymous dict _{k:V} (docs/upstream.md).
func optionList(c *prolog.Call, t engine.Term, tags ...string) engine.Term {
	r, isCompound := c.Resolve(t).(engine.Compound)
	if isCompound && r.Arity() == 1 && r.Functor().String() != "." &&
		(len(tags) == 0 || r.Functor().String() == "dict" || slices.Contains(tags, r.Functor().String())) {
		return r.Arg(0)
	}
	return t
}

// Typed reads of checked options. A missing optional option reads as the
// zero value; has tells it apart.

func (o opts) has(name string) bool { _, ok := o[name]; return ok }

// term is the option's value, nil when it was neither given nor defaulted.
func (o opts) term(name string) engine.Term { return o[name] }

func (o opts) int(name string) int64 {
	n, _ := o[name].(engine.Integer)
	return int64(n)
}

// limit reads a limit option: 0 for all.
func (o opts) limit(name string) int {
	n, _ := o[name].(engine.Integer)
	return int(min(int64(n), math.MaxInt32))
}

func (o opts) bool(name string) bool { return o.atom(name) == "true" }

func (o opts) atom(name string) string {
	if a, isAtom := o[name].(engine.Atom); isAtom {
		return a.String()
	}
	return ""
}

func (o opts) text(name string) string {
	if t, ok := o[name]; ok {
		s, _ := prolog.TextOf(t, nil)
		return s
	}
	return ""
}

func (o opts) number(name string) float64 {
	switch v := o[name].(type) {
	case engine.Integer:
		return float64(v)
	case engine.Float:
		return float64(v)
	}
	return 0
}
