package pack

import "github.com/rlmpl/rlmpl/tokenizer"

// Stage is one line of a ledger. Its Charged tokens count against the
// window (0 for host-only sections); Cumulative is the running total.
type Stage struct {
	Name           string
	Kind           string // fixed_section, context_unit or reserve
	Section        string // the unit's section (context_unit stages)
	Representation string // the chosen variant's kind (context_unit stages)
	Visibility     Visibility
	Observed       int64
	Charged        int64
	Cumulative     int64
	Count          tokenizer.Count // method and basis of Observed
}

// Ledger accounts for every token of a pack. Its stages' Charged tokens
// sum to Total, and Total ≤ Limit.
type Ledger struct {
	Limit, OperatorLimit, ProviderLimit int64
	VisibleFixed, HostOnly, Selected    int64
	Reserve, Safety                     int64
	Total, Remaining                    int64
	// Method is Exact only when every charged count is; the reserve and
	// margin are budget figures, not counts.
	Method tokenizer.Method
	Stages []Stage
}

func ledger(in Input, sel []Selection, fixed, hostOnly int64) Ledger {
	p := in.Policy
	l := Ledger{
		Limit: p.Effective(), OperatorLimit: p.MaxContextTokens, ProviderLimit: p.ProviderContextTokens,
		VisibleFixed: fixed, HostOnly: hostOnly, Reserve: p.ReserveOutputTokens, Safety: p.SafetyMarginTokens,
		Method: tokenizer.Exact,
	}
	cum := int64(0)
	add := func(s Stage) {
		cum += s.Charged
		s.Cumulative = cum
		if s.Charged > 0 && s.Count.Method == tokenizer.Estimated {
			l.Method = tokenizer.Estimated
		}
		l.Stages = append(l.Stages, s)
	}
	for _, s := range in.Sections {
		charged := int64(s.Count.Tokens)
		if s.Visibility != Model {
			charged = 0
		}
		add(Stage{Name: s.Name, Kind: "fixed_section", Visibility: s.Visibility, Observed: int64(s.Count.Tokens), Charged: charged, Count: s.Count})
	}
	for _, x := range sel {
		u := in.Units[x.Unit]
		v := u.Variants[x.Variant]
		n := int64(v.Count.Tokens)
		l.Selected += n
		add(Stage{Name: u.ID, Kind: "context_unit", Section: u.Section, Representation: v.Kind, Visibility: Model, Observed: n, Charged: n, Count: v.Count})
	}
	add(Stage{Name: "output_reserve", Kind: "reserve", Visibility: "budget", Observed: p.ReserveOutputTokens, Charged: p.ReserveOutputTokens, Count: tokenizer.Count{Tokens: int(p.ReserveOutputTokens), Method: tokenizer.Exact, Basis: "policy"}})
	add(Stage{Name: "safety_margin", Kind: "reserve", Visibility: "budget", Observed: p.SafetyMarginTokens, Charged: p.SafetyMarginTokens, Count: tokenizer.Count{Tokens: int(p.SafetyMarginTokens), Method: tokenizer.Exact, Basis: "policy"}})
	l.Total = cum
	l.Remaining = l.Limit - l.Total
	return l
}
