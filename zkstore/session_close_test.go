package zkstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// fakeSessionServer answers one connection the way a ZooKeeper server
// answers a client resuming a session: a ConnectResponse with the session
// (or id 0 when it does not know it), then a reply to closeSession.
func fakeSessionServer(t *testing.T, known SessionCredentials) (addr string, closed <-chan int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		req, err := readFrame(c)
		if err != nil || len(req) < 28 {
			t.Errorf("connect request: %v (%d bytes)", err, len(req))
			return
		}
		id := int64(binary.BigEndian.Uint64(req[16:24]))
		plen := binary.BigEndian.Uint32(req[24:28])
		pw := req[28 : 28+plen]
		resp := binary.BigEndian.AppendUint32(nil, 0)
		resp = binary.BigEndian.AppendUint32(resp, 6000)
		if id == known.ID && bytes.Equal(pw, known.Password) {
			resp = binary.BigEndian.AppendUint64(resp, uint64(id))
			resp = binary.BigEndian.AppendUint32(resp, uint32(len(pw)))
			resp = append(resp, pw...)
		} else {
			resp = binary.BigEndian.AppendUint64(resp, 0)
			resp = binary.BigEndian.AppendUint32(resp, 16)
			resp = append(resp, make([]byte, 16)...)
		}
		resp = append(resp, 0) // readOnly
		if err := writeFrame(c, resp); err != nil {
			return
		}
		hdr, err := readFrame(c)
		if err != nil {
			return // an unknown session: the client hangs up
		}
		if len(hdr) != 8 || int32(binary.BigEndian.Uint32(hdr[4:8])) != opCloseSession {
			t.Errorf("expected closeSession, got %x", hdr)
			return
		}
		reply := append(append([]byte(nil), hdr[:4]...), make([]byte, 12)...)
		_ = writeFrame(c, reply)
		ch <- id
	}()
	return ln.Addr().String(), ch
}

func TestCloseSessionOfALiveSession(t *testing.T) {
	cred := SessionCredentials{ID: 0x100000abc, Password: []byte("0123456789abcdef")}
	addr, closed := fakeSessionServer(t, cred)
	ok, err := CloseSession(context.Background(), addr+"/kafka", cred, 6*time.Second)
	if err != nil || !ok {
		t.Fatalf("CloseSession = %v, %v", ok, err)
	}
	if id := <-closed; id != cred.ID {
		t.Errorf("server closed session %x", id)
	}
}

func TestCloseSessionOfAnExpiredSession(t *testing.T) {
	addr, _ := fakeSessionServer(t, SessionCredentials{ID: 1, Password: []byte("x")})
	ok, err := CloseSession(context.Background(), addr, SessionCredentials{ID: 2, Password: []byte("y")}, 6*time.Second)
	if err != nil || ok {
		t.Fatalf("CloseSession of an unknown session = %v, %v; want false, nil", ok, err)
	}
}

func TestCloseSessionUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := CloseSession(context.Background(), addr, SessionCredentials{ID: 1}, time.Second); err == nil {
		t.Fatal("no error from an address nobody listens on")
	}
}

// The tap hands over the credentials of the first frame however the
// reads split it, and leaves later frames alone.
func TestConnectResponseTap(t *testing.T) {
	resp := binary.BigEndian.AppendUint32(nil, 0)
	resp = binary.BigEndian.AppendUint32(resp, 6000)
	resp = binary.BigEndian.AppendUint64(resp, 0x77)
	resp = binary.BigEndian.AppendUint32(resp, 4)
	resp = append(resp, 'p', 'a', 's', 's', 0)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(resp)))
	frame = append(frame, resp...)
	stream := append(append([]byte(nil), frame...), frame...)

	server, client := net.Pipe()
	defer client.Close()
	var got []SessionCredentials
	tap := &connectResponseTap{Conn: client, onSession: func(c SessionCredentials) { got = append(got, c) }}
	go func() {
		for i := 0; i < len(stream); i += 3 {
			end := min(i+3, len(stream))
			if _, err := server.Write(stream[i:end]); err != nil {
				return
			}
		}
		server.Close()
	}()
	if _, err := io.ReadAll(tap); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != 0x77 || string(got[0].Password) != "pass" {
		t.Fatalf("credentials seen: %+v", got)
	}
}

func TestDecodeConnectResponseExpired(t *testing.T) {
	resp := make([]byte, 20+16)
	binary.BigEndian.PutUint32(resp[16:], 16)
	if _, ok := decodeConnectResponse(resp); ok {
		t.Fatal("session id 0 (expired) decoded as credentials")
	}
	if _, ok := decodeConnectResponse(resp[:10]); ok {
		t.Fatal("short frame decoded")
	}
}
