package prolog

// More of what an SWI-Prolog programmer reaches for first, in Go where a
// Prolog definition would be slow on ichiban (prelude.pl has the rest):
//
//	%!  sub_string(+String, ?Before, ?Length, ?After, ?SubString) is nondet.
//	%!  sub_atom(+Text, ?Before, ?Length, ?After, ?SubAtom) is nondet.
//	%!  string(@Term) is semidet.
//	%!  union(+Set1, +Set2, -Set3) is det.
//	%!  intersection(+Set1, +Set2, -Set3) is det.
//	%!  random_between(+Low, +High, -Random) is det.
//	%!  random(-Float) is det.
//	%!  random_member(-Elem, +List) is semidet.
//	%!  random_permutation(+List, -Permutation) is det.
//	%!  set_random(+Option) is det.
//	%!  get_time(-Stamp) is det.
//	%!  format_time(+Out, +Format, +Stamp) is det.
//	%!  current_predicate(?PI) is nondet.
//	%!  between(+Low, +High, ?Value) is nondet.
//
// Strings are chars lists (see "Text" in doc.go): sub_string/5 returns
// them, sub_atom/5 atoms (it replaces ichiban's, which is quadratic per
// solution), string/1 is true of a proper list of characters (the empty text []
// included). union/3 and intersection/3 compare with memberchk/2, as SWI's
// library(lists) does. The random predicates draw from the interpreter's
// generator, seeded from Options.Seed (or at random) and reseeded by
// set_random(seed(N)). get_time/1 and format_time/3 read Options.Now;
// format_time/3 takes strftime directives in the local time zone.
// current_predicate/1 takes Name/Arity with either part unbound, which
// ichiban's raises a type error for, and enumerates in standard order.
// record_get/3 is documented in prelude.go, library(assoc) in assoc.go.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

// registerLibrary installs the nondeterministic predicates above, which
// Def cannot express.
func (in *Interpreter) registerLibrary() {
	vm := &in.ip.VM
	vm.Register5(engine.NewAtom("sub_string"), subText(piSubString, TextOf, Chars))
	vm.Register3(engine.NewAtom("atom_concat"), atomConcat)
	vm.Register5(engine.NewAtom("sub_atom"), subText(piSubAtom, TextOf, func(s string) engine.Term { return engine.NewAtom(s) }))
	vm.Register1(engine.NewAtom("current_predicate"), currentPredicate)
	vm.Register3(engine.NewAtom("record_get"), recordGet)
}

var piRecordGet = engine.NewAtom("/").Apply(engine.NewAtom("record_get"), engine.Integer(3))

// recordGet is record_get(+Record, ?Key, ?Value), the get_dict/3 of
// record terms (prelude.go): Key's first field, each field in turn when
// Key is unbound, or a path K1/K2/... into nested records.
func recordGet(vm *engine.VM, record, key, value engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	c := &Call{VM: vm, Env: env}
	_, fields, err := recordFields(c, record)
	if err != nil {
		return raise(err, piRecordGet, env)
	}
	switch kt := env.Resolve(key).(type) {
	case engine.Variable:
		pair := engine.NewAtom("-")
		ks := make([]func(context.Context) *engine.Promise, 0, len(fields))
		for _, f := range fields {
			if fk, ok := fieldKey(c, f); ok {
				v := env.Resolve(f).(engine.Compound).Arg(0)
				ks = append(ks, func(context.Context) *engine.Promise {
					return unify(pair.Apply(kt, value), pair.Apply(fk, v), k, env)
				})
			}
		}
		return engine.Delay(ks...)
	case engine.Atom:
		for _, f := range fields {
			if fk, ok := fieldKey(c, f); ok && fk == kt {
				return unify(value, env.Resolve(f).(engine.Compound).Arg(0), k, env)
			}
		}
		return engine.Bool(false)
	case engine.Compound:
		if kt.Functor() == atomSlash && kt.Arity() == 2 {
			inner := engine.NewVariable()
			return recordGet(vm, record, kt.Arg(0), inner, func(env *engine.Env) *engine.Promise {
				return recordGet(vm, inner, kt.Arg(1), value, k, env)
			}, env)
		}
	}
	return raise(TypeError("record_key", key), piRecordGet, env)
}

var (
	piSubString = engine.NewAtom("/").Apply(engine.NewAtom("sub_string"), engine.Integer(5))
	piSubAtom   = engine.NewAtom("/").Apply(engine.NewAtom("sub_atom"), engine.Integer(5))
)

// subText is sub_string/5 or sub_atom/5 (ichiban's sub_atom/5 takes
// minutes on a few thousand characters): it enumerates the substrings of
// any text, as SWI-Prolog does, by Before, then Length, each made by mk.
func subText(pi engine.Term, text func(engine.Term, *engine.Env) (string, error), mk func(string) engine.Term) engine.Predicate5 {
	return func(vm *engine.VM, str, before, length, after, sub engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
		return subTextOf(vm, pi, text, mk, str, before, length, after, sub, k, env)
	}
}

func subTextOf(vm *engine.VM, pi engine.Term, text func(engine.Term, *engine.Env) (string, error), mk func(string) engine.Term,
	str, before, length, after, sub engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	fail := func(err error) *engine.Promise { return raise(err, pi, env) }
	s, err := text(str, env)
	if err != nil {
		return fail(err)
	}
	rs := []rune(s)
	n := len(rs)
	var bounds [3]int // Before, Length, After; -1 when unbound
	for i, t := range []engine.Term{before, length, after} {
		switch v := env.Resolve(t).(type) {
		case engine.Variable:
			bounds[i] = -1
		case engine.Integer:
			if v < 0 {
				return fail(DomainError("not_less_than_zero", v))
			}
			bounds[i] = int(min(v, engine.Integer(n+1)))
		default:
			return fail(TypeError("integer", t))
		}
	}
	solution := func(b, l int) func(context.Context) *engine.Promise {
		return func(context.Context) *engine.Promise {
			args := engine.NewAtom("s")
			sol := args.Apply(engine.Integer(b), engine.Integer(l), engine.Integer(n-b-l), mk(string(rs[b:b+l])))
			return engine.Unify(vm, args.Apply(before, length, after, sub), sol, k, env)
		}
	}
	if _, free := env.Resolve(sub).(engine.Variable); !free {
		want, err := text(sub, env)
		if err != nil {
			return fail(err)
		}
		wl := utf8.RuneCountInString(want)
		var ks []func(context.Context) *engine.Promise
		for b := 0; b+wl <= n; b++ {
			if string(rs[b:b+wl]) == want {
				ks = append(ks, solution(b, wl))
			}
		}
		return engine.Delay(ks...)
	}
	bLo, bHi := 0, n
	if bounds[0] >= 0 {
		bLo, bHi = bounds[0], bounds[0]
	}
	// lengths returns the lengths to try at Before = b.
	lengths := func(b int) (lo, hi int) {
		switch {
		case bounds[1] >= 0:
			return bounds[1], bounds[1]
		case bounds[2] >= 0:
			return n - b - bounds[2], n - b - bounds[2]
		}
		return 0, n - b
	}
	// Lazily: there are O(n²) substrings.
	var from func(b, lmin int) *engine.Promise
	from = func(b, lmin int) *engine.Promise {
		for ; b <= bHi; b, lmin = b+1, 0 {
			lo, hi := lengths(b)
			l := max(lo, lmin, 0)
			if l <= hi && b+l <= n {
				b := b
				return engine.Delay(solution(b, l), func(context.Context) *engine.Promise { return from(b, l+1) })
			}
		}
		return engine.Bool(false)
	}
	return from(bLo, 0)
}

// raise throws err from a continuation-passing predicate: an *ISOError
// becomes error(Formal, PI).
func raise(err error, pi engine.Term, env *engine.Env) *engine.Promise {
	if ie, ok := err.(*ISOError); ok {
		err = engine.NewException(engine.NewAtom("error").Apply(ie.Formal, pi), env)
	}
	return engine.Error(err)
}

func string1(c *Call, t engine.Term) (bool, error) {
	return c.Resolve(t) == atomNil || allElems(c, t, isChar), nil
}

/* --- Sets as lists --- */

func union3(c *Call, set1, set2, set3 engine.Term) (bool, error) {
	out, err := filterBy(c, set1, set2, false)
	if err != nil {
		return false, err
	}
	return c.Unify(set3, engine.PartialList(set2, out...)), nil
}

func intersection3(c *Call, set1, set2, set3 engine.Term) (bool, error) {
	out, err := filterBy(c, set1, set2, true)
	if err != nil {
		return false, err
	}
	return c.Unify(set3, engine.List(out...)), nil
}

// filterBy keeps the elements of set1 that are in set2 (in), or that are
// not, comparing with memberchk/2.
func filterBy(c *Call, set1, set2 engine.Term, in bool) ([]engine.Term, error) {
	elems, err := c.List(set1)
	if err != nil {
		return nil, err
	}
	var out []engine.Term
	for _, e := range elems {
		found, err := memberchk(c, e, set2)
		if err != nil {
			return nil, err
		}
		if found == in {
			out = append(out, e)
		}
	}
	return out, nil
}

/* --- Random numbers --- */

func (in *Interpreter) rand() *rand.Rand {
	if in.rng == nil {
		seed := in.opts.Seed
		if seed == 0 {
			seed = rand.Uint64()
		}
		in.rng = rand.New(rand.NewPCG(seed, seed))
	}
	return in.rng
}

func randomBetween(c *Call, low, high, r engine.Term) (bool, error) {
	l, err := c.Int(low)
	if err != nil {
		return false, err
	}
	h, err := c.Int(high)
	if err != nil {
		return false, err
	}
	if h < l {
		return false, nil
	}
	span := uint64(h - l)
	var v uint64
	if span == ^uint64(0) {
		v = c.In.rand().Uint64()
	} else {
		v = c.In.rand().Uint64N(span + 1)
	}
	return c.Unify(r, engine.Integer(l+int64(v))), nil
}

func random1(c *Call, r engine.Term) (bool, error) {
	return c.Unify(r, engine.Float(c.In.rand().Float64())), nil
}

func randomMember(c *Call, elem, list engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil || len(elems) == 0 {
		return false, err
	}
	return c.Unify(elem, elems[c.In.rand().IntN(len(elems))]), nil
}

func randomPermutation(c *Call, list, perm engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	elems = slices.Clone(elems)
	c.In.rand().Shuffle(len(elems), func(i, j int) { elems[i], elems[j] = elems[j], elems[i] })
	return c.Unify(perm, engine.List(elems...)), nil
}

// setRandom takes seed(N) (an integer) or seed(random).
func setRandom(c *Call, opt engine.Term) (bool, error) {
	o, ok := c.Resolve(opt).(engine.Compound)
	if !ok || o.Functor() != engine.NewAtom("seed") || o.Arity() != 1 {
		if _, free := c.Resolve(opt).(engine.Variable); free {
			return false, InstantiationError()
		}
		return false, DomainError("set_random", opt)
	}
	var seed uint64
	switch v := c.Resolve(o.Arg(0)).(type) {
	case engine.Variable:
		return false, InstantiationError()
	case engine.Integer:
		seed = uint64(v)
	case engine.Atom:
		if v.String() != "random" {
			return false, DomainError("seed", v)
		}
		seed = rand.Uint64()
	default:
		return false, TypeError("integer", v)
	}
	c.In.rng = rand.New(rand.NewPCG(seed, seed))
	return true, nil
}

/* --- Time --- */

func (in *Interpreter) now() time.Time {
	if in.opts.Now != nil {
		return in.opts.Now()
	}
	return time.Now()
}

func getTime(c *Call, stamp engine.Term) (bool, error) {
	t := c.In.now()
	return c.Unify(stamp, engine.Float(float64(t.UnixNano())/1e9)), nil
}

// formatTime is format_time(+Out, +Format, +Stamp): Out as format/3 takes
// it, Stamp a time stamp (seconds since the epoch).
func formatTime(c *Call, out, format, stamp engine.Term) (bool, error) {
	f, err := c.Text(format)
	if err != nil {
		return false, err
	}
	secs, err := c.Number(stamp)
	if err != nil {
		return false, err
	}
	// A float stamp holds about microseconds; round to them.
	whole := math.Floor(secs)
	t := time.Unix(int64(whole), int64(math.Round((secs-whole)*1e6))*1e3).Local()
	s, err := strftime(f, t)
	if err != nil {
		return false, err
	}
	if sk, ok, err := sinkOf(c, out); err != nil {
		return false, err
	} else if ok {
		return sk.deliver(c, s), nil
	}
	return writeRaw(c, out, s)
}

// strftime formats t with the C library's directives that SWI-Prolog's
// format_time/3 documents (%c, %x and %X in the C locale's form); %f is
// microseconds, and %Nf gives N digits of the fraction.
func strftime(f string, t time.Time) (string, error) {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		width := 0
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			width = width*10 + int(f[i]-'0')
			i++
		}
		if i >= len(f) {
			return "", formatError("truncated format_time directive")
		}
		switch f[i] {
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'C':
			b.WriteString(pad2(t.Year() / 100))
		case 'd':
			b.WriteString(pad2(t.Day()))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'e':
			b.WriteString(t.Format("_2"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'f':
			if width == 0 {
				width = 6
			}
			ns := strconv.FormatInt(int64(t.Nanosecond())+1e9, 10)[1:]
			b.WriteString(ns[:min(width, 9)])
		case 'H':
			b.WriteString(pad2(t.Hour()))
		case 'I':
			b.WriteString(t.Format("03"))
		case 'j':
			b.WriteString(strconv.Itoa(t.YearDay() + 1000)[1:])
		case 'k':
			b.WriteString(fmt.Sprintf("%2d", t.Hour()))
		case 'm':
			b.WriteString(pad2(int(t.Month())))
		case 'M':
			b.WriteString(pad2(t.Minute()))
		case 'n':
			b.WriteByte('\n')
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'P':
			b.WriteString(strings.ToLower(t.Format("PM")))
		case 'r':
			b.WriteString(t.Format("03:04:05 PM"))
		case 'R':
			b.WriteString(t.Format("15:04"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'S':
			b.WriteString(pad2(t.Second()))
		case 't':
			b.WriteByte('\t')
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'u':
			b.WriteString(strconv.Itoa((int(t.Weekday())+6)%7 + 1))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'y':
			b.WriteString(t.Format("06"))
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case '%':
			b.WriteByte('%')
		default:
			return "", ExistenceError("format_time_character", engine.NewAtom(string(f[i])))
		}
	}
	return b.String(), nil
}

func pad2(n int) string {
	if n < 10 && n >= 0 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

/* --- current_predicate/1 --- */

// currentPredicate enumerates the user-defined predicates matching PI,
// whose name and arity may be unbound.
func currentPredicate(vm *engine.VM, pi engine.Term, k engine.Cont, env *engine.Env) *engine.Promise {
	switch p := env.Resolve(pi).(type) {
	case engine.Variable:
	case engine.Compound:
		if p.Functor() != atomSlash || p.Arity() != 2 {
			return engine.Error(engine.TypeError(engine.NewAtom("predicate_indicator"), pi, env))
		}
		switch n := env.Resolve(p.Arg(0)).(type) {
		case engine.Variable, engine.Atom:
		default:
			return engine.Error(engine.TypeError(engine.NewAtom("atom"), n, env))
		}
		switch a := env.Resolve(p.Arg(1)).(type) {
		case engine.Variable, engine.Integer:
		default:
			return engine.Error(engine.TypeError(engine.NewAtom("integer"), a, env))
		}
	default:
		return engine.Error(engine.TypeError(engine.NewAtom("predicate_indicator"), pi, env))
	}
	// The matches become this predicate's alternatives, in standard
	// order, so that a fully given indicator leaves no choice point.
	var found []engine.Term
	for _, p := range vm.Procedures() {
		if p.Kind != engine.ProcedureUser {
			continue
		}
		f := atomSlash.Apply(p.Name, engine.Integer(p.Arity))
		if env.Unifiable(pi, f) {
			found = append(found, f)
		}
	}
	slices.SortFunc(found, func(a, b engine.Term) int { return a.Compare(b, env) })
	ks := make([]func(context.Context) *engine.Promise, len(found))
	for i, f := range found {
		ks[i] = func(context.Context) *engine.Promise { return engine.Unify(vm, pi, f, k, env) }
	}
	return engine.Delay(ks...)
}
