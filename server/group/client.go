package group

import (
	"context"
	"crypto/rand"
	"fmt"
)

// ClientInfo is what the request header and the connection tell about a
// member; JoinGroup records it for DescribeGroups.
type ClientInfo struct {
	// ClientID is the request header's client.id.
	ClientID string
	// ClientHost is the peer address as Kafka shows it: "/" + IP.
	ClientHost string
}

type clientInfoKey struct{}

// WithClientInfo attaches the caller's client id and host to ctx; handlers
// call it before JoinGroup since kmsg request bodies do not carry them.
func WithClientInfo(ctx context.Context, ci ClientInfo) context.Context {
	return context.WithValue(ctx, clientInfoKey{}, ci)
}

func clientInfoFrom(ctx context.Context) ClientInfo {
	ci, _ := ctx.Value(clientInfoKey{}).(ClientInfo)
	return ci
}

// newMemberID is Kafka's GroupMetadata.generateMemberId: the instance id
// (static members) or client id, a dash, and a random UUID.
func newMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
