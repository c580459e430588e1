package txn

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record versions as Kafka 3.9 writes them in ZooKeeper mode
// (TransactionLog.scala): key version 0, and value version 0, because the
// flexible value version 1 is only written once the transaction.version
// feature is enabled, which ZooKeeper mode has no way to do.
const (
	txnKeyVersion   = 0
	txnValueVersion = 0
)

var errUnknownKeyVersion = errors.New("unknown __transaction_state key version")

func txnKey(transactionalID string) []byte {
	k := kmsg.NewTxnMetadataKey()
	k.Version = txnKeyVersion
	k.TransactionalID = transactionalID
	return k.AppendTo(nil)
}

// txnValue encodes t. An Empty transaction has a null partition list, as in
// Kafka; the others group their partitions by topic.
func txnValue(t txnTransit) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = txnValueVersion
	v.ProducerID = t.producerID
	v.ProducerEpoch = t.producerEpoch
	v.TimeoutMillis = t.timeoutMs
	v.State = kmsg.TransactionState(t.state)
	v.LastUpdateTimestamp = t.lastUpdate
	v.StartTimestamp = t.startTimestamp
	if t.state != stateEmpty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range t.partitions.sorted() {
			n := len(v.Topics)
			if n == 0 || v.Topics[n-1].Topic != tp.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
				n++
			}
			v.Topics[n-1].Partitions = append(v.Topics[n-1].Partitions, tp.Partition)
		}
	}
	return v.AppendTo(nil)
}

// decodeTxnKey returns the transactional id of a record key, or
// errUnknownKeyVersion for keys of other versions, which loading skips as
// Kafka does (TransactionLog.readTxnRecordKey).
func decodeTxnKey(key []byte) (string, error) {
	if len(key) < 2 {
		return "", fmt.Errorf("__transaction_state key of %d bytes", len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v != txnKeyVersion {
		return "", fmt.Errorf("%w %d", errUnknownKeyVersion, v)
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return "", fmt.Errorf("__transaction_state key: %w", err)
	}
	return k.TransactionalID, nil
}

// decodeTxnValue rebuilds a transactional id's metadata from a record value
// (TransactionLog.readTxnRecordValue): values 0 and 1 are read; the last
// producer id and epoch are not in the record and come back unknown.
func decodeTxnValue(id string, value []byte) (*txnMetadata, error) {
	if len(value) < 2 {
		return nil, fmt.Errorf("__transaction_state value of %d bytes", len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 || v > 1 {
		return nil, fmt.Errorf("unknown __transaction_state value version %d", v)
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return nil, fmt.Errorf("__transaction_state value: %w", err)
	}
	s := txnState(v.State)
	if !s.valid() {
		return nil, fmt.Errorf("transactional id %q: unknown transaction state %d", id, v.State)
	}
	m := newTxnMetadata(id, v.ProducerID, v.TimeoutMillis, v.LastUpdateTimestamp)
	m.producerEpoch = v.ProducerEpoch
	m.state = s
	m.startTimestamp = v.StartTimestamp
	if s != stateEmpty {
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				m.partitions[TopicPartition{t.Topic, p}] = struct{}{}
			}
		}
	}
	return m, nil
}
