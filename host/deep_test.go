package host_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestDeepArgumentsAreCheckedInLinearTime: a handler closure holding a
// term, or a capability, nested 50,000 deep is checked without writing it
// out whole (before the engine's rebuild its writer was quadratic in
// depth: 11 s at 10,000 levels, minutes at 50,000). The adapter
// registers, registering it again is recognized as the same definition,
// and a deep capability is refused with its culprit described capped (it
// was the whole term's text, 100 KB here). The bound below is a hang
// detector, far above the seconds the walks take.
func TestDeepArgumentsAreCheckedInLinearTime(t *testing.T) {
	s := newSession(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Consult(ctx, "deep.pl", `
nest_(0, a) :- !.
nest_(N, f(T)) :- N1 is N - 1, nest_(N1, T).
meta_(_, _, _).
op_(_, _, _, _, _).
`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, goal, want string }{
		{"handler", `nest_(50000, _H), context_adapter_register(deep, meta_(_H)/op_(_H), [operations([peek])], [], O1),
			context_adapter_register(deep, meta_(_H)/op_(_H), [operations([peek])], [], O2), O = O1-O2`,
			"ok(registered(deep))-ok(existing(deep))"},
		{"plan_validate capability", `nest_(50000, _C), plan_validate(plan([final(literal("x"))]), [tool(_C)], [], O)`,
			`invalid_capability("tool(f(f(f(`},
		{"rlm_completion capability", `nest_(50000, _C), rlm_completion("q", text("c"), [capabilities([_C])], O)`,
			`invalid_capability("f(f(f(`},
	} {
		got, err := s.Once(ctx, tc.goal)
		if err != nil || !strings.Contains(got["O"], tc.want) || len(got["O"]) > 4000 {
			t.Errorf("%s: %.300s, %v; want %s, the culprit capped", tc.name, got["O"], err, tc.want)
		}
	}
}
