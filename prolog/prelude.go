package prolog

// The Go half of the compatibility prelude: SWI-Prolog predicates that
// ichiban lacks, with SWI semantics (prelude.pl has the Prolog half, and
// format.go the output family). Errors are ISO terms error(Formal, Name/Arity).
//
//	%!  msort(+List, -Sorted) is det.
//	%!  sort(+Key, +Order, +List, -Sorted) is det.
//	%!  list_to_set(+List, -Set) is det.
//	%!  max_member(-Max, +List) is semidet.
//	%!  min_member(-Min, +List) is semidet.
//	%!  numlist(+Low, +High, -List) is semidet.
//	%!  is_list(@Term) is semidet.
//	%!  memberchk(?Elem, +List) is semidet.
//	%!  subtract(+Set, +Delete, -Result) is det.
//	%!  delete(+List, @Elem, -Rest) is det.
//	%!  plus(?X, ?Y, ?Z) is det.
//	%!  sum_list(+List, -Sum) is det.
//	%!  sumlist(+List, -Sum) is det.
//	%!  max_list(+List, -Max) is semidet.
//	%!  min_list(+List, -Min) is semidet.
//	%!  atomic_list_concat(+List, -Atom) is det.
//	%!  atomic_list_concat(?List, +Separator, ?Atom) is det.
//	%!  upcase_atom(+Any, -Upper) is det.
//	%!  downcase_atom(+Any, -Lower) is det.
//	%!  atom_number(?Atom, ?Number) is semidet.
//	%!  term_to_atom(?Term, ?Atom) is det.
//	%!  term_string(?Term, ?String) is det.
//	%!  atom_to_term(+Atom, -Term, -Bindings) is det.
//	%!  read_term_from_atom(+Atom, -Term, +Options) is det.
//	%!  split_string(+String, +SepChars, +PadChars, -SubStrings) is det.
//	%!  string_chars(?String, ?Chars) is det.
//	%!  string_codes(?String, ?Codes) is det.
//	%!  string_to_atom(?String, ?Atom) is det.
//	%!  atom_string(?Atom, ?String) is det.
//	%!  number_string(?Number, ?String) is semidet.
//	%!  string_length(+String, -Length) is det.
//	%!  string_lower(+String, -Lower) is det.
//	%!  string_upper(+String, -Upper) is det.
//	%!  nb_setval(+Key, +Value) is det.
//	%!  nb_getval(+Key, -Value) is det.
//	%!  must_be(+Type, @Term) is det.
//	%!  is_of_type(+Type, @Term) is semidet.
//	%!  option(?Option, +Options) is semidet.
//	%!  option(?Option, +Options, +Default) is semidet.
//	%!  select_option(?Option, +Options, -Rest) is semidet.
//	%!  select_option(?Option, +Options, -Rest, +Default) is det.
//	%!  record_get(+Record, ?Key, ?Value) is nondet.
//	%!  record_put(+Record, +Key, +Value, -Record2) is det.
//	%!  record_tag(+Record, -Tag) is det.
//
// There is no string type: SWI's string predicates take any text (atom,
// number, chars or codes) and return chars lists. string_concat/3 is in
// prelude.pl: with only S3 bound it enumerates the splits.
//
// Records are Tag([key(Value), ...]) with keys in standard order (DESIGN.md
// §3). record_get/3 is their get_dict/3: it reads the first field named
// Key (semidet: it fails when there is none), enumerates the fields when
// Key is unbound, and follows a path K1/K2/... into nested records, so
// reading a field needs no hand-written accessor:
//
//	?- record_get(pack([ledger(ledger([total_tokens(95)]))]), ledger/total_tokens, N).
//	N = 95.
//
// record_put/4 replaces the first field named Key, or inserts key(Value)
// before the first greater key; record_tag/2 reads Tag. (record_get/3 is
// in library.go: it is nondeterministic.)
//
// Standard order is ichiban's, which is ISO's: every float precedes every
// integer (SWI compares mixed numbers by value), so msort([2.0, 1], L)
// gives [2.0, 1]; compare/3, sort/2 and @</2 agree with it.

import (
	_ "embed"
	"errors"
	"math/big"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ichiban/prolog/engine"
)

// preludeSource is the Prolog half of the compatibility prelude.
//
//go:embed prelude.pl
var preludeSource string

// preludeDefs is the Go half of the compatibility prelude.
var preludeDefs = []Def{
	// Output (format.go)
	Pred1("format", "format(+Format) is det", format1),
	Pred2("format", "format(+Format, :Arguments) is det", format2),
	Pred3("format", "format(+Output, +Format, :Arguments) is det", format3),
	Pred2("with_output_to", "with_output_to(+Sink, :Goal) is semidet", withOutputTo),
	Pred1("tab", "tab(+N) is det", tab1),
	Pred2("tab", "tab(+Stream, +N) is det", tab2),

	// Sorting and lists
	Pred2("msort", "msort(+List, -Sorted) is det", msort2),
	Pred4("sort", "sort(+Key, +Order, +List, -Sorted) is det", sort4),
	Pred2("list_to_set", "list_to_set(+List, -Set) is det", listToSet),
	Pred2("max_member", "max_member(-Max, +List) is semidet", maxMember),
	Pred2("min_member", "min_member(-Min, +List) is semidet", minMember),
	Pred3("numlist", "numlist(+Low, +High, -List) is semidet", numlist3),
	Pred1("is_list", "is_list(@Term) is semidet", isList1),
	Pred2("memberchk", "memberchk(?Elem, +List) is semidet", memberchk2),
	Pred3("subtract", "subtract(+Set, +Delete, -Result) is det", subtract3),
	Pred3("delete", "delete(+List, @Elem, -Rest) is det", delete3),
	Pred3("plus", "plus(?X, ?Y, ?Z) is det", plus3),
	Pred2("sum_list", "sum_list(+List, -Sum) is det", sumList),
	Pred2("sumlist", "sumlist(+List, -Sum) is det", sumList),
	Pred2("max_list", "max_list(+List, -Max) is semidet", maxList),
	Pred2("min_list", "min_list(+List, -Min) is semidet", minList),
	Pred2("last_list_", "last_list_(+List, -Last) is semidet", lastList),

	// Atoms and text
	Pred2("atomic_list_concat", "atomic_list_concat(+List, -Atom) is det", atomicListConcat2),
	Pred3("atomic_list_concat", "atomic_list_concat(?List, +Separator, ?Atom) is det", atomicListConcat3),
	Pred2("upcase_atom", "upcase_atom(+Any, -Upper) is det", upcaseAtom),
	Pred2("downcase_atom", "downcase_atom(+Any, -Lower) is det", downcaseAtom),
	Pred2("atom_number", "atom_number(?Atom, ?Number) is semidet", atomNumber),
	Pred2("term_to_atom", "term_to_atom(?Term, ?Atom) is det", termToAtom),
	Pred2("term_string", "term_string(?Term, ?String) is det", termString),
	Pred3("atom_to_term", "atom_to_term(+Atom, -Term, -Bindings) is det", atomToTerm),
	Pred3("read_term_from_atom", "read_term_from_atom(+Atom, -Term, +Options) is det", readTermFromAtom),

	// Strings as chars lists
	Pred4("split_string", "split_string(+String, +SepChars, +PadChars, -SubStrings) is det", splitString),
	Pred3("string_concat_", "string_concat_(?S1, ?S2, ?S3) is semidet", stringConcat),
	Pred2("string_concat_splits_", "string_concat_splits_(+S3, -Pairs) is det", stringConcatSplits),
	Pred2("string_chars", "string_chars(?String, ?Chars) is det", stringChars),
	Pred2("string_codes", "string_codes(?String, ?Codes) is det", stringCodes),
	Pred2("string_to_atom", "string_to_atom(?String, ?Atom) is det", stringToAtom),
	Pred2("atom_string", "atom_string(?Atom, ?String) is det", atomString2),
	Pred2("number_string", "number_string(?Number, ?String) is semidet", numberString),
	Pred2("string_length", "string_length(+String, -Length) is det", stringLength),
	Pred2("string_lower", "string_lower(+String, -Lower) is det", stringLower),
	Pred2("string_upper", "string_upper(+String, -Upper) is det", stringUpper),

	// Character classification (prelude.pl's char_type/2 and code_type/2)
	Pred4("char_types_", "char_types_(+Char, ?Type, +Codes, -Types) is det", charTypes),

	// Global variables
	Pred2("nb_setval", "nb_setval(+Key, +Value) is det", nbSetval),
	Pred2("nb_getval", "nb_getval(+Key, -Value) is det", nbGetval),

	// Types and options
	Pred2("must_be", "must_be(+Type, @Term) is det", mustBe),
	Pred2("is_of_type", "is_of_type(+Type, @Term) is semidet", isOfType),
	Pred2("option", "option(?Option, +Options) is semidet", option2),
	Pred3("option", "option(?Option, +Options, +Default) is semidet", option3),
	Pred3("select_option", "select_option(?Option, +Options, -Rest) is semidet", selectOption3),
	Pred4("select_option", "select_option(?Option, +Options, -Rest, +Default) is det", selectOption4),

	// Lambdas (prelude.pl's >>/N copy with this)
	Pred3("yall_copy_", "yall_copy_(+Free, +Lambda, -Copy) is det", yallCopy),

	// Showing code (listing.go) and documentation (help.go)
	Pred1("portray_clause", "portray_clause(+Clause) is det", portrayClause1),
	Pred2("portray_clause", "portray_clause(+Stream, +Clause) is det", portrayClause2),
	Pred1("listing", "listing(:Spec) is det", listing1),
	Pred3("numbervars", "numbervars(?Term, +Start, -End) is det", numbervars3),
	Pred1("help", "help(+Spec) is det", help1),
	Pred2("print_message", "print_message(+Kind, +Term) is det", printMessage),
	Pred3("message_to_codes", "message_to_codes(+Term, +Kind, -Codes) is det", messageToCodes),
	Pred1("apropos", "apropos(+Text) is det", apropos1),

	// More of SWI's libraries (library.go)
	Pred1("string", "string(@Term) is semidet", string1),
	Pred3("union", "union(+Set1, +Set2, -Set3) is det", union3),
	Pred3("intersection", "intersection(+Set1, +Set2, -Set3) is det", intersection3),
	Pred3("random_between", "random_between(+Low, +High, -Random) is det", randomBetween),
	Pred1("random", "random(-Float) is det", random1),
	Pred2("random_member", "random_member(-Elem, +List) is semidet", randomMember),
	Pred2("random_permutation", "random_permutation(+List, -Permutation) is det", randomPermutation),
	Pred1("set_random", "set_random(+Option) is det", setRandom),
	Pred1("get_time", "get_time(-Stamp) is det", getTime),
	Pred3("format_time", "format_time(+Out, +Format, +Stamp) is det", formatTime),
	Pred3("get_assoc", "get_assoc(+Key, +Assoc, -Value) is semidet", getAssoc),
	Pred4("put_assoc", "put_assoc(+Key, +Assoc0, +Value, -Assoc) is det", putAssoc),
	Pred2("list_to_assoc", "list_to_assoc(+Pairs, -Assoc) is det", listToAssoc),
	Pred1("nb_keys_", "nb_keys_(-Keys) is det", nbKeys),

	// Records
	Pred4("record_put", "record_put(+Record, +Key, +Value, -Record2) is det", recordPut),
	Pred2("record_tag", "record_tag(+Record, -Tag) is det", recordTag),
}

/* --- Sorting and lists --- */

func (c *Call) compare(a, b engine.Term) int { return a.Compare(b, c.Env) }

func msort2(c *Call, list, sorted engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	elems = slices.Clone(elems)
	slices.SortStableFunc(elems, c.compare)
	return c.Unify(sorted, engine.List(elems...)), nil
}

var (
	atomLT = engine.NewAtom("@<")
	atomGT = engine.NewAtom("@>")
	atomLE = engine.NewAtom("@=<")
	atomGE = engine.NewAtom("@>=")
)

func sort4(c *Call, key, order, list, sorted engine.Term) (bool, error) {
	k, err := c.Int(key)
	if err != nil {
		return false, err
	}
	if k < 0 {
		return false, DomainError("not_less_than_one", key) // sic, SWI
	}
	var o engine.Atom
	switch v := c.Resolve(order).(type) {
	case engine.Variable:
		return false, InstantiationError()
	case engine.Atom:
		o = v
	}
	if o != atomLT && o != atomGT && o != atomLE && o != atomGE {
		return false, DomainError("order", order)
	}
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	type item struct{ key, elem engine.Term }
	items := make([]item, len(elems))
	for i, e := range elems {
		items[i] = item{e, e}
		if k == 0 {
			continue
		}
		switch v := c.Resolve(e).(type) {
		case engine.Variable:
			return false, InstantiationError()
		case engine.Compound:
			if int64(v.Arity()) < k {
				return false, &ISOError{Formal: engine.NewAtom("existence_error").Apply(engine.NewAtom("argument"), key, v)}
			}
			items[i].key = v.Arg(int(k - 1))
		default:
			return false, TypeError("compound", e)
		}
	}
	desc := o == atomGT || o == atomGE
	slices.SortStableFunc(items, func(a, b item) int {
		if desc {
			return c.compare(b.key, a.key)
		}
		return c.compare(a.key, b.key)
	})
	out := make([]engine.Term, 0, len(items))
	dedup := o == atomLT || o == atomGT
	for i, it := range items {
		if dedup && i > 0 && c.compare(items[i-1].key, it.key) == 0 {
			continue
		}
		out = append(out, it.elem)
	}
	return c.Unify(sorted, engine.List(out...)), nil
}

// listToSet keeps the first of each group of == elements, in order.
func listToSet(c *Call, list, set engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	idx := make([]int, len(elems))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return c.compare(elems[a], elems[b]) })
	drop := make([]bool, len(elems))
	for i := 1; i < len(idx); i++ {
		if c.compare(elems[idx[i-1]], elems[idx[i]]) == 0 {
			drop[idx[i]] = true
		}
	}
	out := make([]engine.Term, 0, len(elems))
	for i, e := range elems {
		if !drop[i] {
			out = append(out, e)
		}
	}
	return c.Unify(set, engine.List(out...)), nil
}

func maxMember(c *Call, max, list engine.Term) (bool, error) { return extremeMember(c, max, list, 1) }

func minMember(c *Call, min, list engine.Term) (bool, error) { return extremeMember(c, min, list, -1) }

func extremeMember(c *Call, m, list engine.Term, sign int) (bool, error) {
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	if len(elems) == 0 {
		return false, nil
	}
	best := elems[0]
	for _, e := range elems[1:] {
		if c.compare(e, best)*sign > 0 {
			best = e
		}
	}
	return c.Unify(m, best), nil
}

func numlist3(c *Call, low, high, list engine.Term) (bool, error) {
	l, err := c.Int(low)
	if err != nil {
		return false, err
	}
	h, err := c.Int(high)
	if err != nil {
		return false, err
	}
	if l > h {
		return false, nil
	}
	if uint64(h-l) >= 1<<24 {
		return false, ResourceError("memory")
	}
	ts := make([]engine.Term, 0, h-l+1)
	for i := l; ; i++ {
		ts = append(ts, engine.Integer(i))
		if i == h {
			break
		}
	}
	return c.Unify(list, engine.List(ts...)), nil
}

// walkList follows list cells from t and returns what ends the list: [],
// a variable or another term. It gives up on cycles via the context check.
func walkList(c *Call, t engine.Term, each func(elem engine.Term) bool) (engine.Term, error) {
	for i := 0; ; i++ {
		if i&1023 == 1023 && c.Ctx.Err() != nil {
			return nil, c.Ctx.Err()
		}
		v := c.Resolve(t)
		cell, ok := v.(engine.Compound)
		if !ok || cell.Functor() != atomDot || cell.Arity() != 2 {
			return v, nil
		}
		if each != nil && !each(cell.Arg(0)) {
			return nil, nil
		}
		t = cell.Arg(1)
	}
}

func isList1(c *Call, t engine.Term) (bool, error) {
	end, err := walkList(c, t, nil)
	return err == nil && end == atomNil, err
}

func memberchk2(c *Call, elem, list engine.Term) (bool, error) { return memberchk(c, elem, list) }

// memberchk unifies elem with the first element of list it unifies with;
// a partial list is extended, as in SWI.
func memberchk(c *Call, elem, list engine.Term) (bool, error) {
	found := false
	end, err := walkList(c, list, func(e engine.Term) bool {
		if c.Unify(elem, e) {
			found = true
			return false
		}
		return true
	})
	if err != nil || found {
		return found, err
	}
	if v, ok := end.(engine.Variable); ok {
		return c.Unify(v, engine.Cons(elem, engine.NewVariable())), nil
	}
	return false, nil
}

func subtract3(c *Call, set, del, result engine.Term) (bool, error) {
	elems, err := c.List(set)
	if err != nil {
		return false, err
	}
	out := make([]engine.Term, 0, len(elems))
	for _, e := range elems {
		found, err := memberchk(c, e, del)
		if err != nil {
			return false, err
		}
		if !found {
			out = append(out, e)
		}
	}
	return c.Unify(result, engine.List(out...)), nil
}

// delete3 removes the elements that unify with elem, binding nothing.
func delete3(c *Call, list, elem, rest engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	out := make([]engine.Term, 0, len(elems))
	for _, e := range elems {
		if !c.Env.Unifiable(e, elem) {
			out = append(out, e)
		}
	}
	return c.Unify(rest, engine.List(out...)), nil
}

func plus3(c *Call, x, y, z engine.Term) (bool, error) {
	var vals [3]*big.Int
	n := 0
	for i, t := range []engine.Term{x, y, z} {
		switch v := c.Resolve(t).(type) {
		case engine.Variable:
		case engine.Integer:
			vals[i] = big.NewInt(int64(v))
			n++
		case *engine.BigInt:
			vals[i] = v.Big()
			n++
		default:
			return false, TypeError("integer", t)
		}
	}
	if n < 2 {
		return false, InstantiationError()
	}
	switch {
	case vals[2] == nil:
		return c.Unify(z, engine.NewBigInt(new(big.Int).Add(vals[0], vals[1]))), nil
	case vals[1] == nil:
		return c.Unify(y, engine.NewBigInt(new(big.Int).Sub(vals[2], vals[0]))), nil
	case vals[0] == nil:
		return c.Unify(x, engine.NewBigInt(new(big.Int).Sub(vals[2], vals[1]))), nil
	}
	return new(big.Int).Add(vals[0], vals[1]).Cmp(vals[2]) == 0, nil
}

// foldArith folds the elements of list with the arithmetic functor op
// (SWI: Acc1 is op(Acc0, X)), starting from the first element or from
// start when it is not nil. It fails on [] without a start.
func foldArith(c *Call, list, result engine.Term, op string, start engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil {
		return false, err
	}
	acc := start
	if acc == nil {
		if len(elems) == 0 {
			return false, nil
		}
		if acc, err = evalArith(c, elems[0]); err != nil {
			return false, err
		}
		elems = elems[1:]
	}
	f := engine.NewAtom(op)
	for i, e := range elems {
		if i&1023 == 1023 && c.Ctx.Err() != nil {
			return false, c.Ctx.Err()
		}
		if acc, err = evalArith(c, f.Apply(acc, e)); err != nil {
			return false, err
		}
	}
	return c.Unify(result, acc), nil
}

func sumList(c *Call, list, sum engine.Term) (bool, error) {
	return foldArith(c, list, sum, "+", engine.Integer(0))
}

func maxList(c *Call, list, max engine.Term) (bool, error) {
	return foldArith(c, list, max, "max", nil)
}

func minList(c *Call, list, min engine.Term) (bool, error) {
	return foldArith(c, list, min, "min", nil)
}

// lastList is last/2 for a proper list (prelude.pl handles the rest).
func lastList(c *Call, list, last engine.Term) (bool, error) {
	elems, err := c.List(list)
	if err != nil || len(elems) == 0 {
		return false, err
	}
	return c.Unify(last, elems[len(elems)-1]), nil
}

/* --- Atoms and text --- */

// textAs reads text (an atom, a number, a chars or codes list), raising
// type_error(typ, T) for anything else.
func textAs(c *Call, t engine.Term, typ string) (string, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return "", InstantiationError()
	case engine.Compound:
		if s, ok := compactText(v); ok {
			return s, nil
		}
		if !isList(v, c.Env) {
			return "", TypeError(typ, t)
		}
	}
	s, err := c.Text(t)
	if err != nil {
		if ie, ok := err.(*ISOError); ok && ie.Formal == engine.NewAtom("instantiation_error") {
			return "", err
		}
		return "", TypeError(typ, t)
	}
	return s, nil
}

// concatList joins the texts of a proper list's elements.
func concatList(c *Call, list engine.Term, sep string) (string, error) {
	elems, err := c.List(list)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for i, e := range elems {
		if i > 0 {
			sb.WriteString(sep)
		}
		s, err := textAs(c, e, "text")
		if err != nil {
			return "", err
		}
		sb.WriteString(s)
	}
	return sb.String(), nil
}

// unifyText unifies t with the atom s, or compares texts when t is bound
// text (SWI accepts a string there).
func unifyText(c *Call, t engine.Term, s string) bool {
	switch c.Resolve(t).(type) {
	case engine.Variable:
		return c.Unify(t, engine.NewAtom(s))
	case engine.Atom:
		return c.Unify(t, engine.NewAtom(s))
	}
	got, err := c.Text(t)
	return err == nil && got == s
}

func atomicListConcat2(c *Call, list, atom engine.Term) (bool, error) {
	s, err := concatList(c, list, "")
	if err != nil {
		return false, err
	}
	return unifyText(c, atom, s), nil
}

// atomicListConcat3 joins when List is a list of bound elements and splits
// Atom at every Separator otherwise.
func atomicListConcat3(c *Call, list, sep, atom engine.Term) (bool, error) {
	sp, err := textAs(c, sep, "text")
	if err != nil {
		return false, err
	}
	joinable := true
	end, err := walkList(c, list, func(e engine.Term) bool {
		if _, ok := c.Resolve(e).(engine.Variable); ok {
			joinable = false
			return false
		}
		return true
	})
	if err != nil {
		return false, err
	}
	if joinable && end == atomNil {
		s, err := concatList(c, list, sp)
		if err != nil {
			return false, err
		}
		return unifyText(c, atom, s), nil
	}
	if _, ok := c.Resolve(atom).(engine.Variable); ok {
		return false, InstantiationError()
	}
	if joinable && end != nil {
		if _, ok := end.(engine.Variable); !ok {
			return false, TypeError("list", list)
		}
	}
	if sp == "" {
		return false, DomainError("non_empty_atom", sep)
	}
	full, err := textAs(c, atom, "atomic")
	if err != nil {
		return false, err
	}
	parts := strings.Split(full, sp)
	ts := make([]engine.Term, len(parts))
	for i, p := range parts {
		ts[i] = engine.NewAtom(p)
	}
	return c.Unify(list, engine.List(ts...)), nil
}

func upcaseAtom(c *Call, any, upper engine.Term) (bool, error) {
	s, err := textAs(c, any, "atomic")
	if err != nil {
		return false, err
	}
	return c.Unify(upper, engine.NewAtom(strings.ToUpper(s))), nil
}

func downcaseAtom(c *Call, any, lower engine.Term) (bool, error) {
	s, err := textAs(c, any, "atomic")
	if err != nil {
		return false, err
	}
	return c.Unify(lower, engine.NewAtom(strings.ToLower(s))), nil
}

func atomNumber(c *Call, atom, number engine.Term) (bool, error) {
	switch v := c.Resolve(atom).(type) {
	case engine.Variable:
		switch n := c.Resolve(number).(type) {
		case engine.Variable:
			return false, InstantiationError()
		case engine.Integer, engine.Float:
			s, _ := c.Text(n)
			return c.Unify(atom, engine.NewAtom(s)), nil
		default:
			return false, TypeError("number", number)
		}
	case engine.Integer, engine.Float:
		return false, TypeError("atom", atom)
	case engine.Compound:
		if !isList(v, c.Env) {
			return false, TypeError("atom", atom)
		}
	}
	s, err := textAs(c, atom, "atom")
	if err != nil {
		return false, err
	}
	n, ok := parseNumber(c, s)
	if !ok {
		return false, nil
	}
	return c.Unify(number, n), nil
}

// parseNumber reads s as a Prolog number with an optional sign and no
// surrounding layout, as atom_number/2 does in SWI.
func parseNumber(c *Call, s string) (engine.Term, bool) {
	neg := false
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg, body = body[0] == '-', body[1:]
	}
	if body == "" || body[0] < '0' || body[0] > '9' {
		return nil, false
	}
	if r, _ := utf8.DecodeLastRuneInString(body); isLayoutRune(r) {
		return nil, false
	}
	v := engine.NewVariable()
	var out engine.Term
	ok, err := engine.NumberChars(c.VM, v, engine.CharList(body), func(env *engine.Env) *engine.Promise {
		out = env.Resolve(v)
		return engine.Bool(true)
	}, c.Env).Force(c.Ctx)
	if err != nil || !ok {
		return nil, false
	}
	if neg {
		switch n := out.(type) {
		case engine.Integer:
			out = -n
		case engine.Float:
			out = -n
		}
	}
	return out, true
}

func isLayoutRune(r rune) bool { return r < utf8.RuneSelf && isLayout(byte(r)) }

// parseText reads the first term of s with the interpreter's operators and
// flags. Empty text reads as end_of_file, as in SWI.
func parseText(c *Call, s string) (engine.Term, []engine.ParsedVariable, error) {
	if strings.TrimSpace(s) == "" {
		return engine.NewAtom("end_of_file"), nil, nil
	}
	src, err := scan(s + "\n.")
	if err != nil {
		return nil, nil, syntaxErr(err.Error())
	}
	r := &countingReader{s: src.text}
	p := engine.NewParser(c.VM, r)
	t, err := p.Term()
	if err != nil {
		return nil, nil, syntaxErr(err.Error())
	}
	return t, p.Vars, nil
}

func syntaxErr(msg string) error {
	return &ISOError{Formal: engine.NewAtom("syntax_error").Apply(engine.NewAtom(msg))}
}

func termToAtom(c *Call, term, atom engine.Term) (bool, error) {
	if _, ok := c.Resolve(atom).(engine.Variable); ok {
		return c.Unify(atom, engine.NewAtom(c.In.WriteQ(term, c.Env))), nil
	}
	s, err := textAs(c, atom, "text")
	if err != nil {
		return false, err
	}
	t, _, err := parseText(c, s)
	if err != nil {
		return false, err
	}
	return c.Unify(term, t), nil
}

// termString is term_to_atom/2 with chars for SWI's string.
func termString(c *Call, term, str engine.Term) (bool, error) {
	if _, ok := c.Resolve(str).(engine.Variable); ok {
		return c.Unify(str, Chars(c.In.WriteQ(term, c.Env))), nil
	}
	s, err := textAs(c, str, "text")
	if err != nil {
		return false, err
	}
	t, _, err := parseText(c, s)
	if err != nil {
		return false, err
	}
	return c.Unify(term, t), nil
}

func atomToTerm(c *Call, atom, term, bindings engine.Term) (bool, error) {
	s, err := textAs(c, atom, "text")
	if err != nil {
		return false, err
	}
	t, vars, err := parseText(c, s)
	if err != nil {
		return false, err
	}
	eq := engine.NewAtom("=")
	bs := make([]engine.Term, len(vars))
	for i, v := range vars {
		bs[i] = eq.Apply(v.Name, v.Variable)
	}
	return c.Unify(term, t) && c.Unify(bindings, engine.List(bs...)), nil
}

func readTermFromAtom(c *Call, atom, term, options engine.Term) (bool, error) {
	s, err := textAs(c, atom, "text")
	if err != nil {
		return false, err
	}
	t, _, err := parseText(c, s)
	if err != nil {
		return false, err
	}
	return c.Unify(term, t), nil
}

/* --- Strings (chars lists) --- */

func splitString(c *Call, str, sep, pad, subs engine.Term) (bool, error) {
	s, err := textAs(c, str, "text")
	if err != nil {
		return false, err
	}
	sp, err := textAs(c, sep, "text")
	if err != nil {
		return false, err
	}
	pd, err := textAs(c, pad, "text")
	if err != nil {
		return false, err
	}
	isPad := func(r rune) bool { return strings.ContainsRune(pd, r) }
	isSep := func(r rune) bool { return strings.ContainsRune(sp, r) }
	s = strings.TrimFunc(s, isPad)
	var out []engine.Term
	for start := 0; ; {
		rest := strings.TrimLeftFunc(s[start:], isPad)
		start = len(s) - len(rest)
		el := strings.IndexFunc(rest, isSep)
		if el < 0 {
			out = append(out, Chars(strings.TrimRightFunc(rest, isPad)))
			break
		}
		out = append(out, Chars(strings.TrimRightFunc(rest[:el], isPad)))
		_, n := utf8.DecodeRuneInString(rest[el:])
		start += el + n
	}
	return c.Unify(subs, engine.List(out...)), nil
}

// stringConcat is string_concat/3 when two arguments are bound.
func stringConcat(c *Call, a, b, ab engine.Term) (bool, error) {
	ok, err := stringConcat1(c, a, b, ab)
	return ok, inContext(c, err, "string_concat", 3)
}

func stringConcat1(c *Call, a, b, ab engine.Term) (bool, error) {
	_, aVar := c.Resolve(a).(engine.Variable)
	_, bVar := c.Resolve(b).(engine.Variable)
	if !aVar && !bVar {
		sa, err := textAs(c, a, "text")
		if err != nil {
			return false, err
		}
		sb, err := textAs(c, b, "text")
		if err != nil {
			return false, err
		}
		return unifyChars(c, ab, sa+sb), nil
	}
	whole, err := textAs(c, ab, "text")
	if err != nil {
		return false, err
	}
	if !aVar {
		sa, err := textAs(c, a, "text")
		if err != nil || !strings.HasPrefix(whole, sa) {
			return false, err
		}
		return c.Unify(b, Chars(whole[len(sa):])), nil
	}
	sb, err := textAs(c, b, "text")
	if err != nil || !strings.HasSuffix(whole, sb) {
		return false, err
	}
	return c.Unify(a, Chars(whole[:len(whole)-len(sb)])), nil
}

// stringConcatSplits returns [S1-S2, ...], every split of S3 in order.
func stringConcatSplits(c *Call, ab, pairs engine.Term) (bool, error) {
	whole, err := textAs(c, ab, "text")
	if err != nil {
		return false, inContext(c, err, "string_concat", 3)
	}
	minus := engine.NewAtom("-")
	ts := []engine.Term{minus.Apply(atomNil, Chars(whole))}
	for i := range whole {
		if i > 0 {
			ts = append(ts, minus.Apply(Chars(whole[:i]), Chars(whole[i:])))
		}
	}
	if whole != "" {
		ts = append(ts, minus.Apply(Chars(whole), atomNil))
	}
	return c.Unify(pairs, engine.List(ts...)), nil
}

// unifyChars unifies t with the chars of s, or compares texts when t is
// bound to other text.
func unifyChars(c *Call, t engine.Term, s string) bool {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return c.Unify(t, Chars(s))
	case engine.Compound:
		if got, ok := compactText(v); ok {
			return got == s
		}
	}
	got, err := c.Text(t)
	return err == nil && got == s
}

func stringChars(c *Call, str, chars engine.Term) (bool, error) {
	if _, ok := c.Resolve(str).(engine.Variable); !ok {
		s, err := textAs(c, str, "text")
		if err != nil {
			return false, err
		}
		return c.Unify(chars, Chars(s)), nil
	}
	s, err := textAs(c, chars, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(str, Chars(s)), nil
}

func stringCodes(c *Call, str, codes engine.Term) (bool, error) {
	if _, ok := c.Resolve(str).(engine.Variable); !ok {
		s, err := textAs(c, str, "text")
		if err != nil {
			return false, err
		}
		if s == "" {
			return c.Unify(codes, atomNil), nil
		}
		return c.Unify(codes, engine.CodeList(s)), nil
	}
	s, err := textAs(c, codes, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(str, Chars(s)), nil
}

func stringToAtom(c *Call, str, atom engine.Term) (bool, error) {
	if _, ok := c.Resolve(str).(engine.Variable); !ok {
		s, err := textAs(c, str, "text")
		if err != nil {
			return false, err
		}
		return c.Unify(atom, engine.NewAtom(s)), nil
	}
	s, err := textAs(c, atom, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(str, Chars(s)), nil
}

func atomString2(c *Call, atom, str engine.Term) (bool, error) {
	if _, ok := c.Resolve(atom).(engine.Variable); !ok {
		s, err := textAs(c, atom, "text")
		if err != nil {
			return false, err
		}
		return unifyChars(c, str, s), nil
	}
	s, err := textAs(c, str, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(atom, engine.NewAtom(s)), nil
}

func numberString(c *Call, num, str engine.Term) (bool, error) {
	if _, ok := c.Resolve(str).(engine.Variable); ok {
		switch n := c.Resolve(num).(type) {
		case engine.Variable:
			return false, InstantiationError()
		case engine.Integer, engine.Float:
			s, _ := c.Text(n)
			return c.Unify(str, Chars(s)), nil
		default:
			return false, TypeError("number", num)
		}
	}
	s, err := textAs(c, str, "list")
	if err != nil {
		return false, err
	}
	n, ok := parseNumber(c, s)
	if !ok {
		return false, nil
	}
	return c.Unify(num, n), nil
}

func stringLength(c *Call, str, n engine.Term) (bool, error) {
	s, err := textAs(c, str, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(n, engine.Integer(utf8.RuneCountInString(s))), nil
}

func stringLower(c *Call, str, lower engine.Term) (bool, error) {
	s, err := textAs(c, str, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(lower, Chars(strings.ToLower(s))), nil
}

func stringUpper(c *Call, str, upper engine.Term) (bool, error) {
	s, err := textAs(c, str, "text")
	if err != nil {
		return false, err
	}
	return c.Unify(upper, Chars(strings.ToUpper(s))), nil
}

/* --- Character classification --- */

var charTypeNames = map[string]int{
	"alnum": 0, "alpha": 0, "csym": 0, "csymf": 0, "ascii": 0, "white": 0, "cntrl": 0,
	"digit": 1, "space": 0, "end_of_line": 0, "lower": 1, "upper": 1, "punct": 0, "graph": 0,
	"print": 0, "period": 0, "quote": 0, "to_lower": 1, "to_upper": 1, "newline": 0,
	"prolog_var_start": 0, "prolog_atom_start": 0, "prolog_identifier_continue": 0,
	"prolog_symbol": 0,
}

// charTypes lists the types of Char (in SWI's order) that could unify with
// Type; Codes is true for code_type/2, whose arguments are codes. With Char
// unbound it solves upper(L), lower(U), to_lower(C) and to_upper(C) for
// Char as SWI does, and raises an instantiation error otherwise.
func charTypes(c *Call, char, typ, codes, types engine.Term) (bool, error) {
	asCodes, err := c.Bool(codes)
	if err != nil {
		return false, err
	}
	name := "char_type"
	if asCodes {
		name = "code_type"
	}
	ok, err := charTypes1(c, char, typ, asCodes, types)
	return ok, inContext(c, err, name, 2)
}

// inContext gives an ISO error of a private helper the public predicate's
// indicator as its context.
func inContext(c *Call, err error, name string, arity int) error {
	var ie *ISOError
	if errors.As(err, &ie) {
		pi := engine.NewAtom("/").Apply(engine.NewAtom(name), engine.Integer(arity))
		return engine.NewException(engine.NewAtom("error").Apply(ie.Formal, pi), c.Env)
	}
	return err
}

func charTypes1(c *Call, char, typ engine.Term, asCodes bool, types engine.Term) (bool, error) {
	t := c.Resolve(typ)
	if _, ok := t.(engine.Variable); !ok {
		name, arity := mbTypeName(t)
		if n, ok := charTypeNames[name]; !ok || (arity != n && !(arity == 0 && (name == "digit" || name == "lower" || name == "upper"))) {
			return false, TypeError("char_type", typ)
		}
	}
	mk := func(r rune) engine.Term {
		if asCodes {
			return engine.Integer(r)
		}
		return engine.NewAtom(string(r))
	}
	r, err := charArg(c, char, asCodes)
	if err != nil {
		return false, err
	}
	if r < 0 { // Char unbound
		tc, ok := t.(engine.Compound)
		if !ok || tc.Arity() != 1 {
			return false, InstantiationError()
		}
		a, err := charArg(c, tc.Arg(0), asCodes)
		if err != nil || a < 0 {
			return false, InstantiationError()
		}
		var out rune
		switch tc.Functor().String() {
		case "upper":
			if !unicode.IsLower(a) {
				return c.Unify(types, atomNil), nil
			}
			out = unicode.ToUpper(a)
		case "lower":
			if !unicode.IsUpper(a) {
				return c.Unify(types, atomNil), nil
			}
			out = unicode.ToLower(a)
		case "to_lower":
			out = unicode.ToLower(a)
		case "to_upper":
			out = unicode.ToUpper(a)
		default:
			return false, InstantiationError()
		}
		return c.Unify(char, mk(out)) && c.Unify(types, engine.List(t)), nil
	}
	alpha := unicode.IsLetter(r) || r > 127 && unicode.IsDigit(r)
	alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
	graph := unicode.IsGraphic(r) && !unicode.IsSpace(r)
	var ts []engine.Term
	add := func(ok bool, name string, args ...engine.Term) {
		if !ok {
			return
		}
		var tt engine.Term = engine.NewAtom(name)
		if len(args) > 0 {
			tt = engine.NewAtom(name).Apply(args...)
		}
		if c.Env.Unifiable(tt, typ) {
			ts = append(ts, tt)
		}
	}
	add(alnum, "alnum")
	add(alpha, "alpha")
	add(alnum || r == '_', "csym")
	add(alpha || r == '_', "csymf")
	add(r < 128, "ascii")
	add(r == ' ' || r == '\t', "white")
	add(unicode.IsControl(r), "cntrl")
	add(r >= '0' && r <= '9', "digit", engine.Integer(r-'0'))
	add(unicode.IsSpace(r), "space")
	add(r == '\n' || r == '\r', "end_of_line")
	add(unicode.IsLower(r), "lower", mk(unicode.ToUpper(r)))
	add(unicode.IsUpper(r), "upper", mk(unicode.ToLower(r)))
	add(graph && !alnum, "punct")
	add(graph, "graph")
	add(graph || r == ' ', "print")
	add(r == '.' || r == '!' || r == '?', "period")
	add(r == '\'' || r == '"' || r == '`', "quote")
	add(true, "to_lower", mk(unicode.ToUpper(r))) // sic: SWI's to_lower(U) gives U upper
	add(true, "to_upper", mk(unicode.ToLower(r)))
	add(r >= '0' && r <= '9', "digit")
	add(unicode.IsLower(r), "lower")
	add(unicode.IsUpper(r), "upper")
	add(r == '\n', "newline")
	add(unicode.IsUpper(r) || r == '_', "prolog_var_start")
	add(unicode.IsLower(r), "prolog_atom_start")
	add(alnum || r == '_', "prolog_identifier_continue")
	add(strings.ContainsRune("#$&*+-./:<=>?@^~\\", r) || r > 127 && unicode.IsSymbol(r), "prolog_symbol")
	return c.Unify(types, engine.List(ts...)), nil
}

// charArg reads a char (or, for codes, a code or a char); -1 when unbound.
func charArg(c *Call, t engine.Term, asCodes bool) (rune, error) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		return -1, nil
	case engine.Atom:
		if s := v.String(); utf8.RuneCountInString(s) == 1 {
			r, _ := utf8.DecodeRuneInString(s)
			return r, nil
		}
	case engine.Integer:
		if v >= 0 && v <= utf8.MaxRune { // SWI takes codes for chars too
			return rune(v), nil
		}
	}
	if asCodes {
		return 0, RepresentationError("character_code")
	}
	return 0, TypeError("character", t)
}

/* --- Global variables --- */

func nbSetval(c *Call, key, value engine.Term) (bool, error) {
	k, err := c.Atom(key)
	if err != nil {
		return false, err
	}
	if !Acyclic(value, c.Env) {
		return false, RepresentationError("cyclic_term")
	}
	c.In.globals[k] = freshCopy(value, c.Env, map[engine.Variable]engine.Variable{})
	return true, nil
}

// nbKeys lists the names of the global variables, sorted (nb_current/2).
func nbKeys(c *Call, keys engine.Term) (bool, error) {
	ks := make([]string, 0, len(c.In.globals))
	for k := range c.In.globals {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	ts := make([]engine.Term, len(ks))
	for i, k := range ks {
		ts[i] = engine.NewAtom(k)
	}
	return c.Unify(keys, engine.List(ts...)), nil
}

func nbGetval(c *Call, key, value engine.Term) (bool, error) {
	k, err := c.Atom(key)
	if err != nil {
		return false, err
	}
	v, ok := c.In.globals[k]
	if !ok {
		return false, ExistenceError("variable", key)
	}
	return c.Unify(value, v), nil
}

// freshCopy returns t resolved under env with its variables renamed apart,
// so the copy does not change when the originals are bound later.
func freshCopy(t engine.Term, env *engine.Env, vars map[engine.Variable]engine.Variable) engine.Term {
	switch v := env.Resolve(t).(type) {
	case engine.Variable:
		n, ok := vars[v]
		if !ok {
			n = engine.NewVariable()
			vars[v] = n
		}
		return n
	case engine.Compound:
		if _, ok := compactText(v); ok {
			return v
		}
		args := make([]engine.Term, v.Arity())
		for i := range args {
			args[i] = freshCopy(v.Arg(i), env, vars)
		}
		return v.Functor().Apply(args...)
	default:
		return v
	}
}

/* --- Types --- */

func mustBe(c *Call, typ, x engine.Term) (bool, error) {
	t := c.Resolve(typ)
	if _, ok := t.(engine.Variable); ok {
		return false, InstantiationError()
	}
	ok, err := hasType(c, t, x)
	if err != nil {
		return false, err
	}
	if ok {
		return true, nil
	}
	return false, isNot(c, t, x)
}

func isOfType(c *Call, typ, x engine.Term) (bool, error) {
	t := c.Resolve(typ)
	if _, ok := t.(engine.Variable); ok {
		return false, InstantiationError()
	}
	return hasType(c, t, x)
}

// mbTypeName returns a type's name and arity (list(T) is list/1).
func mbTypeName(t engine.Term) (string, int) {
	switch t := t.(type) {
	case engine.Atom:
		return t.String(), 0
	case engine.Compound:
		return t.Functor().String(), t.Arity()
	}
	return "", -1
}

func isGround(c *Call, t engine.Term) bool {
	w := walk{env: c.Env}
	return w.ground(t, 0)
}

func isChar(t engine.Term) bool {
	a, ok := t.(engine.Atom)
	return ok && utf8.RuneCountInString(a.String()) == 1
}

func isCode(t engine.Term) bool {
	n, ok := t.(engine.Integer)
	return ok && n >= 0 && n <= utf8.MaxRune
}

// allElems reports whether t is a proper list whose elements satisfy ok.
func allElems(c *Call, t engine.Term, ok func(engine.Term) bool) bool {
	if v, isCell := c.Resolve(t).(engine.Compound); isCell {
		if _, compact := compactText(v); compact {
			// ichiban's compact lists hold chars or codes only.
			return ok(c.Resolve(v.Arg(0)))
		}
	}
	good := true
	end, err := walkList(c, t, func(e engine.Term) bool {
		good = ok(c.Resolve(e))
		return good
	})
	return err == nil && good && end == atomNil
}

var knownTypes = map[string]bool{
	"any": true, "atom": true, "atomic": true, "between/2": true, "boolean": true, "callable": true,
	"char": true, "code": true, "chars": true, "codes": true, "text": true, "compound": true,
	"constant": true, "float": true, "ground": true, "acyclic": true, "integer": true, "nonneg": true,
	"positive_integer": true, "negative_integer": true, "nonvar": true, "number": true, "oneof/1": true,
	"pair": true, "proper_list": true, "list": true, "list_or_partial_list": true, "symbol": true,
	"var": true, "string": true, "stream": true, "list/1": true,
}

// hasType is SWI's has_type/2. Unknown types raise existence_error(type, T).
func hasType(c *Call, typ, x engine.Term) (bool, error) {
	name, arity := mbTypeName(typ)
	key := name
	if arity > 0 {
		key = name + "/" + string(rune('0'+arity))
	}
	if !knownTypes[key] {
		return false, ExistenceError("type", typ)
	}
	v := c.Resolve(x)
	_, isVar := v.(engine.Variable)
	switch key {
	case "any":
		return true, nil
	case "atom", "symbol":
		_, ok := v.(engine.Atom)
		return ok, nil
	case "atomic", "constant":
		switch v.(type) {
		case engine.Variable, engine.Compound:
			return false, nil
		}
		return true, nil
	case "between/2":
		b := typ.(engine.Compound)
		lo, hi := c.Resolve(b.Arg(0)), c.Resolve(b.Arg(1))
		if l, ok := lo.(engine.Integer); ok {
			n, ok := v.(engine.Integer)
			if !ok || n < l {
				return false, nil
			}
			switch h := hi.(type) {
			case engine.Integer:
				return n <= h, nil
			case engine.Atom:
				return h.String() == "inf" || h.String() == "infinite", nil
			}
			return false, TypeError("integer", hi)
		}
		f, ok := number(v)
		if !ok {
			return false, nil
		}
		l, ok1 := number(lo)
		h, ok2 := number(hi)
		if !ok1 || !ok2 {
			return false, TypeError("number", b)
		}
		return f >= l && f <= h, nil
	case "boolean":
		return v == atomTrue || v == engine.NewAtom("false"), nil
	case "callable":
		switch v.(type) {
		case engine.Atom, engine.Compound:
			return true, nil
		}
		return false, nil
	case "char":
		return isChar(v), nil
	case "code":
		return isCode(v), nil
	case "chars", "string":
		return allElems(c, v, isChar), nil
	case "codes":
		return allElems(c, v, isCode), nil
	case "text":
		if _, ok := v.(engine.Atom); ok {
			return true, nil
		}
		return allElems(c, v, isChar) || allElems(c, v, isCode), nil
	case "compound":
		_, ok := v.(engine.Compound)
		return ok, nil
	case "float":
		_, ok := v.(engine.Float)
		return ok, nil
	case "ground":
		return isGround(c, v), nil
	case "acyclic":
		return true, nil
	case "integer":
		_, ok := v.(engine.Integer)
		return ok, nil
	case "nonneg":
		n, ok := v.(engine.Integer)
		return ok && n >= 0, nil
	case "positive_integer":
		n, ok := v.(engine.Integer)
		return ok && n > 0, nil
	case "negative_integer":
		n, ok := v.(engine.Integer)
		return ok && n < 0, nil
	case "nonvar":
		return !isVar, nil
	case "number":
		_, ok := number(v)
		return ok, nil
	case "oneof/1":
		if !isGround(c, v) {
			return false, nil
		}
		found := false
		end, err := walkList(c, typ.(engine.Compound).Arg(0), func(e engine.Term) bool {
			if c.Env.Unifiable(v, e) {
				found = true
				return false
			}
			return true
		})
		if err != nil {
			return false, err
		}
		_, partial := end.(engine.Variable)
		return found || partial, nil
	case "pair":
		p, ok := v.(engine.Compound)
		return ok && p.Functor() == engine.NewAtom("-") && p.Arity() == 2, nil
	case "proper_list", "list":
		end, err := walkList(c, v, nil)
		return err == nil && end == atomNil, err
	case "list_or_partial_list":
		end, err := walkList(c, v, nil)
		_, partial := end.(engine.Variable)
		return err == nil && (end == atomNil || partial), err
	case "var":
		return isVar, nil
	case "stream":
		_, ok := v.(*engine.Stream)
		return ok, nil
	case "list/1":
		of := c.Resolve(typ.(engine.Compound).Arg(0))
		if _, ok := of.(engine.Variable); ok {
			return false, InstantiationError()
		}
		var elemErr error
		good := true
		end, err := walkList(c, v, func(e engine.Term) bool {
			ok, err := hasType(c, of, e)
			if err != nil {
				elemErr = err
				return false
			}
			good = ok
			return ok
		})
		if err == nil {
			err = elemErr
		}
		return err == nil && good && end == atomNil, err
	}
	return false, ExistenceError("type", typ)
}

func number(t engine.Term) (float64, bool) {
	switch n := t.(type) {
	case engine.Integer:
		return float64(n), true
	case engine.Float:
		return float64(n), true
	}
	return 0, false
}

// isNot is SWI's is_not/2: the error for x, known not to be of type typ.
func isNot(c *Call, typ, x engine.Term) error {
	name, arity := mbTypeName(typ)
	v := c.Resolve(x)
	_, isVar := v.(engine.Variable)
	switch {
	case name == "list" && arity <= 1:
		return notAList(c, typ, x)
	case name == "chars" && arity == 0:
		return notAList(c, engine.NewAtom("list").Apply(engine.NewAtom("char")), x)
	case name == "codes" && arity == 0:
		return notAList(c, engine.NewAtom("list").Apply(engine.NewAtom("code")), x)
	case name == "string" && arity == 0:
		return notAList(c, engine.NewAtom("list").Apply(engine.NewAtom("char")), x)
	case name == "list_or_partial_list":
		return TypeError("list", x)
	case name == "var":
		return &ISOError{Formal: engine.NewAtom("uninstantiation_error").Apply(x)}
	case isVar:
		return InstantiationError()
	case (name == "ground" || name == "oneof" || name == "text" || name == "stream") && !isGround(c, v):
		return InstantiationError()
	}
	return &ISOError{Formal: engine.NewAtom("type_error").Apply(typ, x)}
}

// notAList is SWI's not_a_list/2.
func notAList(c *Call, typ, x engine.Term) error {
	end, err := walkList(c, x, nil)
	if err != nil {
		return err
	}
	if _, ok := end.(engine.Variable); ok {
		return InstantiationError()
	}
	if end != atomNil {
		return &ISOError{Formal: engine.NewAtom("type_error").Apply(typ, x)}
	}
	tc, ok := typ.(engine.Compound)
	if !ok {
		return &ISOError{Formal: engine.NewAtom("type_error").Apply(typ, x)}
	}
	of := c.Resolve(tc.Arg(0))
	if _, ok := of.(engine.Variable); ok {
		return InstantiationError()
	}
	var found error
	_, _ = walkList(c, x, func(e engine.Term) bool {
		ok, err := hasType(c, of, e)
		if err != nil {
			found = err
			return false
		}
		if !ok {
			found = isNot(c, of, e)
			return false
		}
		return true
	})
	if found != nil {
		return found
	}
	return &ISOError{Formal: engine.NewAtom("type_error").Apply(typ, x)}
}

/* --- Options --- */

// optionTemplate returns Name(_, ...) for opt, with fresh arguments.
func optionTemplate(c *Call, opt engine.Term) (engine.Term, error) {
	switch v := c.Resolve(opt).(type) {
	case engine.Variable:
		return nil, InstantiationError()
	case engine.Compound:
		args := make([]engine.Term, v.Arity())
		for i := range args {
			args[i] = engine.NewVariable()
		}
		return v.Functor().Apply(args...), nil
	default:
		return v, nil
	}
}

// findOption finds the first element of options that unifies with gen, or
// failing that (for Name(Value) templates) the first Name = Value, and
// commits the unification. It returns the element's index, or -1.
func findOption(c *Call, gen, options engine.Term) (int, []engine.Term, error) {
	elems, err := c.List(options)
	if err != nil {
		return -1, nil, err
	}
	for i, e := range elems {
		if c.Unify(gen, e) {
			return i, elems, nil
		}
	}
	if g, ok := gen.(engine.Compound); ok && g.Arity() == 1 {
		eq := engine.NewAtom("=").Apply(g.Functor(), g.Arg(0))
		for i, e := range elems {
			if c.Unify(eq, e) {
				return i, elems, nil
			}
		}
	}
	return -1, elems, nil
}

func option2(c *Call, opt, options engine.Term) (bool, error) {
	gen, err := optionTemplate(c, opt)
	if err != nil {
		return false, err
	}
	i, _, err := findOption(c, gen, options)
	if err != nil || i < 0 {
		return false, err
	}
	return c.Unify(opt, gen), nil
}

// firstArgIs unifies the first argument of opt with def (SWI's arg(1, Opt,
// Default), which fails for an atom).
func firstArgIs(c *Call, opt, def engine.Term) bool {
	o, ok := c.Resolve(opt).(engine.Compound)
	return ok && c.Unify(o.Arg(0), def)
}

func option3(c *Call, opt, options, def engine.Term) (bool, error) {
	gen, err := optionTemplate(c, opt)
	if err != nil {
		return false, err
	}
	i, _, err := findOption(c, gen, options)
	if err != nil {
		return false, err
	}
	if i < 0 {
		return firstArgIs(c, opt, def), nil
	}
	return c.Unify(opt, gen), nil
}

func without(elems []engine.Term, i int) engine.Term {
	rest := make([]engine.Term, 0, len(elems)-1)
	rest = append(rest, elems[:i]...)
	return engine.List(append(rest, elems[i+1:]...)...)
}

func selectOption3(c *Call, opt, options, rest engine.Term) (bool, error) {
	gen, err := optionTemplate(c, opt)
	if err != nil {
		return false, err
	}
	i, elems, err := findOption(c, gen, options)
	if err != nil || i < 0 {
		return false, err
	}
	return c.Unify(rest, without(elems, i)) && c.Unify(opt, gen), nil
}

func selectOption4(c *Call, opt, options, rest, def engine.Term) (bool, error) {
	gen, err := optionTemplate(c, opt)
	if err != nil {
		return false, err
	}
	i, elems, err := findOption(c, gen, options)
	if err != nil {
		return false, err
	}
	if i < 0 {
		return c.Unify(rest, options) && firstArgIs(c, opt, def), nil
	}
	return c.Unify(rest, without(elems, i)) && c.Unify(opt, gen), nil
}

/* --- Records --- */

// recordFields reads Tag([Field, ...]).
func recordFields(c *Call, r engine.Term) (engine.Atom, []engine.Term, error) {
	switch v := c.Resolve(r).(type) {
	case engine.Variable:
		return 0, nil, InstantiationError()
	case engine.Compound:
		if v.Arity() == 1 && !isList(v, c.Env) {
			fields, err := c.List(v.Arg(0))
			if err == nil {
				return v.Functor(), fields, nil
			}
			if _, inst := c.Resolve(v.Arg(0)).(engine.Variable); inst {
				return 0, nil, err
			}
		}
	}
	return 0, nil, TypeError("record", r)
}

// fieldKey returns the key of a key(Value) field.
func fieldKey(c *Call, f engine.Term) (engine.Atom, bool) {
	v, ok := c.Resolve(f).(engine.Compound)
	if !ok || v.Arity() != 1 {
		return 0, false
	}
	return v.Functor(), true
}

func recordPut(c *Call, r, key, value, r2 engine.Term) (bool, error) {
	tag, fields, err := recordFields(c, r)
	if err != nil {
		return false, err
	}
	k, err := c.Atom(key)
	if err != nil {
		return false, err
	}
	ka := engine.NewAtom(k)
	nf := ka.Apply(value)
	at, found := len(fields), false
	for i, f := range fields {
		fk, ok := fieldKey(c, f)
		if !ok {
			return false, TypeError("record", r)
		}
		if fk == ka {
			at, found = i, true
			break
		}
		if at == len(fields) && fk.Compare(ka, c.Env) > 0 {
			at = i
		}
	}
	out := make([]engine.Term, 0, len(fields)+1)
	out = append(out, fields[:at]...)
	out = append(out, nf)
	if found {
		at++
	}
	out = append(out, fields[at:]...)
	return c.Unify(r2, tag.Apply(engine.List(out...))), nil
}

func recordTag(c *Call, r, tag engine.Term) (bool, error) {
	t, _, err := recordFields(c, r)
	if err != nil {
		return false, err
	}
	return c.Unify(tag, t), nil
}

/* --- yall --- */

// yallCopy copies Lambda with its unbound variables renamed, except those
// of Free. Subterms without unbound variables are shared, not copied, so a
// lambda that mentions a big bound term (memberchk(X, Big)) costs a walk,
// not a copy, per call (ichiban's copy_term rebuilds everything).
func yallCopy(c *Call, free, lambda, out engine.Term) (bool, error) {
	if !Acyclic(free, c.Env) || !Acyclic(lambda, c.Env) {
		return false, RepresentationError("cyclic_term")
	}
	keep := map[engine.Variable]bool{}
	collectVars(c, free, keep)
	cp, _ := copyUnbound(c, lambda, keep, map[engine.Variable]engine.Variable{})
	return c.Unify(out, cp), nil
}

func collectVars(c *Call, t engine.Term, into map[engine.Variable]bool) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		into[v] = true
	case engine.Compound:
		if _, ok := compactText(v); ok {
			return
		}
		for i := range v.Arity() {
			collectVars(c, v.Arg(i), into)
		}
	}
}

// copyUnbound returns t with its unbound variables (but those in keep)
// renamed, and whether anything was renamed.
func copyUnbound(c *Call, t engine.Term, keep map[engine.Variable]bool, renamed map[engine.Variable]engine.Variable) (engine.Term, bool) {
	switch v := c.Resolve(t).(type) {
	case engine.Variable:
		if keep[v] {
			return v, false
		}
		n, ok := renamed[v]
		if !ok {
			n = engine.NewVariable()
			renamed[v] = n
		}
		return n, true
	case engine.Compound:
		if _, ok := compactText(v); ok {
			return v, false
		}
		var args []engine.Term
		for i := range v.Arity() {
			a, changed := copyUnbound(c, v.Arg(i), keep, renamed)
			if changed && args == nil {
				args = make([]engine.Term, v.Arity())
				for j := range i {
					args[j] = v.Arg(j)
				}
			}
			if args != nil {
				args[i] = a
			}
		}
		if args == nil {
			return v, false
		}
		return v.Functor().Apply(args...), true
	default:
		return v, false
	}
}
