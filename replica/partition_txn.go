package replica

import "github.com/twmb/franz-go/pkg/kerr"

// A producer's first transactional batch on a partition is appended only
// after the transaction coordinator confirmed the partition is in the
// producer's transaction (KIP-890 part 1). The confirmation takes a round
// trip during which the transaction may end; a guard, handed out before
// the round trip and withdrawn by any transactional append or marker of the
// producer, tells the append whether the confirmation still holds (Kafka's
// VerificationGuard in its ProducerStateManager). Guards live with the
// leadership: a new leader starts with none.

// TxnVerification is what StartTxnVerification hands out.
type TxnVerification struct {
	// Needed is false when the producer already has a transaction open
	// here: its batches belong to it and need no confirmation.
	Needed bool
	// Guard goes into AppendRules.VerificationGuard once the coordinator
	// confirmed the partition.
	Guard uint64
}

// StartTxnVerification begins the confirmation of producerID's next
// transactional batch. NOT_LEADER_OR_FOLLOWER when not leading.
func (p *Partition) StartTxnVerification(producerID int64) (TxnVerification, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.leader {
		return TxnVerification{}, kerr.NotLeaderForPartition
	}
	if p.log.HasOngoingTransaction(producerID) {
		return TxnVerification{}, nil
	}
	if g, ok := p.verifications[producerID]; ok {
		// A retry while the first confirmation is in flight shares it.
		return TxnVerification{Needed: true, Guard: g}, nil
	}
	if p.verifications == nil {
		p.verifications = map[int64]uint64{}
	}
	p.nextGuard++
	p.verifications[producerID] = p.nextGuard
	return TxnVerification{Needed: true, Guard: p.nextGuard}, nil
}

// AbandonTxnVerification withdraws a guard whose confirmation failed, so
// that guards do not accumulate for producers that never append.
func (p *Partition) AbandonTxnVerification(producerID int64, guard uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.verifications[producerID] == guard {
		delete(p.verifications, producerID)
	}
}

// checkTxnVerificationLocked refuses a transactional batch that
// would open a transaction without a confirmation still in force
// (INVALID_TXN_STATE, Kafka's "Record was not part of an ongoing
// transaction"). The caller holds mu.
func (p *Partition) checkTxnVerificationLocked(producerID int64, rules AppendRules) error {
	if !p.opts.VerifyTransactions || p.log.HasOngoingTransaction(producerID) {
		return nil
	}
	if g, ok := p.verifications[producerID]; ok && rules.VerificationGuard != 0 && g == rules.VerificationGuard {
		return nil
	}
	return kerr.InvalidTxnState
}
