package host_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/host"
	"github.com/rlmpl/rlmpl/prolog"
)

// runner is consulted before each suite. Suites define test(Name, Goal) and
// test(Name, Options, Goal) with options fails, throws(E) and det.
const runner = `
:- dynamic(test/2).
:- dynamic(test/3).
'$test_has'(X, L) :- once(member(X, L)).
'$test_goal'(N, [], G) :- test(N, G).
'$test_goal'(N, O, G) :- test(N, O0, G), '$test_opts'(O0, O).
'$test_opts'(O, O) :- O = [_|_].
'$test_opts'([], []).
'$test_opts'(O, [O]) :- O \= [], O \= [_|_].
'$test_names'(Ns) :- findall(N, '$test_goal'(N, _, _), Ns).
'$test_result'(O, G, R) :-
    (   '$test_has'(fails, O)
    ->  (   catch(G, E, true)
        ->  (   var(E) ->  R = succeeded ;   R = threw(E) )
        ;   R = ok
        )
    ;   '$test_has'(throws(X), O)
    ->  (   catch(G, E, true)
        ->  (   var(E) ->  R = no_exception
            ;   subsumes_term(X, E) ->  R = ok
            ;   R = wrong_exception(E)
            )
        ;   R = failed
        )
    ;   catch(G, E, true)
    ->  (   var(E) ->  R = ok ;   R = threw(E) )
    ;   R = failed
    ).
`

// TestLibSuites runs every testdata/lib/*_test.pl suite, each test(Name, …)
// as its own subtest, against a session loaded with lib/.
func TestLibSuites(t *testing.T) {
	files, err := filepath.Glob("../testdata/lib/*_test.pl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no suites found: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), "_test.pl"), func(t *testing.T) {
			runSuite(t, file)
		})
	}
}

func runSuite(t *testing.T, file string) {
	ctx := context.Background()
	// Suites read their fixtures (testdata/lib/fixtures) as a program reads
	// the files of its directory; persist(Name) stores live in a scratch
	// state directory.
	var out bytes.Buffer
	h, err := host.New(&host.Options{FS: os.DirFS(filepath.Dir(file)), StateDir: t.TempDir(), Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consult(ctx, "runner.pl", runner); err != nil {
		t.Fatal(err)
	}
	// Suites may interleave test/2 and test/3; the directives share line 1
	// so positions in syntax errors stay true.
	decl := ":- discontiguous(test/2). :- discontiguous(test/3). "
	if err := s.Consult(ctx, file, decl+string(src)); err != nil {
		t.Fatal(err)
	}
	in := s.Interpreter()
	runUnits(t, in, &out)
	bs, err := in.Once(ctx, `'$test_names'(Ns)`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := prolog.Value(bs[0].Value, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names.([]any) {
		name := string(n.(prolog.Atom))
		t.Run(name, func(t *testing.T) {
			qn := in.WriteQ(engine.NewAtom(name), nil)
			bs, err := in.Once(ctx, "'$test_goal'("+qn+", O, G), '$test_result'(O, G, R)")
			if err != nil {
				t.Fatalf("running: %v", err)
			}
			res := map[string]string{}
			for _, b := range bs {
				res[b.Name] = in.WriteQ(b.Value, nil)
			}
			if res["R"] != "ok" {
				t.Fatalf("%s: %s (goal %s)", name, res["R"], res["G"])
			}
			if strings.Contains(res["O"], "det") && !strings.Contains(res["O"], "nondet") {
				assertDet(t, in, qn)
			}
		})
	}
}

// runUnits runs the plunit units a suite defines (begin_tests/end_tests),
// each test as its own subtest through run_tests(Unit:Test), whose report
// is the failure message.
func runUnits(t *testing.T, in *prolog.Interpreter, out *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	bs, err := in.Once(ctx, `'$plunit_units'(Us), findall(U:N, (member(unit(U, _, Ts), Us), member(t(N, _), Ts)), Tests)`)
	if err != nil {
		t.Fatal(err)
	}
	var tests []engine.Term
	for _, b := range bs {
		if b.Name == "Tests" {
			it := engine.ListIterator{List: b.Value}
			for it.Next() {
				tests = append(tests, it.Current())
			}
		}
	}
	for _, tt := range tests {
		spec := in.WriteQ(tt, nil)
		t.Run(spec, func(t *testing.T) {
			out.Reset()
			if _, err := in.Once(ctx, "run_tests("+spec+")"); err != nil {
				t.Fatalf("%s: %v\n%s", spec, err, out.String())
			}
		})
	}
}

// assertDet asks for a second solution of a det test.
func assertDet(t *testing.T, in *prolog.Interpreter, qn string) {
	t.Helper()
	q, err := in.Query(context.Background(), "'$test_goal'("+qn+", _, G), call(G)")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if !q.Next() {
		t.Fatalf("det goal failed: %v", q.Err())
	}
	if q.Next() {
		t.Fatalf("det goal left a second solution")
	}
}
