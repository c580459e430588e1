// Package wirefix corrects the places where kmsg's encoding of a Kafka
// message differs from the bytes Kafka itself reads and writes, so that
// kbroker brokers and controllers interoperate with Kafka's.
//
// StopReplica v4 (KIP-866): Kafka's StopReplicaRequest.json puts
// isKRaftController right after ControllerId, as in LeaderAndIsr v7 and
// UpdateMetadata v8; kmsg puts it after ControllerEpoch. A Kafka 3.9 broker
// then read a kbroker controller's epoch 1 as 256 (the epoch's last three
// bytes and the flag byte) and refused every later request of that
// controller as coming from an old one; a kbroker broker read a Kafka
// controller's epoch as 0.
//
// Fetch below v15: kmsg writes the ReplicaState tag (KIP-903) in every
// flexible version (v12+) when it is set, and a Kafka leader refuses a
// v12-v14 Fetch carrying it ("Tag 1 is not valid for version 12"): a
// follower of a Kafka leader whose topics have no ids
// (inter.broker.protocol.version below 2.8) would never fetch. FitFetch
// clears it.
package wirefix

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// stopReplicaFlagVersion is the first StopReplica version with
// isKRaftController.
const stopReplicaFlagVersion = 4

// Outgoing wraps a request so that it goes out in Kafka's byte order.
func Outgoing(req kmsg.Request) kmsg.Request {
	if r, ok := req.(*kmsg.StopReplicaRequest); ok {
		return stopReplica{r}
	}
	return req
}

// Incoming puts a request body received in Kafka's byte order into kmsg's,
// in place, before kmsg decodes it.
func Incoming(key, version int16, body []byte) {
	if key == kmsg.StopReplica.Int16() && version >= stopReplicaFlagVersion && len(body) >= 9 {
		// Kafka: id(4) flag(1) epoch(4); kmsg: id(4) epoch(4) flag(1).
		flag := body[4]
		copy(body[4:8], body[5:9])
		body[8] = flag
	}
}

type stopReplica struct{ *kmsg.StopReplicaRequest }

func (r stopReplica) AppendTo(dst []byte) []byte {
	start := len(dst)
	out := r.StopReplicaRequest.AppendTo(dst)
	if r.Version >= stopReplicaFlagVersion && len(out)-start >= 9 {
		// kmsg: id(4) epoch(4) flag(1); Kafka: id(4) flag(1) epoch(4).
		b := out[start:]
		flag := b[8]
		copy(b[5:9], b[4:8])
		b[4] = flag
	}
	return out
}

// replicaStateVersion is the first Fetch version with the ReplicaState
// tagged field.
const replicaStateVersion = 15

// FitFetch clears what kmsg would otherwise write into a Fetch version that
// does not have it.
func FitFetch(req *kmsg.FetchRequest) {
	if req.Version < replicaStateVersion {
		req.ReplicaState = kmsg.NewFetchRequestReplicaState()
	}
}

// Capped keeps franz-go from raising a request's version above Max: it
// sends min(MaxVersion, the broker's), and MaxVersion is the only hook it
// offers per request. A Fetch is fitted to the version it settles on.
type Capped struct {
	kmsg.Request
	Max int16
}

func (c Capped) MaxVersion() int16 { return c.Max }

// SetVersion is franz-go's choice of version.
func (c Capped) SetVersion(version int16) {
	c.Request.SetVersion(version)
	if f, ok := c.Request.(*kmsg.FetchRequest); ok {
		FitFetch(f)
	}
}
