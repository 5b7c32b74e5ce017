package pgtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to the test server. Down closes its
// listener and every connection (what a stopped server looks like to a
// client: reset connections, then refused ones); Up listens again on the
// same port. Freeze stops relaying while every socket stays open (what a
// partition without a reset or a stalled server looks like: writes
// succeed, no reply ever comes, new connections are accepted and hang);
// Thaw relays again, what was held first; Strand relays again on new
// connections only, the frozen ones staying silent until Down (a peer
// gone for good without a reset). It lets a test take "the server" away
// without disturbing anyone else who uses it.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu     sync.Mutex // protects the fields below
	ln     net.Listener
	conns  []net.Conn
	frozen bool
	epoch  int        // connections accepted before a Strand are of an earlier epoch
	thawed *sync.Cond // signalled by Thaw, Strand and Down
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
	p.thawed = sync.NewCond(&p.mu)
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
			p.mu.Lock()
			p.conns = append(p.conns, c)
			epoch := p.epoch
			p.mu.Unlock()
			go p.serve(c, epoch)
		}
	}()
}

// serve relays c, accepted in epoch, to a connection to the server, once
// not frozen.
func (p *Proxy) serve(c net.Conn, epoch int) {
	if !p.wait(epoch) {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, s)
	p.mu.Unlock()
	go func() { p.relay(s, c, epoch); s.Close() }()
	go func() { p.relay(c, s, epoch); c.Close() }()
}

// relay copies src to dst, holding what it read while the proxy is
// frozen for epoch.
func (p *Proxy) relay(dst, src net.Conn, epoch int) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(epoch) {
				return
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait blocks while the proxy is frozen for a connection of epoch; false
// means it went down.
func (p *Proxy) wait(epoch int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for (p.frozen || epoch < p.epoch) && p.ln != nil {
		p.thawed.Wait()
	}
	return p.ln != nil
}

// Freeze stops relaying; every connection stays open.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

// Thaw relays again.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = false
	p.thawed.Broadcast()
}

// Strand relays again on connections accepted from now on; those open
// now stay frozen until Down.
func (p *Proxy) Strand() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = false
	p.epoch++
	p.thawed.Broadcast()
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
	p.thawed.Broadcast()
}
