package prolog

// SWI builtins the upstream system's programs use:
//
//	%!  atomics_to_string(+List, -String) is det.
//	%!  atomics_to_string(+List, +Separator, -String) is det.
//	%!  string_bytes(?String, ?Bytes, +Encoding) is det.
//	%!  =@=(@Term1, @Term2) is semidet.
//	%!  \=@=(@Term1, @Term2) is semidet.
//	%!  term_hash(@Term, -Hash) is det.
//
// atomics_to_string/2 is SWI's; /3 joins with a separator (SWI spells it
// atomic_list_concat/3, which answers an atom). Strings are chars lists
// (see "Text" in doc.go). string_bytes/3 takes utf8 (or text), octet,
// iso_latin_1 and ascii; a character the encoding cannot hold is
// representation_error(encoding), bytes that are not valid UTF-8 are
// syntax_error(illegal_utf8). =@= is true when the terms are variants
// (equal up to a consistent renaming of variables, SWI's "structurally
// equivalent"); it and \=@= are operators (700, xfx). term_hash/2 leaves
// Hash unbound for a non-ground term, as SWI does, and otherwise hashes its
// canonical text (FNV-1a, 31 bits: stable across runs and machines, not
// SWI's numbers). Cyclic terms: =@= compares them as rational trees;
// term_hash/2 raises representation_error(cyclic_term).

import (
	"hash/fnv"
	"strings"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

var swiDefs = []Def{
	Pred2("atomics_to_string", "atomics_to_string(+List, -String) is det", atomicsToString2),
	Pred3("atomics_to_string", "atomics_to_string(+List, +Separator, -String) is det", atomicsToString3),
	Pred3("string_bytes", "string_bytes(?String, ?Bytes, +Encoding) is det", stringBytes),
	Pred2("=@=", "=@=(@Term1, @Term2) is semidet", variantPred),
	Pred2(`\=@=`, `\=@=(@Term1, @Term2) is semidet`, notVariantPred),
	Pred2("term_hash", "term_hash(@Term, -Hash) is det", termHash),
}

func atomicsToString2(c *Call, list, str engine.Term) (bool, error) {
	s, err := concatList(c, list, "")
	if err != nil {
		return false, err
	}
	return c.Unify(str, Chars(s)), nil
}

func atomicsToString3(c *Call, list, sep, str engine.Term) (bool, error) {
	sp, err := textAs(c, sep, "text")
	if err != nil {
		return false, err
	}
	s, err := concatList(c, list, sp)
	if err != nil {
		return false, err
	}
	return c.Unify(str, Chars(s)), nil
}

func stringBytes(c *Call, str, bytes, enc engine.Term) (bool, error) {
	e, err := c.Atom(enc)
	if err != nil {
		return false, err
	}
	limit := 0
	switch e {
	case "utf8", "text":
	case "octet", "iso_latin_1":
		limit = 256
	case "ascii":
		limit = 128
	default:
		return false, DomainError("encoding", enc)
	}
	if _, free := c.Resolve(str).(engine.Variable); !free {
		s, err := textAs(c, str, "string")
		if err != nil {
			return false, err
		}
		var out []engine.Term
		if limit == 0 {
			out = make([]engine.Term, 0, len(s))
			for i := 0; i < len(s); i++ {
				out = append(out, engine.Integer(s[i]))
			}
		} else {
			for _, r := range s {
				if int(r) >= limit {
					return false, RepresentationError("encoding")
				}
				out = append(out, engine.Integer(r))
			}
		}
		return c.Unify(bytes, engine.List(out...)), nil
	}
	elems, err := c.List(bytes)
	if err != nil {
		return false, err
	}
	buf := make([]byte, 0, len(elems))
	var sb strings.Builder
	for _, el := range elems {
		n, err := c.Int(el)
		if err != nil {
			return false, err
		}
		if n < 0 || n > 255 || limit > 0 && int(n) >= limit {
			return false, TypeError("byte", Resolved(el, c.Env))
		}
		if limit == 0 {
			buf = append(buf, byte(n))
		} else {
			sb.WriteRune(rune(n))
		}
	}
	if limit == 0 {
		if !utf8.Valid(buf) {
			return false, iso("syntax_error", engine.NewAtom("illegal_utf8"))
		}
		return c.Unify(str, Chars(string(buf))), nil
	}
	return c.Unify(str, Chars(sb.String())), nil
}

// variant reports whether x and y are variants: equal up to a bijective
// renaming of their variables. Rational trees compare as their unfoldings.
func variant(x, y engine.Term, env *engine.Env) bool {
	w := walk{env: env}
	v := variantWalk{walk: &w, xy: map[engine.Variable]engine.Variable{}, yx: map[engine.Variable]engine.Variable{}}
	return v.eq(x, y, 0)
}

type variantWalk struct {
	*walk
	xy, yx map[engine.Variable]engine.Variable
}

func (v *variantWalk) eq(x, y engine.Term, depth int) bool {
	x, y = v.env.Resolve(x), v.env.Resolve(y)
	vx, xVar := x.(engine.Variable)
	vy, yVar := y.(engine.Variable)
	switch {
	case xVar && yVar:
		if m, seen := v.xy[vx]; seen {
			return m == vy
		}
		if _, seen := v.yx[vy]; seen {
			return false
		}
		v.xy[vx], v.yx[vy] = vy, vx
		return true
	case xVar || yVar:
		return false
	}
	cx, okx := x.(engine.Compound)
	cy, oky := y.(engine.Compound)
	if !okx || !oky {
		if okx || oky {
			return false
		}
		return x.Compare(y, v.env) == 0
	}
	if cx.Functor() != cy.Functor() || cx.Arity() != cy.Arity() {
		return false
	}
	if v.pairSeen(depth, cx, cy) {
		return true
	}
	for i := 0; i < cx.Arity(); i++ {
		if !v.eq(cx.Arg(i), cy.Arg(i), depth+1) {
			return false
		}
	}
	return true
}

// pairSeen reports whether the walk met the pair (x, y) before, and
// records it: a variant check of rational trees assumes a pair it is
// already comparing is a variant, which is what makes it finish.
func (v *variantWalk) pairSeen(depth int, x, y engine.Compound) bool {
	kx := v.key(depth, x)
	if kx == nil {
		return false
	}
	ky := nodeKey(y)
	if ky == nil {
		return false
	}
	k := [2]any{kx, ky}
	if v.state[k] != 0 {
		return true
	}
	v.state[k] = onPath
	return false
}

func variantPred(c *Call, x, y engine.Term) (bool, error) {
	return variant(x, y, c.Env), nil
}

func notVariantPred(c *Call, x, y engine.Term) (bool, error) {
	return !variant(x, y, c.Env), nil
}

func termHash(c *Call, t, hash engine.Term) (bool, error) {
	if !Acyclic(t, c.Env) {
		return false, cyclicError("term_hash", 2, engine.NewAtom("<cyclic>"), c.Env)
	}
	if !Ground(t, c.Env) {
		return true, nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(c.In.WriteQ(t, c.Env)))
	return c.Unify(hash, engine.Integer(h.Sum32()&0x7fffffff)), nil
}
