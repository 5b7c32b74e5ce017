package pack

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/tokenizer"
)

func tok(n int) tokenizer.Count {
	return tokenizer.Count{Tokens: n, Method: tokenizer.Exact, Basis: "test"}
}

func unit(id string, tokens int, utility int64) Unit {
	return Unit{ID: id, Section: "conversation", Variants: []Variant{{Kind: "verbatim", Count: tok(tokens), Utility: utility}}}
}

// policy is lib's default policy with the given budget.
func policy(maxCtx, provider, reserve, safety int64) Policy {
	return Policy{MaxContextTokens: maxCtx, ProviderContextTokens: provider, ReserveOutputTokens: reserve,
		SafetyMarginTokens: safety, MinRecentTurns: 12, MaxCandidates: 512, Overflow: "deny", Window: Contiguous}
}

// The upstream scenario: the highest-utility pack under the hard cap.
func TestHighestUtilityPackUnderHardCap(t *testing.T) {
	in := Input{
		Policy:   policy(100, 1000, 10, 5),
		Sections: []Section{{Name: "system", Visibility: Model, Count: tok(20)}},
		Units:    []Unit{unit("a", 60, 50), unit("b", 40, 45), unit("c", 20, 30)},
	}
	p, err := Solve(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range p.Selected {
		ids = append(ids, in.Units[s.Unit].ID)
	}
	if !reflect.DeepEqual(ids, []string{"b", "c"}) || p.Utility != 75 || p.Status != solver.Optimal {
		t.Fatalf("selected %v utility %d status %v", ids, p.Utility, p.Status)
	}
	l := p.Ledger
	if l.Total != 95 || l.Remaining != 5 || l.Limit != 100 {
		t.Fatalf("ledger total %d remaining %d limit %d", l.Total, l.Remaining, l.Limit)
	}
	var names []string
	var cums []int64
	for _, s := range l.Stages {
		names = append(names, s.Name)
		cums = append(cums, s.Cumulative)
	}
	if !reflect.DeepEqual(names, []string{"system", "b", "c", "output_reserve", "safety_margin"}) ||
		!reflect.DeepEqual(cums, []int64{20, 60, 80, 90, 95}) {
		t.Fatalf("stages %v %v", names, cums)
	}
}

func TestEffectiveCeilingIsTheSmaller(t *testing.T) {
	if got := policy(300000, 1000000, 0, 0).Effective(); got != 300000 {
		t.Fatalf("300k cap on a 1M model: %d", got)
	}
	if got := policy(300000, 128000, 0, 0).Effective(); got != 128000 {
		t.Fatalf("300k cap on a 128k model: %d", got)
	}
}

func TestPolicyValidationNamesField(t *testing.T) {
	for field, p := range map[string]Policy{
		"max_context_tokens":      policy(0, 10, 0, 0),
		"provider_context_tokens": policy(10, -1, 0, 0),
		"reserve_output_tokens":   policy(10, 10, -1, 0),
		"safety_margin_tokens":    policy(10, 10, 0, -1),
	} {
		var fe *FieldError
		if err := p.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	p := policy(131072, 131072, 16384, 4096)
	p.Overflow = "truncate"
	var fe *FieldError
	if err := p.Validate(); !errors.As(err, &fe) || fe.Field != "overflow" {
		t.Errorf("overflow: %v", p.Validate())
	}
}

func TestFailClosed(t *testing.T) {
	in := Input{Policy: policy(100, 100, 50, 10), Sections: []Section{{Name: "system", Visibility: Model, Count: tok(50)}}}
	var pe *Error
	if _, err := Solve(context.Background(), in); !errors.As(err, &pe) || pe.Kind != KindFixedExceeds || pe.Base != 110 ||
		!strings.Contains(pe.Error(), "(fixed sections 50, reserve_output_tokens 50, safety_margin_tokens 10) > limit 100") {
		t.Fatalf("fixed: %v", err)
	}
	// Host-only sections are measured, not charged.
	in.Sections[0].Visibility = Host
	p, err := Solve(context.Background(), in)
	if err != nil || p.Ledger.HostOnly != 50 || p.Ledger.Total != 60 {
		t.Fatalf("host-only: %+v %v", p.Ledger, err)
	}
	in.Sections = nil
	m := unit("tail", 80, 1)
	m.Mandatory = true
	in.Units = []Unit{m, unit("old", 5, 1)}
	if _, err := Solve(context.Background(), in); !errors.As(err, &pe) || pe.Kind != KindMandatoryExceeds || pe.Excess != 40 || pe.Units[0] != "tail" {
		t.Fatalf("mandatory: %v", err)
	}
}

// TestNeverOverCeiling: for random problems, a returned pack's ledger
// total never exceeds the ceiling and its stages sum to the total.
func TestNeverOverCeiling(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		in := Input{Policy: policy(int64(50+r.IntN(500)), int64(50+r.IntN(500)), int64(r.IntN(40)), int64(r.IntN(20)))}
		for i := range r.IntN(20) {
			u := unit(string(rune('a'+i)), r.IntN(80), int64(r.IntN(100)))
			u.Mandatory = r.IntN(6) == 0
			u.Order = int64(i)
			in.Units = append(in.Units, u)
		}
		if r.IntN(2) == 0 {
			in.Sections = []Section{{Name: "system", Visibility: Model, Count: tok(r.IntN(60))}}
		}
		p, err := Solve(context.Background(), in)
		var pe *Error
		if errors.As(err, &pe) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sum := int64(0)
		for _, s := range p.Ledger.Stages {
			sum += s.Charged
		}
		if sum != p.Ledger.Total || p.Ledger.Total > in.Policy.Effective() {
			t.Fatalf("stages %d total %d limit %d", sum, p.Ledger.Total, in.Policy.Effective())
		}
		again, _ := Solve(context.Background(), in)
		if !reflect.DeepEqual(again.Selected, p.Selected) {
			t.Fatal("not deterministic")
		}
	}
}
