package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/rlmpl/rlmpl/host"
)

// logFlags are --log-format and --log-level (run, repl, chat): structured
// logs on stderr through log/slog, off unless a format is given. Every
// line a managed turn logs carries its conversation_id and turn_id.
type logFlags struct {
	format, level *string
}

func addLogFlags(fs *flag.FlagSet) *logFlags {
	return &logFlags{
		format: fs.String("log-format", "", "structured logs on stderr: `text` or json (default: none)"),
		level:  fs.String("log-level", "info", "with --log-format: debug, info, warn or error"),
	}
}

// logger is the logger the flags ask for: nil when there are no logs.
func (lf *logFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	if lf == nil || *lf.format == "" {
		return nil, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*lf.level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not debug, info, warn or error", *lf.level)
	}
	o := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(*lf.format) {
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, o)), nil
	case "text":
		return slog.New(slog.NewTextHandler(stderr, o)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not text or json", *lf.format)
}

// setup hands the host the logger, when there is one.
func (lf *logFlags) setup(stderr io.Writer) func(*host.Options) error {
	return func(opts *host.Options) error {
		l, err := lf.logger(stderr)
		if l != nil {
			opts.Logger = l
		}
		return err
	}
}
