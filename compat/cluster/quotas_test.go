package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// throttleSeen counts responses with throttle_time_ms > 0.
type throttleSeen struct{ n *atomic.Int64 }

func (h throttleSeen) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
	}
}

// A client quota set through one broker is enforced by another, which
// learns of it from the /config/changes notification.
func TestClientQuotaAcrossBrokers(t *testing.T) {
	c := harness.StartCluster(t, 2)
	via, leader := c.Brokers[0], c.Brokers[1]
	const topic = "quota-elsewhere"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {leader.ID}}, nil)
	value := make([]byte, 32<<10)
	rand.Read(value)
	// AlterClientQuotas goes to via itself: Kafka's admin client (and so
	// kafka-configs) sends it to whichever broker is least loaded.
	admin := newClient(t, []string{via.Addr})
	setQuota := func(client string) {
		t.Helper()
		req := kmsg.NewPtrAlterClientQuotasRequest()
		e := kmsg.NewAlterClientQuotasRequestEntry()
		ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ent.Type, ent.Name = "client-id", kmsg.StringPtr(client)
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = "producer_byte_rate", 1024
		e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
		req.Entries = append(req.Entries, e)
		resp, err := admin.Broker(int(via.ID)).Request(testCtx(t, 30*time.Second), req)
		if err != nil {
			t.Fatalf("AlterClientQuotas through broker %d: %v", via.ID, err)
		}
		if code := resp.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode; code != 0 {
			t.Fatalf("AlterClientQuotas through broker %d: %v", via.ID, kerr.ErrorForCode(code))
		}
	}
	// 32 KiB at once is over 1 KiB/s over the 10 s window: the leader
	// throttles the first produce once it has the quota. Each try is a
	// new client: a throttled one waits out its throttle before the next.
	throttled := func(client string) error {
		var throttles atomic.Int64
		cl, err := kgo.NewClient(kgo.SeedBrokers(leader.Addr), kgo.ClientID(client),
			kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.WithHooks(throttleSeen{&throttles}))
		if err != nil {
			return err
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: value}).FirstErr(); err != nil {
			return err
		}
		if throttles.Load() == 0 {
			return fmt.Errorf("produce of %s not throttled", client)
		}
		return nil
	}
	// The first quota may reach the leader with the quotas it loads at
	// start; once it is in force there, the second can only come through
	// the change notification.
	setQuota("q-first")
	waitUntil(t, 15*time.Second, "the leader throttles q-first", func() error { return throttled("q-first") })
	setQuota("q-remote")
	waitUntil(t, 15*time.Second, "the leader throttles q-remote", func() error { return throttled("q-remote") })
}
