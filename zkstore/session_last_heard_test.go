package zkstore

import (
	"net"
	"testing"
	"time"
)

func TestConnectResponseTapReportsEveryRead(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	reads := 0
	tap := &connectResponseTap{Conn: client, onRead: func() { reads++ }}
	go func() {
		server.Write([]byte{0, 0, 0, 1, 7})
		server.Write([]byte{1, 2, 3})
	}()
	buf := make([]byte, 16)
	for got := 0; got < 8; {
		n, err := tap.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if reads < 2 {
		t.Fatalf("%d reads reported, want one per read that brought bytes (2)", reads)
	}
}

func TestMemSessionLastHeard(t *testing.T) {
	z := NewMem()
	c := z.Connect()
	before := time.Now()
	if s := c.Session(); s.LastHeard.Before(before) {
		t.Fatalf("a connected session last heard %v, before %v", s.LastHeard, before)
	}
	z.Disconnect(c)
	lost := c.Session().LastHeard
	if lost.Before(before) || lost.After(time.Now()) {
		t.Fatalf("last heard %v, want the disconnection (after %v)", lost, before)
	}
	time.Sleep(2 * time.Millisecond)
	if s := c.Session(); !s.LastHeard.Equal(lost) {
		t.Fatalf("a disconnected session's last word moved from %v to %v", lost, s.LastHeard)
	}
	z.Reconnect(c)
	if s := c.Session(); !s.LastHeard.After(lost) {
		t.Fatalf("reconnected, last heard %v, not after %v", s.LastHeard, lost)
	}
}
