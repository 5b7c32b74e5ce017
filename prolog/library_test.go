package prolog_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
)

// TestLibrary: the answers are SWI-Prolog 9.0.4's for the same goals
// (swipl, TZ=UTC), but where the dialect differs: "" is [] (the empty
// text), string([]) is true, and setup_call_cleanup/3 commits to the
// goal's first solution, so its cleanup has run when it exits.
func TestLibrary(t *testing.T) {
	runCases(t, []solveCase{
		{`sub_string("hello world", B, 5, A, R)`, `"hello"`},
		{`findall(S, sub_string("abc", _, 2, _, S), R)`, `["ab","bc"]`},
		{`findall(B-L, sub_string("abab", B, L, _, "ab"), R)`, `[0-2,2-2]`},
		{`sub_string("abc", 1, L, 0, R)`, `"bc"`},
		{`findall(S, sub_string("ab", _, _, _, S), R)`, `[[],"a","ab",[],"b",[]]`},
		{`findall(S, sub_string(héé, _, 1, _, S), R)`, `["h","é","é"]`},
		{`sub_string("abc", 4, _, _, _)`, "false"},
		{`sub_string(X, _, _, _, _)`, "throws: error(instantiation_error,sub_string/5)"},
		{`sub_string("a", -1, _, _, _)`, "throws: error(domain_error(not_less_than_zero,-1),sub_string/5)"},
		{`findall(S, sub_atom(abc, _, 2, _, S), R)`, `[ab,bc]`},
		{`sub_atom(hello, 1, 3, _, R)`, `ell`},
		{`findall(B, sub_atom(abab, B, _, _, ab), R)`, `[0,2]`},
		{`sub_atom("abc", 0, 1, _, R)`, `a`},
		{`sub_atom(X, _, _, _, _)`, "throws: error(instantiation_error,sub_atom/5)"},
		{`atom_length("hello", R)`, `5`},
		{`atom_length(abc, foo)`, "throws: error(type_error(integer,foo),atom_length/2)"},
		{`atom_concat("ab", "cd", R)`, `abcd`},
		{`atom_concat(ab, R, abcd)`, `cd`},
		{`findall(X+Y, atom_concat(X, Y, ab), R)`, `[''+ab,a+b,ab+'']`},
		{`atom_concat(_, _, _)`, "throws: error(instantiation_error,atom_concat/3)"},
		{`atom_codes(R, "hi")`, `hi`},
		{`atom_codes(hi, R)`, `[104,105]`},
		{`number_codes(R, " 42")`, `42`},
		{`number_codes(_, "4x")`, "throws: error(syntax_error(illegal_number),number_codes/2)"},
		{`text_to_string(hello, R)`, `"hello"`},
		{`findall(X, between(1, 3, X), R)`, `[1,2,3]`},
		{`between(1, inf, 5)`, "true"},
		{`between(1, infinite, X), X > 2, R = X`, `3`},
		{`findall(X, between(3, 1, X), R)`, `[]`},
		{`between(1, foo, _)`, "throws: error(type_error(integer,foo),between/3)"},
		{`between(_, 3, _)`, "throws: error(instantiation_error,between/3)"},
		{`union([a,b,c], [b,d], R)`, `[a,c,b,d]`},
		{`intersection([a,b,c,a], [a,c], R)`, `[a,c,a]`},
		{`text_concat(abc, def, R)`, `abcdef`},
		{`text_concat("ab", cd, R)`, `"abcd"`},
		{`findall(X+Y, text_concat(X, Y, ab), R)`, `[''+ab,a+b,ab+'']`},
		{`string_code(2, "abc", R)`, `98`},
		{`findall(I-C, string_code(I, "ab", C), R)`, `[1-97,2-98]`},
		{`string("abc")`, "true"},
		{`string([])`, "true"},
		{`string(abc)`, "false"},
		{`transpose_pairs([a-2, b-1, c-2], R)`, `[1-b,2-a,2-c]`},
		{`map_list_to_pairs(atom_length, [ab, c], R)`, `[2-ab,1-c]`},
		{`group_pairs_by_key([a-1, a-2, b-3, a-4], R)`, `[a-[1,2],b-[3],a-[4]]`},
		{`list_to_assoc([b-2, a-1, c-3], A), get_assoc(b, A, R)`, `2`},
		{`list_to_assoc([b-2, a-1, c-3], A), assoc_to_list(A, R)`, `[a-1,b-2,c-3]`},
		{`list_to_assoc([b-2, a-1], A), put_assoc(c, A, 3, A2), assoc_to_keys(A2, R)`, `[a,b,c]`},
		{`empty_assoc(E), put_assoc(x, E, 1, A), put_assoc(x, A, 2, A2), assoc_to_values(A2, R)`, `[2]`},
		{`list_to_assoc([a-1, a-2], _)`, "throws: error(domain_error(unique_key_pairs,[a-1,a-2]),list_to_assoc/2)"},
		{`numlist(1, 100, L), findall(K-K, member(K, L), Ps), list_to_assoc(Ps, A), get_assoc(57, A, R)`, `57`},
		{`empty_assoc(E0), foldl([K,A0,A1]>>put_assoc(K, A0, K, A1), [5,3,8,1,4,7,9,2,6], E0, A), assoc_to_keys(A, R)`, `[1,2,3,4,5,6,7,8,9]`},
		{`list_to_assoc([a-1,b-2,c-3], A), max_assoc(A, K, V), R = K-V`, `c-3`},
		{`list_to_assoc([a-1,b-2,c-3], A), min_assoc(A, K, V), R = K-V`, `a-1`},
		{`list_to_assoc([a-1,b-2], A), map_assoc([X,Y]>>(Y is X*10), A, A2), assoc_to_list(A2, R)`, `[a-10,b-20]`},
		{`get_assoc(a, t, _)`, "false"},
		{`get_assoc(a, foo, _)`, "throws: error(type_error(assoc,foo),get_assoc/3)"},
		{`nth0(1, [a,b,c], E, R)`, `[a,c]`},
		{`nth1(1, [a,b,c], E, R)`, `[b,c]`},
		{`findall(N-E, nth0(N, [a,b], E, _), R)`, `[0-a,1-b]`},
		{`nth0(I, L, x, [a,b]), R = L`, `[x,a,b]`},
		{`select(b, [a,b,c], x, R)`, `[a,x,c]`},
		{`list_to_ord_set([c,a,b,a], R)`, `[a,b,c]`},
		{`ord_union([a,c], [b,d], R)`, `[a,b,c,d]`},
		{`ord_subtract([a,b,c,d], [b,d], R)`, `[a,c]`},
		{`ord_memberchk(b, [a,b,c])`, "true"},
		{`ord_memberchk(x, [a,b,c])`, "false"},
		{`numbervars(f(X,Y,X), 0, E), R = E`, `2`},
		{`setup_call_cleanup(true, member(X, [1,2]), nb_setval(done, yes)), nb_getval(done, R)`, `yes`},
		{`catch(setup_call_cleanup(true, throw(oops), nb_setval(c2, yes)), E, true), nb_getval(c2, R1), R2 = E`, `yes oops`},
		{`setup_call_cleanup(true, fail, nb_setval(c3, yes)) ; nb_getval(c3, R)`, `yes`},
		{`call_cleanup(true, nb_setval(c4, yes)), nb_getval(c4, R)`, `yes`},
		{`nb_setval(k1, 1), nb_current(k1, R)`, `1`},
		{`current_predicate(foldl/N), R = N`, `4`},
		{`findall(N, current_predicate(foldl/N), R)`, `[4,5,6]`},
		{`current_predicate(no_such_pred/_)`, "false"},
		{`current_predicate(1)`, "throws: error(type_error(predicate_indicator,1),current_predicate/1)"},
		{`with_output_to(atom(R), writeln("a b"))`, `'a b\n'`},
		{`random_between(1, 1, R)`, `1`},
		{`random_between(2, 1, R)`, "false"},
		{`set_random(seed(7)), random_between(1, 1000000, X), set_random(seed(7)), random_between(1, 1000000, Y), (X == Y -> R = same ; R = X-Y)`, `same`},
		{`random_member(X, [a]), R = X`, `a`},
		{`random_permutation([a,b,c], P), msort(P, R)`, `[a,b,c]`},
		{`random(X), (X >= 0.0, X < 1.0 -> R = ok ; R = X)`, `ok`},
	})
}

// TestTime: get_time/1 reads Options.Now; format_time/3 formats stamps in
// the local time zone with strftime directives.
func TestTime(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
	in := prolog.New(&prolog.Options{Now: func() time.Time { return now }})
	local := now.Local()
	for _, tc := range []struct{ goal, want string }{
		{"get_time(R)", fmt.Sprint(float64(now.UnixNano()) / 1e9)},
		{"get_time(T), format_time(atom(R), '%Y-%m-%dT%H:%M:%S', T)", "'" + local.Format("2006-01-02T15:04:05") + "'"},
		{"get_time(T), format_time(atom(R), '%F %T.%3f %a %b %e %j %%', T)", "'" + local.Format("2006-01-02 15:04:05.890 Mon Jan _2 002 %") + "'"},
		{"format_time(string(R), '%s', 86400)", `"86400"`},
		{"format_time(atom(R), '%Q', 0)", "throws: error(existence_error(format_time_character,'Q'),format_time/3)"},
	} {
		if got := solve(t, in, tc.goal); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.goal, got, tc.want)
		}
	}
}

// TestAssocIsAVL inserts 2000 keys in random order and checks every
// node's balance mark against its subtrees' heights, and the key order.
func TestAssocIsAVL(t *testing.T) {
	in := prolog.New(&prolog.Options{Seed: 3})
	bs, err := in.Once(context.Background(), `numlist(1, 2000, L), random_permutation(L, P),
		empty_assoc(E), foldl([K,A0,A]>>put_assoc(K, A0, v(K), A), P, E, T),
		findall(K-v(K), member(K, P), Ps), list_to_assoc(Ps, T2)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Name != "T" && b.Name != "T2" {
			continue
		}
		var keys []int64
		var height func(t engine.Term) int
		height = func(n engine.Term) int {
			c, ok := n.(engine.Compound)
			if !ok {
				return 0
			}
			hl, hr := height(c.Arg(3)), height(c.Arg(4))
			want := map[int]string{-1: "<", 0: "=", 1: ">"}[hl-hr]
			if got := in.Write(c.Arg(2), nil); got != want {
				t.Fatalf("%s: node %s has balance %s, subtrees %d and %d high", b.Name, in.Write(c.Arg(0), nil), got, hl, hr)
			}
			keys = append(keys, int64(c.Arg(0).(engine.Integer)))
			return 1 + max(hl, hr)
		}
		// In-order: collect by walking left, node, right.
		var walk func(n engine.Term)
		var inorder []int64
		walk = func(n engine.Term) {
			if c, ok := n.(engine.Compound); ok {
				walk(c.Arg(3))
				inorder = append(inorder, int64(c.Arg(0).(engine.Integer)))
				walk(c.Arg(4))
			}
		}
		h := height(b.Value)
		walk(b.Value)
		if len(keys) != 2000 || h > 16 {
			t.Fatalf("%s: %d keys, height %d", b.Name, len(keys), h)
		}
		for i, k := range inorder {
			if k != int64(i+1) {
				t.Fatalf("%s: key %d at position %d", b.Name, k, i)
			}
		}
	}
}

// TestPrintMessage: message//1 hooks, the default texts, kinds.
func TestPrintMessage(t *testing.T) {
	var out, errOut bytes.Buffer
	in := prolog.New(&prolog.Options{Stdout: &out, Stderr: &errOut})
	if err := in.Consult(context.Background(), "m.pl", "message(hello(X)) --> ['Hello, ~w!'-[X], nl, 'Bye'].\n"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{
		"print_message(error, hello(world))",
		"print_message(warning, foo(1))",
		"print_message(informational, hello(x))",
		"print_message(silent, hello(x))",
		"catch(atom_length(_, _), E, print_message(error, E))",
		`print_message(warning, format("~w left", [3]))`,
	} {
		if got := solve(t, in, g); got != "true" {
			t.Fatalf("%s: %s", g, got)
		}
	}
	want := "ERROR: Hello, world!\nERROR: Bye\nWarning: Unknown message: foo(1)\n% Hello, x!\n% Bye\n" +
		"ERROR: atom_length/2: Arguments are not sufficiently instantiated\nWarning: 3 left\n"
	if errOut.String() != want || out.Len() != 0 {
		t.Errorf("stderr:\n%s\nwant:\n%s\nstdout: %q", errOut.String(), want, out.String())
	}
	// A record that carries its message (an rlmpl error reason, bare or in
	// its error(Reason) outcome) reads as one line, not "Unknown message".
	for _, g := range []string{
		`message_to_codes(error(conversation_error([kind(not_found), message("no conversation x")])), error, C), atom_codes(R, C)`,
		`message_to_codes(conversation_error([message("no conversation x"), detail(f(y))]), error, C), atom_codes(R, C)`,
	} {
		if got := solve(t, in, g); got != "'conversation_error: no conversation x'" {
			t.Errorf("%s = %s", g, got)
		}
	}
	if got := solve(t, in, "message_to_codes(hello(x), error, C), atom_codes(R, C)"); got != `'Hello, x!\nBye'` {
		t.Errorf("message_to_codes: %s", got)
	}
	if got := solve(t, in, "sleep(0.001), catch((sleep(a), fail), error(type_error(number, a), _), true)"); got != "true" {
		t.Errorf("sleep: %s", got)
	}
	if got := solve(t, in, "print_message(bogus, x)"); got != "throws: error(domain_error(message_kind,bogus),print_message/2)" {
		t.Errorf("bad kind: %s", got)
	}
}

// TestReadLine: SWI's read_line_to_string/2 and read_line_to_codes/2, a
// \r\n line end included, then the end of the input.
func TestReadLine(t *testing.T) {
	in := prolog.New(&prolog.Options{Stdin: strings.NewReader("hello world\r\nab\nlast")})
	goal := `read_line_to_string(user_input, A), read_line_to_codes(user_input, B), read_line_to_string(user_input, C),
		read_line_to_string(user_input, D), read_line_to_codes(user_input, E), R = [A, B, C, D, E]`
	if got, want := solve(t, in, goal), `["hello world",[97,98],"last",end_of_file,-1]`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got := solve(t, in, "read_line_to_string(nowhere, _)"); got != "throws: error(existence_error(stream,nowhere),read_line_to_string/2)" {
		t.Errorf("unknown alias: %s", got)
	}
}
