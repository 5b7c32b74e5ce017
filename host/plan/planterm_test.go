package plan_test

import (
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/host/planterm"
)

// The tests read term-syntax plans as the host does, with its Prolog
// reader; plan's own code takes it as a plan.TermReader.
func init() { plan.TermsForTest = planterm.Reader{} }
