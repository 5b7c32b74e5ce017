package store

import (
	"bytes"
	"context"
	"math"

	index "github.com/blevesearch/bleve_index_api"
)

// posting walks the posting list of one term in one field of an index
// snapshot, in the snapshot's document order (scorch: 8-byte big-endian
// numbers; a memory-only index: the document ids; bytewise order either
// way).
type posting struct {
	r    index.TermFieldReader
	cur  index.TermFieldDoc // the current document; cur.ID is reused by next
	done bool
}

// openPosting opens the postings of term in field, positioned on the first
// document. withFreq asks for term frequencies and field lengths (scored
// clauses); membership tests do without, which is much cheaper to skip
// through.
func openPosting(r index.IndexReader, term, field string, withFreq bool) (*posting, error) {
	tfr, err := r.TermFieldReader(context.Background(), []byte(term), field, withFreq, withFreq, false)
	if err != nil {
		return nil, err
	}
	p := &posting{r: tfr}
	return p, p.next()
}

func (p *posting) next() error {
	p.cur.Reset() // NB: the memory-only index appends to a reused ID
	d, err := p.r.Next(&p.cur)
	p.done = d == nil || err != nil
	return err
}

// seekSteps is how many postings seek walks before it jumps: a jump
// (Advance) restarts an iterator of the memory-only index and decodes a
// chunk of a scorch segment, so nearby targets are cheaper to walk to.
const seekSteps = 4

// seek moves to the first document >= id. It never moves back: NB
// bleve's Advance to an id at or before the current one restarts the
// reader from the start.
func (p *posting) seek(id []byte) error {
	for i := 0; i < seekSteps; i++ {
		if p.done || bytes.Compare(p.cur.ID, id) >= 0 {
			return nil
		}
		if err := p.next(); err != nil {
			return err
		}
	}
	if p.done || bytes.Compare(p.cur.ID, id) >= 0 {
		return nil
	}
	p.cur.Reset()
	d, err := p.r.Advance(id, &p.cur)
	p.done = d == nil || err != nil
	return err
}

// at reports whether the posting is on document id after seeking to it.
func (p *posting) at(id []byte) (bool, error) {
	err := p.seek(id)
	return err == nil && !p.done && bytes.Equal(p.cur.ID, id), err
}

// length is the document's length in tokens of the posting's field:
// the index keeps it as a norm, 1/sqrt(length) in a float32.
func (p *posting) length() int {
	if p.cur.Norm <= 0 {
		return 0
	}
	return int(math.Round(1 / (p.cur.Norm * p.cur.Norm)))
}

func closeAll(ps []*posting) {
	for _, p := range ps {
		if p != nil {
			p.r.Close()
		}
	}
}

// union is a disjunction of membership postings: a document is in it if it
// is in any of them.
type union []*posting

// seek returns the first document >= id in any member (nil when none).
func (u union) seek(id []byte) ([]byte, error) {
	var min []byte
	for _, p := range u {
		if err := p.seek(id); err != nil {
			return nil, err
		}
		if !p.done && (min == nil || bytes.Compare(p.cur.ID, min) < 0) {
			min = p.cur.ID
		}
	}
	return min, nil
}

// member returns the index of a member on document id, or -1.
func (u union) member(id []byte) int {
	for i, p := range u {
		if !p.done && bytes.Equal(p.cur.ID, id) {
			return i
		}
	}
	return -1
}

// filterSet is a conjunction of unions (conversation scope, roles,
// session, months): the documents a search may return.
type filterSet struct {
	groups []union
	buf    []byte
}

// seek returns the first document >= id in every group (nil when none),
// leapfrogging: each group jumps to the candidate of the one before.
func (f *filterSet) seek(id []byte) ([]byte, error) {
	f.buf = append(f.buf[:0], id...)
	for agreed := 0; agreed < len(f.groups); {
		for _, g := range f.groups {
			d, err := g.seek(f.buf)
			if err != nil || d == nil {
				return nil, err
			}
			if bytes.Equal(d, f.buf) {
				agreed++
			} else {
				f.buf, agreed = append(f.buf[:0], d...), 1
			}
			if agreed == len(f.groups) {
				break
			}
		}
	}
	return f.buf, nil
}

func (f *filterSet) close() {
	for _, g := range f.groups {
		closeAll(g)
	}
}
