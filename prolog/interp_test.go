package prolog_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

func newInterp(t testing.TB, opts *prolog.Options) *prolog.Interpreter {
	t.Helper()
	return prolog.New(opts)
}

// once runs goal and returns its bindings rendered with writeq.
func once(t testing.TB, in *prolog.Interpreter, goal string) (map[string]string, error) {
	t.Helper()
	bs, err := in.Once(context.Background(), goal)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, b := range bs {
		m[b.Name] = in.WriteQ(b.Value, nil)
	}
	return m, nil
}

// thrown returns the writeq form of the exception goal raised.
func thrown(t testing.TB, in *prolog.Interpreter, goal string) string {
	t.Helper()
	_, err := in.Once(context.Background(), goal)
	var ex engine.Exception
	if !errors.As(err, &ex) {
		t.Fatalf("%s: err = %v, want an exception", goal, err)
	}
	return in.WriteQ(ex.Term(), nil)
}

func TestSyntaxErrorPositions(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"bad operator", "ok(1).\nfoo(X :- .\n", "f.pl:2:7: syntax error"},
		{"unterminated atom", "ok(1).\n\nfoo('abc).\n", "f.pl:3:5: syntax error: unterminated quoted atom"},
		{"unterminated comment", "ok. /* no end\n", "f.pl:1:5: syntax error: unterminated block comment"},
		{"after unicode", "a('é – ü').\nb(\n", "f.pl:2:"},
		{"missing end", "p(1).\np(2)", "f.pl:2:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := newInterp(t, nil)
			err := in.Consult(context.Background(), "f.pl", tc.src)
			var se *prolog.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Consult = %v, want *SyntaxError", err)
			}
			if !strings.HasPrefix(se.Error(), tc.want) {
				t.Fatalf("error = %q, want prefix %q", se.Error(), tc.want)
			}
		})
	}
}

func TestConsultLoadsNothingOnSyntaxError(t *testing.T) {
	in := newInterp(t, nil)
	_ = in.Consult(context.Background(), "f.pl", "p(1).\nq(.\n")
	if _, err := in.Once(context.Background(), "p(1)"); err == nil {
		t.Fatal("p/1 was loaded from a text with a syntax error")
	}
}

func TestUnicodeInQuotedAtoms(t *testing.T) {
	in := newInterp(t, nil)
	if err := in.Consult(context.Background(), "u.pl", "s('a – b “q” 👩‍💻 €').\n"); err != nil {
		t.Fatal(err)
	}
	got, err := once(t, in, "s(X), atom_length(X, N)")
	if err != nil {
		t.Fatal(err)
	}
	if got["N"] != "15" {
		t.Fatalf("atom_length = %s, want 15", got["N"])
	}
	// Goals get the same treatment.
	if _, err := once(t, in, "s('a – b “q” 👩‍💻 €')"); err != nil {
		t.Fatal(err)
	}
}

// TestEscapesInQuotedText: SWI's \uXXXX and \UXXXXXXXX escapes (which
// ichiban's lexer lacks) and ISO's \xHEX\ right before the closing quote.
func TestEscapesInQuotedText(t *testing.T) {
	in := newInterp(t, nil)
	for _, tc := range []struct{ goal, want string }{
		{`atom_chars(A, "\u00e9")`, "é"},
		{`atom_chars(A, "caf\u00E9 \U0001F469")`, "café 👩"},
		{`A = 'x\u2013y'`, "x–y"},
		{`atom_chars(A, "\x41\")`, "A"},
		{`A = '\x41\'`, "A"},
		{`atom_chars(A, "\\u0041")`, `\u0041`},
	} {
		bs, err := in.Once(context.Background(), tc.goal)
		if err != nil {
			t.Errorf("%s: %v", tc.goal, err)
			continue
		}
		if got := in.Write(bs[0].Value, nil); got != tc.want {
			t.Errorf("%s: A = %q, want %q", tc.goal, got, tc.want)
		}
	}
	if _, err := in.Once(context.Background(), `X = "\u00zz"`); err == nil {
		t.Error(`"\u00zz" read without error`)
	}
}

func TestHaltEndsQueryNotProcess(t *testing.T) {
	in := newInterp(t, nil)
	for _, goal := range []string{"halt(3)", "catch(halt(3), _, true)", "findall(X, (member(X, [1,2]), halt(3)), _)"} {
		_, err := in.Once(context.Background(), goal)
		var he *prolog.HaltError
		if !errors.As(err, &he) || he.Code != 3 {
			t.Fatalf("%s: err = %v, want halt(3)", goal, err)
		}
	}
	_, err := in.Once(context.Background(), "halt")
	var he *prolog.HaltError
	if !errors.As(err, &he) || he.Code != 0 {
		t.Fatalf("halt: err = %v, want halt(0)", err)
	}
	// The interpreter stays usable.
	if _, err := once(t, in, "true"); err != nil {
		t.Fatal(err)
	}
}

func TestOpenIsConfinedToFS(t *testing.T) {
	fsys := fstest.MapFS{"data.txt": {Data: []byte("hello")}}
	in := newInterp(t, &prolog.Options{FS: fsys})
	got, err := once(t, in, "open('data.txt', read, S), get_char(S, C), close(S)")
	if err != nil {
		t.Fatal(err)
	}
	if got["C"] != "h" {
		t.Fatalf("C = %s", got["C"])
	}
	for goal, want := range map[string]string{
		"open('/etc/hostname', read, _)": "error(existence_error(source_sink,'/etc/hostname'),open/4)",
		"open('out.txt', write, _)":      "error(permission_error(open,source_sink,'out.txt'),open/4)",
		"open(F, read, _)":               "error(instantiation_error,open/4)",
		"open(f(x), read, _)":            "error(type_error(atom,f(x)),open/4)",
	} {
		if got := thrown(t, in, goal); got != want {
			t.Errorf("%s threw %s, want %s", goal, got, want)
		}
	}
}

func TestArgvFlag(t *testing.T) {
	in := newInterp(t, &prolog.Options{Argv: []string{"prog", "a b"}})
	got, err := once(t, in, "current_prolog_flag(argv, A)")
	if err != nil {
		t.Fatal(err)
	}
	if got["A"] != "[prog,'a b']" {
		t.Fatalf("argv = %s", got["A"])
	}
	if _, err := once(t, in, "findall(F, current_prolog_flag(F, _), Fs), member(argv, Fs), member(double_quotes, Fs), !"); err != nil {
		t.Fatal(err)
	}
	if got, _ := once(t, in, "current_prolog_flag(double_quotes, D), current_prolog_flag(unknown, U)"); got["D"] != "chars" || got["U"] != "error" {
		t.Fatalf("flags = %v, want double_quotes=chars, unknown=error", got)
	}
}

func TestInitializationMain(t *testing.T) {
	var out bytes.Buffer
	in := newInterp(t, &prolog.Options{Stdout: &out})
	src := ":- initialization(main, main).\nmain :- write(hi), nl.\n"
	if err := in.Consult(context.Background(), "m.pl", src); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatal("main ran during consult")
	}
	if err := in.RunMain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "hi\n" {
		t.Fatalf("output %q", out.String())
	}
}

func TestCancellationStopsGoal(t *testing.T) {
	in := newInterp(t, nil)
	if err := in.Consult(context.Background(), "l.pl", "loop :- loop.\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := in.Once(ctx, "catch(loop, _, true)")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if _, err := once(t, in, "true"); err != nil {
		t.Fatalf("interpreter unusable after cancel: %v", err)
	}
}

// TestWatchdogAbandonsStuckBuiltin: a builtin that ignores its context
// (here one blocked until the test ends); the query must still return.
func TestWatchdogAbandonsStuckBuiltin(t *testing.T) {
	in := newInterp(t, &prolog.Options{Grace: 50 * time.Millisecond})
	release := make(chan struct{})
	defer close(release)
	in.Install(prolog.Pred0("stuck", "stuck is det", func(*prolog.Call) (bool, error) {
		<-release
		return true, nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := in.Once(ctx, "stuck")
	if !errors.Is(err, prolog.ErrAbandoned) {
		t.Fatalf("err = %v, want ErrAbandoned", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if _, err := in.Once(context.Background(), "true"); !errors.Is(err, prolog.ErrAbandoned) {
		t.Fatalf("abandoned interpreter answered: %v", err)
	}
}

func TestForeignPredicates(t *testing.T) {
	in := newInterp(t, nil)
	in.Install(
		prolog.Pred2("double", "double(+N, -M) is det", func(c *prolog.Call, n, m engine.Term) (bool, error) {
			v, err := c.Int(n)
			if err != nil {
				return false, err
			}
			return c.Unify(m, engine.Integer(2*v)), nil
		}),
		prolog.Pred1("boom", "boom(+X) is det", func(c *prolog.Call, x engine.Term) (bool, error) {
			var m map[string]int
			m["x"] = 1
			return true, nil
		}),
		prolog.Pred1("fails_go", "fails_go(+X) is semidet", func(c *prolog.Call, x engine.Term) (bool, error) {
			return false, nil
		}),
		prolog.Pred1("go_error", "go_error(+X) is det", func(c *prolog.Call, x engine.Term) (bool, error) {
			return false, errors.New("disk on fire")
		}),
		prolog.Pred2("text_len", "text_len(+Text, -N) is det", func(c *prolog.Call, t, n engine.Term) (bool, error) {
			s, err := c.Text(t)
			if err != nil {
				return false, err
			}
			return c.Unify(n, engine.Integer(len([]rune(s)))), nil
		}),
	)
	if got, err := once(t, in, "double(21, X)"); err != nil || got["X"] != "42" {
		t.Fatalf("double = %v, %v", got, err)
	}
	if _, err := once(t, in, "fails_go(1)"); !errors.Is(err, prolog.ErrNoSolution) {
		t.Fatalf("fails_go: %v", err)
	}
	for goal, want := range map[string]string{
		"double(X, _)":        "error(instantiation_error,double/2)",
		"double(abc, _)":      "error(type_error(integer,abc),double/2)",
		"boom(1)":             "error(system_error,context(boom/1,'assignment to entry in nil map'))",
		"go_error(1)":         "error(rlm_error(internal,'disk on fire'),go_error/1)",
		"text_len(f(x), _)":   "error(type_error(text,f(x)),text_len/2)",
		"text_len([a|_], _)":  "error(instantiation_error,text_len/2)",
		"text_len([a,bc], _)": "error(type_error(text,[a,bc]),text_len/2)",
		"catch(boom(1), E, (E = error(system_error, _), throw(caught)))": "caught",
	} {
		if got := thrown(t, in, goal); got != want {
			t.Errorf("%s threw %s, want %s", goal, got, want)
		}
	}
	for _, text := range []string{"abc", "'abc'", "[a,b,c]", "[97,98,99]", `"abc"`} {
		if got, err := once(t, in, "text_len("+text+", N)"); err != nil || got["N"] != "3" {
			t.Errorf("text_len(%s) = %v, %v", text, got, err)
		}
	}
}

func TestInstallPanicsOnDuplicate(t *testing.T) {
	in := newInterp(t, nil)
	d := prolog.Pred0("dup", "dup is det", func(c *prolog.Call) (bool, error) { return true, nil })
	in.Install(d)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "duplicate predicate dup/0") {
			t.Fatalf("recover = %v", r)
		}
	}()
	in.Install(d)
}

func TestUnknownPredicateIsExistenceError(t *testing.T) {
	in := newInterp(t, nil)
	if got := thrown(t, in, "nope(1)"); !strings.HasPrefix(got, "error(existence_error(procedure,nope/1)") {
		t.Fatalf("threw %s", got)
	}
	if msg := prolog.Message(in, mustException(t, in, "nope(1)")); msg != "Unknown procedure: nope/1" {
		t.Fatalf("message %q", msg)
	}
}

func mustException(t *testing.T, in *prolog.Interpreter, goal string) engine.Term {
	_, err := in.Once(context.Background(), goal)
	var ex engine.Exception
	if !errors.As(err, &ex) {
		t.Fatalf("%s: %v", goal, err)
	}
	return ex.Term()
}

func TestMessages(t *testing.T) {
	in := newInterp(t, nil)
	for goal, want := range map[string]string{
		"atom_length(X, _)":    "atom_length/2: Arguments are not sufficiently instantiated",
		"atom_length(f, a)":    "atom_length/2: Type error: `integer' expected, found `a' (an atom)",
		"X is 1/0":             "is/2: Arithmetic: evaluation error: zero_divisor",
		"throw(my_ball)":       "Unknown message: my_ball",
		"atom_length(abc, -1)": "atom_length/2: Domain error: `not_less_than_zero' expected, found `-1'",
	} {
		if got := prolog.Message(in, mustException(t, in, goal)); got != want {
			t.Errorf("%s: %q, want %q", goal, got, want)
		}
	}
}

func TestQueryBindingsAndBacktracking(t *testing.T) {
	in := newInterp(t, nil)
	q, err := in.Query(context.Background(), "member(X-Y, [1-a, 2-b]), _Hidden = X")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var got []string
	for q.Next() {
		var parts []string
		for _, b := range q.Bindings() {
			parts = append(parts, b.Name+"="+in.WriteQ(b.Value, nil))
		}
		got = append(got, strings.Join(parts, ","))
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ";") != "X=1,Y=a;X=2,Y=b" {
		t.Fatalf("solutions %q", got)
	}
}

func TestQuerySyntaxError(t *testing.T) {
	in := newInterp(t, nil)
	_, err := in.Query(context.Background(), "foo(a, ")
	var se *prolog.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v", err)
	}
}

// TestNoGoroutineLeak: closed queries leave nothing running.
func TestNoGoroutineLeak(t *testing.T) {
	in := newInterp(t, nil)
	before := runtime.NumGoroutine()
	for range 50 {
		q, err := in.Query(context.Background(), "repeat")
		if err != nil {
			t.Fatal(err)
		}
		q.Next()
		q.Close()
		_, _ = in.Once(context.Background(), "member(_, [1,2,3])")
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("goroutines %d > %d before", n, before)
	}
}

func TestToTermValueRoundTrip(t *testing.T) {
	big1 := new(big.Int).SetInt64(-9223372036854775808)
	tooBig, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	values := []any{
		"text with ünïcode – ok",
		prolog.Atom("an atom"),
		int64(-42),
		int64(9223372036854775807),
		3.25,
		[]any{int64(1), prolog.Atom("b"), "cd"},
		prolog.Record{Tag: "msg", Fields: []prolog.Field{{Key: "role", Value: prolog.Atom("user")}, {Key: "content", Value: "hi"}}},
		prolog.Compound{Functor: "f", Args: []any{int64(1), []any{}}},
	}
	for _, v := range values {
		term, err := prolog.ToTerm(v)
		if err != nil {
			t.Fatalf("ToTerm(%v): %v", v, err)
		}
		back, err := prolog.Value(term, nil)
		if err != nil {
			t.Fatalf("Value: %v", err)
		}
		if !equalValue(v, back) {
			t.Errorf("round trip %#v -> %#v", v, back)
		}
	}
	if term, err := prolog.ToTerm(big1); err != nil || term != engine.Integer(-9223372036854775808) {
		t.Errorf("big min int: %v %v", term, err)
	}
	// An integer beyond int64 is a big integer, and comes back exact.
	term, err := prolog.ToTerm(tooBig)
	if err != nil {
		t.Fatalf("ToTerm(%v): %v", tooBig, err)
	}
	if back, err := prolog.Value(term, nil); err != nil || back.(*big.Int).Cmp(tooBig) != 0 {
		t.Errorf("big round trip: %v %v", back, err)
	}
}

// TestOperatorAtomsAsOperands: a quoted atom that is a prefix operator
// reads as an atom where an operand ends (SWI-Prolog reads these; ichiban's
// parser alone rejects them).
func TestOperatorAtomsAsOperands(t *testing.T) {
	in := newInterp(t, nil)
	for _, tc := range []struct{ goal, want string }{
		{`X = '-', with_output_to(atom(A), write(X))`, "-"},
		{`X = '\\+', atom(X), A = X`, `\+`},
		{`L = ['-', '+'|'*'], format(atom(A), "~q", [L])`, "'[-,+|*]'"},
		{`T = f('-', '-'), format(atom(A), "~q", [T])`, "'f(-,-)'"},
		{`X = {'-'}, format(atom(A), "~q", [X])`, "'{-}'"},
		{`X = a - b, format(atom(A), "~q", [X])`, "'a-b'"},
	} {
		bs, err := once(t, in, tc.goal)
		if err != nil {
			t.Errorf("%s: %v", tc.goal, err)
			continue
		}
		if bs["A"] != tc.want {
			t.Errorf("%s: A = %s, want %s", tc.goal, bs["A"], tc.want)
		}
	}
}
