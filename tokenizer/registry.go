package tokenizer

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Registry maps encoding and model names to encodings and counters. It is
// immutable after construction and safe for concurrent use; nothing it does
// after construction touches the disk or the network.
type Registry struct {
	encodings map[string]*Encoding
	exact     map[string]modelEntry
	prefixes  []modelEntry // longest prefix first, then by name
}

type modelEntry struct {
	model   Model
	enc     *Encoding
	framing Framing
}

// Options configures [New] and [Registry.With]. A nil *Options is valid
// and means the built-ins only.
type Options struct {
	// Encodings are added to the registry, typically built by
	// [NewEncoding] from a ranks file. A name must not already be
	// registered. Zero means none.
	Encodings []*Encoding

	// Models are added to the model table. An entry with the same Name and
	// Prefix as an existing one replaces it; its Encoding must be
	// registered (built in or in Encodings). Zero means none.
	Models []Model
}

// New returns a registry holding the built-in encodings (r50k_base,
// p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony), rlmpl's
// model table (see [Registry.Models]), and whatever opts adds. Built-in
// vocabularies load on first use, not here; see [Registry.Encoding].
func New(opts *Options) (*Registry, error) {
	r := &Registry{encodings: make(map[string]*Encoding), exact: make(map[string]modelEntry)}
	for _, e := range builtins {
		r.encodings[e.name] = e
	}
	if err := r.add(&Options{Models: builtinModels}); err != nil {
		panic(err) // the built-in table is broken
	}
	if err := r.add(opts); err != nil {
		return nil, err
	}
	return r, nil
}

// With returns a new registry with r's encodings and models plus those of
// opts, validated as by [New]; r itself is unchanged. This is how an
// encoding is registered at run time.
func (r *Registry) With(opts *Options) (*Registry, error) {
	n := &Registry{
		encodings: make(map[string]*Encoding, len(r.encodings)),
		exact:     make(map[string]modelEntry, len(r.exact)),
		prefixes:  slices.Clone(r.prefixes),
	}
	for k, v := range r.encodings {
		n.encodings[k] = v
	}
	for k, v := range r.exact {
		n.exact[k] = v
	}
	if err := n.add(opts); err != nil {
		return nil, err
	}
	return n, nil
}

// add validates opts and merges it into r (during construction only).
func (r *Registry) add(opts *Options) error {
	if opts == nil {
		return nil
	}
	for i, e := range opts.Encodings {
		if e == nil {
			return fmt.Errorf("tokenizer: Options.Encodings[%d]: must not be nil", i)
		}
		if _, dup := r.encodings[e.name]; dup {
			return fmt.Errorf("tokenizer: Options.Encodings[%d]: encoding %s already registered", i, e.name)
		}
		r.encodings[e.name] = e
	}
	seen := make(map[Model]bool)
	for i, m := range opts.Models {
		if m.Name == "" {
			return fmt.Errorf("tokenizer: Options.Models[%d].Name: must not be empty", i)
		}
		key := Model{Name: m.Name, Prefix: m.Prefix}
		if seen[key] {
			return fmt.Errorf("tokenizer: Options.Models[%d]: duplicate model %q", i, m.Name)
		}
		seen[key] = true
		enc, ok := r.encodings[m.Encoding]
		if !ok {
			return fmt.Errorf("tokenizer: Options.Models[%d].Encoding: %w %q", i, ErrUnknownEncoding, m.Encoding)
		}
		ent := modelEntry{model: m, enc: enc, framing: DefaultFraming(enc.name)}
		if m.Framing != nil {
			ent.framing = *m.Framing
		}
		if !m.Prefix {
			r.exact[m.Name] = ent
			continue
		}
		r.prefixes = slices.DeleteFunc(r.prefixes, func(e modelEntry) bool { return e.model.Name == m.Name })
		r.prefixes = append(r.prefixes, ent)
	}
	slices.SortFunc(r.prefixes, func(a, b modelEntry) int {
		return cmp.Or(cmp.Compare(len(b.model.Name), len(a.model.Name)), strings.Compare(a.model.Name, b.model.Name))
	})
	return nil
}

// Encoding returns the encoding called name, preparing its vocabulary
// first if this is its first use in the process (about a millisecond for
// the built-ins, whose tables are embedded). It returns an error
// wrapping [ErrUnknownEncoding] if there is no such encoding.
func (r *Registry) Encoding(name string) (*Encoding, error) {
	e, ok := r.encodings[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownEncoding, name)
	}
	e.ready()
	return e, nil
}

// Encodings returns the names of the registered encodings, sorted. The
// caller owns the returned slice.
func (r *Registry) Encodings() []string {
	names := make([]string, 0, len(r.encodings))
	for n := range r.encodings {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Models returns the model table: exact names sorted, then prefixes in
// matching order (longest first). The caller owns the returned slice.
func (r *Registry) Models() []Model {
	out := make([]Model, 0, len(r.exact)+len(r.prefixes))
	for _, e := range r.exact {
		out = append(out, e.model)
	}
	slices.SortFunc(out, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range r.prefixes {
		out = append(out, e.model)
	}
	return out
}

// lookup resolves model by the rule documented on EncodingForModel.
func (r *Registry) lookup(model string) (modelEntry, bool) {
	if e, ok := r.exact[model]; ok { // a user entry may name "ft:..." itself
		return e, true
	}
	name, fineTune := normalizeModel(model)
	if e, ok := r.exact[name]; ok {
		if fineTune && e.framing.Verified {
			e.framing.Verified = false // the snapshot was verified, not its fine-tunes
		}
		return e, true
	}
	for _, e := range r.prefixes {
		if strings.HasPrefix(name, e.model.Name) {
			return e, true
		}
	}
	return modelEntry{}, false
}

// EncodingForModel returns the encoding of model, loading it if needed.
//
// The lookup is deterministic: first the exact name; then, after dropping
// an "openai/" routing prefix and reducing a fine-tune to its base model
// ("ft:BASE:org:suffix:id" and legacy "BASE:ft-…"), the exact name again;
// then the longest matching prefix. It returns an error wrapping
// [ErrUnknownModel] if nothing matches; it never guesses.
func (r *Registry) EncodingForModel(model string) (*Encoding, error) {
	e, ok := r.lookup(model)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownModel, model)
	}
	e.enc.ready()
	return e.enc, nil
}

// Counter returns the counter for model: its encoding (exact counts) and
// its framing. It returns an error wrapping [ErrUnknownModel] if the model
// table has no entry; use [Registry.Estimator] for an explicit estimate
// instead.
func (r *Registry) Counter(model string) (Counter, error) {
	e, ok := r.lookup(model)
	if !ok {
		return Counter{}, fmt.Errorf("%w %q", ErrUnknownModel, model)
	}
	e.enc.ready()
	if e.framing.Images == (ImageRule{}) {
		name, _ := normalizeModel(model)
		e.framing.Images = imageRuleFor(name)
	}
	return Counter{model: model, enc: e.enc, framing: e.framing, set: true}, nil
}

// CounterForEncoding returns a counter that tokenizes with the named
// encoding when no model is known: its text counts are Exact for that
// encoding, and its framing is the encoding's chat format when it was
// registered with one ([EncodingSpec].ChatFormat, verified, so Exact),
// else [DefaultFraming] (Estimated). It returns an error wrapping
// [ErrUnknownEncoding] if there is no such encoding.
func (r *Registry) CounterForEncoding(encoding string) (Counter, error) {
	e, err := r.Encoding(encoding)
	if err != nil {
		return Counter{}, err
	}
	f := DefaultFraming(e.name)
	if e.framing != nil {
		f = *e.framing
	}
	return Counter{enc: e, framing: f, set: true}, nil
}

// Estimator returns the counter for a model whose tokenizer is unknown:
// text goes through [Estimate] and the framing is DefaultFraming("")
// (FuncInit 10, the larger cookbook value); every count is Estimated.
func (r *Registry) Estimator() Counter {
	return Counter{}
}

// Counter counts text and requests for one model. Get one from
// [Registry.Counter], [Registry.CounterForEncoding] or
// [Registry.Estimator]; the zero Counter is the estimator. A Counter is a
// small immutable value, safe for concurrent use.
type Counter struct {
	model   string
	enc     *Encoding // nil: the estimator, or caller
	caller  func(text string) int
	framing Framing
	set     bool // framing is set (the zero Counter uses DefaultFraming(""))
	// scale, when positive, calibrates the estimator: every estimated
	// text count is multiplied by it (see Calibrated); safety is the
	// margin, in percent, it includes.
	scale  float64
	safety int
}

// CallerCounter returns a counter whose text counts are count's, labelled
// [CallerSupplied] (a program's own tokenizer, upstream's
// token_counter(C)); framing is the estimator's. count must be safe to
// call from the goroutine that uses the counter, and is called once per
// text: a pack calls it for each candidate message and section.
func CallerCounter(count func(text string) int) Counter {
	return Counter{caller: count}
}

// WithSchemaFree returns the counter with [Framing].SchemaFree set: for a
// server that applies a response format as a sampling grammar whatever the
// model's chat format.
func (c Counter) WithSchemaFree() Counter {
	c.framing, c.set = c.Framing(), true
	c.framing.SchemaFree = true
	return c
}

// Calibrated returns the estimator calibrated against a provider: ratio
// is the provider's reported prompt tokens per token of this counter's
// estimate (learnt from usage; 1.25 when the provider counts 25% more),
// and safetyPercent the margin added on top. Every text count becomes
// ceil(Estimate × ratio × (100+safetyPercent)/100), labelled Estimated
// with basis [BasisCalibrated] and SafetyPercent safetyPercent, and every
// framing and tool-schema constant is scaled alike, so a request's stages
// still sum to its total. Image parts keep the model family's rule.
// A counter with an encoding or a caller's count is returned unchanged: a
// count is calibrated only where no tokenizer is known, and never
// labelled exact. A ratio that is not positive and finite changes
// nothing.
func (c Counter) Calibrated(ratio float64, safetyPercent int) Counter {
	if c.enc != nil || c.caller != nil || !(ratio > 0) || math.IsInf(ratio, 0) {
		return c
	}
	f := c.Framing()
	c.scale, c.safety = ratio*float64(100+max(0, safetyPercent))/100, max(0, safetyPercent)
	for _, n := range []*int{&f.PerMessage, &f.PerName, &f.ReplyPriming, &f.FuncInit, &f.PropInit, &f.PropKey,
		&f.EnumInit, &f.EnumItem, &f.FuncEnd, &f.PerToolCall} {
		*n = c.scaled(*n)
	}
	c.framing, c.set = f, true
	return c
}

// scaled is n under the calibration, rounded up (towards zero for a
// negative constant: the conservative side either way).
func (c Counter) scaled(n int) int {
	return int(math.Ceil(float64(n)*c.scale - 1e-9)) // NB: 100 × 1.05 is 105.00000000000001
}

// Model returns the model name the counter was made for ("" if none).
func (c Counter) Model() string { return c.model }

// Encoding returns the counter's encoding, or nil for the estimator.
func (c Counter) Encoding() *Encoding { return c.enc }

// Framing returns the chat-framing rules the counter applies.
func (c Counter) Framing() Framing {
	if !c.set {
		return DefaultFraming("")
	}
	return c.framing
}

func (c Counter) encodingName() string {
	if c.enc == nil {
		return ""
	}
	return c.enc.name
}

// Count counts text: Exact with the counter's encoding (basis [BasisBPE]),
// the caller's count for a [CallerCounter], or the [Estimate] for the
// estimator.
func (c Counter) Count(text string) Count {
	switch {
	case c.caller != nil:
		return Count{Tokens: c.caller(text), Method: CallerSupplied, Basis: BasisCaller}
	case c.enc == nil && c.scale > 0:
		return Count{Tokens: c.scaled(Estimate(text).Tokens), Method: Estimated, Basis: BasisCalibrated, SafetyPercent: c.safety}
	case c.enc == nil:
		return Estimate(text)
	}
	return Count{Tokens: c.enc.Count(text), Method: Exact, Basis: BasisBPE, Encoding: c.enc.name}
}
