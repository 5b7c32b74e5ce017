package runtime

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rlmpl/rlmpl/host/handle"
	"github.com/rlmpl/rlmpl/host/pack"
	"github.com/rlmpl/rlmpl/host/plan"
	"github.com/rlmpl/rlmpl/solver"
	"github.com/rlmpl/rlmpl/store"
	"github.com/rlmpl/rlmpl/tokenizer"
)

// Warm context: summaries of old ranges of a conversation, published
// explicitly (never by a pack or a turn), stored as immutable versioned
// documents beside the messages they summarize, and offered to every pack
// that asks for them as one more unit with four representations.

// warmCollection is the store collection of warm artifacts.
const warmCollection = "warm"

// WarmKinds are the representations of an artifact, in order.
var WarmKinds = []string{"verbatim", "detailed_summary", "compact_summary", "facts_only"}

// WarmFields are what a generator produces: the schema of a warm summary.
type WarmFields struct {
	Summary    string   `json:"summary"`
	Decisions  []string `json:"decisions"`
	Facts      []string `json:"facts"`
	Unresolved []string `json:"unresolved"`
	Entities   []string `json:"entities"`
	Topics     []string `json:"topics"`
	Files      []string `json:"files"`
	Symbols    []string `json:"symbols"`
}

// warmFieldNames are the schema's fields, in rendering order.
var warmFieldNames = []string{"summary", "decisions", "facts", "unresolved", "entities", "topics", "files", "symbols"}

// SchemaError says what a generator's output lacks or has too much of.
type SchemaError struct {
	Kind  string // missing_required_field, unexpected_field, invalid_field or invalid_json
	Field string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("runtime: warm schema: %s %q", e.Kind, e.Field)
}

// ParseWarmFields validates a generator's output — a JSON object with
// exactly the schema's fields — failing closed on the first field that is
// missing, unexpected or of the wrong type.
func ParseWarmFields(raw []byte) (WarmFields, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return WarmFields{}, &SchemaError{Kind: "invalid_json", Field: err.Error()}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(warmFieldNames, k) {
			return WarmFields{}, &SchemaError{Kind: "unexpected_field", Field: k}
		}
	}
	var f WarmFields
	for _, name := range warmFieldNames {
		v, ok := obj[name]
		if !ok {
			return WarmFields{}, &SchemaError{Kind: "missing_required_field", Field: name}
		}
		var err error
		if name == "summary" {
			err = json.Unmarshal(v, &f.Summary)
		} else {
			var list []string
			err = json.Unmarshal(v, &list)
			*f.list(name) = list
		}
		if err != nil || string(v) == "null" {
			return WarmFields{}, &SchemaError{Kind: "invalid_field", Field: name}
		}
	}
	return f, nil
}

func (f *WarmFields) list(name string) *[]string {
	switch name {
	case "decisions":
		return &f.Decisions
	case "facts":
		return &f.Facts
	case "unresolved":
		return &f.Unresolved
	case "entities":
		return &f.Entities
	case "topics":
		return &f.Topics
	case "files":
		return &f.Files
	}
	return &f.Symbols
}

// render returns the text of one representation; verbatim is the source.
func (f WarmFields) render(kind, source string) string {
	block := func(label string, items []string) string {
		if len(items) == 0 {
			return ""
		}
		var sb strings.Builder
		sb.WriteString(label + ":\n")
		for _, it := range items {
			sb.WriteString("- " + it + "\n")
		}
		return sb.String()
	}
	summary := "Summary: " + f.Summary + "\n"
	switch kind {
	case "verbatim":
		return source
	case "detailed_summary":
		var sb strings.Builder
		sb.WriteString(summary)
		for _, name := range warmFieldNames[1:] {
			sb.WriteString(block(strings.ToUpper(name[:1])+name[1:], *f.list(name)))
		}
		return sb.String()
	case "compact_summary":
		return summary + block("Unresolved", f.Unresolved)
	}
	return block("Facts and decisions", append(slices.Clone(f.Decisions), f.Facts...))
}

// WarmSource is the range a generator summarizes: the messages, their
// sequences and their rendered text ("[seq] role: content" lines).
type WarmSource struct {
	Conversation string
	From, To     int64
	Messages     []store.Record
	Text         string
}

// WarmGeneration says how the fields were produced: by a trusted
// callback, or by a completion (with its usage), for the provenance.
type WarmGeneration struct {
	Kind  string         `json:"kind"`
	Usage map[string]any `json:"usage,omitempty"`
}

// WarmGenerator produces the fields of a range. A Prolog callback and an
// rlm_completion/4 over the range are the two the host provides.
type WarmGenerator func(ctx context.Context, src WarmSource) (WarmFields, WarmGeneration, error)

// WarmVariant is one stored representation and its counts per encoding.
type WarmVariant struct {
	Kind   string         `json:"kind"`
	Text   string         `json:"text"`
	Counts map[string]int `json:"counts,omitempty"`
}

// WarmArtifact is one published version of the summary of a range.
type WarmArtifact struct {
	Conversation string         `json:"conversation_id"`
	Key          string         `json:"key"`
	Version      int            `json:"version"`
	From         int64          `json:"from"`
	To           int64          `json:"to"`
	SourceRefs   []int64        `json:"source_refs"`
	SourceHash   string         `json:"source_hash"`
	Producer     string         `json:"producer"`
	Generation   WarmGeneration `json:"generation"`
	Fields       WarmFields     `json:"fields"`
	Variants     []WarmVariant  `json:"variants"`
	CreatedAt    int64          `json:"created_at_ms"`
	// Retired marks a version written by [Conversation.WarmRetire]: the
	// range is no longer offered to packs (until published again).
	Retired bool `json:"retired,omitempty"`
	// Overlaps are the keys of the live artifacts whose ranges share a
	// message with this one when it was published: a warning (a pack
	// chooses at most one of them), not stored.
	Overlaps []string `json:"-"`
}

// Intersects reports whether a and b cover a common message: a pack never
// sends both, or that message's text would be sent twice.
func (a WarmArtifact) Intersects(b WarmArtifact) bool { return a.From <= b.To && b.From <= a.To }

// WarmKey is an artifact's key: the range it covers.
func WarmKey(from, to int64) string {
	return "range_" + strconv.FormatInt(from, 10) + "_" + strconv.FormatInt(to, 10)
}

// ErrEmptyRange is returned for a warm range with no messages.
var ErrEmptyRange = errors.New("runtime: empty source range")

// WarmSource reads the messages of from..to (inclusive).
func (c Conversation) WarmSource(from, to int64) (WarmSource, error) {
	if from < 1 || to < from {
		return WarmSource{}, fmt.Errorf("%w: range(%d, %d)", store.ErrInvalidRange, from, to)
	}
	recs, err := c.Messages(store.Range(from, to), 0)
	if err != nil {
		return WarmSource{}, err
	}
	if int64(len(recs)) != to-from+1 {
		st, err := c.Stats()
		if err != nil {
			return WarmSource{}, err
		}
		return WarmSource{}, rangeError(from, to, st.Messages)
	}
	lines := make([]string, len(recs))
	for i, r := range recs {
		lines[i] = fmt.Sprintf("[%d] %s: %s", r.Seq, r.Message.Role, r.Message.Content.PlainText())
	}
	return WarmSource{Conversation: c.id, From: from, To: to, Messages: recs, Text: strings.Join(lines, "\n")}, nil
}

// rangeError says why from..to is not a range of stored messages, against
// the conversation's last sequence (sequences are dense from 1).
func rangeError(from, to, last int64) error {
	switch {
	case last == 0:
		return fmt.Errorf("%w: range %d-%d: the conversation has no messages", ErrEmptyRange, from, to)
	case from > last:
		return fmt.Errorf("%w: range %d-%d is past the conversation's last message, %d", ErrEmptyRange, from, to, last)
	default:
		return fmt.Errorf("%w: range %d-%d goes past the conversation's last message, %d", ErrEmptyRange, from, to, last)
	}
}

// sourceHash digests the covered messages as the store holds them (their
// export form, with their sequences), so that an artifact whose source
// changed (a conversation rebuilt under the same id, an import of
// artifacts into another transcript) is detected as stale.
func sourceHash(recs []store.Record) string {
	h := sha256.New()
	for _, r := range recs {
		b, _ := json.Marshal(r.Message) // a normalized message always encodes
		fmt.Fprintf(h, "%d\n%s\n", r.Seq, b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WarmDerive generates the artifact of from..to without storing it: the
// fields from gen, validated by the caller's generator contract, the four
// representations counted in encodings.
func (c Conversation) WarmDerive(ctx context.Context, from, to int64, gen WarmGenerator, encodings []string) (WarmArtifact, error) {
	src, err := c.WarmSource(from, to)
	if err != nil {
		return WarmArtifact{}, err
	}
	fields, genInfo, err := gen(ctx, src)
	if err != nil {
		return WarmArtifact{}, err
	}
	a := WarmArtifact{Conversation: c.id, Key: WarmKey(from, to), From: from, To: to,
		SourceHash: sourceHash(src.Messages), Producer: "conversation_compaction", Generation: genInfo, Fields: fields}
	for _, r := range src.Messages {
		a.SourceRefs = append(a.SourceRefs, r.Seq)
	}
	reg := c.st.rt.Tokenizers()
	for _, kind := range WarmKinds {
		v := WarmVariant{Kind: kind, Text: fields.render(kind, src.Text), Counts: map[string]int{}}
		for _, enc := range encodings {
			counter, err := reg.CounterForEncoding(enc)
			if err != nil {
				return WarmArtifact{}, err
			}
			v.Counts[enc] = counter.Count(v.Text).Tokens
		}
		a.Variants = append(a.Variants, v)
	}
	return a, nil
}

// WithWarmStore is the conversation with its warm artifacts kept in st
// instead of its own store: upstream's separate artifact store
// (artifact_store_open/2 from a spec). There they are documents of an
// empty conversation of the same id, which the first publish creates; the
// messages they summarize are still read from the conversation's store,
// so an artifact whose source changed is stale as always. Nil means the
// conversation's own store, where artifacts share its transactions and
// backups.
func (c Conversation) WithWarmStore(st *Store) Conversation {
	c.warm = st
	return c
}

// warmHome is the conversation as the store of its artifacts holds it.
func (c Conversation) warmHome() Conversation {
	if c.warm == nil {
		return Conversation{st: c.st, id: c.id}
	}
	return Conversation{st: c.warm, id: c.id}
}

// WarmPublish derives the artifact of from..to and stores it as the next
// version of its key. The source messages are untouched.
func (c Conversation) WarmPublish(ctx context.Context, from, to int64, gen WarmGenerator, encodings []string) (WarmArtifact, error) {
	a, err := c.WarmDerive(ctx, from, to, gen, encodings)
	if err != nil {
		return WarmArtifact{}, err
	}
	body, err := jsonArtifact(a)
	if err != nil {
		return WarmArtifact{}, err
	}
	home := c.warmHome()
	if home.st != c.st {
		if _, err := home.st.Create(c.id, nil); err != nil && !errors.Is(err, store.ErrExists) {
			return WarmArtifact{}, err
		}
	}
	doc, err := home.st.db.PutDoc(c.id, store.DocPut{Collection: warmCollection, Key: a.Key, Body: body})
	if err != nil {
		return WarmArtifact{}, err
	}
	a.Version, a.CreatedAt = doc.Version, doc.CreatedAt.UnixMilli()
	live, err := c.WarmList(false)
	for _, b := range live {
		if b.Key != a.Key && !b.Retired && a.Intersects(b) {
			a.Overlaps = append(a.Overlaps, b.Key)
		}
	}
	return a, err
}

// ErrNoArtifact is a retire of a range that has no published artifact.
var ErrNoArtifact = errors.New("runtime: no warm artifact of that range")

// WarmRetire stops offering the artifact of from..to to packs: it stores
// its next version marked retired (versions are immutable; the earlier ones
// stay readable), and returns it. Retiring a retired artifact writes
// nothing; publishing the range again makes it live.
func (c Conversation) WarmRetire(from, to int64) (WarmArtifact, error) {
	key := WarmKey(from, to)
	home := c.warmHome()
	doc, err := home.st.db.GetDoc(c.id, warmCollection, key, 0)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := c.Info(); err != nil {
			return WarmArtifact{}, err
		}
		return WarmArtifact{}, fmt.Errorf("%w: %s of %s", ErrNoArtifact, key, c.id)
	}
	if err != nil {
		return WarmArtifact{}, err
	}
	a, err := decodeArtifact(doc)
	if err != nil || a.Retired {
		return a, err
	}
	a.Retired = true
	body, err := jsonArtifact(a)
	if err != nil {
		return WarmArtifact{}, err
	}
	if doc, err = home.st.db.PutDoc(c.id, store.DocPut{Collection: warmCollection, Key: key, Body: body}); err != nil {
		return WarmArtifact{}, err
	}
	a.Version, a.CreatedAt = doc.Version, doc.CreatedAt.UnixMilli()
	return a, nil
}

// WarmList lists the conversation's artifacts: the latest version of each
// range, or every version with history, ordered by key then version.
func (c Conversation) WarmList(history bool) ([]WarmArtifact, error) {
	home := c.warmHome()
	arts, err := listDocs(home, warmCollection, history, decodeArtifact)
	if home.st != c.st && errors.Is(err, store.ErrNotFound) {
		return nil, nil // nothing published to that store yet
	}
	return arts, err
}

// jsonArtifact is an artifact's stored form.
func jsonArtifact(a WarmArtifact) ([]byte, error) { return json.Marshal(a) }

func decodeArtifact(d store.Doc) (WarmArtifact, error) {
	var a WarmArtifact
	if err := json.Unmarshal(d.Body, &a); err != nil {
		return a, fmt.Errorf("%w: warm artifact %s v%d: %v", store.ErrCorrupt, d.Key, d.Version, err)
	}
	a.Version, a.CreatedAt = d.Version, d.CreatedAt.UnixMilli()
	return a, nil
}

// staleCache remembers which artifact versions were checked against their
// source: messages are never rewritten, so one check per process suffices
// and a pack pays O(1) per artifact after the first.
type staleCache struct {
	mu      sync.Mutex // protects checked
	checked map[string]bool
}

// isStale compares an artifact's source hash with the messages it covers.
func (c Conversation) isStale(a WarmArtifact) (bool, error) {
	// Keyed by both stores: a separate artifact store has versions of its own.
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d", c.st.id, c.warmHome().st.id, c.id, a.Key, a.Version)
	sc := &c.st.rt.stale
	sc.mu.Lock()
	stale, known := sc.checked[key]
	sc.mu.Unlock()
	if known {
		return stale, nil
	}
	recs, err := c.Messages(store.Range(a.From, a.To), 0)
	if err != nil {
		return false, err
	}
	stale = int64(len(recs)) != a.To-a.From+1 || sourceHash(recs) != a.SourceHash
	sc.mu.Lock()
	if sc.checked == nil {
		sc.checked = map[string]bool{}
	}
	sc.checked[key] = stale
	sc.mu.Unlock()
	return stale, nil
}

// variantCount is a representation's count under counter: the stored one
// when the encoding was counted at publish, else counted now.
func variantCount(v WarmVariant, counter tokenizer.Counter) tokenizer.Count {
	if enc := counter.Encoding(); enc != nil {
		if n, ok := v.Counts[enc.Name()]; ok {
			return tokenizer.Count{Tokens: n, Method: tokenizer.Exact, Basis: tokenizer.BasisBPE, Encoding: enc.Name()}
		}
	}
	return counter.Count(v.Text)
}

// WarmPolicy ranks and values artifacts (lib's default_warm_policy/1).
// Fidelity is per representation, in percent of the value of the raw
// messages the artifact covers: a summary competes with its raws on equal
// terms, since choosing it excludes them. Weights are per signal kind;
// "recency" weighs the artifact's last covered sequence in the ranking.
type WarmPolicy struct {
	MaxCandidates int
	Fidelity      map[string]int64
	Weights       map[string]int64
}

// WarmSignal says why an artifact matters now: warm_signal(Key, Kind,
// Strength). Kind "pinned" with Strength > 0 makes the artifact mandatory.
type WarmSignal struct {
	Key      string
	Kind     string
	Strength int64
}

// WarmOptions turn on warm context for a pack (I2): the conversation's
// latest non-stale artifacts are loaded automatically.
type WarmOptions struct {
	Policy  WarmPolicy
	Signals []WarmSignal
	// Store is where the artifacts live (see Conversation.WithWarmStore);
	// nil means the conversation's own store.
	Store *Store
}

// WarmStatus says what a pack did with warm context.
type WarmStatus struct {
	Configured bool `json:"configured"`
	Available  int  `json:"available"` // artifacts published (latest versions, not retired)
	Stale      int  `json:"stale"`     // left out because their source changed
	Loaded     int  `json:"loaded"`    // offered to the optimizer (at most MaxCandidates)
}

// ErrUnsupportedSignal is a warm signal whose kind the policy does not
// weigh, on an artifact that exists.
var ErrUnsupportedSignal = errors.New("runtime: unsupported warm signal kind")

func (p WarmPolicy) validate() error {
	if p.MaxCandidates < 0 {
		return &SchemaError{Kind: "invalid_field", Field: "max_candidates"}
	}
	for _, k := range WarmKinds {
		if p.Fidelity[k] < 0 {
			return &SchemaError{Kind: "invalid_field", Field: "fidelity." + k}
		}
	}
	return nil
}

// WarmUnits ranks the conversation's latest non-stale, non-retired
// artifacts by signals and recency, keeps at most MaxCandidates, and
// returns them as units (oldest first) with the artifacts they stand for.
// Utilities value a representation at its fidelity percent of the raw
// messages it covers (u's older-message model) plus its signal score.
func (c Conversation) WarmUnits(w WarmOptions, counter tokenizer.Counter, u pack.Utilities) ([]pack.Unit, []WarmArtifact, WarmStatus, error) {
	return c.warmUnitsBefore(w, counter, u, math.MaxInt64)
}

// warmUnitsBefore is WarmUnits valuing only the covered messages before
// hotStart: the hot tail is sent verbatim anyway, so a summary's copy of
// it is worth nothing and costs its tokens.
func (c Conversation) warmUnitsBefore(w WarmOptions, counter tokenizer.Counter, u pack.Utilities, hotStart int64) ([]pack.Unit, []WarmArtifact, WarmStatus, error) {
	st := WarmStatus{Configured: true}
	if err := w.Policy.validate(); err != nil {
		return nil, nil, st, err
	}
	if w.Store != nil {
		c = c.WithWarmStore(w.Store)
	}
	arts, err := c.WarmList(false)
	if err != nil {
		return nil, nil, st, err
	}
	arts = slices.DeleteFunc(arts, func(a WarmArtifact) bool { return a.Retired })
	st.Available = len(arts)
	score := make(map[string]int64, len(arts))
	pinned := map[string]bool{}
	for _, a := range arts {
		score[a.Key] = a.To * w.Policy.Weights["recency"]
	}
	for _, s := range w.Signals {
		if _, exists := score[s.Key]; !exists {
			continue // a signal about an artifact not published (yet)
		}
		weight, known := w.Policy.Weights[s.Kind]
		if !known {
			return nil, nil, st, fmt.Errorf("%w: %s (on %s)", ErrUnsupportedSignal, s.Kind, s.Key)
		}
		score[s.Key] += s.Strength * weight
		pinned[s.Key] = pinned[s.Key] || s.Kind == "pinned" && s.Strength > 0
	}
	slices.SortStableFunc(arts, func(a, b WarmArtifact) int { return cmp.Compare(score[b.Key], score[a.Key]) })
	var kept []WarmArtifact
	for _, a := range arts {
		if len(kept) >= w.Policy.MaxCandidates {
			break
		}
		stale, err := c.isStale(a)
		if err != nil {
			return nil, nil, st, err
		}
		if stale {
			st.Stale++
			continue
		}
		kept = append(kept, a)
	}
	// Render oldest first, whatever their rank.
	slices.SortStableFunc(kept, func(a, b WarmArtifact) int { return cmp.Compare(a.To, b.To) })
	units := make([]pack.Unit, len(kept))
	for i, a := range kept {
		covered := int64(0)
		for s := a.From; s <= min(a.To, hotStart-1); s++ {
			covered += u.OlderBase + u.OlderPerSeq*s
		}
		bonus := score[a.Key] - a.To*w.Policy.Weights["recency"]
		units[i] = pack.Unit{ID: a.Key, Section: "warm", Mandatory: pinned[a.Key], Order: a.To}
		for _, v := range a.Variants {
			units[i].Variants = append(units[i].Variants, pack.Variant{Kind: v.Kind, Count: variantCount(v, counter),
				Utility: w.Policy.Fidelity[v.Kind]*covered/100 + bonus, Value: tokenizer.Message{Role: "system", Content: v.Text}})
		}
	}
	st.Loaded = len(units)
	return units, kept, st, nil
}

// warmUnits is WarmUnits for a pack: each artifact excludes the optional
// raw messages it covers among the candidates (instead of deleting them
// beforehand: when the summary is left out they compete normally), and
// every artifact whose range overlaps its own, so no message is sent
// twice. Hot messages win on overlap.
func (c Conversation) warmUnits(w WarmOptions, turns []pack.Turn, hotStart int64, counter tokenizer.Counter, u pack.Utilities) ([]pack.Unit, []WarmArtifact, []solver.Constraint, WarmStatus, error) {
	units, arts, st, err := c.warmUnitsBefore(w, counter, u, hotStart)
	var cons []solver.Constraint
	for i, a := range arts {
		for _, b := range arts[i+1:] {
			if a.Intersects(b) {
				cons = append(cons, solver.Excludes(a.Key, b.Key))
			}
		}
		for _, t := range turns {
			if t.Seq >= a.From && t.Seq <= a.To && t.Seq < hotStart {
				cons = append(cons, solver.Excludes(a.Key, pack.UnitID(t.Seq)))
			}
		}
	}
	return units, arts, cons, st, err
}

// CompletionGenerator is the warm generator that asks a bounded
// completion (plan.Complete, as rlm_completion/4) for the fields of a
// range: the model reaches the range's messages only through a terms
// handle in reg, deleted afterwards, and the completion's usage is kept
// in the artifact's provenance. in is the completion's input (its
// providers, budget, ...): Query and Context are the generator's.
func CompletionGenerator(reg *handle.Registry, in plan.Input, deps plan.Deps) WarmGenerator {
	return func(ctx context.Context, src WarmSource) (WarmFields, WarmGeneration, error) {
		items := make([]handle.Item, len(src.Messages))
		for i, r := range src.Messages {
			items[i] = viewItem(r)
			items[i].Text = fmt.Sprintf("[%d] %s: %s", r.Seq, r.Message.Role, items[i].Text)
		}
		ref, meta, err := reg.RegisterTerms(items, handle.Limits{})
		if err != nil {
			return WarmFields{}, WarmGeneration{}, err
		}
		defer reg.Delete(ref)
		in.Query = fmt.Sprintf("Summarize messages %d..%d of conversation %s, which the context holds as items, into exactly one JSON object "+
			"with the fields summary (text) and decisions, facts, unresolved, entities, topics, files, symbols (lists of text). "+
			"Keep concrete decisions and unresolved work; invent nothing: the context is authoritative.", src.From, src.To, src.Conversation)
		in.Context = plan.ContextRef{Ref: ref, Metadata: meta}
		deps.Contexts = reg
		out, err := plan.Complete(ctx, in, deps)
		if err != nil {
			return WarmFields{}, WarmGeneration{}, err
		}
		gen := WarmGeneration{Kind: "rlm"}
		if b, err := json.Marshal(out.Usage); err == nil {
			_ = json.Unmarshal(b, &gen.Usage)
		}
		raw, isText := out.Value.(string)
		if !isText {
			raw = plan.Encode(out.Value)
		}
		fields, err := ParseWarmFields([]byte(raw))
		return fields, gen, err
	}
}
