// Package longconv holds the retrieval evaluation of rlmpl's store: long
// conversations with questions whose answers are labelled with the turns
// that hold them (evidence), a deterministic generator of such a set
// ([Synthetic], committed as testdata/synthetic.json), a loader for the
// public LoCoMo benchmark ([LoadLoCoMo]; never committed: it is licensed
// CC BY-NC), the plain BM25 baseline the store is measured against
// ([Plain]), and recall@k accounting ([Table]).
//
// It does not import the store (the store's tests drive it: `make
// eval-retrieval`), so the baseline shares no code with what it measures.
package longconv
