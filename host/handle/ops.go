package handle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Request is one operation on a handle.
type Request struct {
	Op Op
	// Peek: Selector is "metadata", "head", "tail" or "item", with N.
	Selector string
	N        int
	// Slice: [Start, Start+Length) in characters (text) or items.
	Start, Length int
	// Search: a non-empty substring; case-insensitive unless CaseSensitive.
	// Cursor resumes a previous search (its Result.Next). Exact asks an
	// adapter with ranked search (the conversation's BM25 index) for
	// substring matching instead; memory contexts always match substrings.
	Pattern       string
	CaseSensitive bool
	Exact         bool
	Cursor        int
	// Partition: Partition is "fixed" or "lines", with N.
	Partition string
	// Map: identity, lowercase, uppercase or length.
	Transform string
	// Reduce: count or byte_count.
	Reducer string
}

// Result is a bounded operation's answer. Truncated is true only when the
// limits left out something the request asked for. Next is the search
// cursor of the first match left out (0 when none was).
type Result struct {
	Ref       Ref
	Op        Op
	Value     any
	Truncated bool
	Next      int
	Trace     Event // the operation's trace event, as context_trace/3 will list it
}

// Transforms and reducers: a closed allow-list, never a callable.
var (
	transforms = []string{"identity", "lowercase", "uppercase", "length"}
	reducers   = []string{"count", "byte_count"}
)

// Do validates lim and req, resolves ref and performs the operation,
// appending a trace event on success.
func (r *Registry) Do(ctx context.Context, ref Ref, req Request, lim Limits) (Result, error) {
	lim, err := lim.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := req.validate(); err != nil {
		return Result{}, err
	}
	e, err := r.resolve(ref)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, lim.TimeLimit)
	defer cancel()
	var w Work
	switch {
	case req.Op == OpPeek && req.Selector == "metadata":
		w = Work{Value: e.meta}
	case e.adapter != nil:
		w, err = r.adapterDo(ctx, e, req, lim)
	case e.text != nil:
		w, err = e.text.do(ctx, req, lim)
	default:
		w, err = itemsDo(ctx, e.items, req, lim)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Result{}, errorf(req.Op, KindTimeLimitExceeded, "time limit exceeded", F("time_limit", lim.TimeLimit.Seconds()))
		}
		return Result{}, err
	}
	ev := r.record(e, Event{Op: req.Op, BytesInspected: w.BytesInspected, ItemsInspected: w.ItemsInspected,
		BytesReturned: Size(w.Value), Truncated: w.Truncated, Elapsed: time.Since(start)})
	return Result{Ref: e.ref, Op: req.Op, Value: w.Value, Truncated: w.Truncated, Next: w.Next, Trace: ev}, nil
}

func (q Request) validate() error {
	bad := func(what string, v any) error {
		return errorf(q.Op, KindInvalidArgument, what, F("value", v))
	}
	switch q.Op {
	case OpPeek:
		switch q.Selector {
		case "metadata":
		case "head", "tail", "item":
			if q.N < 0 {
				return bad(q.Selector+" needs a non-negative integer", q.N)
			}
		default:
			return errorf(q.Op, KindUnsupportedSelector, "selector must be metadata, head(N), tail(N) or item(I)", F("selector", q.Selector))
		}
	case OpSlice:
		if q.Start < 0 || q.Length < 0 {
			return bad("slice needs a non-negative start and length", []any{q.Start, q.Length})
		}
	case OpSearch:
		if q.Pattern == "" {
			return errorf(q.Op, KindInvalidPattern, "search pattern must be non-empty text")
		}
		if q.Cursor < 0 {
			return bad("cursor must be non-negative", q.Cursor)
		}
	case OpPartition:
		if q.Partition != "fixed" && q.Partition != "lines" {
			return errorf(q.Op, KindUnsupportedPartition, "partition must be fixed(N) or lines(N)", F("partition", q.Partition))
		}
		if q.N < 1 {
			return bad("partition size must be a positive integer", q.N)
		}
	case OpMap:
		if !slices.Contains(transforms, q.Transform) {
			return errorf(q.Op, KindCapabilityDenied, "map allows identity, lowercase, uppercase and length only", F("capability", "map"), F("requested", q.Transform))
		}
	case OpReduce:
		if !slices.Contains(reducers, q.Reducer) {
			return errorf(q.Op, KindCapabilityDenied, "reduce allows count and byte_count only", F("capability", "reduce"), F("requested", q.Reducer))
		}
	default:
		return errorf(q.Op, KindInvalidArgument, "unknown operation")
	}
	return nil
}

func (r *Registry) adapterDo(ctx context.Context, e *entry, req Request, lim Limits) (Work, error) {
	name := e.adapter.a.Name()
	if !slices.Contains(e.adapter.ops, req.Op) {
		return Work{}, errorf(req.Op, KindCapabilityDenied, "the adapter does not declare this operation",
			F("adapter", name), F("requested", string(req.Op)))
	}
	w, err := e.adapter.a.Do(ctx, e.source, req, lim)
	if err != nil {
		var he *Error
		if errors.As(err, &he) || ctx.Err() != nil {
			return Work{}, err
		}
		return Work{}, errorf(req.Op, KindAdapterFailed, err.Error(), F("adapter", name))
	}
	// Re-bound whatever the adapter returned: its own limits are not trusted.
	v, cut := bound(w.Value, lim)
	w.Value = v
	w.Truncated = w.Truncated || cut
	return w, nil
}

// bound applies lim to a value: strings are byte-truncated at a rune
// boundary; lists are cut to MaxResults and then by the cumulative byte
// budget (a first element too large alone is kept, cut, when it is text).
func bound(v any, lim Limits) (any, bool) {
	switch v := v.(type) {
	case string:
		s := truncateUTF8(v, lim.MaxBytes)
		return s, len(s) < len(v)
	case []Item:
		return boundList(v, lim)
	case []Match:
		return boundList(v, lim)
	case []Part:
		return boundList(v, lim)
	case []string:
		return boundList(v, lim)
	}
	return v, false
}

func boundList[T any](v []T, lim Limits) ([]T, bool) {
	out := v[:min(len(v), lim.MaxResults)]
	used := 0
	for i, x := range out {
		n := Size(x)
		if used+n > lim.MaxBytes {
			return out[:i], true
		}
		used += n
	}
	return out, len(out) < len(v)
}

// textData is an immutable text context with its lines split once.
type textData struct {
	text  string
	runes int
	lines []string
}

func newTextData(s string) *textData {
	return &textData{text: s, runes: utf8.RuneCountInString(s), lines: lines(s)}
}

func (t *textData) do(ctx context.Context, q Request, lim Limits) (Work, error) {
	switch q.Op {
	case OpPeek:
		switch q.Selector {
		case "head":
			return textPart(runeSlice(t.text, 0, q.N), lim), nil
		case "tail":
			return textPart(runeSlice(t.text, max(0, t.runes-q.N), q.N), lim), nil
		}
		return Work{}, errorf(q.Op, KindUnsupportedSelector, "item(I) applies to term contexts; use slice or lines", F("selector", q.Selector))
	case OpSlice:
		if q.Start > t.runes {
			return Work{}, errorf(q.Op, KindOutOfRange, "start is beyond the text", F("start", q.Start), F("length", t.runes))
		}
		return textPart(runeSlice(t.text, q.Start, q.Length), lim), nil
	case OpSearch:
		return search(ctx, len(t.lines), func(i int) (string, any) { return t.lines[i], t.lines[i] }, q, lim)
	case OpPartition:
		if q.Partition == "lines" {
			var parts []Part
			for i := 0; i*q.N < len(t.lines); i++ {
				group := t.lines[i*q.N : min(len(t.lines), (i+1)*q.N)]
				parts = append(parts, Part{Index: i, Start: i * q.N, Length: len(group), Value: slices.Clone(group)})
			}
			return listWork(parts, len(t.text), len(t.lines), lim), nil
		}
		var parts []Part
		for i := 0; i*q.N < t.runes; i++ {
			s := runeSlice(t.text, i*q.N, q.N)
			parts = append(parts, Part{Index: i, Start: i * q.N, Length: utf8.RuneCountInString(s), Value: s})
			if len(parts) > lim.MaxResults {
				break // enough to know the result is cut
			}
		}
		return listWork(parts, len(t.text), len(t.lines), lim), nil
	case OpMap:
		out := make([]any, 0, min(len(t.lines), lim.MaxResults+1))
		for _, l := range t.lines {
			out = append(out, transform(q.Transform, l, l))
			if len(out) > lim.MaxResults {
				break
			}
		}
		return mapWork(out, len(t.lines), len(t.text), lim), nil
	case OpReduce:
		if q.Reducer == "count" {
			return Work{Value: int64(len(t.lines)), ItemsInspected: len(t.lines), BytesInspected: len(t.text)}, nil
		}
		return Work{Value: int64(len(t.text)), BytesInspected: len(t.text)}, nil
	}
	return Work{}, errorf(q.Op, KindInvalidArgument, "unknown operation")
}

func textPart(s string, lim Limits) Work {
	v := truncateUTF8(s, lim.MaxBytes)
	return Work{Value: v, Truncated: len(v) < len(s), BytesInspected: len(s)}
}

func itemsDo(ctx context.Context, items []Item, q Request, lim Limits) (Work, error) {
	switch q.Op {
	case OpPeek:
		switch q.Selector {
		case "head":
			return listWork(items[:min(q.N, len(items))], Size(items[:min(q.N, len(items))]), min(q.N, len(items)), lim), nil
		case "tail":
			from := max(0, len(items)-q.N)
			return listWork(items[from:], Size(items[from:]), len(items)-from, lim), nil
		}
		if q.N >= len(items) {
			return Work{}, errorf(q.Op, KindOutOfRange, "no item at this index", F("index", q.N), F("items", len(items)))
		}
		it := items[q.N]
		if len(it.Text) > lim.MaxBytes {
			return Work{Value: Item{Text: truncateUTF8(it.Text, lim.MaxBytes)}, Truncated: true, BytesInspected: len(it.Text), ItemsInspected: 1}, nil
		}
		return Work{Value: it, BytesInspected: len(it.Text), ItemsInspected: 1}, nil
	case OpSlice:
		if q.Start > len(items) {
			return Work{}, errorf(q.Op, KindOutOfRange, "start is beyond the list", F("start", q.Start), F("items", len(items)))
		}
		part := items[q.Start:min(len(items), q.Start+q.Length)]
		return listWork(part, Size(part), len(part), lim), nil
	case OpSearch:
		return search(ctx, len(items), func(i int) (string, any) { return items[i].Text, items[i] }, q, lim)
	case OpPartition:
		if q.Partition == "lines" {
			return Work{}, errorf(q.Op, KindUnsupportedPartition, "lines(N) applies to text contexts", F("partition", "lines"))
		}
		var parts []Part
		for i := 0; i*q.N < len(items); i++ {
			group := items[i*q.N : min(len(items), (i+1)*q.N)]
			parts = append(parts, Part{Index: i, Start: i * q.N, Length: len(group), Value: slices.Clone(group)})
			if len(parts) > lim.MaxResults {
				break
			}
		}
		return listWork(parts, Size(items), len(items), lim), nil
	case OpMap:
		out := make([]any, 0, min(len(items), lim.MaxResults+1))
		for _, it := range items {
			out = append(out, transform(q.Transform, it.Text, it))
			if len(out) > lim.MaxResults {
				break
			}
		}
		return mapWork(out, len(items), Size(items), lim), nil
	case OpReduce:
		if q.Reducer == "count" {
			return Work{Value: int64(len(items)), ItemsInspected: len(items)}, nil
		}
		return Work{Value: int64(Size(items)), ItemsInspected: len(items), BytesInspected: Size(items)}, nil
	}
	return Work{}, errorf(q.Op, KindInvalidArgument, "unknown operation")
}

func transform(name, text string, item any) any {
	switch name {
	case "lowercase":
		return strings.ToLower(text)
	case "uppercase":
		return strings.ToUpper(text)
	case "length":
		return int64(utf8.RuneCountInString(text))
	}
	return item
}

// mapWork bounds a map result: a []Item when every value is an Item,
// else the values rendered as strings or integers in an []any.
func mapWork(out []any, items, bytes int, lim Limits) Work {
	kept, used := 0, 0
	for _, v := range out {
		if kept == lim.MaxResults {
			break
		}
		n := Size(v)
		if used+n > lim.MaxBytes {
			break
		}
		used += n
		kept++
	}
	return Work{Value: out[:kept], Truncated: kept < items, ItemsInspected: items, BytesInspected: bytes}
}

func listWork[T any](v []T, bytes, items int, lim Limits) Work {
	out, cut := boundList(v, lim)
	return Work{Value: out, Truncated: cut, BytesInspected: bytes, ItemsInspected: items}
}

// search scans n elements from the cursor for the pattern, collecting
// matches within lim. It keeps scanning after the result is full only to
// learn whether another match exists, so Truncated never lies.
func search(ctx context.Context, n int, at func(int) (string, any), q Request, lim Limits) (Work, error) {
	pat := q.Pattern
	if !q.CaseSensitive {
		pat = strings.ToLower(pat)
	}
	var (
		matches []Match
		used    int
		w       Work
	)
	for i := q.Cursor; i < n; i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return Work{}, ctx.Err()
		}
		text, v := at(i)
		w.ItemsInspected++
		w.BytesInspected += len(text)
		hay := text
		if !q.CaseSensitive {
			hay = strings.ToLower(text)
		}
		if !strings.Contains(hay, pat) {
			continue
		}
		size := Size(v)
		if len(matches) == lim.MaxResults || used+size > lim.MaxBytes && len(matches) > 0 {
			w.Truncated, w.Next = true, i
			break
		}
		if used+size > lim.MaxBytes { // a single match larger than the budget
			if s, ok := v.(string); ok {
				v = truncateUTF8(s, lim.MaxBytes-used)
			} else {
				v = Item{Text: truncateUTF8(text, lim.MaxBytes-used)}
			}
			size = Size(v)
			w.Truncated, w.Next = true, i+1
		}
		matches = append(matches, Match{Index: i, Value: v})
		used += size
		if w.Truncated {
			break
		}
	}
	if matches == nil {
		matches = []Match{}
	}
	w.Value = matches
	return w, nil
}
