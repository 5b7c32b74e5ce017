package store

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// Languages of the full-text index ([Options].Language).
const (
	// LanguageEnglish splits words (Unicode UAX#29), drops possessives
	// ("caroline's" → "caroline") and English stop words, lower-cases and
	// stems (Porter: "designed" and "designing" → "design").
	LanguageEnglish = "en"
	// LanguageNone splits words and lower-cases them, nothing more: no stop
	// words, no stemming. For transcripts in other languages or mixed ones.
	LanguageNone = "none"
)

// noneAnalyzer is the mapping's name for LanguageNone's analyzer.
const noneAnalyzer = "rlmpl_none"

// The index's fields. Each message is one document, id "<num>/<seq>" (num
// is the conversation's internal number), storing nothing: no field
// values, term vectors or doc values (deps-notes §2.3).
//
// Scored fields carry evidence of what a message is about and are ranked
// by BM25 (rank.go):
//
//	b  body: Content.PlainText() (a tool message's content is the tool's result)
//	a  attachments: image captions ([Part.Alt]), tool call names and arguments
//
// Qualifier fields never select a message; they lift one that matches on
// a scored field when the query names them:
//
//	n  author: Message.Name ("What did Caroline say about…")
//	d  date: month and year of [Record.When] in English ("May 2023")
//
// Filter fields are keywords for [SearchOptions] filters and scopes:
//
//	c  conversation number
//	r  role name
//	s  session
//	m  month of [Record.When], "2006-01" (date range filters)
const (
	fieldBody    = "b"
	fieldAttach  = "a"
	fieldAuthor  = "n"
	fieldDate    = "d"
	fieldConv    = "c"
	fieldRole    = "r"
	fieldSession = "s"
	fieldMonth   = "m"
)

// schemaVersion changes whenever the fields above or what goes into them
// change: an index built under another schema (or another language) is
// rebuilt at open.
const schemaVersion = 2

// schemaID identifies what an index holds; it is recorded in the index.
func schemaID(language string) []byte {
	return []byte(strconv.Itoa(schemaVersion) + " " + language)
}

func analyzerName(language string) string {
	if language == LanguageNone {
		return noneAnalyzer
	}
	return en.AnalyzerName
}

func newIndexMapping(language string) (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	if err := im.AddCustomAnalyzer(noneAnalyzer, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []any{lowercase.Name},
	}); err != nil {
		return nil, err
	}
	doc := bleve.NewDocumentStaticMapping()
	text := analyzerName(language)
	for _, f := range []struct{ name, analyzer string }{
		{fieldBody, text}, {fieldAttach, text}, {fieldAuthor, text}, {fieldDate, text},
		{fieldConv, keyword.Name}, {fieldRole, keyword.Name}, {fieldSession, keyword.Name}, {fieldMonth, keyword.Name},
	} {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = f.analyzer
		fm.Store, fm.IncludeTermVectors, fm.IncludeInAll, fm.DocValues = false, false, false, false
		doc.AddFieldMappingsAt(f.name, fm)
	}
	im.DefaultMapping = doc
	im.DefaultAnalyzer = text
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	// Bleve scores nothing here: rank.go computes BM25 from the postings.
	im.ScoringModel = index.BM25Scoring
	return im, nil
}

// textAnalyzer turns text into index terms, the same way for documents and
// queries.
type textAnalyzer struct{ an analysis.Analyzer }

// terms returns the terms of s in order, repeats included.
func (a textAnalyzer) terms(s string) []string {
	if s == "" {
		return nil
	}
	toks := a.an.Analyze([]byte(s))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}

// lengths returns the token counts of d's scored fields.
func (a textAnalyzer) lengths(d docText) [len(scoredFields)]int {
	return [...]int{len(a.an.Analyze([]byte(d.body))), len(a.an.Analyze([]byte(d.attach)))}
}

// queryTerm is a distinct term of a query with the words it came from.
type queryTerm struct {
	term string
	word string // the query text of its first occurrence
}

// queryTerms returns the distinct terms of q in first-seen order.
func (a textAnalyzer) queryTerms(q string) []queryTerm {
	var out []queryTerm
	for _, t := range a.an.Analyze([]byte(q)) {
		term := string(t.Term)
		seen := false
		for _, o := range out {
			seen = seen || o.term == term
		}
		if !seen {
			out = append(out, queryTerm{term, q[t.Start:t.End]})
		}
	}
	return out
}

// docText is what a message contributes to each field of its document.
type docText struct {
	body, attach, author, date string
	role                       Role
	session, month             string
	partial                    bool // body or attach was cut to maxIndexedText
}

// maxIndexedText bounds the text of one field that ranked search reads:
// a pasted 20 MB log would otherwise take hundreds of megabytes to
// analyze, for terms already in its first megabyte. Exact (substring)
// search still reads everything.
const maxIndexedText = 1 << 20

// indexedPrefix is s cut to maxIndexedText bytes at a rune boundary.
func indexedPrefix(s string) string {
	if len(s) <= maxIndexedText {
		return s
	}
	cut := maxIndexedText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// textOf returns the field texts of r. The indexer and the scan of
// unindexed messages both use it, so both score the same text.
func textOf(r Record) docText {
	m := r.Message
	var attach []string
	for _, p := range m.Content.Parts {
		if p.Alt != "" {
			attach = append(attach, p.Alt)
		}
	}
	for _, tc := range m.ToolCalls {
		attach = append(attach, tc.Name, tc.Arguments)
	}
	when := r.When().UTC()
	body, attached := m.Content.PlainText(), strings.Join(attach, "\n")
	return docText{
		body:    indexedPrefix(body),
		attach:  indexedPrefix(attached),
		partial: len(body) > maxIndexedText || len(attached) > maxIndexedText,
		author:  m.Name,
		date:    when.Month().String() + " " + strconv.Itoa(when.Year()),
		role:    m.Role,
		session: r.Session,
		month:   monthTerm(when),
	}
}

// monthTerm is the month filter term of t: "2006-01" (sorts as time does).
func monthTerm(t time.Time) string { return t.UTC().Format("2006-01") }

// document is the bleve document of a message of conversation num.
func (d docText) document(num uint64) map[string]any {
	doc := map[string]any{
		fieldConv:  convTerm(num),
		fieldRole:  d.role.String(),
		fieldMonth: d.month,
		fieldDate:  d.date,
	}
	for _, f := range []struct{ name, text string }{
		{fieldBody, d.body}, {fieldAttach, d.attach}, {fieldAuthor, d.author}, {fieldSession, d.session},
	} {
		if f.text != "" {
			doc[f.name] = f.text
		}
	}
	return doc
}
