package prolog_test

import (
	"context"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestAnswer: answers as SWI-Prolog 9.0.4's top level prints them (checked
// with swipl), but for text, which is a chars list here.
func TestAnswer(t *testing.T) {
	in := prolog.New(nil)
	for _, tc := range []struct{ goal, want string }{
		{"X = 1", "X = 1"},
		{"Y is 2+2", "Y = 4"},
		{"true", "true"},
		{"X = X", "true"},
		{"X = f(Y,Y)", "X = f(Y, Y)"},
		{"X = Y", "X = Y"},
		{"X = Y, Y = Z", "X = Y, Y = Z"},
		{"X = f(a), Y = f(a)", "X = Y, Y = f(a)"},
		{"X = 1, Y = 1", "X = Y, Y = 1"},
		{"X = 1, Y = 2", "X = 1,\nY = 2"},
		{"X = f(Y), Y = Z", "X = f(Z),\nY = Z"},
		{"X = g(Z), Y = Z", "X = g(Y),\nZ = Y"},
		{"X = f(_A), _A = 1", "X = f(1),\n_A = 1"},
		{"X = f(_,_)", "X = f(_, _)"},
		{"length(L, 2)", "L = [_, _]"},
		{"length(L, 3), L = [A|_]", "L = [A, _, _]"},
		{"copy_term(f(A,A,B), C)", "C = f(_A, _A, _)"},
		{`X = "abc"`, `X = "abc"`},
		{`X = "a,b"`, `X = "a,b"`},
		{`X = 'a,b'`, `X = 'a,b'`},
		{"X = [a,b]", "X = [a, b]"},
		{"X = (a,b)", "X = (a, b)"},
		{"X = [1,2|T]", "X = [1, 2|T]"},
		{"X = (a:-b,c;d)", "X = (a:-b, c;d)"},
		{"X = 1-(-1)", "X = 1- -1"},
		{"X = f(-1)", "X = f(-1)"},
		{"X = - a", "X = -a"},
		{"X = 'hello world'", "X = 'hello world'"},
		{"X = [f(x), \"s\"]", `X = [f(x), "s"]`},
		{"X = (-)", "X = (-)"},
		// Braces and abbreviation at depth 10 (SWI's max_depth(10)), as
		// swipl 9.0.4 prints them.
		{"X = {a,b}", "X = {a, b}"},
		{"X = {(a:-b),c}", "X = {(a:-b), c}"},
		{"numlist(1, 12, X)", "X = [1, 2, 3, 4, 5, 6, 7, 8, 9|...]"},
		{"numlist(1, 9, X)", "X = [1, 2, 3, 4, 5, 6, 7, 8, 9]"},
		{"X = [[1,2,3,4,5,6,7,8,9,10]]", "X = [[1, 2, 3, 4, 5, 6, 7, 8|...]]"},
		{"X = f(f(f(f(f(f(f(f(f(f(f(a)))))))))))", "X = f(f(f(f(f(f(f(f(f(f(...))))))))))"},
		{"X = [a,b|T], T = [c|_]", "X = [a, b, c|_A],\nT = [c|_A]"},
		{"X = f(Y), Y = [A,A,A,A,A,A,A,A,A,A,A,A]", "X = f([A, A, A, A, A, A, A, A|...]),\nY = [A, A, A, A, A, A, A, A, A|...]"},
	} {
		t.Run(tc.goal, func(t *testing.T) {
			q, err := in.Query(context.Background(), tc.goal)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if !q.Next() {
				t.Fatalf("no solution: %v", q.Err())
			}
			if got := q.Answer(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestFullAnswer: FullAnswer writes what Answer abbreviates.
func TestFullAnswer(t *testing.T) {
	in := prolog.New(nil)
	q, err := in.Query(context.Background(), "numlist(1, 12, X)")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if !q.Next() {
		t.Fatalf("no solution: %v", q.Err())
	}
	if got, want := q.FullAnswer(), "X = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
