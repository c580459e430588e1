package txn

// txnState is a transaction's state; the values are the ids Kafka writes in
// TransactionLogValue.TransactionStatus (TransactionMetadata.scala).
type txnState int8

const (
	stateEmpty             txnState = 0
	stateOngoing           txnState = 1
	statePrepareCommit     txnState = 2
	statePrepareAbort      txnState = 3
	stateCompleteCommit    txnState = 4
	stateCompleteAbort     txnState = 5
	stateDead              txnState = 6
	statePrepareEpochFence txnState = 7

	// stateNone marks "no pending transition" in txnMetadata.pending.
	stateNone txnState = -1
)

var stateNames = [...]string{
	stateEmpty:             "Empty",
	stateOngoing:           "Ongoing",
	statePrepareCommit:     "PrepareCommit",
	statePrepareAbort:      "PrepareAbort",
	stateCompleteCommit:    "CompleteCommit",
	stateCompleteAbort:     "CompleteAbort",
	stateDead:              "Dead",
	statePrepareEpochFence: "PrepareEpochFence",
}

// String is the state's name as DescribeTransactions and ListTransactions
// report it.
func (s txnState) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	if s == stateNone {
		return "None"
	}
	return "Unknown"
}

func (s txnState) valid() bool { return s >= stateEmpty && s <= statePrepareEpochFence }

func stateFromName(name string) (txnState, bool) {
	for i, n := range stateNames {
		if n == name {
			return txnState(i), true
		}
	}
	return stateNone, false
}

// canFollow is Kafka's validPreviousStates: whether a transaction in prev
// may move to s.
func (s txnState) canFollow(prev txnState) bool {
	switch s {
	case stateEmpty:
		return prev == stateEmpty || prev == stateCompleteCommit || prev == stateCompleteAbort
	case stateOngoing:
		return prev == stateOngoing || prev == stateEmpty || prev == stateCompleteCommit || prev == stateCompleteAbort
	case statePrepareCommit:
		return prev == stateOngoing
	case statePrepareAbort:
		return prev == stateOngoing || prev == statePrepareEpochFence
	case stateCompleteCommit:
		return prev == statePrepareCommit
	case stateCompleteAbort:
		return prev == statePrepareAbort
	case stateDead:
		return prev == stateEmpty || prev == stateCompleteAbort || prev == stateCompleteCommit
	case statePrepareEpochFence:
		return prev == stateOngoing
	}
	return false
}

// expirationAllowed: only idle transactional ids expire.
func (s txnState) expirationAllowed() bool {
	return s == stateEmpty || s == stateCompleteCommit || s == stateCompleteAbort
}
