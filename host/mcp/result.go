package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is a tool call's result as a model reads it and as it is kept.
type Result struct {
	// Text is what the model reads: the text blocks in order, an image
	// or audio block as a line naming its type and size, a resource link
	// as its name and URI, an embedded resource as its text; the
	// structured content as JSON when no block carries text (the spec asks
	// servers to mirror it in a text block).
	Text string
	// Images are the result's images, kept with the tool message.
	Images []Image
	// Structured is the structured content, as JSON (nil when none).
	Structured json.RawMessage
	// IsError: the tool reported an error; Text says what.
	IsError bool
}

// Image is one image of a result.
type Image struct {
	MIMEType string
	Data     []byte
}

// DataURL is the image as a data: URL.
func (im Image) DataURL() string {
	return "data:" + im.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// resultOf renders a call's result.
func resultOf(r *sdk.CallToolResult) *Result {
	out := &Result{IsError: r.IsError}
	var lines []string
	hasText := false
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			lines, hasText = append(lines, c.Text), true
		case *sdk.ImageContent:
			out.Images = append(out.Images, Image{MIMEType: c.MIMEType, Data: c.Data})
			lines = append(lines, fmt.Sprintf("[image %d: %s, %d bytes]", len(out.Images), c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			lines = append(lines, fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			lines = append(lines, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			switch rc := c.Resource; {
			case rc == nil:
			case rc.Text != "":
				lines, hasText = append(lines, fmt.Sprintf("[resource %s]\n%s", rc.URI, rc.Text)), true
			default:
				lines = append(lines, fmt.Sprintf("[resource %s: %s, %d bytes]", rc.URI, rc.MIMEType, len(rc.Blob)))
			}
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = b
			if !hasText {
				lines = append(lines, string(b))
			}
		}
	}
	out.Text = strings.Join(lines, "\n")
	return out
}
