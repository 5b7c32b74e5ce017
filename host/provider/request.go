package provider

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rlmpl/rlmpl/tokenizer"
)

// Requests are tokenizer's [tokenizer.Request]: the one request value that
// the packer renders and the tokenizer counts, so that what is counted is
// what is sent. This file holds what the provider adds to it: the body
// bytes, validation.

// Body returns the exact body bytes sent for req: its wire JSON
// ([tokenizer.Request.MarshalJSON]), followed for a stream by
// "stream":true and "stream_options":{"include_usage":true}. [Client] sends
// these bytes (after setting a missing model to Options.Model), and every
// provider of this package reports them in [Response].RequestBody, so a
// receipt can hash what was sent. The caller owns the returned slice.
func Body(req *tokenizer.Request, stream bool) ([]byte, error) {
	body, err := req.MarshalJSON()
	if err != nil {
		return nil, invalidf("", "cannot encode: %v", err)
	}
	if stream {
		body = append(body[:len(body)-1], `,"stream":true,"stream_options":{"include_usage":true}}`...)
	}
	return body, nil
}

// clientKeys are body fields the client owns; Extra may not set them.
var clientKeys = map[string]bool{"stream": true, "stream_options": true}

// extraOwner names who sets body field key instead of Request.Extra, or ""
// when Extra may carry it.
func extraOwner(key string) string {
	if clientKeys[key] {
		return "Provider.Stream"
	}
	if f, typed := tokenizer.TypedField(key); typed {
		return "Request." + f
	}
	return ""
}

// Validate reports the first problem with r as a [*Error] of kind
// [KindInvalidRequest], or nil: roles (system, user, assistant, tool),
// content given once (text or parts), part types and image details, tool
// calls on assistant messages only and with names, tool names and schemas,
// cache breakpoints and their TTL, max_tokens, the response format and
// Extra (not a typed or client field, valid JSON). It does not check Extra keys against an allow-list (that is
// the provider's policy) nor require a model.
func Validate(r *tokenizer.Request) error {
	if len(r.Messages) == 0 {
		return invalidf("messages", "must be a non-empty list")
	}
	for i, m := range r.Messages {
		field := "messages[" + strconv.Itoa(i) + "]"
		switch m.Role {
		case tokenizer.RoleSystem, tokenizer.RoleUser, tokenizer.RoleAssistant, tokenizer.RoleTool:
		default:
			return invalidf(field+".role", "must be system, user, assistant or tool (got %q)", m.Role)
		}
		if m.Content != "" && len(m.Parts) > 0 {
			return invalidf(field, "has both Content and Parts")
		}
		for j, p := range m.Parts {
			if err := validatePart(p, field+".parts["+strconv.Itoa(j)+"]"); err != nil {
				return err
			}
		}
		if len(m.ToolCalls) > 0 && m.Role != tokenizer.RoleAssistant {
			return invalidf(field+".tool_calls", "only assistant messages carry tool calls")
		}
		for j, tc := range m.ToolCalls {
			tf := field + ".tool_calls[" + strconv.Itoa(j) + "]"
			if tc.Type != "" && tc.Type != "function" {
				return invalidf(tf+".type", "must be function (got %q)", tc.Type)
			}
			if tc.Function.Name == "" {
				return invalidf(tf+".function.name", "must be non-empty")
			}
		}
	}
	for i, t := range r.Tools {
		field := "tools[" + strconv.Itoa(i) + "]"
		if t.Type != "" && t.Type != "function" {
			return invalidf(field+".type", "must be function (got %q)", t.Type)
		}
		if t.Function.Name == "" {
			return invalidf(field+".function.name", "must be non-empty")
		}
		if len(t.Function.Parameters) > 0 && !json.Valid(t.Function.Parameters) {
			return invalidf(field+".function.parameters", "is not valid JSON")
		}
	}
	for i, bp := range r.Cache.Breakpoints {
		if bp < 0 || bp >= len(r.Messages) || i > 0 && bp <= r.Cache.Breakpoints[i-1] {
			return invalidf("cache.breakpoints", "must be ascending indices of messages (got %v)", r.Cache.Breakpoints)
		}
	}
	if !validTTL(r.Cache.TTL) {
		return invalidf("cache.ttl", "must be 5m or 1h (got %q)", r.Cache.TTL)
	}
	if r.MaxTokens < 0 {
		return invalidf("max_tokens", "must be >= 0 (got %d)", r.MaxTokens)
	}
	if f := r.ResponseFormat; f != nil {
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.JSONSchema == nil || f.JSONSchema.Name == "" || !json.Valid(f.JSONSchema.Schema) {
				return invalidf("response_format.json_schema", "needs a name and a valid JSON schema")
			}
		default:
			return invalidf("response_format.type", "must be text, json_object or json_schema (got %q)", f.Type)
		}
	}
	for k, v := range r.Extra {
		if owner := extraOwner(k); owner != "" {
			return invalidf("extra."+k, "is set through %s, not Extra", owner)
		}
		if !json.Valid(v) {
			return invalidf("extra."+k, "is not valid JSON")
		}
	}
	return nil
}

func validatePart(p tokenizer.Part, field string) error {
	switch p.Type {
	case tokenizer.PartText:
		if p.ImageURL != "" || p.Detail != "" {
			return invalidf(field, "a text part has image fields")
		}
	case tokenizer.PartImageURL:
		if p.ImageURL == "" {
			return invalidf(field+".image_url", "must be non-empty")
		}
		switch p.Detail {
		case "", tokenizer.DetailAuto, tokenizer.DetailLow, tokenizer.DetailHigh:
		default:
			return invalidf(field+".detail", "must be auto, low or high (got %q)", p.Detail)
		}
		if p.Text != "" {
			return invalidf(field, "an image part has text")
		}
	default:
		return invalidf(field+".type", "unsupported content part type %q", p.Type)
	}
	return nil
}

func invalidf(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalidRequest, Message: "request." + field + ": " + fmt.Sprintf(format, args...)}
}
