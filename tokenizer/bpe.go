package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// Split patterns of the OpenAI encodings, in the regexp2 syntax tiktoken's
// pat_str uses. Use them as [EncodingSpec.Pattern] for vocabularies built
// on the same pre-tokenizer (Llama 3, for example, uses PatternCl100k).
const (
	PatternR50k   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	PatternCl100k = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	PatternO200k  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// EncodingSpec describes an encoding read from a tiktoken-format ranks
// file, for [NewEncoding].
type EncodingSpec struct {
	// Name is the encoding's name, e.g. "llama3". Required.
	Name string

	// Ranks is a tiktoken-format ranks file: one "<base64 token> <rank>"
	// pair per line (the format of OpenAI's *.tiktoken files and of
	// Meta's Llama 3 tokenizer.model). Empty lines are skipped. Every one
	// of the 256 single bytes must have a rank, and ranks must be dense
	// (at most 65,536 unused IDs below the highest). Required.
	Ranks io.Reader

	// Pattern is the pre-tokenizer split regexp in tiktoken's syntax
	// (lookahead allowed), e.g. [PatternCl100k]. Required.
	Pattern string

	// SpecialTokens maps special-token names to IDs outside the ranks.
	// Optional.
	SpecialTokens map[string]int

	// ChatFormat names the chat template of the encoding's models (see
	// [ChatFormat]): counters made for the encoding frame requests by it,
	// exactly. Zero means none: [DefaultFraming], Estimated.
	ChatFormat string
}

// NewEncoding builds an encoding from spec. It reads spec.Ranks to the end
// and keeps nothing of it but the vocabulary; the caller opens and closes
// any file. The result counts exactly for the model the ranks belong to;
// add it to a registry with [Options.Encodings].
//
// NewEncoding validates the ranks (well-formed lines, no duplicate tokens
// or ranks, all 256 single bytes present), the pattern, and the special
// tokens (no ID shared with a rank).
func NewEncoding(spec EncodingSpec) (*Encoding, error) {
	if spec.Name == "" {
		return nil, errors.New("tokenizer: EncodingSpec.Name: must not be empty")
	}
	fail := func(field string, err error) (*Encoding, error) {
		return nil, fmt.Errorf("tokenizer: encoding %s: EncodingSpec.%s: %w", spec.Name, field, err)
	}
	if spec.Ranks == nil {
		return fail("Ranks", errors.New("must not be nil"))
	}
	if spec.Pattern == "" {
		return fail("Pattern", errors.New("must not be empty"))
	}
	re, err := regexp2.Compile(spec.Pattern, regexp2.None) // not MustCompile: see builtin.go
	if err != nil {
		return fail("Pattern", err)
	}
	b, err := readRanks(spec.Ranks)
	if err != nil {
		return fail("Ranks", err)
	}
	b.re = re

	names := make([]string, 0, len(spec.SpecialTokens))
	for n := range spec.SpecialTokens {
		names = append(names, n)
	}
	slices.Sort(names) // deterministic decode text when names share an id
	specials := make([]special, 0, len(names))
	for _, n := range names {
		id := spec.SpecialTokens[n]
		if n == "" || id < 0 {
			return fail("SpecialTokens", fmt.Errorf("invalid entry %q: %d", n, id))
		}
		if id < b.n && b.token(id) != "" {
			return fail("SpecialTokens", fmt.Errorf("%q: id %d is also a rank", n, id))
		}
		specials = append(specials, special{n, id})
	}
	e := newEncoding(spec.Name, func() codec { return b }, specials)
	if spec.ChatFormat != "" {
		f, ok := ChatFormat(spec.ChatFormat)
		if !ok {
			return fail("ChatFormat", fmt.Errorf("unknown chat format %q (known: %s)", spec.ChatFormat, strings.Join(ChatFormats(), ", ")))
		}
		e.framing = &f
	}
	e.ready()
	return e, nil
}

// maxRankHoles is how many unused IDs below the highest rank readRanks
// accepts.
const maxRankHoles = 1 << 16

// readRanks parses a tiktoken-format ranks file.
func readRanks(r io.Reader) (*bpe, error) {
	ranks := make(map[string]int, 1<<16)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	maxRank := -1
	for sc.Scan() {
		line++
		fields := bytes.Fields(sc.Bytes())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want \"<base64 token> <rank>\"", line)
		}
		tok, err := base64.StdEncoding.DecodeString(string(fields[0]))
		if err != nil || len(tok) == 0 {
			return nil, fmt.Errorf("line %d: bad base64 token %q", line, fields[0])
		}
		rank, err := strconv.Atoi(string(fields[1]))
		if err != nil || rank < 0 || rank >= math.MaxInt32 {
			return nil, fmt.Errorf("line %d: bad rank %q", line, fields[1])
		}
		if _, dup := ranks[string(tok)]; dup {
			return nil, fmt.Errorf("line %d: duplicate token %q", line, fields[0])
		}
		ranks[string(tok)] = rank
		maxRank = max(maxRank, rank)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ranks) == 0 {
		return nil, errors.New("no ranks")
	}
	if maxRank >= len(ranks)+maxRankHoles {
		// Ranks are dense in every tiktoken file; refusing sparse ones keeps
		// a stray huge rank from allocating gigabytes.
		return nil, fmt.Errorf("ranks not dense: highest %d for %d tokens", maxRank, len(ranks))
	}
	tokens := make([]string, maxRank+1)
	for tok, rank := range ranks {
		if tokens[rank] != "" {
			return nil, fmt.Errorf("duplicate rank %d", rank)
		}
		tokens[rank] = tok
	}
	for c := range 256 {
		if _, ok := ranks[string([]byte{byte(c)})]; !ok {
			return nil, fmt.Errorf("single byte 0x%02x has no rank (not a byte-level BPE)", c)
		}
	}
	return &bpe{vocab: newVocab(tokens)}, nil
}

// bpe is tiktoken's byte-pair encoder over a vocabulary table. It is
// read-only once built, so safe for concurrent use (regexp2 pools its
// runners).
type bpe struct {
	*vocab
	next func(s string, i int) int // the built-ins' pre-tokenizer (pretok.go), or nil
	re   *regexp2.Regexp           // the pattern, when next is nil
}

// count encodes each piece into one buffer, reused: it grows only for a
// piece of more tokens than any before, not per piece.
func (b *bpe) count(text string) int {
	var scratch [64]int
	ids := scratch[:0]
	n := 0
	b.split(text, func(piece string) {
		ids = b.encodePiece(ids[:0], piece)
		n += len(ids)
	})
	return n
}

func (b *bpe) encode(dst []int, text string) []int {
	b.split(text, func(piece string) {
		dst = b.encodePiece(dst, piece)
	})
	return dst
}

func (b *bpe) decode(dst []byte, ids []int) ([]byte, int, bool) {
	for _, id := range ids {
		if id < 0 || id >= b.n || b.token(id) == "" {
			return dst, id, false
		}
		dst = append(dst, b.token(id)...)
	}
	return dst, 0, true
}

// split calls f with each pre-token of text, in order. With a hand-written
// pre-tokenizer it walks the text once. Otherwise it asks regexp2 for
// all match offsets at once (FindAllStringIndex runs the capture-free quick
// program and allocates no Match or string per piece), which is about
// twice as fast as walking FindNextMatch — but holds every offset, so a
// long text is matched a window at a time (splitWindow bytes, larger when
// one pre-token is): a match that ends more than one character before the
// window's end is the match the whole text gives (the pattern looks at
// most one character past a match), the rest is matched again in the next
// window.
func (b *bpe) split(text string, f func(piece string)) {
	if b.next != nil {
		for i := 0; i < len(text); {
			j := b.next(text, i)
			f(text[i:j])
			i = j
		}
		return
	}
	for pos, window := 0, splitWindow; pos < len(text); {
		end := min(pos+window, len(text))
		idx, err := b.re.FindAllStringIndex(text[pos:end], -1)
		if err != nil {
			// regexp2 fails only on a match timeout, and none is set.
			panic(fmt.Sprintf("tokenizer: split: %v", err))
		}
		if end == len(text) {
			for _, m := range idx {
				f(text[pos+m[0] : pos+m[1]])
			}
			return
		}
		kept := 0
		for _, m := range idx {
			if m[1] >= end-pos-utf8.UTFMax-1 {
				break
			}
			f(text[pos+m[0] : pos+m[1]])
			kept = m[1]
		}
		if kept == 0 {
			window *= 2 // one pre-token longer than the window
			continue
		}
		pos, window = pos+kept, splitWindow
	}
}

// splitWindow bounds the bytes split matches at once.
const splitWindow = 64 << 10

// encodePiece appends the tokens of one pre-token.
func (b *bpe) encodePiece(dst []int, piece string) []int {
	if r := b.rank(piece); r != noRank {
		return append(dst, r)
	}
	if len(piece) < mergeHeapMin {
		return b.mergeScan(dst, piece)
	}
	return b.mergeHeap(dst, piece)
}

// mergeHeapMin is the piece length from which encodePiece uses the
// O(n log n) heap merge instead of tiktoken's O(n²) scan. Both give the same
// tokens: the lowest-ranked pair merges first, the leftmost among equals.
const mergeHeapMin = 96

const noRank = math.MaxInt

// mergeScan is tiktoken's _byte_pair_merge.
func (b *bpe) mergeScan(dst []int, piece string) []int {
	type part struct{ start, rank int }
	var buf [mergeHeapMin + 1]part
	parts := buf[:0]
	for i := range len(piece) - 1 {
		parts = append(parts, part{i, b.rank(piece[i : i+2])})
	}
	parts = append(parts, part{len(piece) - 1, noRank}, part{len(piece), noRank})
	rankAt := func(i int) int {
		if i+3 < len(parts) {
			return b.rank(piece[parts[i].start:parts[i+3].start])
		}
		return noRank
	}
	for {
		minRank, minI := noRank, -1
		for i, p := range parts[:len(parts)-1] {
			if p.rank < minRank {
				minRank, minI = p.rank, i
			}
		}
		if minI < 0 {
			break
		}
		if minI > 0 {
			parts[minI-1].rank = rankAt(minI - 1)
		}
		parts[minI].rank = rankAt(minI)
		parts = append(parts[:minI+1], parts[minI+2:]...)
	}
	for i := range len(parts) - 1 {
		dst = append(dst, b.rank(piece[parts[i].start:parts[i+1].start]))
	}
	return dst
}

// mergeHeap gives mergeScan's result in O(n log n) for long pieces: part
// boundaries form a linked list and candidate merges sit in a min-heap
// ordered by (rank, start); stale candidates are skipped when popped.
func (b *bpe) mergeHeap(dst []int, piece string) []int {
	n := len(piece)
	sc := heapScratch.Get().(*mergeScratch)
	nodes := slices.Grow(sc.nodes[:0], n+1)[:n+1]
	for i := range nodes {
		nodes[i] = mergeNode{i - 1, i + 1, noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int) int {
		j := nodes[i].next
		if j < 0 || nodes[j].next < 0 {
			return noRank
		}
		return b.rank(piece[i:nodes[j].next])
	}
	h := slices.Grow(sc.h[:0], n)
	defer func() { sc.nodes, sc.h = nodes, h; sc.put() }()
	for i := 0; i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, candidate{r, i})
		}
	}
	h.init()
	for len(h) > 0 {
		top := h.pop()
		i := top.start
		if nodes[i].rank != top.rank {
			continue // stale
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		for _, x := range [2]int{i, nodes[i].prev} {
			if x < 0 {
				continue
			}
			if nodes[x].rank = rankOf(x); nodes[x].rank != noRank {
				h.push(candidate{nodes[x].rank, x})
			}
		}
	}
	for i := 0; nodes[i].next >= 0; i = nodes[i].next {
		dst = append(dst, b.rank(piece[i:nodes[i].next]))
	}
	return dst
}

type mergeNode struct{ prev, next, rank int } // rank of merging with next

// mergeScratch is mergeHeap's working memory, pooled so that a long piece
// costs no allocation once the pool holds buffers of its size.
type mergeScratch struct {
	nodes []mergeNode
	h     candidates
}

var heapScratch = sync.Pool{New: func() any { return new(mergeScratch) }}

// maxPooledScratch bounds the piece length whose buffers return to the
// pool, so that one huge piece does not pin its buffers for good.
const maxPooledScratch = 1 << 16

func (sc *mergeScratch) put() {
	if cap(sc.nodes) <= maxPooledScratch {
		heapScratch.Put(sc)
	}
}

type candidate struct{ rank, start int }

// candidates is a binary min-heap by (rank, start).
type candidates []candidate

func (h candidates) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].start < h[b].start
}

func (h candidates) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candidates) push(c candidate) {
	*h = append(*h, c)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *candidates) pop() candidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h candidates) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
