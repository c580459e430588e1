package harness

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a target address and can cut them all
// at once, as a network failure would. Clients see the cut as a reset or
// EOF in the middle of whatever they were doing.
type Proxy struct {
	Addr string

	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	target   string
	conns    map[net.Conn]struct{}
	closed   bool
	cuts     int
	accepted int
}

// NewProxy listens on a free loopback port and forwards to target. Target
// may be empty and set later with SetTarget: a broker that must advertise
// the proxy's address can only be started once the proxy exists.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// SetTarget changes where new connections go.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// CutAll closes every open connection, both sides. New connections are
// still accepted.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			// Linger 0 sends RST, the harsher failure: no orderly FIN.
			_ = tc.SetLinger(0)
		}
		c.Close()
		delete(p.conns, c)
		n++
	}
	if n > 0 {
		p.cuts++
	}
	return n
}

// Cuts is how many times CutAll closed at least one connection: cuts of an
// idle proxy disturb nobody.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Accepted is how many client connections the proxy has forwarded.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Close stops accepting, cuts every connection and waits for the proxy's
// goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.CutAll()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			return
		}
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	p.accepted++
	return true
}

// pipe copies one direction; when either side fails both are closed, so a
// cut on one side is seen on the other.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
	dst.Close()
	src.Close()
}
