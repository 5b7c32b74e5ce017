package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"

	"github.com/rlmpl/rlmpl/host"
)

// telemetry is the tracing of one command (run, repl, chat), configured by
// the standard OpenTelemetry environment and off unless it asks:
//
//	OTEL_TRACES_EXPORTER=otlp      OTLP/HTTP (protobuf) to OTEL_EXPORTER_OTLP_ENDPOINT
//	                               (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; default localhost:4318)
//	OTEL_TRACES_EXPORTER=console   each span as one JSON line on stderr
//	OTEL_TRACES_EXPORTER=none      off (the default, unless an OTLP endpoint is set)
//	OTEL_SERVICE_NAME              the service.name resource attribute (default rlmpl)
//	OTEL_SDK_DISABLED=true         off, whatever else is set
//	OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true
//	                               record message content in spans (off by default)
//
// The OTLP exporter also reads its own variables (OTEL_EXPORTER_OTLP_HEADERS,
// ..._TIMEOUT, ...). Spans are flushed when the command ends.
type telemetry struct {
	tp      *sdktrace.TracerProvider // nil when off
	content bool
}

// startTelemetry reads the environment through getenv and starts the
// exporter it names. An unknown exporter is an error, so that a typo does
// not silently lose an operator's traces.
func startTelemetry(ctx context.Context, getenv func(string) string, stderr io.Writer) (*telemetry, error) {
	tel := &telemetry{content: strings.EqualFold(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "true")}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return tel, nil
	}
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	if exporter == "" && (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		exporter = "otlp"
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "rlmpl"
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(host.Version))
	switch exporter {
	case "", "none":
		return tel, nil
	case "otlp":
		if p := getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: rlmpl exports OTLP over http/protobuf only", p)
		}
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=otlp: %w", err)
		}
		tel.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	case "console":
		exp, err := stdouttrace.New(stdouttrace.WithWriter(stderr))
		if err != nil {
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=console: %w", err)
		}
		tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: rlmpl knows otlp, console and none", exporter)
	}
	return tel, nil
}

// setup hands the host the tracer (nothing when off).
func (tel *telemetry) setup(opts *host.Options) error {
	if tel.tp != nil {
		opts.TracerProvider, opts.TraceContent = tel.tp, tel.content
	}
	return nil
}

// shutdown flushes the spans still buffered (at most 5 seconds).
func (tel *telemetry) shutdown(stderr io.Writer) {
	if tel == nil || tel.tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.tp.Shutdown(ctx); err != nil {
		fmt.Fprintf(stderr, "rlmpl: traces: %v\n", err)
	}
}
