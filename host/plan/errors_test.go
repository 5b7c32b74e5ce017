package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/host/provider"
)

// TestErrorSaysEachCauseOnce: an error whose message already ends with its
// cause's text (the planner's and a model's failed call, a tool's
// exception) says that text once, with what only the cause knows kept.
func TestErrorSaysEachCauseOnce(t *testing.T) {
	call := &provider.Error{Kind: provider.KindProviderError, Status: 500, Code: "500", Message: "scripted failure", Attempts: 3}
	key := provider.MissingCredential("OPENAI_API_KEY")
	boom := errors.New("handler threw boom")
	withCause := func(e *Error, c error) *Error { e.Cause = c; return e }
	cases := []struct {
		name  string
		err   *Error
		once  string
		wants []string
	}{
		{"provider failure", withCause(complErr(PhasePlanner, KindPlannerError, "the planner call failed: "+call.Error()), call),
			"scripted failure (after 3 attempts)", []string{"planner_error", "provider_error 500"}},
		{"missing key", withCause(planErr(PhaseExecute, KindModelError, "the model call failed: "+key.Error(), Field{"provider", Atom("openai")}), key),
			"OPENAI_API_KEY is unset or empty", []string{"model_error", "provider=openai"}},
		{"tool handler", withCause(planErr(PhaseExecute, KindToolError, "the tool failed: "+boom.Error(), Field{"tool", Atom("t")}, Field{"exception", boom.Error()}), boom),
			"handler threw boom", []string{"tool_error", "tool=t"}},
		{"a cause the message does not say", withCause(planErr(PhaseExecute, KindContextError, "the context operation failed"), boom),
			"handler threw boom", []string{"context_error"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.err.Error()
			if n := strings.Count(msg, tc.once); n != 1 {
				t.Errorf("%q says %q %d times, want once", msg, tc.once, n)
			}
			for _, w := range tc.wants {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}
