package logstore

import (
	"encoding/binary"
	"fmt"

	"github.com/kbroker/kbroker/logstore/producerstate"
)

// Marker is a transaction marker a leader writes for the transaction
// coordinator (WriteTxnMarkers): it ends producer ProducerID's transaction
// on this partition, committing or aborting it.
type Marker struct {
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
}

// ControlType is a control record's type, the int16 in its key (Kafka's
// ControlRecordType): 0 abort and 1 commit are transaction markers; 2 and
// up belong to KRaft's own log, which a broker's partitions never hold.
type ControlType int16

const (
	ControlAbort  ControlType = 0
	ControlCommit ControlType = 1
)

// Sizes of a control record's key (version, type) and of a transaction
// marker's value (version, coordinator epoch), Kafka's
// ControlRecordType.CURRENT_CONTROL_RECORD_KEY_SIZE and
// EndTransactionMarker.CURRENT_END_TXN_MARKER_VALUE_SIZE.
const (
	controlKeySize   = 4
	txnMarkerValSize = 6
)

// EncodeControlKey is a control record's key: version 0, then the type.
func EncodeControlKey(t ControlType) []byte {
	b := make([]byte, controlKeySize)
	binary.BigEndian.PutUint16(b[2:], uint16(t))
	return b
}

// encodeTxnMarkerValue is a transaction marker's value: version 0, then
// the coordinator epoch.
func encodeTxnMarkerValue(coordinatorEpoch int32) []byte {
	b := make([]byte, txnMarkerValSize)
	binary.BigEndian.PutUint32(b[2:], uint32(coordinatorEpoch))
	return b
}

// DecodeControlKey reads a control record's key as Kafka's
// ControlRecordType.parseTypeId does: at least four bytes, a version that
// is not negative (a newer one is read as version 0).
func DecodeControlKey(key []byte) (ControlType, error) {
	if len(key) < controlKeySize {
		return 0, fmt.Errorf("%w: control record key of %d bytes", ErrInvalidRecord, len(key))
	}
	if v := int16(binary.BigEndian.Uint16(key)); v < 0 {
		return 0, fmt.Errorf("%w: control record key version %d", ErrInvalidRecord, v)
	}
	return ControlType(binary.BigEndian.Uint16(key[2:])), nil
}

// TxnMarker is a decoded transaction marker record.
type TxnMarker struct {
	Commit           bool
	CoordinatorEpoch int32
}

// DecodeTxnMarker reads a transaction marker record's key and value as
// Kafka's EndTransactionMarker.deserialize does: the key's type must be
// abort or commit, the value at least six bytes with a version that is not
// negative.
func DecodeTxnMarker(key, value []byte) (TxnMarker, error) {
	t, err := DecodeControlKey(key)
	if err != nil {
		return TxnMarker{}, err
	}
	if t != ControlAbort && t != ControlCommit {
		return TxnMarker{}, fmt.Errorf("%w: control type %d is no transaction marker", ErrInvalidRecord, t)
	}
	if len(value) < txnMarkerValSize {
		return TxnMarker{}, fmt.Errorf("%w: transaction marker value of %d bytes", ErrInvalidRecord, len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 {
		return TxnMarker{}, fmt.Errorf("%w: transaction marker version %d", ErrInvalidRecord, v)
	}
	return TxnMarker{Commit: t == ControlCommit, CoordinatorEpoch: int32(binary.BigEndian.Uint32(value[2:]))}, nil
}

// batchTxnMarker decodes the marker a control batch carries; ok is false
// for a control batch without records (the cleaner may empty one), which
// Kafka's ProducerAppendInfo skips.
func batchTxnMarker(b Batch) (m TxnMarker, ok bool, err error) {
	if b.Header.NumRecords == 0 {
		return TxnMarker{}, false, nil
	}
	recs, err := DecodeRecords(b)
	if err != nil {
		return TxnMarker{}, false, err
	}
	if len(recs) == 0 {
		return TxnMarker{}, false, nil
	}
	m, err = DecodeTxnMarker(recs[0].Key, recs[0].Value)
	return m, err == nil, err
}

// markerBatch builds the control batch Kafka's
// MemoryRecords.withEndTransactionMarker does: uncompressed, transactional
// and control, no sequence, one record at offset delta 0 with the marker's
// key and value, CreateTime timestamp.
func markerBatch(m Marker, timestamp int64) (Batch, error) {
	t := ControlAbort
	if m.Commit {
		t = ControlCommit
	}
	return EncodeBatch(BatchOptions{
		PartitionLeaderEpoch: -1,
		ProducerID:           m.ProducerID,
		ProducerEpoch:        m.ProducerEpoch,
		BaseSequence:         -1,
		Transactional:        true,
		Control:              true,
	}, []Record{{Key: EncodeControlKey(t), Value: encodeTxnMarkerValue(m.CoordinatorEpoch), Timestamp: timestamp}})
}

// producerBatchOf is what the producer table needs of a batch, with the
// marker of a control batch decoded. ok is false for a batch the table
// must not see: a control batch without a transaction marker (emptied by
// the cleaner, or unreadable, which a leader's own markers never are).
func producerBatchOf(b *Batch) (pb producerstate.Batch, ok bool) {
	pb = producerBatch(&b.Header)
	if !b.Header.IsControl() {
		return pb, true
	}
	m, ok, err := batchTxnMarker(*b)
	if err != nil || !ok {
		return pb, false
	}
	pb.Abort, pb.CoordinatorEpoch = !m.Commit, m.CoordinatorEpoch
	return pb, true
}
