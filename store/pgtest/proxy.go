package pgtest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to the test server. Down closes its
// listener and every connection (what a stopped server looks like to a
// client: reset connections, then refused ones); Up listens again on the
// same port. It lets a test take "the server" away without disturbing
// anyone else who uses it.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex // protects the fields below
	ln    net.Listener
	conns []net.Conn
}

// NewProxy starts a proxy to the server of dsn (a URL), closed at
// cleanup, and returns it with dsn rewritten to go through it. It skips t
// when dsn is not a URL with a host.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the test server's DSN is not a URL with a host: %q", dsn)
	}
	target := u.Host
	if u.Port() == "" {
		target += ":5432"
	}
	p := &Proxy{t: t, target: target}
	p.Up()
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.Down)
	u.Host = p.addr
	return p, u.String()
}

// Up starts listening (again).
func (p *Proxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr := "127.0.0.1:0"
	if p.addr != "" {
		addr = p.addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

// Down closes the listener and every connection.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
