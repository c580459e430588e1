package harness

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProxyForwardsAndCuts(t *testing.T) {
	p := NewProxy(t, "")
	p.SetTarget(echoServer(t))
	c, err := net.DialTimeout("tcp", p.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	if _, err := c.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	line, err := r.ReadString('\n')
	if err != nil || line != "hello\n" {
		t.Fatalf("echo through proxy: %q, %v", line, err)
	}
	if n := p.CutAll(); n != 2 || p.Cuts() != 1 {
		t.Fatalf("CutAll closed %d conns (cuts %d), want 2 (client and upstream side) and 1", n, p.Cuts())
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("read after CutAll succeeded; want the connection closed")
	}

	// The proxy still accepts new connections after a cut.
	c2, err := net.DialTimeout("tcp", p.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_ = c2.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c2.Write([]byte("again\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c2).ReadString('\n'); err != nil || line != "again\n" {
		t.Fatalf("echo after cut: %q, %v", line, err)
	}
	if p.Accepted() != 2 {
		t.Errorf("Accepted = %d, want 2", p.Accepted())
	}
}

func TestFreePortIsListenable(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("FreePort %d not listenable: %v", port, err)
	}
	ln.Close()
}
