package prolog_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/prolog"
)

// fmtCase formats Args with Format into an atom; want is the atom's writeq
// form, or "throws: E" (see solve).
type fmtCase struct {
	format string // Prolog text of the format, e.g. "~w"
	args   string // Prolog text of the arguments
	want   string
}

// Expected outputs are SWI-Prolog 9.0.4's (swipl -g 'format(atom(A), F, Args), writeq(A)').
func TestFormatDirectives(t *testing.T) {
	const (
		notEnough = "throws: error(format('not enough arguments'),format/3)"
		tooMany   = "throws: error(format('too many arguments'),format/3)"
	)
	cases := []fmtCase{
		// Plain text and simple directives.
		{`"no args"`, `[]`, `'no args'`},
		{`abc`, `[]`, `abc`},
		{`[0'a,0'~,0'w]`, `[x]`, `ax`},
		{`'~w and ~w'`, `[a,b]`, `'a and b'`},
		{`"~~"`, `[]`, `~`},
		{`"~w"`, `hello`, `hello`}, // a non-list is one argument
		{`"~w"`, `f(x)`, `'f(x)'`},
		{`"~w"`, `[]`, notEnough},
		{`"~w ~w"`, `[a]`, notEnough},
		{`"~w"`, `[a,b]`, tooMany},
		{`"~i~w"`, `[a,b]`, `b`},
		{`"~i"`, `[]`, notEnough},
		{`"~w"`, `['A b']`, `'A b'`},
		{`"~p"`, `['A b']`, `'\'A b\''`},
		{`"~q"`, `[['A b',c]]`, `'[\'A b\',c]'`},
		{`"~q"`, `[[a|b]]`, `'[a|b]'`},
		{`"~w"`, `[- (1)]`, `'- (1)'`}, // ichiban's writer; SWI writes '- 1'
		{`"~w"`, `[(a:-b)]`, `'a:-b'`},
		{`"~w ~q ~p"`, `['$VAR'(1),'$VAR'(27),'$VAR'(1)]`, `'B B1 B'`},
		{`"~k"`, `[a+'B']`, `'+(a,\'B\')'`},
		{`"~a"`, `[abc]`, `abc`},
		{`"~a"`, `[42]`, `'42'`},
		{`"~a"`, `["text"]`, `text`}, // chars stand in for SWI strings
		{`"~a"`, `[f(x)]`, "throws: error(format_argument_type(a,f(x)),format/3)"},
		{`"~a"`, `[_]`, "throws: error(format_argument_type(a,_G),format/3)"},
		{`"~s"`, `[[104,105]]`, `hi`},
		{`"~s"`, `[[h,i]]`, `hi`},
		{`"~s"`, `["hi"]`, `hi`},
		{`"~s"`, `[hi]`, `hi`},
		{`"~s"`, `[f(x)]`, "throws: error(format_argument_type(s,f(x)),format/3)"},
		{`"~s"`, `[[1.5]]`, "throws: error(format_argument_type(s,[1.5]),format/3)"},
		{`"~s"`, `[_]`, "throws: error(format_argument_type(s,_G),format/3)"},

		// Integers.
		{`"~d"`, `[42]`, `'42'`},
		{`"~d"`, `[-42]`, `'-42'`},
		{`"~d"`, `[1+2]`, `'3'`},
		{`"~0d"`, `[42]`, `'42'`},
		{`"~1d"`, `[5]`, `'0.5'`},
		{`"~2d"`, `[5]`, `'0.05'`},
		{`"~2d"`, `[-5]`, `'-0.05'`},
		{`"~3d"`, `[-5]`, `'-0.005'`},
		{`"~2d"`, `[12345]`, `'123.45'`},
		{`"~2d"`, `[0]`, `'0.00'`},
		{`"~2d"`, `[-123]`, `'-1.23'`},
		{`"~D"`, `[1234567]`, `'1,234,567'`},
		{`"~D"`, `[-1234567]`, `'-1,234,567'`},
		{`"~D"`, `[123]`, `'123'`},
		{`"~D"`, `[1234]`, `'1,234'`},
		{`"~2D"`, `[1234567]`, `'12,345.67'`},
		{`"~2D"`, `[-123456]`, `'-1,234.56'`},
		{`"~3D"`, `[12]`, `'0.012'`},
		{`"~:d"`, `[1234567]`, `'1234567'`},
		{`"~d"`, `[1.0]`, "throws: error(format_argument_type(d,1.0),format/3)"},
		{`"~d"`, `[1.0+2]`, "throws: error(format_argument_type(d,1.0+2),format/3)"},
		{`"~d"`, `[a]`, "throws: error(type_error(evaluable,a/0),format/3)"},
		{`"~d"`, `[_]`, "throws: error(instantiation_error,format/3)"},
		{`"~*d"`, `[2,314]`, `'3.14'`},

		// Radix.
		{`"~8r"`, `[64]`, `'100'`},
		{`"~16r"`, `[255]`, `ff`},
		{`"~16R"`, `[255]`, `'FF'`},
		{`"~r"`, `[255]`, `'377'`},
		{`"~2r"`, `[5]`, `'101'`},
		{`"~36r"`, `[35]`, `z`},
		{`"~16r"`, `[-255]`, `'-ff'`},
		{`"~8r"`, `[1+2]`, `'3'`},
		{`"~8r"`, `[1.0]`, "throws: error(format_argument_type(r,1.0),format/3)"},
		{`"~1r"`, `[5]`, "throws: error(domain_error(radix,1),format/3)"},
		{`"~37r"`, `[5]`, "throws: error(domain_error(radix,37),format/3)"},

		// Floats.
		{`"~e"`, `[3]`, `'3.000000e+00'`},
		{`"~e"`, `[1.5]`, `'1.500000e+00'`},
		{`"~e"`, `[-1.5]`, `'-1.500000e+00'`},
		{`"~e"`, `[0.0]`, `'0.000000e+00'`},
		{`"~3e"`, `[12345.678]`, `'1.235e+04'`},
		{`"~0e"`, `[1.5]`, `'2e+00'`},
		{`"~2e"`, `[1.0e10]`, `'1.00e+10'`},
		{`"~10e"`, `[1.5]`, `'1.5000000000e+00'`},
		{`"~f"`, `[3.14159]`, `'3.141590'`},
		{`"~2f"`, `[3]`, `'3.00'`},
		{`"~2f"`, `[2*3]`, `'6.00'`},
		{`"~0f"`, `[2.5]`, `'2'`},
		{`"~1f"`, `[0.05]`, `'0.1'`},
		{`"~1f"`, `[0.25]`, `'0.2'`},
		{`"~1f"`, `[-0.25]`, `'-0.2'`},
		{`"~2f"`, `[-0.001]`, `'-0.00'`},
		{`"~f"`, `[1.0e20]`, `'100000000000000000000.000000'`},
		{`"~2f"`, `[9223372036854775807]`, `'9223372036854775807.00'`},
		{`"~g"`, `[0.1]`, `'0.1'`},
		{`"~g"`, `[1.5]`, `'1.5'`},
		{`"~g"`, `[1.0]`, `'1'`},
		{`"~g"`, `[100000000.0]`, `'1e+08'`},
		{`"~g"`, `[123456789.0]`, `'1.23457e+08'`},
		{`"~g"`, `[123456.0]`, `'123456'`},
		{`"~g"`, `[0.0001]`, `'0.0001'`},
		{`"~g"`, `[1.0e-5]`, `'1e-05'`},
		{`"~0g"`, `[1.5]`, `'2'`},
		{`"~2g"`, `[1234.5]`, `'1.2e+03'`},
		{`"~3g"`, `[0.0001234]`, `'0.000123'`},
		{`"~f"`, `[a]`, "throws: error(type_error(evaluable,a/0),format/3)"},
		{`"~e"`, `[_]`, "throws: error(instantiation_error,format/3)"},

		// Characters and newlines.
		{`"~c"`, `[65]`, `'A'`},
		{`"~3c"`, `[65]`, `'AAA'`},
		{`"~*c"`, `[3,0'x]`, `xxx`},
		{`"~c"`, `[0x1F600]`, `'😀'`},
		{`"~c"`, `[-1]`, "throws: error(format_argument_type(c,-1),format/3)"},
		{`"~c"`, `[a]`, "throws: error(format_argument_type(c,a),format/3)"},
		{`"~c"`, `[0'a+1]`, "throws: error(format_argument_type(c,97+1),format/3)"},
		{`"~*c"`, `[a,0'x]`, "throws: error(format('no or negative integer for `*\\' argument'),format/3)"},
		{`"~*c"`, `[-1,0'x]`, "throws: error(format('no or negative integer for `*\\' argument'),format/3)"},
		{`"~n"`, `[]`, `'\n'`},
		{`"~3n"`, `[]`, `'\n\n\n'`},

		// Column stops and fill.
		{`"~a~t~20|~w~n"`, `[abc,1]`, `'abc                 1\n'`},
		{`"~w~10|x"`, `[abc]`, `'abc       x'`},
		{`"~t~w~10|"`, `[abc]`, `'       abc'`},
		{`"~t~w~t~11|"`, `[abc]`, `'    abc    '`},
		{`"~t~a~t~20|"`, `[hello]`, `'       hello        '`},
		{`"~t~a~t~21|"`, `[hello]`, `'        hello        '`},
		{`"~ta~tb~tc~10|"`, `[]`, `'  a   b  c'`},
		{`"~ta~t~11|"`, `[]`, `'     a     '`},
		{`"~ta~tb~tc~td~13|"`, `[]`, `'  a  b   c  d'`},
		{`"~ta~tb~tc~td~14|"`, `[]`, `'  a  b   c   d'`},
		{`"~ta~tb~tc~td~15|"`, `[]`, `'   a  b   c   d'`},
		{`"~t~w~t~w~20|~w"`, `[a,b,c]`, `'         a         bc'`},
		{"\"~`-t~30|\"", `[]`, `------------------------------`},
		{"\"~`*t~a~`*t~20|\"", `[hello]`, `'*******hello********'`},
		{"\"~`*t~t~20|\"", `[]`, `'**********          '`},
		{"\"~`0t~w~5|\"", `[42]`, `'00042'`},
		{`"~48t~w~5|"`, `[42]`, `'00042'`},
		{`"~*t~w~5|"`, `[0'0,7]`, `'00007'`},
		{"\"~`xt~5+~`yt~5+\"", `[]`, `xxxxxyyyyy`},
		{`"~t~d~6|"`, `[42]`, `'    42'`},
		{`"~t~2f~10|"`, `[3.14159]`, `'      3.14'`},
		{`"~ta~w~6|"`, `[b]`, `'    ab'`},
		{`"~15|abc"`, `[]`, `'               abc'`},
		{`"~t~20|"`, `[]`, `'                    '`},
		{`"~20|~t~a~30|"`, `[right]`, `'                         right'`},
		{`"~a~10|~a~5+~a"`, `[a,b,c]`, `'a         b    c'`},
		{`"~w~t~5+~w~t~5+~w"`, `[a,b,c]`, `'a    b    c'`},
		{`"~t~w~5|~t~w~5+"`, `[a,b]`, `'    a    b'`},
		{`"~3|abc~t~3+def"`, `[]`, `'   abcdef'`},
		{`"~a~t~a~10|~a"`, `[ab,cd,e]`, `'ab      cde'`},
		{`"~c~t~5|"`, `[0x1F600]`, `'😀    '`},
		{`"~+x"`, `[]`, `'        x'`},
		{`"~5|~a"`, `[x]`, `'     x'`},
		{`"~ta~t~3|"`, `[]`, `' a '`},
		{`"ab~tcd~t~10|"`, `[]`, `'ab   cd   '`},
		// Overflowing a column: no padding, and the column becomes the stop.
		{`"abcdefghijkl~5|x"`, `[]`, `abcdefghijklx`},
		{`"abcdefghijkl~t~5|x"`, `[]`, `abcdefghijklx`},
		{`"abcdefgh~5+x"`, `[]`, `abcdefghx`},
		{`"abcdefg~5|x~5+y"`, `[]`, `'abcdefgx    y'`},
		{`"abcdefg~5|~5+y"`, `[]`, `'abcdefg     y'`},
		{`"abcdefghijkl~5+x~5+y"`, `[]`, `'abcdefghijklx    y'`},
		{`"abcdefg~5|xyzuvwxyz~5+y"`, `[]`, `abcdefgxyzuvwxyzy`},
		// A newline restarts the column but not the last stop.
		{`"x~ny~t~5|z"`, `[]`, `'x\ny    z'`},
		{`"abc~nx~5+y"`, `[]`, `'abc\nx    y'`},
		{`"ab~5|cd~nx~5+y"`, `[]`, `'ab   cd\nx         y'`},
		{`"abcdefg~5|~nx~5+y"`, `[]`, `'abcdefg\nx         y'`},
		{`"abc~5|~nx~5|y"`, `[]`, `'abc  \nx    y'`},
		{`"abcdefgh~n~t~w~5|"`, `[x]`, `'abcdefgh\n    x'`},

		// ~@ inserts a goal's output.
		{`"~@|~w"`, `[write(hi),x]`, `'hi|x'`},
		{`"~t~@~6|"`, `[write(ab)]`, `'    ab'`},

		// Bounded counts.
		{`"~2000000c"`, `[0'x]`, "throws: error(resource_error(memory),format/3)"},
		{`"~*c"`, `[2000000,0'x]`, "throws: error(resource_error(memory),format/3)"},
		{`"~2000000|"`, `[]`, "throws: error(resource_error(memory),format/3)"},
		{"\"~`\U0010FFFFt~3|\"", `[]`, "'\U0010FFFF\U0010FFFF\U0010FFFF'"},

		// Bad directives.
		{`"~z"`, `[a]`, "throws: error(existence_error(format_character,z),format/3)"},
		{`"abc~"`, `[]`, "throws: error(format('truncated format directive'),format/3)"},
		{`f(x)`, `[]`, "throws: error(type_error(text,f(x)),format/3)"},
		{`123`, `[]`, "throws: error(type_error(text,123),format/3)"},
		{`_`, `[]`, "throws: error(instantiation_error,format/3)"},
	}
	in := prolog.New(nil)
	for _, tc := range cases {
		goal := "format(atom(R), " + tc.format + ", " + tc.args + ")"
		t.Run(goal, func(t *testing.T) {
			if got := solve(t, in, goal); got != tc.want {
				t.Errorf("%s\n got: %s\nwant: %s", goal, got, tc.want)
			}
		})
	}
}

func TestFormatGoalFailureFails(t *testing.T) {
	in := prolog.New(nil)
	if got := solve(t, in, `format(atom(_), "~a~@~a", [x, (write(hi), fail), y])`); got != "false" {
		t.Errorf("got %s, want false", got)
	}
	if got := solve(t, in, `format(atom(_), "~@", [throw(oops)])`); got != "throws: oops" {
		t.Errorf("got %s, want throws: oops", got)
	}
}

func TestFormatSinks(t *testing.T) {
	runCases(t, []solveCase{
		{`format(atom(R), "ab", [])`, "ab"},
		{`format(atom(ab), "ab", [])`, "true"},
		{`format(atom(b), "a", [])`, "false"},
		{`format(string(R), "ab", [])`, `"ab"`},
		{`format(string(R), "", [])`, "[]"},
		{`format(codes(R), "ab", [])`, "[97,98]"},
		{`format(codes(R), "", [])`, "[]"},
		{`format(codes(R1, R2), "ab", []), R2 = [0'c]`, "[97,98,99] [99]"},
		{`format(codes(R1, R2), "", [])`, "_G _G"},
		{`format(chars(R), "ab", [])`, `"ab"`},
		{`format(chars(R1, R2), "ab", []), R2 = []`, "[a,b] []"},
		{`format(atom(R), "~w", _)`, "'_G'"},
		{`format(foo, "a", [])`, "throws: error(existence_error(stream,foo),format/3)"},
		{`format(foo(x), "a", [])`, "throws: error(type_error(output,foo(x)),format/3)"},
		{`format(_, "a", [])`, "throws: error(instantiation_error,format/3)"},
		{`format(atom(_), _, [])`, "throws: error(instantiation_error,format/3)"},
		{`with_output_to(atom(R), (write(a), write(b)))`, "ab"},
		{`with_output_to(string(R), write(ab))`, `"ab"`},
		{`with_output_to(codes(R), write(ab))`, "[97,98]"},
		{`with_output_to(codes(R1, R2), write(ab)), R2 = []`, "[97,98] []"},
		{`with_output_to(chars(R), write(ab))`, `"ab"`},
		{`with_output_to(chars(R1, R2), write(ab))`, "[a,b|_G] _G"},
		{`with_output_to(atom(R), member(_, [1,2]))`, "''"},
		{`with_output_to(atom(R1), (member(R2, [a,b]), write(R2), R2 == b))`, "ab b"},
		{`with_output_to(atom(R), format("~w-~w", [x, y]))`, "'x-y'"},
		{`with_output_to(atom(R1), with_output_to(atom(R2), write(in))), R1 == ''`, "'' in"},
		{`with_output_to(atom(_), fail)`, "false"},
		{`with_output_to(atom(_), throw(x))`, "throws: x"},
		{`with_output_to(foo(_), true)`, "throws: error(type_error(output,foo(_G)),with_output_to/2)"},
		{`with_output_to(_, true)`, "throws: error(instantiation_error,with_output_to/2)"},
		{`with_output_to(atom(_), _)`, "throws: error(instantiation_error,with_output_to/2)"},
	})
}

func TestFormatToStreams(t *testing.T) {
	var out bytes.Buffer
	in := prolog.New(&prolog.Options{Stdout: &out})
	goals := []string{
		`format("hello ~w~n", [world])`,
		`format("plain~n")`,
		`format(user_output, "~a|", [out])`,
		`format(user_error, "~a|", [err])`,
		`current_output(S), format(S, "~d|", [7])`,
		`catch(with_output_to(atom(_), (write(lost), throw(x))), x, true), write(restored)`,
		`\+ with_output_to(atom(_), (write(lost), fail)), write('|again')`,
	}
	for _, g := range goals {
		if got := solve(t, in, g); got != "true" {
			t.Fatalf("%s = %s, want true", g, got)
		}
	}
	want := "hello world\nplain\nout|err|7|restored|again"
	if got := out.String(); got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
	if got := solve(t, in, `current_input(S), format(S, "x", [])`); !strings.HasPrefix(got, "throws: error(permission_error(output,stream,") {
		t.Errorf("format to an input stream = %s, want a permission error", got)
	}
}

// BenchmarkFormat: format/3 into an atom with four directives, one query
// per format call (so it includes the ~7 µs query round trip).
func BenchmarkFormat(b *testing.B) {
	in := prolog.New(nil)
	ctx := context.Background()
	const goal = `format(atom(A), "~w-~a-~d~n", [f(x), abc, 42])`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.Once(ctx, goal); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFormatLoop: the same format call in a failure-driven loop of
// 1000 calls inside one query (ns/call is the format/3 cost alone).
func BenchmarkFormatLoop(b *testing.B) {
	in := prolog.New(nil)
	ctx := context.Background()
	const goal = `(between(1, 1000, _), format(atom(_), "~w-~a-~d~n", [f(x), abc, 42]), fail ; true)`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.Once(ctx, goal); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/call")
}
