package store

import (
	"encoding/binary"

	index "github.com/blevesearch/bleve_index_api"
)

// BM25 needs, per scored field, the number of documents with the field and
// their total length in tokens (avgdl = tokens / docs), over the collection
// searched: one conversation (its cold history) or every conversation.
// Bleve does not keep the total (its "field cardinality" counts distinct
// terms, and a memory-only index has none), so the indexer keeps it in the
// index's own internal storage, written in the same batch as the documents
// it counts: a search reads statistics and postings from one snapshot, and
// they agree.
//
//	rlmpl.schema       schemaID: the fields' layout and the language
//	rlmpl.stats        indexStats of every document
//	rlmpl.conv/<num>   convIndex of conversation num
//
// Messages are immutable and their sequences dense, so the per-conversation
// seq says exactly which documents a snapshot holds: 1..seq. A document
// indexed again (replay after a crash) is counted once.
var (
	internalSchema = []byte("rlmpl.schema")
	internalStats  = []byte("rlmpl.stats")
)

func internalConv(num uint64) []byte { return be64([]byte("rlmpl.conv/"), num) }

// scoredFields are the fields BM25 ranks, in the order of
// indexStats.fields.
var scoredFields = [...]string{fieldBody, fieldAttach}

// fieldStats are one scored field's BM25 statistics.
type fieldStats struct {
	docs   uint64 // documents with at least one token in the field
	tokens uint64 // their total length in tokens
}

func (f fieldStats) avgdl() float64 {
	if f.docs == 0 {
		return 1
	}
	return float64(f.tokens) / float64(f.docs)
}

// indexStats are the statistics of a set of documents (an index snapshot,
// a scanned tail, or both).
type indexStats struct {
	docs   uint64
	fields [len(scoredFields)]fieldStats
}

// count adds one document whose scored fields have the given lengths.
func (s *indexStats) count(lens [len(scoredFields)]int) {
	s.docs++
	for i, n := range lens {
		if n > 0 {
			s.fields[i].docs++
			s.fields[i].tokens += uint64(n)
		}
	}
}

func (s indexStats) encode() []byte {
	b := binary.AppendUvarint(nil, s.docs)
	for _, f := range s.fields {
		b = binary.AppendUvarint(b, f.docs)
		b = binary.AppendUvarint(b, f.tokens)
	}
	return b
}

func decodeStats(b []byte) (indexStats, error) {
	var s indexStats
	if len(b) == 0 {
		return s, nil // a fresh index
	}
	vals := make([]uint64, 0, 1+2*len(s.fields))
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return s, corrupt("index statistics")
		}
		vals, b = append(vals, v), b[n:]
	}
	if len(vals) != cap(vals) {
		return s, corrupt("index statistics: %d values", len(vals))
	}
	s.docs = vals[0]
	for i := range s.fields {
		s.fields[i] = fieldStats{docs: vals[1+2*i], tokens: vals[2+2*i]}
	}
	return s, nil
}

// readStats returns the statistics of snapshot r.
func readStats(r index.IndexReader) (indexStats, error) {
	b, err := r.GetInternal(internalStats)
	if err != nil {
		return indexStats{}, err
	}
	return decodeStats(b)
}

// convIndex is what an index holds of one conversation: its messages
// 1..held, with their statistics.
type convIndex struct {
	held  int64
	stats indexStats
}

func (c convIndex) encode() []byte {
	return append(binary.AppendUvarint(nil, uint64(c.held)), c.stats.encode()...)
}

func decodeConvIndex(b []byte) (convIndex, error) {
	if len(b) == 0 {
		return convIndex{}, nil // nothing of it indexed yet
	}
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return convIndex{}, corrupt("index statistics of a conversation")
	}
	st, err := decodeStats(b[n:])
	return convIndex{int64(v), st}, err
}

// readConv returns what snapshot r holds of conversation num.
func readConv(r index.IndexReader, num uint64) (convIndex, error) {
	b, err := r.GetInternal(internalConv(num))
	if err != nil {
		return convIndex{}, err
	}
	return decodeConvIndex(b)
}
