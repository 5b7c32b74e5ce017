package provider

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// ApplyOptions sets generation options given as generic values (decoded
// JSON, or a Prolog option list converted by the host): max_tokens,
// temperature, top_p, seed, stop and response_format go to their typed
// fields; tools must be set through r.Tools; every other key is marshaled
// into r.Extra, where the provider's allow-list judges it. Numbers may be
// any Go integer or float type; an integer option must be integral.
//
// It returns a [*Error] of kind [KindInvalidRequest] naming the first bad
// option (in key order), leaving r partly updated.
func ApplyOptions(r *tokenizer.Request, opts map[string]any) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		field := "options." + k
		switch k {
		case "max_tokens":
			n, ok := integer(v)
			if !ok || n < 0 {
				return invalidf(field, "must be a non-negative integer (got %v)", v)
			}
			r.MaxTokens = int(n)
		case "temperature", "top_p":
			f, ok := number(v)
			if !ok {
				return invalidf(field, "must be a number (got %v)", v)
			}
			if k == "temperature" {
				r.Temperature = new(f)
			} else {
				r.TopP = new(f)
			}
		case "seed":
			n, ok := integer(v)
			if !ok {
				return invalidf(field, "must be an integer (got %v)", v)
			}
			r.Seed = new(n)
		case "stop":
			switch s := v.(type) {
			case string:
				r.Stop = []string{s}
			case []string:
				r.Stop = append([]string(nil), s...)
			case []any:
				r.Stop = r.Stop[:0:0]
				for _, e := range s {
					t, ok := e.(string)
					if !ok {
						return invalidf(field, "must be a string or a list of strings")
					}
					r.Stop = append(r.Stop, t)
				}
			default:
				return invalidf(field, "must be a string or a list of strings")
			}
		case "response_format":
			b, err := json.Marshal(v)
			var f tokenizer.ResponseFormat
			if err != nil || json.Unmarshal(b, &f) != nil {
				return invalidf(field, "must be an object {type, json_schema?}")
			}
			r.ResponseFormat = &f
		case "tools", "model", "messages", "stream", "stream_options":
			return invalidf(field, "cannot be set as an option")
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return invalidf(field, "cannot be encoded as JSON: %v", err)
			}
			if r.Extra == nil {
				r.Extra = make(map[string]json.RawMessage)
			}
			r.Extra[k] = b
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
