package compat

import (
	"context"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnWaitTimeout bounds every wait on a transaction's state: a marker
// write, a coordinator's abort of a timed-out transaction, a retried
// InitProducerId.
const txnWaitTimeout = 30 * time.Second

// txnClient sends the transaction APIs over one Wire at exactly the
// versions the steps name, and writes what the broker answers to a
// transcript. It plays a transactional producer by hand: its producer id and
// epoch are whatever the test says, so it can be stale, wrong or absent.
type txnClient struct {
	t     *testing.T
	w     *harness.Wire
	tr    *transcript
	topic string

	txnID string
	// firstPID is the producer id of the first successful InitProducerId;
	// the transcript names it P so that brokers with different id blocks
	// give the same transcript.
	firstPID int64
}

func newTxnClient(t *testing.T, addr, topic, txnID string, tr *transcript) *txnClient {
	t.Helper()
	return &txnClient{t: t, w: harness.DialWire(t, addr, 10*time.Second), tr: tr, topic: topic, txnID: txnID, firstPID: -1}
}

// request sends req at version v; a connection error or an undecodable
// answer ends the row, after writing it down.
func (c *txnClient) request(req kmsg.Request, v int16) kmsg.Response {
	c.t.Helper()
	req.SetVersion(v)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := c.w.Request(ctx, req)
	if err != nil {
		c.tr.add("%s v%d: no answer", kmsg.NameForKey(req.Key()), v)
		c.t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return resp
}

// pid names a producer id in the transcript.
func (c *txnClient) pid(id int64) string {
	switch {
	case id == -1:
		return "-1"
	case id == c.firstPID:
		return "P"
	default:
		return "other"
	}
}

// initProducerID sends InitProducerId as a new producer instance (no
// producer id or epoch of its own, as the Java client's first call) and
// returns the code, id and epoch.
func (c *txnClient) initProducerID(v int16, timeoutMs int32, who string) (int16, int64, int16) {
	c.t.Helper()
	code, pid, epoch := c.sendInit(v, timeoutMs)
	c.tr.add("InitProducerId v%d %stimeout=%d: %s pid=%s epoch=%d", v, who, timeoutMs, codeName(code), c.pid(pid), epoch)
	return code, pid, epoch
}

func (c *txnClient) sendInit(v int16, timeoutMs int32) (int16, int64, int16) {
	c.t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(c.txnID)
	req.TransactionTimeoutMillis = timeoutMs
	resp := c.request(req, v).(*kmsg.InitProducerIDResponse)
	if resp.ErrorCode == 0 && c.firstPID == -1 {
		c.firstPID = resp.ProducerID
	}
	return resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch
}

// initUntilDone sends InitProducerId again and again while the
// coordinator answers CONCURRENT_TRANSACTIONS (an abort it started is still
// writing markers), as the Java client retries, and writes down the answer
// it ends with: how many retries it took depends on timing, not on the
// broker's rules.
func (c *txnClient) initUntilDone(v int16, timeoutMs int32, who string) (int64, int16) {
	c.t.Helper()
	code, pid, epoch := c.sendInit(v, timeoutMs)
	deadline := time.Now().Add(txnWaitTimeout)
	for code == kerr.ConcurrentTransactions.Code && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		code, pid, epoch = c.sendInit(v, timeoutMs)
	}
	c.tr.add("InitProducerId v%d %sretried while CONCURRENT_TRANSACTIONS: %s pid=%s epoch=%d", v, who, codeName(code), c.pid(pid), epoch)
	return pid, epoch
}

// addPartitions is AddPartitionsToTxn for partitions of the test topic.
// From v4 on the request is the brokers' batched form (KIP-890); the
// client rows send it with VerifyOnly, as a partition leader verifying a
// transactional produce does.
func (c *txnClient) addPartitions(v int16, pid int64, epoch int16, partitions ...int32) {
	c.t.Helper()
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	var codes []string
	if v <= 3 {
		req.TransactionalID = c.txnID
		req.ProducerID = pid
		req.ProducerEpoch = epoch
		topic := kmsg.NewAddPartitionsToTxnRequestTopic()
		topic.Topic = c.topic
		topic.Partitions = partitions
		req.Topics = append(req.Topics, topic)
		resp := c.request(req, v).(*kmsg.AddPartitionsToTxnResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, fmt.Sprintf("p%d=%s", p.Partition, codeName(p.ErrorCode)))
			}
		}
	} else {
		txn := kmsg.NewAddPartitionsToTxnRequestTransaction()
		txn.TransactionalID = c.txnID
		txn.ProducerID = pid
		txn.ProducerEpoch = epoch
		txn.VerifyOnly = true
		topic := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		topic.Topic = c.topic
		topic.Partitions = partitions
		txn.Topics = append(txn.Topics, topic)
		req.Transactions = append(req.Transactions, txn)
		resp := c.request(req, v).(*kmsg.AddPartitionsToTxnResponse)
		codes = append(codes, "top="+codeName(resp.ErrorCode))
		for _, tx := range resp.Transactions {
			for _, t := range tx.Topics {
				for _, p := range t.Partitions {
					codes = append(codes, fmt.Sprintf("p%d=%s", p.Partition, codeName(p.ErrorCode)))
				}
			}
		}
	}
	sort.Strings(codes)
	verify := ""
	if v >= 4 {
		verify = " verify-only"
	}
	c.tr.add("AddPartitionsToTxn v%d%s pid=%s epoch=%d %s: %s", v, verify, c.pid(pid), epoch, partitionList(partitions), strings.Join(codes, " "))
}

func (c *txnClient) addOffsets(v int16, pid int64, epoch int16, group string) {
	c.t.Helper()
	req := kmsg.NewPtrAddOffsetsToTxnRequest()
	req.TransactionalID = c.txnID
	req.ProducerID = pid
	req.ProducerEpoch = epoch
	req.Group = group
	resp := c.request(req, v).(*kmsg.AddOffsetsToTxnResponse)
	c.tr.add("AddOffsetsToTxn v%d pid=%s epoch=%d: %s", v, c.pid(pid), epoch, codeName(resp.ErrorCode))
}

func (c *txnClient) endTxn(v int16, pid int64, epoch int16, commit bool) {
	c.t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = c.txnID
	req.ProducerID = pid
	req.ProducerEpoch = epoch
	req.Commit = commit
	resp := c.request(req, v).(*kmsg.EndTxnResponse)
	what := "abort"
	if commit {
		what = "commit"
	}
	c.tr.add("EndTxn v%d %s pid=%s epoch=%d: %s", v, what, c.pid(pid), epoch, codeName(resp.ErrorCode))
}

// txnOffsetCommit commits offset 1 of partition 0 of the test topic for
// group as a consumer outside any generation (generation -1, no member),
// which every version allows.
func (c *txnClient) txnOffsetCommit(v int16, pid int64, epoch int16, group string) {
	c.t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID = c.txnID
	req.Group = group
	req.ProducerID = pid
	req.ProducerEpoch = epoch
	req.Generation = -1
	topic := kmsg.NewTxnOffsetCommitRequestTopic()
	topic.Topic = c.topic
	part := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	part.Partition = 0
	part.Offset = 1
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	resp := c.request(req, v).(*kmsg.TxnOffsetCommitResponse)
	var codes []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes = append(codes, fmt.Sprintf("p%d=%s", p.Partition, codeName(p.ErrorCode)))
		}
	}
	c.tr.add("TxnOffsetCommit v%d pid=%s epoch=%d: %s", v, c.pid(pid), epoch, strings.Join(codes, " "))
}

// produce sends one transactional batch of one record to partition with
// acks=all.
func (c *txnClient) produce(v int16, pid int64, epoch int16, seq int32, partition int32) {
	c.t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID = kmsg.StringPtr(c.txnID)
	req.Acks = -1
	req.TimeoutMillis = 10000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = c.topic
	part := kmsg.NewProduceRequestTopicPartition()
	part.Partition = partition
	part.Records = transactionalBatch(pid, epoch, seq)
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	resp := c.request(req, v).(*kmsg.ProduceResponse)
	var codes []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes = append(codes, fmt.Sprintf("p%d=%s", p.Partition, codeName(p.ErrorCode)))
		}
	}
	c.tr.add("Produce v%d transactional pid=%s epoch=%d seq=%d p%d: %s", v, c.pid(pid), epoch, seq, partition, strings.Join(codes, " "))
}

// describe writes down the transaction's state, after waiting (bounded)
// for a PrepareCommit or PrepareAbort to complete: the state a client
// would find once the coordinator's markers are written.
func (c *txnClient) describe() {
	c.t.Helper()
	s := c.settledState()
	if s.ErrorCode != 0 {
		c.tr.add("DescribeTransactions: %s", codeName(s.ErrorCode))
		return
	}
	var parts []string
	for _, t := range s.Topics {
		for _, p := range t.Partitions {
			name := fmt.Sprintf("%s-%d", t.Topic, p)
			if t.Topic == c.topic {
				name = fmt.Sprintf("p%d", p)
			}
			parts = append(parts, name)
		}
	}
	sort.Strings(parts)
	c.tr.add("DescribeTransactions: state=%s pid=%s epoch=%d timeout=%d partitions=[%s]",
		s.State, c.pid(s.ProducerID), s.ProducerEpoch, s.TimeoutMillis, strings.Join(parts, " "))
}

func (c *txnClient) settledState() kmsg.DescribeTransactionsResponseTransactionState {
	c.t.Helper()
	deadline := time.Now().Add(txnWaitTimeout)
	for {
		s := c.state()
		if !strings.HasPrefix(s.State, "Prepare") || time.Now().After(deadline) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *txnClient) state() kmsg.DescribeTransactionsResponseTransactionState {
	c.t.Helper()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{c.txnID}
	resp := c.request(req, 0).(*kmsg.DescribeTransactionsResponse)
	if len(resp.TransactionStates) != 1 {
		c.t.Fatalf("DescribeTransactions: %d states for one transactional id", len(resp.TransactionStates))
	}
	return resp.TransactionStates[0]
}

// waitState waits (bounded) until the transaction reaches state, and writes
// down whether it did.
func (c *txnClient) waitState(state string) {
	c.t.Helper()
	deadline := time.Now().Add(txnWaitTimeout)
	for {
		s := c.state()
		if s.State == state {
			c.tr.add("wait for %s: reached", state)
			return
		}
		if time.Now().After(deadline) {
			c.tr.add("wait for %s: still %s (%s) after %v", state, s.State, codeName(s.ErrorCode), txnWaitTimeout)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// transactionalBatch is a one-record v2 batch with the transactional bit
// set (attributes bit 4) for the given producer.
func transactionalBatch(pid int64, epoch int16, seq int32) []byte {
	rec := kmsg.NewRecord()
	rec.Value = []byte("transactional")
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	batch := kmsg.NewRecordBatch()
	batch.Magic = 2
	batch.Attributes = 0x10
	batch.ProducerID = pid
	batch.ProducerEpoch = epoch
	batch.FirstSequence = seq
	batch.FirstTimestamp = time.Now().UnixMilli()
	batch.MaxTimestamp = batch.FirstTimestamp
	batch.NumRecords = 1
	batch.Records = rec.AppendTo(nil)
	batch.Length = int32(len(batch.AppendTo(nil)) - 12)
	// CRC-32C covers everything from the attributes on (offset 21).
	batch.CRC = int32(crc32.Checksum(batch.AppendTo(nil)[21:], crc32.MakeTable(crc32.Castagnoli)))
	return batch.AppendTo(nil)
}

// codeName is a Kafka error code as Kafka names it, with its number.
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return fmt.Sprintf("%s(%d)", err.Message, code)
	}
	return fmt.Sprintf("UNKNOWN(%d)", code)
}

func partitionList(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprintf("p%d", p)
	}
	return "[" + strings.Join(s, " ") + "]"
}
