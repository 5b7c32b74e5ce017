package prolog

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

// Go values and the terms they stand for (DESIGN.md §3):
//
//	string          text: a chars list (double_quotes=chars), [] when empty
//	Atom            atom
//	bool            the atoms true and false
//	int, int64, …   integer
//	*big.Int        integer (Value gives *big.Int for one beyond int64)
//	float64         float
//	[]any           proper list
//	Record          Tag([key(Value), ...]), fields in the given order
//	Compound        any other compound
//	nil             a fresh variable
//	engine.Term     itself
//
// Text and a list of one-character atoms are the same term in chars mode,
// so [Value] decodes such a list (and only a non-empty one) as a string.

// Atom is a Go value that converts to an atom rather than to text.
type Atom string

// Record is a record term Tag([key(Value), ...]), the host's stand-in for
// the upstream system's dicts.
type Record struct {
	Tag    string
	Fields []Field
}

// Field is one key(Value) of a [Record].
type Field struct {
	Key   string
	Value any
}

// Get returns the value of the first field named key.
func (r Record) Get(key string) (any, bool) {
	for _, f := range r.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Compound is a compound term other than a list.
type Compound struct {
	Functor string
	Args    []any
}

// Chars returns s as text: a compact, string-backed chars list.
func Chars(s string) engine.Term {
	if s == "" {
		return engine.NewAtom("[]")
	}
	return engine.CharList(s)
}

// ToTerm converts a Go value to a term (see the table above).
func ToTerm(v any) (engine.Term, error) {
	switch v := v.(type) {
	case nil:
		return engine.NewVariable(), nil
	case engine.Term:
		return v, nil
	case string:
		return Chars(v), nil
	case Atom:
		return engine.NewAtom(string(v)), nil
	case bool:
		if v {
			return engine.NewAtom("true"), nil
		}
		return engine.NewAtom("false"), nil
	case int:
		return engine.Integer(v), nil
	case int32:
		return engine.Integer(v), nil
	case int64:
		return engine.Integer(v), nil
	case uint64:
		return engine.NewBigInt(new(big.Int).SetUint64(v)), nil
	case *big.Int:
		return engine.NewBigInt(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, EvaluationError("undefined")
		}
		return engine.Float(v), nil
	case []any:
		ts := make([]engine.Term, len(v))
		for i, e := range v {
			t, err := ToTerm(e)
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
		return engine.List(ts...), nil
	case []string:
		ts := make([]engine.Term, len(v))
		for i, e := range v {
			ts[i] = Chars(e)
		}
		return engine.List(ts...), nil
	case Record:
		ts := make([]engine.Term, len(v.Fields))
		for i, f := range v.Fields {
			t, err := ToTerm(f.Value)
			if err != nil {
				return nil, err
			}
			ts[i] = engine.NewAtom(f.Key).Apply(t)
		}
		return engine.NewAtom(v.Tag).Apply(engine.List(ts...)), nil
	case Compound:
		if len(v.Args) == 0 {
			return engine.NewAtom(v.Functor), nil
		}
		ts := make([]engine.Term, len(v.Args))
		for i, e := range v.Args {
			t, err := ToTerm(e)
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
		return engine.NewAtom(v.Functor).Apply(ts...), nil
	}
	return nil, fmt.Errorf("prolog: ToTerm: unsupported Go type %T", v)
}

// Value converts a term to a Go value (see the table above). A compound whose
// only argument is a list of one-argument compounds decodes as a [Record].
func Value(t engine.Term, env *engine.Env) (any, error) {
	switch t := env.Resolve(t).(type) {
	case engine.Variable:
		return nil, nil
	case engine.Atom:
		if t == atomNil {
			return []any{}, nil
		}
		return Atom(t.String()), nil
	case engine.Integer:
		return int64(t), nil
	case *engine.BigInt:
		return t.Big(), nil
	case engine.Float:
		return float64(t), nil
	case engine.Compound:
		if isList(t, env) {
			elems, err := listOf(t, env)
			if err != nil {
				return nil, err
			}
			if s, ok := charsText(elems, env); ok {
				return s, nil
			}
			out := make([]any, len(elems))
			for i, e := range elems {
				if out[i], err = Value(e, env); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		if r, ok, err := recordOf(t, env); ok || err != nil {
			return r, err
		}
		args := make([]any, t.Arity())
		for i := range args {
			v, err := Value(t.Arg(i), env)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		return Compound{Functor: t.Functor().String(), Args: args}, nil
	}
	return nil, fmt.Errorf("prolog: Value: unsupported term %T", t)
}

var (
	atomNil  = engine.NewAtom("[]")
	atomDot  = engine.NewAtom(".")
	atomTrue = engine.NewAtom("true")
)

func isList(t engine.Compound, env *engine.Env) bool {
	return t.Functor() == atomDot && t.Arity() == 2
}

// listOf returns the elements of a proper list, or the ISO error for a
// partial (instantiation_error) or improper (type_error(list, T)) one.
func listOf(t engine.Term, env *engine.Env) ([]engine.Term, error) {
	var out []engine.Term
	it := engine.ListIterator{List: t, Env: env}
	for it.Next() {
		out = append(out, it.Current())
	}
	if err := it.Err(); err != nil {
		return nil, iterError(err, TypeError("list", t))
	}
	return out, nil
}

// iterError turns a ListIterator error into an *ISOError: its formal is
// instantiation_error for a partial list, else fallback.
func iterError(err error, fallback error) error {
	if ex, ok := err.(engine.Exception); ok {
		if f, ok := ex.Term().(engine.Compound); ok && f.Arity() == 2 && f.Arg(0) == engine.NewAtom("instantiation_error") {
			return InstantiationError()
		}
	}
	return fallback
}

// charsText reads a non-empty list of one-character atoms as text.
func charsText(elems []engine.Term, env *engine.Env) (string, bool) {
	if len(elems) == 0 {
		return "", false
	}
	var sb strings.Builder
	for _, e := range elems {
		a, ok := env.Resolve(e).(engine.Atom)
		if !ok {
			return "", false
		}
		s := a.String()
		if r, n := utf8.DecodeRuneInString(s); n == 0 || n != len(s) || r == utf8.RuneError && n == 1 {
			return "", false
		}
		sb.WriteString(s)
	}
	return sb.String(), true
}

func recordOf(t engine.Compound, env *engine.Env) (Record, bool, error) {
	if t.Arity() != 1 {
		return Record{}, false, nil
	}
	arg := env.Resolve(t.Arg(0))
	if arg != atomNil {
		c, ok := arg.(engine.Compound)
		if !ok || !isList(c, env) {
			return Record{}, false, nil
		}
	}
	elems, err := listOf(arg, env)
	if err != nil {
		return Record{}, false, nil
	}
	r := Record{Tag: t.Functor().String(), Fields: make([]Field, 0, len(elems))}
	for _, e := range elems {
		f, ok := env.Resolve(e).(engine.Compound)
		if !ok || f.Arity() != 1 || isList(f, env) {
			return Record{}, false, nil
		}
		v, err := Value(f.Arg(0), env)
		if err != nil {
			return Record{}, true, err
		}
		r.Fields = append(r.Fields, Field{Key: f.Functor().String(), Value: v})
	}
	return r, true, nil
}

// Resolved returns a copy of t with every bound variable replaced by its
// value and unbound ones renamed consistently, so it can outlive env (be
// stored, or run later with a fresh environment). Text stays compact.
func Resolved(t engine.Term, env *engine.Env) engine.Term {
	// NB: engine.NewException is ichiban's only exported renamed copy.
	return engine.NewException(t, env).Term()
}

// Argument readers. Each checks in ISO order: instantiation, then type.

// Text reads text given as an atom, a number, a chars list or a codes list.
func (c *Call) Text(t engine.Term) (string, error) { return TextOf(t, c.Env) }

// TextOf is [Call.Text] for code without a Call.
func TextOf(t engine.Term, env *engine.Env) (string, error) {
	switch v := env.Resolve(t).(type) {
	case engine.Variable:
		return "", InstantiationError()
	case engine.Atom:
		if v == atomNil {
			return "", nil
		}
		return v.String(), nil
	case engine.Integer:
		return strconv.FormatInt(int64(v), 10), nil
	case *engine.BigInt:
		return v.String(), nil
	case engine.Float:
		return formatFloat(float64(v)), nil
	case engine.Compound:
		if !isList(v, env) {
			return "", TypeError("text", t)
		}
		var sb strings.Builder
		it := engine.ListIterator{List: v, Env: env}
		for it.Next() {
			switch e := env.Resolve(it.Current()).(type) {
			case engine.Variable:
				return "", InstantiationError()
			case engine.Atom:
				if utf8.RuneCountInString(e.String()) != 1 {
					return "", TypeError("text", t)
				}
				sb.WriteString(e.String())
			case engine.Integer:
				if e < 0 || e > utf8.MaxRune {
					return "", RepresentationError("character_code")
				}
				sb.WriteRune(rune(e))
			default:
				return "", TypeError("text", t)
			}
		}
		if err := it.Err(); err != nil {
			return "", iterError(err, TypeError("text", t))
		}
		return sb.String(), nil
	}
	return "", TypeError("text", t)
}

// Atom reads an atom's name.
func (c *Call) Atom(t engine.Term) (string, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return "", InstantiationError()
	case engine.Atom:
		return v.String(), nil
	}
	return "", TypeError("atom", t)
}

// Int reads an integer that fits in an int64; a larger one is
// representation_error(max_integer) (or min_integer).
func (c *Call) Int(t engine.Term) (int64, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return 0, InstantiationError()
	case engine.Integer:
		return int64(v), nil
	case *engine.BigInt:
		if v.Big().Sign() < 0 {
			return 0, RepresentationError("min_integer")
		}
		return 0, RepresentationError("max_integer")
	}
	return 0, TypeError("integer", t)
}

// NonNeg reads a non-negative integer (type_error(integer) or
// domain_error(not_less_than_zero)).
func (c *Call) NonNeg(t engine.Term) (int64, error) {
	n, err := c.Int(t)
	if err == nil && n < 0 {
		err = DomainError("not_less_than_zero", t)
	}
	return n, err
}

// Number reads an integer or float as float64.
func (c *Call) Number(t engine.Term) (float64, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return 0, InstantiationError()
	case engine.Integer:
		return float64(v), nil
	case *engine.BigInt:
		f, _ := new(big.Float).SetInt(v.Big()).Float64()
		return f, nil
	case engine.Float:
		return float64(v), nil
	}
	return 0, TypeError("number", t)
}

// Bool reads the atoms true or false.
func (c *Call) Bool(t engine.Term) (bool, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return false, InstantiationError()
	case engine.Atom:
		switch v.String() {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, TypeError("bool", t)
}

// List reads a proper list.
func (c *Call) List(t engine.Term) ([]engine.Term, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return nil, InstantiationError()
	case engine.Atom:
		if v == atomNil {
			return nil, nil
		}
	case engine.Compound:
		if isList(v, c.Env) {
			return listOf(v, c.Env)
		}
	}
	return nil, TypeError("list", t)
}

// Callable checks that t is an atom or compound and returns it resolved.
func (c *Call) Callable(t engine.Term) (engine.Term, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return nil, InstantiationError()
	case engine.Atom, engine.Compound:
		return v, nil
	}
	return nil, TypeError("callable", t)
}

// Record reads a record term Tag([key(Value), ...]) with its tag.
func (c *Call) Record(t engine.Term) (Record, error) {
	v := c.Resolve(t)
	switch v := v.(type) {
	case engine.Variable:
		return Record{}, InstantiationError()
	case engine.Compound:
		r, ok, err := recordOf(v, c.Env)
		if err != nil {
			return Record{}, err
		}
		if ok {
			return r, nil
		}
	}
	return Record{}, TypeError("record", t)
}

// Props reads a property list [key(Value), ...] into fields, in order.
func (c *Call) Props(t engine.Term) ([]Field, error) {
	elems, err := c.List(t)
	if err != nil {
		return nil, err
	}
	out := make([]Field, 0, len(elems))
	for _, e := range elems {
		f, ok := c.Resolve(e).(engine.Compound)
		switch {
		case !ok:
			if _, isVar := c.Resolve(e).(engine.Variable); isVar {
				return nil, InstantiationError()
			}
			return nil, TypeError("property", e)
		case f.Arity() != 1:
			return nil, TypeError("property", e)
		}
		out = append(out, Field{Key: f.Functor().String(), Value: f.Arg(0)})
	}
	return out, nil
}

// SortFields sorts fields by key (stable), the documented order of record
// terms built by the host.
func SortFields(fs []Field) {
	slices.SortStableFunc(fs, func(a, b Field) int { return strings.Compare(a.Key, b.Key) })
}

func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // n: NaN/Inf never reach here
		s += ".0"
	} else if i := strings.IndexAny(s, "eE"); i >= 0 && !strings.Contains(s[:i], ".") {
		s = s[:i] + ".0" + s[i:]
	}
	return s
}
