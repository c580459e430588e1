package zkstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// CloseSession ends a session that an earlier process left behind — a
// broker killed before it could close its own — so that its ephemeral
// nodes (the broker's registration, /controller) go now instead of when
// the server's session timeout runs out. It resumes the session on a
// connection of its own with the stored credentials and sends
// closeSession, as a client closing normally would.
//
// closed reports whether the session was still alive and is now closed;
// false with a nil error means the server no longer knew it (expired,
// closed, or the credentials are from another ensemble). The servers of
// zookeeper.connect are tried in turn; the chroot does not matter, since
// sessions are the ensemble's.
func CloseSession(ctx context.Context, connect string, cred SessionCredentials, timeout time.Duration) (closed bool, err error) {
	servers, _, err := parseZKConnect(connect)
	if err != nil {
		return false, err
	}
	var errs []error
	for _, addr := range servers {
		closed, err := closeSessionAt(ctx, addr, cred, timeout)
		if err == nil {
			return closed, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return false, errors.Join(errs...)
}

// ZooKeeper's opcode for closeSession (ZooDefs.OpCode.closeSession).
const opCloseSession int32 = -11

func closeSessionAt(ctx context.Context, addr string, cred SessionCredentials, timeout time.Duration) (bool, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return false, err
	}
	// ConnectRequest: protocolVersion int32, lastZxidSeen int64, timeOut
	// int32, sessionId int64, passwd buffer. lastZxidSeen 0: this client
	// has seen nothing, which no server refuses.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(timeout.Milliseconds()))
	req = binary.BigEndian.AppendUint64(req, uint64(cred.ID))
	req = binary.BigEndian.AppendUint32(req, uint32(len(cred.Password)))
	req = append(req, cred.Password...)
	if err := writeFrame(conn, req); err != nil {
		return false, err
	}
	resp, err := readFrame(conn)
	if err != nil {
		return false, fmt.Errorf("reading connect response: %w", err)
	}
	got, ok := decodeConnectResponse(resp)
	if !ok || got.ID != cred.ID {
		// The server answers an unknown or expired session (or a wrong
		// password) with session id 0 and then closes the connection.
		return false, nil
	}
	// RequestHeader: xid int32, type int32; closeSession has no body.
	hdr := binary.BigEndian.AppendUint32(nil, 1)
	op := opCloseSession
	hdr = binary.BigEndian.AppendUint32(hdr, uint32(op))
	if err := writeFrame(conn, hdr); err != nil {
		return false, err
	}
	// ReplyHeader: xid int32, zxid int64, err int32.
	reply, err := readFrame(conn)
	if err != nil {
		return false, fmt.Errorf("reading closeSession reply: %w", err)
	}
	if len(reply) < 16 {
		return false, fmt.Errorf("closeSession reply of %d bytes", len(reply))
	}
	if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != 0 {
		return false, fmt.Errorf("closeSession: ZooKeeper error %d", code)
	}
	return true, nil
}

func writeFrame(w io.Writer, body []byte) error {
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	_, err := w.Write(append(frame, body...))
	return err
}

// maxReplyFrame: the frames read here are a ConnectResponse or a bare
// reply header; a larger length means this is not a ZooKeeper server.
const maxReplyFrame = 1 << 10

func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxReplyFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}
