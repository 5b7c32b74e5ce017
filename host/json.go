package host

// JSON-like data across the boundary: metadata values, tool arguments and
// results. One mapping each way, documented on jsonTerm and goJSON.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/ichiban/prolog/engine"

	"github.com/rlmpl/rlmpl/prolog"
	"github.com/rlmpl/rlmpl/store"
)

// metadataOf renders metadata as metadata([key(Value), ...]) with JSON
// values decoded: strings are text, numbers numbers, objects records.
func metadataOf(kvs []store.KV) engine.Term {
	fields := make([]prolog.Field, 0, len(kvs))
	for _, kv := range kvs {
		var v any
		_ = json.Unmarshal(kv.Value, &v)
		fields = append(fields, fld(kv.Key, jsonTerm(v)))
	}
	return record("metadata", fields...)
}

// jsonTerm converts a decoded JSON value: strings to text, numbers to
// integers when integral, booleans and null to atoms, arrays to lists,
// objects to json([key(V), ...]) with keys sorted.
func jsonTerm(v any) engine.Term {
	switch v := v.(type) {
	case nil:
		return engine.NewAtom("null")
	case bool:
		return boolTerm(v)
	case string:
		return prolog.Chars(v)
	case float64:
		if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
			return engine.Integer(int64(v))
		}
		return engine.Float(v)
	case []any:
		ts := make([]engine.Term, len(v))
		for i, e := range v {
			ts[i] = jsonTerm(e)
		}
		return engine.List(ts...)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fs := make([]prolog.Field, len(keys))
		for i, k := range keys {
			fs[i] = fld(k, jsonTerm(v[k]))
		}
		return record("json", fs...)
	}
	return engine.NewAtom(fmt.Sprint(v))
}

// goJSON converts a term to a JSON-encodable value: text to strings, atoms
// to strings (true/false/null to their JSON values), records and
// Key-Value lists to objects.
func goJSON(t engine.Term, env *engine.Env) (any, error) {
	v, err := prolog.Value(t, env)
	if err != nil {
		return nil, err
	}
	return jsonOf(v)
}

func jsonOf(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, prolog.InstantiationError()
	case prolog.Atom:
		switch v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		return string(v), nil
	case string, int64, float64, *big.Int:
		return v, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			j, err := jsonOf(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case prolog.Record:
		// Objects are json([key(V), ...]) (what jsonTerm gives back);
		// another tag would be lost on the way: a([b(1)]) is not data.
		if v.Tag != "json" && v.Tag != "pair" {
			return nil, fmt.Errorf("not JSON data: a %s record (objects are json([key(Value), ...]))", v.Tag)
		}
		m := map[string]any{}
		for _, f := range v.Fields {
			j, err := jsonOf(f.Value)
			if err != nil {
				return nil, err
			}
			m[f.Key] = j
		}
		return m, nil
	case prolog.Compound:
		if v.Functor == "-" && len(v.Args) == 2 {
			return jsonOf(prolog.Record{Tag: "pair", Fields: []prolog.Field{{Key: fmt.Sprint(v.Args[0]), Value: v.Args[1]}}})
		}
	}
	return nil, fmt.Errorf("not JSON data: %v", v)
}
