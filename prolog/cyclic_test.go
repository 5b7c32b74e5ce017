package prolog_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestCyclicTermsAgreeWithSWI pins what the host makes of rational trees:
// SWI-Prolog's answer where the engine can follow, a Prolog error where it
// cannot; none of these may kill the process.
func TestCyclicTermsAgreeWithSWI(t *testing.T) {
	tests := []struct{ goal, want string }{
		{`X = f(X), catch(atom_length(X, _), error(E, _), true)`, "E = type_error(atom,f(...))"},
		{`X = f(X), findall(Y, member(Y, [X]), [Z]), (Z == X -> R = same ; R = other)`, "R = same"},
		{`X = f(X), Y = f(Y), (X = Y -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X), Y = f(f(Y)), (X == Y -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X, a), Y = f(Y, b), compare(O, X, Y)`, "O = <"},
		{`X = f(X), copy_term(X, Y), (Y = f(Y1), Y1 == Y -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X), catch(throw(X), B, true), (B = f(_) -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X), G = (fail ; X = f(_)), findall(x, G, L)`, "L = [x]"},
		{`X = f(X), forall(member(Y, [X]), Y == X), R = ok`, "R = ok"},
		{`X = f(X), \+ \+ memberchk(X, [X]), R = ok`, "R = ok"},
		{`X = f(X), msort([X, a], [A|_])`, "A = a"},
		{`X = f(X), catch(assertz(cyc(X)), error(E, _), true)`, "E = type_error(acyclic_term,cyc(f(...)))"},
		{`X = f(X), Y = f(f(Y)), sort([X, a, Y], L), length(L, N)`, "N = 2"},
		{`X = f(X), keysort([X-1, a-2], S), S = [K-_|_]`, "K = a"},
		{`X = f(X), Y = f(Y), (unify_with_occurs_check(X, Y) -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X, Y, Z), Y = g(X, Z, W), term_variables(X, Vs), (Vs == [Z, W] -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X), catch(nb_setval(k, X), error(E, _), true)`, "E = representation_error(cyclic_term)"},
		{`G = (G, true), catch(call(G), error(E, _), true)`, "E = representation_error(cyclic_term)"},
		{`X = f(X), copy_term(X, X), arg(1, X, X), R = ok`, "R = ok"},
		{`X = f(X), with_output_to(atom(A), write(X))`, "A = 'f(...)'"},
	}
	checkAnswers(t, "", tests)
}

// TestCyclicUnification is unification and comparison of two rational
// trees inside the engine (third_party/ichiban-prolog/PATCHES.md): =/2, a
// clause head that repeats a variable, builtins that unify a result with
// a cyclic argument, ==, compare/3. Each answer is SWI-Prolog's.
func TestCyclicUnification(t *testing.T) {
	// cyc(N, X): X is the cyclic list of period N whose elements are a,
	// so cyc(2, X) and cyc(3, Y) are equal rational trees, met again only
	// beyond the engine's cheap depth.
	const program = `
same(A, A).
cyc(N, X) :- length(L, N), maplist(=(a), L), append(L, X, X).
deep(0, x) :- !.
deep(N, f(T, b)) :- M is N - 1, deep(M, T).
`
	tests := []struct{ goal, want string }{
		{`X = f(X), Y = f(Y), X = Y, R = ok`, "R = ok"},
		{`X = f(X, a), Y = f(Y, b), (\+ X = Y -> R = yes ; R = no)`, "R = yes"},
		{`X = [a|X], Y = [a, a|Y], (X == Y -> R = yes ; R = no)`, "R = yes"},
		{`X = [a|X], Y = [a, a|Y], X = Y, R = ok`, "R = ok"},
		{`X = f(X), Y = f(f(Y)), (same(X, Y) -> R = yes ; R = no)`, "R = yes"},
		{`X = f(X, a), Y = f(Y, b), (same(X, Y) -> R = yes ; R = no)`, "R = no"},
		{`cyc(100, X), cyc(150, Y), (same(X, Y), X == Y -> R = yes ; R = no)`, "R = yes"},
		{`cyc(100, X), cyc(150, Y0), Y = [b|Y0], (X = Y -> R = yes ; R = no)`, "R = no"},
		{`cyc(200, X), cyc(300, Y), compare(O, X, Y)`, "O = ="},
		// Coprime periods: a million pairs of cells, 2,000 cells.
		{`cyc(999, X), cyc(1000, Y), X = Y, X == Y, same(X, Y), compare(O, X, Y)`, "O = ="},
		{`cyc(999, X), cyc(1000, Y0), Y = [b|Y0], compare(O, X, Y)`, "O = <"},
		{`X = [a|X], Y = [a, b|Y], compare(O, X, Y)`, "O = <"},
		{`X = f(X, b), Y = f(Y, a), compare(O, X, Y)`, "O = >"},
		{`X = f(X), copy_term(X, X), R = ok`, "R = ok"},
		{`X = f(X), Y = f(f(Y)), copy_term(X, Y), R = ok`, "R = ok"},
		{`X = f(X), arg(1, X, X), R = ok`, "R = ok"},
		{`X = f(X), Y = f(Y), findall(Y, true, [X]), R = ok`, "R = ok"},
		{`X = f(X, Z), Y = f(Y, 1), X = Y, R = Z`, "R = 1"},
		{`X = f(X), Y = f(Y), (X \== Y -> R = differ ; R = equal)`, "R = equal"},
		{`X = f(X), Y = f(Y), (unify_with_occurs_check(A, f(A)) -> R = yes ; R = no)`, "R = no"},
		{`deep(5000, X), deep(5000, Y), same(X, Y), X == Y, R = ok`, "R = ok"},
		// acyclic_term/1 panicked on a list (Go cannot compare slices)
		// and was quadratic in depth.
		{`(acyclic_term([a, b]) -> R = yes ; R = no)`, "R = yes"},
		{`X = [a|X], (acyclic_term(f(X)) -> R = yes ; R = no)`, "R = no"},
		{`length(L, 30000), (acyclic_term(g(L, L)) -> R = yes ; R = no)`, "R = yes"},
	}
	checkAnswers(t, program, tests)
}

// checkAnswers runs each goal (after consulting program) and compares the
// writeq of the bindings named in its want with want.
func checkAnswers(t *testing.T, program string, tests []struct{ goal, want string }) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.goal, func(t *testing.T) {
			in := newInterp(t, nil)
			if program != "" {
				if err := in.Consult(context.Background(), "test.pl", program); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			q, err := in.Query(ctx, tc.goal)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if !q.Next() {
				t.Fatalf("no answer: %v", q.Err())
			}
			var got []string
			for _, b := range q.Bindings() {
				if strings.Contains(tc.want, b.Name+" = ") {
					got = append(got, b.Name+" = "+in.WriteQ(b.Value, q.Env()))
				}
			}
			if g := strings.Join(got, ", "); g != tc.want {
				t.Errorf("got %s, want %s", g, tc.want)
			}
		})
	}
}

// TestCyclicArgumentsNeverCrash is the property behind issue 22: every
// predicate of an interpreter (ichiban's builtins, the host's, the
// prelude's), called with a cyclic term in each argument position,
// returns, fails or throws an error that can be caught and
// printed. A fatal stack overflow would kill the test binary; a builtin
// that spins past cancellation is reported by name.
func TestCyclicArgumentsNeverCrash(t *testing.T) {
	pis := fuzzedProcedures(t)
	cases := 0
	for _, pi := range pis {
		for _, goal := range cyclicCalls(pi) {
			cases++
			in := newInterp(t, &prolog.Options{Grace: 2 * time.Second})
			// A goal may run forever (append/3 on a cyclic list does in
			// SWI-Prolog too), but it must heed cancellation.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err := in.Once(ctx, goal)
			cancel()
			if errors.Is(err, prolog.ErrAbandoned) {
				t.Errorf("%s: did not heed cancellation", goal)
			}
		}
	}
	t.Logf("%d procedures, %d cyclic calls", len(pis), cases)
}

// skipped are the procedures no fuzz input calls.
var skipped = map[string]bool{
	"halt/0": true, "halt/1": true, // ends the query, by design
	"repeat/0": true, // no argument to be cyclic
}

// fuzzedProcedures lists the indicators of every procedure but the
// skipped ones.
func fuzzedProcedures(t testing.TB) []string {
	var pis []string
	for _, pi := range procedures(newInterp(t, nil)) {
		if !skipped[pi] {
			pis = append(pis, pi)
		}
	}
	if len(pis) < 200 {
		t.Fatalf("found %d procedures; the VM's layout changed?", len(pis))
	}
	return pis
}

// FuzzCyclicAndDeepArguments calls a procedure (chosen by pi) with, in
// argument position pos, a cyclic compound of period n, a cyclic list of
// period n, or a term n deep (by shape), catching and printing what it
// throws: the process must survive and the query heed cancellation. With
// pos's high bit set, the other arguments are a copy of that term (two
// rational trees for the engine to unify or compare).
func FuzzCyclicAndDeepArguments(f *testing.F) {
	f.Add(uint16(0), uint8(0), uint8(0), uint16(1))
	f.Add(uint16(40), uint8(1), uint8(1), uint16(3))
	f.Add(uint16(120), uint8(0), uint8(2), uint16(5000))
	f.Add(uint16(60), uint8(128), uint8(0), uint16(2))
	f.Add(uint16(90), uint8(129), uint8(1), uint16(70))
	pis := fuzzedProcedures(f)
	f.Fuzz(func(t *testing.T, pi uint16, pos, shape uint8, n uint16) {
		name, arity := splitPI(pis[int(pi)%len(pis)])
		if arity == 0 {
			return
		}
		n = n%5000 + 1
		build := [...]string{
			fmt.Sprintf("length(Fs, %d), foldl([_, A0, g(A0)]>>true, Fs, C, B), C = f(B)", n-1),
			fmt.Sprintf("length(L, %d), maplist(=(a), L), append(L, C, C)", n),
			fmt.Sprintf("length(Fs, %d), foldl([_, A0, f(A0, b)]>>true, Fs, x, C)", n),
		}[int(shape)%3]
		other := "_"
		if pos >= 128 {
			build += ", copy_term(C, D)"
			other = "D"
		}
		args := make([]string, arity)
		for j := range args {
			args[j] = other
		}
		args[int(pos&127)%arity] = "C"
		goal := fmt.Sprintf("%s, catch(%s(%s), E, format(atom(_), \"~p~q~w\", [E, E, E])) ; true", build, writeqAtom(name), strings.Join(args, ", "))
		in := newInterp(t, &prolog.Options{Grace: 2 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if _, err := in.Once(ctx, goal); errors.Is(err, prolog.ErrAbandoned) {
			t.Errorf("%s: did not heed cancellation", goal)
		}
	})
}

func splitPI(pi string) (string, int) {
	i := strings.LastIndex(pi, "/")
	var arity int
	fmt.Sscan(pi[i+1:], &arity)
	return pi[:i], arity
}

// cyclicCalls returns goals that call pi with a cyclic compound, then a
// cyclic list, in each argument position (the others unbound), and then
// with the cyclic term first and an equal one (another rational tree:
// D = f(f(D, a), a), D = [a, a|D]) in every other position, catching and
// printing whatever it throws.
func cyclicCalls(pi string) []string {
	name, arity := splitPI(pi)
	var goals []string
	for _, cyc := range []string{"C = f(C, a), D = f(f(D, a), a)", "C = [a|C], D = [a, a|D]"} {
		for pos := 0; pos <= max(arity, 1); pos++ {
			if pos == max(arity, 1) && arity < 2 {
				break
			}
			args := make([]string, arity)
			for j := range args {
				switch {
				case j == pos, pos == arity && j == 0:
					args[j] = "C"
				case pos == arity:
					args[j] = "D"
				default:
					args[j] = "_"
				}
			}
			call := writeqAtom(name)
			if arity > 0 {
				call += "(" + strings.Join(args, ", ") + ")"
			}
			goals = append(goals, fmt.Sprintf("%s, catch(%s, E, format(atom(_), \"~p~q~w\", [E, E, E])) ; true", cyc, call))
		}
	}
	return goals
}

func writeqAtom(name string) string {
	return prolog.New(nil).WriteQ(engine.NewAtom(name), nil)
}

// procedures lists the indicators of every procedure of in's VM, read
// from ichiban's unexported table (test-only reflection).
func procedures(in *prolog.Interpreter) []string {
	m := reflect.ValueOf(in.VM()).Elem().FieldByName("procedures")
	var pis []string
	for _, k := range m.MapKeys() {
		name := engine.Atom(k.FieldByName("name").Uint())
		pis = append(pis, fmt.Sprintf("%s/%d", name.String(), k.FieldByName("arity").Int()))
	}
	sort.Strings(pis)
	return pis
}

// TestCyclicListWrittenInLinearTime: a cyclic list of period n is written
// in time linear in n. The portrayer (texts written as text) walked the
// cycle once more for each element it met, 27 s for n = 4,965: the fuzz
// case testdata/fuzz/FuzzCyclicAndDeepArguments/cf5bdfa54e74e7d9, which
// did not heed cancellation. Linear is a ratio of 16 between n = 500 and
// n = 8,000, quadratic 256.
func TestCyclicListWrittenInLinearTime(t *testing.T) {
	in := newInterp(t, nil)
	// The work is counted in allocations, which do not depend on the
	// machine's load: a walk that copied its path or re-walked the cycle
	// would grow with the square of n.
	cost := func(n int) float64 {
		elems := make([]engine.Term, n)
		for i := range elems {
			elems[i] = engine.NewAtom("a")
		}
		l := engine.NewVariable()
		env, _ := (*engine.Env)(nil).Unify(l, engine.PartialList(l, elems...))
		return testing.AllocsPerRun(3, func() {
			if s := in.Write(l, env); !strings.HasSuffix(s, "|...]") {
				t.Fatalf("n = %d: wrote %.40s...", n, s)
			}
			in.Describe(l, env)
		})
	}
	small, large := cost(500), cost(8000)
	if ratio := large / small; ratio > 32 {
		t.Errorf("n = 500: %.0f allocations, n = 8000: %.0f (ratio %.0f; linear is 16)", small, large, ratio)
	}
}

// TestCyclicListPortrayed: the texts of a cyclic list are written as text
// in every element, the cycle closed where it comes round.
func TestCyclicListPortrayed(t *testing.T) {
	in := newInterp(t, nil)
	got, err := once(t, in, `X = [x, "ab"|Y], Y = ["cd", "ef"|Y], format(atom(A), "~p ~w", [X, Y])`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `'[x,"ab","cd","ef","cd"|...] [cd,ef,cd|...]'`; got["A"] != want {
		t.Errorf("got %s, want %s", got["A"], want)
	}
}

// TestRationalWalksCostNothingOnOrdinaryTerms: the engine's rational-tree
// unification and comparison remember nothing on a term that is neither
// deep nor long, so they allocate nothing there.
func TestRationalWalksCostNothingOnOrdinaryTerms(t *testing.T) {
	// Names of more than one letter: ichiban's Atom.String allocates for
	// the others, whatever the walk.
	f, g := engine.NewAtom("foo"), engine.NewAtom("goo")
	term := func() engine.Term {
		return f.Apply(engine.NewAtom("abc"), g.Apply(engine.Integer(1), g.Apply(engine.NewAtom("bcd"), engine.Integer(2))), engine.NewAtom("cde"))
	}
	x, y := term(), term()
	var env *engine.Env
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := env.Unify(x, y); !ok {
			t.Fatal("no unification")
		}
		if x.Compare(y, env) != 0 {
			t.Fatal("not equal")
		}
	}); n != 0 {
		t.Errorf("%v allocations per unification and comparison", n)
	}
}

// TestLongCyclicCulpritHeedsCancellation is the fuzz case cf5bdfa54e74e7d9
// by name (fuzz corpus entries name a procedure by its index, which moves
// as procedures are added): an error naming a cyclic list of period 4,965,
// printed three ways, ran 27 s past its deadline. The deadline leaves
// time to build the list (else cancellation comes first, and is heeded).
func TestLongCyclicCulpritHeedsCancellation(t *testing.T) {
	in := newInterp(t, &prolog.Options{Grace: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	goal := `length(L, 4965), maplist(=(a), L), append(L, C, C), catch(current_prolog_flag(C, _), E, format(atom(_), "~p~q~w", [E, E, E])) ; true`
	if _, err := in.Once(ctx, goal); errors.Is(err, prolog.ErrAbandoned) {
		t.Errorf("did not heed cancellation")
	}
}
