package wirefix

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The bytes Kafka's StopReplicaRequestData writes for v4: ControllerId,
// isKRaftController, ControllerEpoch, BrokerEpoch, then the topics.
func kafkaStopReplicaV4Prefix(controllerID, controllerEpoch int32, kraft bool, brokerEpoch int64) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(controllerID))
	if kraft {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(controllerEpoch))
	return binary.BigEndian.AppendUint64(b, uint64(brokerEpoch))
}

func TestStopReplicaV4InKafkasOrder(t *testing.T) {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 4, 2, 1, 145
	t1 := kmsg.NewStopReplicaRequestTopic()
	t1.Topic = "t"
	ps := kmsg.NewStopReplicaRequestTopicPartitionState()
	ps.Partition, ps.LeaderEpoch, ps.Delete = 3, 7, true
	t1.PartitionStates = append(t1.PartitionStates, ps)
	req.Topics = append(req.Topics, t1)

	header := []byte("header")
	wire := Outgoing(req).AppendTo(bytes.Clone(header))
	if !bytes.HasPrefix(wire, header) {
		t.Fatal("the bytes before the body changed")
	}
	body := wire[len(header):]
	if want := kafkaStopReplicaV4Prefix(2, 1, false, 145); !bytes.HasPrefix(body, want) {
		t.Fatalf("body starts % x, want Kafka's % x", body[:len(want)], want)
	}

	// And back: what Kafka sends decodes to the same request.
	Incoming(kmsg.StopReplica.Int16(), 4, body)
	back := kmsg.NewPtrStopReplicaRequest()
	back.Version = 4
	if err := back.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	if back.ControllerID != 2 || back.ControllerEpoch != 1 || back.BrokerEpoch != 145 || back.IsKRaftController ||
		len(back.Topics) != 1 || back.Topics[0].PartitionStates[0].LeaderEpoch != 7 || !back.Topics[0].PartitionStates[0].Delete {
		t.Fatalf("decoded %+v", back)
	}

	// Below v4 there is no flag and nothing moves.
	req.Version = 3
	if got, want := Outgoing(req).AppendTo(nil), req.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatal("v3 changed")
	}
}
