package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// connLost reports an error of the connection rather than of the
// statement: the server is down, restarting or unreachable, or it ended
// the session (admin_shutdown when it is stopped or restarted, a
// terminated backend), or it stopped answering (a statement's reply or a
// connection's handshake did not come in time). The transaction it
// happened in did not commit unless the error came from the commit
// itself.
func connLost(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08" // connection_exception
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || errors.Is(err, pgconn.ErrConnClosed) ||
		pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// unavailable marks a lost connection with [ErrUnavailable]; other errors
// are returned as they are.
func unavailable(err error) error {
	switch {
	case !connLost(err) || errors.Is(err, ErrUnavailable):
		return err
	case pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded):
		// The cause as text only: no caller's deadline passed, and code
		// that tells its own cancellation apart with errors.Is must not
		// take a silent server for it.
		return fmt.Errorf("%w: no reply in time: %v", ErrUnavailable, err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
