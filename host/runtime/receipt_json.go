package runtime

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// A receipt's JSON keeps a run of consecutive stored messages — the
// packed window, in a recipe, the context's selection and its ledger
// stages — as one entry (the first, Through the sequence of the last, the
// tokens of each), so that a receipt grows by a few bytes per message of
// the window, not by a record each. Decoding expands the runs; receipts
// written before runs existed decode as they are.

// run is a group of consecutive elements of a list: from first, its
// members' sequences up to through (0 for a single element), and the
// tokens of each.
type run struct {
	first   int
	through int64
	each    []int
}

// runsOf groups xs: an element joins the run before it when its sequence
// follows the run's last and same holds with the run's first element.
func runsOf[T any](xs []T, seq func(T) (int64, bool), same func(a, b T) bool, tokens func(T) int) []run {
	var out []run
	var last int64
	for i, x := range xs {
		s, ok := seq(x)
		if n := len(out); n > 0 && ok && s == last+1 && same(xs[out[n-1].first], x) {
			out[n-1].through, out[n-1].each = s, append(out[n-1].each, tokens(x))
			last = s
			continue
		}
		out = append(out, run{first: i, each: []int{tokens(x)}})
		if last = -1; ok {
			last = s
		}
	}
	return out
}

// expand is the inverse of a run: the elements from seq first to through,
// each built by at.
func expand[T any](first, through int64, each []int, at func(seq int64, tokens int) T) []T {
	out := make([]T, 0, through-first+1)
	for i, s := 0, first; s <= through; i, s = i+1, s+1 {
		n := 0
		if i < len(each) {
			n = each[i]
		}
		out = append(out, at(s, n))
	}
	return out
}

// recipeEntry is a RecipeMessage as stored: alone, or a run Seq..Through.
type recipeEntry struct {
	RecipeMessage
	Through    int64 `json:"through,omitempty"`
	TokensEach []int `json:"tokens_each,omitempty"`
}

// recipeJSON is Recipe without its methods.
type recipeJSON struct {
	Params   json.RawMessage       `json:"params"`
	Stream   bool                  `json:"stream,omitempty"`
	Messages []recipeEntry         `json:"messages"`
	Cache    *tokenizer.CacheHints `json:"cache,omitempty"`
}

func recipeSeq(m RecipeMessage) (int64, bool) { return m.Seq, m.Seq > 0 }

// MarshalJSON writes runs of stored messages as one entry each.
func (r Recipe) MarshalJSON() ([]byte, error) {
	out := recipeJSON{Params: r.Params, Stream: r.Stream, Messages: []recipeEntry{}, Cache: r.Cache}
	for _, g := range runsOf(r.Messages, recipeSeq, func(a, b RecipeMessage) bool { return true },
		func(m RecipeMessage) int { return m.Tokens }) {
		e := recipeEntry{RecipeMessage: r.Messages[g.first]}
		if g.through > 0 {
			e.Through, e.TokensEach, e.Tokens = g.through, g.each, 0
		}
		out.Messages = append(out.Messages, e)
	}
	return json.Marshal(out)
}

// UnmarshalJSON expands runs.
func (r *Recipe) UnmarshalJSON(b []byte) error {
	var in recipeJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*r = Recipe{Params: in.Params, Stream: in.Stream, Messages: make([]RecipeMessage, 0, len(in.Messages)), Cache: in.Cache}
	for _, e := range in.Messages {
		if e.Through == 0 {
			r.Messages = append(r.Messages, e.RecipeMessage)
			continue
		}
		r.Messages = append(r.Messages, expand(e.Seq, e.Through, e.TokensEach, func(seq int64, n int) RecipeMessage {
			return RecipeMessage{Seq: seq, Tokens: n}
		})...)
	}
	return nil
}

// unitEntry is a ReceiptUnit as stored: alone, or a run of conversation
// messages from ID's sequence to Through in one representation.
type unitEntry struct {
	ReceiptUnit
	Through    int64 `json:"through,omitempty"`
	TokensEach []int `json:"tokens_each,omitempty"`
}

// stageEntry is a ReceiptStage as stored: alone, or a run of conversation
// messages from Name's sequence to Through, each charged ChargedEach.
type stageEntry struct {
	ReceiptStage
	Through     int64 `json:"through,omitempty"`
	ChargedEach []int `json:"charged_each,omitempty"`
}

// receiptPackJSON is ReceiptPack without its methods.
type receiptPackJSON ReceiptPack

// storedPack is a ReceiptPack as stored, its selection and stages in runs.
type storedPack struct {
	receiptPackJSON
	Selected []unitEntry  `json:"selected"`
	Stages   []stageEntry `json:"stages"`
}

func unitSeq(u ReceiptUnit) (int64, bool)   { return messageSeq(u.ID, u.Section == "conversation") }
func stageSeq(s ReceiptStage) (int64, bool) { return messageSeq(s.Name, s.Kind == "context_unit") }

// messageSeq is the sequence of a unit that is one conversation message.
func messageSeq(id string, ok bool) (int64, bool) {
	s, isMessage := strings.CutPrefix(id, "conversation_message_")
	if !ok || !isMessage {
		return 0, false
	}
	seq, err := strconv.ParseInt(s, 10, 64)
	return seq, err == nil && seq > 0 && pack.UnitID(seq) == id
}

// MarshalJSON writes runs of conversation messages as one entry each.
func (p ReceiptPack) MarshalJSON() ([]byte, error) {
	out := storedPack{receiptPackJSON: receiptPackJSON(p), Selected: []unitEntry{}, Stages: []stageEntry{}}
	for _, g := range runsOf(p.Selected, unitSeq, func(a, b ReceiptUnit) bool { return a.Representation == b.Representation && a.Hot == b.Hot },
		func(u ReceiptUnit) int { return u.Tokens }) {
		e := unitEntry{ReceiptUnit: p.Selected[g.first]}
		if g.through > 0 {
			e.Through, e.TokensEach, e.Tokens = g.through, g.each, 0
		}
		out.Selected = append(out.Selected, e)
	}
	for _, g := range runsOf(p.Stages, stageSeq, func(a, b ReceiptStage) bool { return a.Method == b.Method },
		func(s ReceiptStage) int { return int(s.Charged) }) {
		e := stageEntry{ReceiptStage: p.Stages[g.first]}
		if g.through > 0 {
			e.Through, e.ChargedEach, e.Charged = g.through, g.each, 0
		}
		out.Stages = append(out.Stages, e)
	}
	return json.Marshal(out)
}

// UnmarshalJSON expands runs.
func (p *ReceiptPack) UnmarshalJSON(b []byte) error {
	var in storedPack
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*p = ReceiptPack(in.receiptPackJSON)
	p.Selected, p.Stages = make([]ReceiptUnit, 0, len(in.Selected)), make([]ReceiptStage, 0, len(in.Stages))
	for _, e := range in.Selected {
		first, ok := unitSeq(e.ReceiptUnit)
		if e.Through == 0 || !ok {
			p.Selected = append(p.Selected, e.ReceiptUnit)
			continue
		}
		p.Selected = append(p.Selected, expand(first, e.Through, e.TokensEach, func(seq int64, n int) ReceiptUnit {
			return ReceiptUnit{ID: pack.UnitID(seq), Section: e.Section, Representation: e.Representation, Tokens: n, Hot: e.Hot}
		})...)
	}
	for _, e := range in.Stages {
		first, ok := stageSeq(e.ReceiptStage)
		if e.Through == 0 || !ok {
			p.Stages = append(p.Stages, e.ReceiptStage)
			continue
		}
		p.Stages = append(p.Stages, expand(first, e.Through, e.ChargedEach, func(seq int64, n int) ReceiptStage {
			return ReceiptStage{Name: pack.UnitID(seq), Kind: e.Kind, Charged: int64(n), Method: e.Method}
		})...)
	}
	return nil
}
