package prolog_test

import "testing"

// TestSWIBuiltins: the answers are SWI-Prolog 9's for the same goals,
// except that strings are chars lists and term_hash/2's numbers are ours.
func TestSWIBuiltins(t *testing.T) {
	runCases(t, []solveCase{
		{`atomics_to_string([a, 1, "bc", 2.5], R)`, `"a1bc2.5"`},
		{`atomics_to_string([], R)`, `[]`},
		{`atomics_to_string([a, b], ", ", R)`, `"a, b"`},
		{`atomics_to_string([a, _], R)`, "throws: error(instantiation_error,atomics_to_string/2)"},
		{`atomics_to_string([f(x)], R)`, "throws: error(type_error(text,f(x)),atomics_to_string/2)"},
		{`string_bytes("héllo", R, utf8)`, `[104,195,169,108,108,111]`},
		{`string_bytes(R, [104,195,169], utf8)`, `"hé"`},
		{`string_bytes(abc, R, ascii)`, `[97,98,99]`},
		{`string_bytes("é", R, iso_latin_1)`, `[233]`},
		{`string_bytes(R, [233], octet)`, `"é"`},
		{`string_bytes("é", _, ascii)`, "throws: error(representation_error(encoding),string_bytes/3)"},
		{`string_bytes(_, [255], utf8)`, "throws: error(syntax_error(illegal_utf8),string_bytes/3)"},
		{`string_bytes(_, [300], utf8)`, "throws: error(type_error(byte,300),string_bytes/3)"},
		{`string_bytes("a", _, klingon)`, "throws: error(domain_error(encoding,klingon),string_bytes/3)"},
		{`string_bytes(_, _, utf8)`, "throws: error(instantiation_error,string_bytes/3)"},
		{`f(A, B, A) =@= f(X, Y, X)`, "true"},
		{`f(A, B, A) =@= f(X, Y, Y)`, "false"},
		{`f(A, A) =@= f(X, Y)`, "false"},
		{`f(A, B) =@= f(X, X)`, "false"},
		{`A =@= B`, "true"},
		{`A =@= a`, "false"},
		{`[x, Y|T] =@= [x, Z|U]`, "true"},
		{`f(1) =@= f(1.0)`, "false"},
		{`g(A) \=@= g(B)`, "false"},
		{`g(A, A) \=@= g(B, c)`, "true"},
		{`X = f(X), Y = f(Y), X =@= Y`, "true"},
		{`X = f(X, a), Y = f(Y, b), X =@= Y`, "false"},
		{`X = (a =@= b), X = (P =@= Q), R = P-Q`, "a-b"},
		{`term_to_atom(a =@= b, R)`, "'a=@=b'"},
		{`term_hash(f(a, "b", 1), H), integer(H), H >= 0, term_hash(f(a, "b", 1), H2), R = yes, H == H2`, "yes"},
		{`term_hash(f(a), H1), term_hash(f(b), H2), (H1 == H2 -> R = same ; R = different)`, "different"},
		{`term_hash(f(_), H), (var(H) -> R = unbound ; R = H)`, "unbound"},
		{`X = f(X), term_hash(X, _)`, "throws: error(representation_error(cyclic_term),term_hash/2)"},
	})
}
