package txn

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
)

const testPartitions = 4

type harness struct {
	t       *testing.T
	clock   *clocktest.Fake
	log     *MemLog
	markers *FakeMarkers
	ids     *SeqIDs
	cfg     Config
	c       *Coordinator
	epoch   int32
}

func newHarness(t *testing.T, mutate ...func(*Config)) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		clock:   clocktest.NewFake(t0),
		log:     NewMemLog(),
		markers: &FakeMarkers{},
		ids:     &SeqIDs{},
		epoch:   1,
	}
	h.cfg = DefaultConfig()
	h.cfg.NumPartitions = testPartitions
	for _, f := range mutate {
		f(&h.cfg)
	}
	h.start()
	return h
}

func (h *harness) start() {
	h.t.Helper()
	h.c = New(h.cfg, h.log, h.markers, h.ids, h.clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h.t.Cleanup(h.c.Close)
	for p := int32(0); p < testPartitions; p++ {
		if err := h.c.LoadPartition(p, h.epoch); err != nil {
			h.t.Fatal(err)
		}
	}
}

// restart is a new coordinator (a new broker) over the same log, at the
// next coordinator epoch.
func (h *harness) restart() {
	h.t.Helper()
	h.c.Close()
	h.epoch++
	h.start()
}

// settle runs the timers due now: marker attempts and completions.
func (h *harness) settle() { h.clock.Advance(0) }

func (h *harness) init(id string, timeout time.Duration) (int64, int16, int16) {
	h.t.Helper()
	return h.initV(id, timeout, 4, -1, -1)
}

func (h *harness) initV(id string, timeout time.Duration, version int16, pid int64, epoch int16) (int64, int16, int16) {
	h.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = version
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = int32(timeout.Milliseconds())
	req.ProducerID, req.ProducerEpoch = pid, epoch
	resp := h.c.InitProducerID(context.Background(), req)
	if resp.Version != version {
		h.t.Fatalf("response version %d, want %d", resp.Version, version)
	}
	return resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode
}

// mustInit initialises id, retrying CONCURRENT_TRANSACTIONS after letting
// the abort complete, as a producer does.
func (h *harness) mustInit(id string) (int64, int16) {
	h.t.Helper()
	for range 5 {
		pid, epoch, code := h.init(id, time.Minute)
		if code == errConcurrentTransactions {
			h.settle()
			continue
		}
		h.wantCode("InitProducerId "+id, code, errNone)
		return pid, epoch
	}
	h.t.Fatalf("InitProducerId %s kept answering CONCURRENT_TRANSACTIONS", id)
	return 0, 0
}

func (h *harness) add(id string, pid int64, epoch int16, tps ...TopicPartition) int16 {
	h.t.Helper()
	return h.addV(3, id, pid, epoch, tps...)
}

func (h *harness) addV(version int16, id string, pid int64, epoch int16, tps ...TopicPartition) int16 {
	h.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	for _, tp := range tps {
		req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
	}
	resp := h.c.AddPartitionsToTxn(context.Background(), req)
	code := int16(-100)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if code != -100 && p.ErrorCode != code {
				h.t.Fatalf("AddPartitionsToTxn: partitions answer differently: %+v", resp.Topics)
			}
			code = p.ErrorCode
		}
	}
	return code
}

func (h *harness) end(id string, pid int64, epoch int16, commit bool) int16 {
	h.t.Helper()
	return h.endV(3, id, pid, epoch, commit)
}

func (h *harness) endV(version int16, id string, pid int64, epoch int16, commit bool) int16 {
	h.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return h.c.EndTxn(context.Background(), req).ErrorCode
}

func (h *harness) describe(id string) kmsg.DescribeTransactionsResponseTransactionState {
	h.t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	resp := h.c.DescribeTransactions(req)
	if len(resp.TransactionStates) != 1 {
		h.t.Fatalf("DescribeTransactions: %d states", len(resp.TransactionStates))
	}
	return resp.TransactionStates[0]
}

func (h *harness) wantState(id, state string) kmsg.DescribeTransactionsResponseTransactionState {
	h.t.Helper()
	s := h.describe(id)
	if s.ErrorCode != 0 || s.State != state {
		h.t.Fatalf("%s: state %q (error %v), want %q", id, s.State, kerr.ErrorForCode(s.ErrorCode), state)
	}
	return s
}

func (h *harness) wantCode(what string, got, want int16) {
	h.t.Helper()
	if got != want {
		h.t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(got), kerr.ErrorForCode(want))
	}
}

func tp(topic string, p int32) TopicPartition { return TopicPartition{topic, p} }

func addOffsetsRequest(id string, pid int64, epoch int16, version int16) *kmsg.AddOffsetsToTxnRequest {
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.Version = version
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = id, pid, epoch, "g"
	return req
}

func addRequestV3(id string, pid int64, epoch int16, tps ...TopicPartition) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 3
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	for _, tp := range tps {
		req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
	}
	return req
}

func listRequest(version int16, states ...string) *kmsg.ListTransactionsRequest {
	req := kmsg.NewPtrListTransactionsRequest()
	req.Version = version
	req.StateFilters = states
	return req
}
