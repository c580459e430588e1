package txn

import (
	"errors"
	"math"
	"testing"
)

var allStates = []txnState{stateEmpty, stateOngoing, statePrepareCommit, statePrepareAbort,
	stateCompleteCommit, stateCompleteAbort, stateDead, statePrepareEpochFence}

// Kafka's validPreviousStates, one row per target state.
var validPrevious = map[txnState][]txnState{
	stateEmpty:             {stateEmpty, stateCompleteCommit, stateCompleteAbort},
	stateOngoing:           {stateOngoing, stateEmpty, stateCompleteCommit, stateCompleteAbort},
	statePrepareCommit:     {stateOngoing},
	statePrepareAbort:      {stateOngoing, statePrepareEpochFence},
	stateCompleteCommit:    {statePrepareCommit},
	stateCompleteAbort:     {statePrepareAbort},
	stateDead:              {stateEmpty, stateCompleteAbort, stateCompleteCommit},
	statePrepareEpochFence: {stateOngoing},
}

func TestStateTransitionTable(t *testing.T) {
	for _, to := range allStates {
		for _, from := range allStates {
			want := false
			for _, p := range validPrevious[to] {
				want = want || p == from
			}
			if got := to.canFollow(from); got != want {
				t.Errorf("%v -> %v: %v, want %v", from, to, got, want)
			}
		}
	}
	for _, s := range allStates {
		if got, ok := stateFromName(s.String()); !ok || got != s {
			t.Errorf("name round trip of %v", s)
		}
		want := s == stateEmpty || s == stateCompleteCommit || s == stateCompleteAbort
		if s.expirationAllowed() != want {
			t.Errorf("%v expirationAllowed %v", s, !want)
		}
	}
	if _, ok := stateFromName("ongoing"); ok {
		t.Error("state names are case sensitive in Kafka")
	}
}

func metadataIn(s txnState) *txnMetadata {
	m := newTxnMetadata("tx", 7, 1000, 100)
	m.producerEpoch = 3
	m.state = s
	if s != stateEmpty {
		m.partitions[tp("a", 0)] = struct{}{}
		m.startTimestamp = 50
	}
	return m
}

// Each prepare step is legal exactly from the states Kafka allows, leaves
// the transition pending, and completes to its target.
func TestPrepareStepsFollowTheTable(t *testing.T) {
	steps := []struct {
		name string
		to   txnState
		f    func(m *txnMetadata) (txnTransit, error)
	}{
		{"add partitions", stateOngoing, func(m *txnMetadata) (txnTransit, error) {
			return m.prepareAddPartitions(partitionSet{tp("b", 1): {}}, 200)
		}},
		{"commit", statePrepareCommit, func(m *txnMetadata) (txnTransit, error) { return m.prepareAbortOrCommit(statePrepareCommit, 200) }},
		{"abort", statePrepareAbort, func(m *txnMetadata) (txnTransit, error) { return m.prepareAbortOrCommit(statePrepareAbort, 200) }},
		{"complete", stateNone, func(m *txnMetadata) (txnTransit, error) { return m.prepareComplete(200) }},
		{"dead", stateDead, func(m *txnMetadata) (txnTransit, error) { return m.prepareDead() }},
		{"fence", statePrepareEpochFence, func(m *txnMetadata) (txnTransit, error) { return m.prepareFenceProducerEpoch() }},
		{"bump", stateEmpty, func(m *txnMetadata) (txnTransit, error) {
			t, _, err := m.prepareIncrementProducerEpoch(1000, nil, 200)
			return t, err
		}},
	}
	for _, st := range steps {
		for _, from := range allStates {
			m := metadataIn(from)
			to := st.to
			if to == stateNone { // prepareComplete picks its target
				to = stateCompleteAbort
				if from == statePrepareCommit {
					to = stateCompleteCommit
				}
			}
			tr, err := st.f(m)
			legal := to.canFollow(from)
			var ill *errIllegalTransition
			switch {
			case legal && err != nil:
				t.Errorf("%s from %v: %v", st.name, from, err)
			case !legal && !errors.As(err, &ill):
				t.Errorf("%s from %v: allowed (to %v)", st.name, from, tr.state)
			}
			if !legal || err != nil {
				if !legal && m.hasPending() {
					t.Errorf("%s from %v: refused but left pending %v", st.name, from, m.pending)
				}
				continue
			}
			if m.pending != to {
				t.Errorf("%s from %v: pending %v, want %v", st.name, from, m.pending, to)
			}
			if _, err := st.f(m); err == nil {
				t.Errorf("%s from %v: a second prepare while pending was allowed", st.name, from)
			}
			err = m.completeTransition(tr)
			switch to {
			case stateDead, statePrepareEpochFence:
				if err == nil {
					t.Errorf("%s from %v: completing %v must fail", st.name, from, to)
				}
			default:
				if err != nil {
					t.Errorf("%s from %v: complete: %v", st.name, from, err)
				} else if m.state != to || m.hasPending() {
					t.Errorf("%s from %v: state %v pending %v", st.name, from, m.state, m.pending)
				}
			}
		}
	}
}

func TestCompleteTransitionRefusesWhatWasNotPrepared(t *testing.T) {
	m := metadataIn(stateOngoing)
	tr, err := m.prepareAbortOrCommit(statePrepareCommit, 200)
	if err != nil {
		t.Fatal(err)
	}
	bad := tr
	bad.producerEpoch++
	if m.completeTransition(bad) == nil {
		t.Error("completed with another epoch")
	}
	bad = tr
	bad.state = statePrepareAbort
	if m.completeTransition(bad) == nil {
		t.Error("completed another state")
	}
	bad = tr
	bad.partitions = partitionSet{}
	if m.completeTransition(bad) == nil {
		t.Error("completed with other partitions")
	}
	if m.state != stateOngoing || m.pending != statePrepareCommit {
		t.Fatalf("a refused completion changed the metadata: %v/%v", m.state, m.pending)
	}
	if err := m.completeTransition(tr); err != nil {
		t.Fatal(err)
	}
	if m.completeTransition(tr) == nil {
		t.Error("completed twice")
	}
}

func TestIncrementProducerEpochCases(t *testing.T) {
	e := func(v int16) *int16 { return &v }
	for _, c := range []struct {
		name                string
		epoch, last         int16
		expected            *int16
		wantEpoch, wantLast int16
		wantCode            int16
	}{
		{"new instance", 3, 2, nil, 4, -1, 0},
		{"brand new id", -1, -1, nil, 0, -1, 0},
		{"resume at the current epoch", 3, -1, e(3), 4, 3, 0},
		{"retry of a resume", 4, 3, e(3), 4, 3, 0},
		{"fenced", 5, -1, e(3), 0, 0, errProducerFenced},
		{"new id, any expected epoch", -1, -1, e(9), 0, -1, 0},
	} {
		m := metadataIn(stateCompleteCommit)
		m.producerEpoch, m.lastProducerEpoch = c.epoch, c.last
		tr, code, err := m.prepareIncrementProducerEpoch(1000, c.expected, 200)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if code != c.wantCode {
			t.Errorf("%s: code %d, want %d", c.name, code, c.wantCode)
			continue
		}
		if code == 0 && (tr.producerEpoch != c.wantEpoch || tr.lastProducerEpoch != c.wantLast) {
			t.Errorf("%s: epoch %d last %d, want %d %d", c.name, tr.producerEpoch, tr.lastProducerEpoch, c.wantEpoch, c.wantLast)
		}
	}
	m := metadataIn(stateEmpty)
	m.producerEpoch = math.MaxInt16 - 1
	if _, _, err := m.prepareIncrementProducerEpoch(1000, nil, 200); err == nil {
		t.Error("bumped an exhausted epoch")
	}
	m.state, m.producerEpoch = stateOngoing, math.MaxInt16
	if _, err := m.prepareFenceProducerEpoch(); err == nil {
		t.Error("fenced past math.MaxInt16")
	}
}

func TestPrepareEndTxnDecisions(t *testing.T) {
	for _, c := range []struct {
		state        txnState
		commit       bool
		wantCode     int16
		wantTransit  bool
		wantPendingT txnState
	}{
		{stateOngoing, true, 0, true, statePrepareCommit},
		{stateOngoing, false, 0, true, statePrepareAbort},
		{stateCompleteCommit, true, 0, false, stateNone},
		{stateCompleteCommit, false, errInvalidTxnState, false, stateNone},
		{stateCompleteAbort, false, 0, false, stateNone},
		{stateCompleteAbort, true, errInvalidTxnState, false, stateNone},
		{statePrepareCommit, true, errConcurrentTransactions, false, stateNone},
		{statePrepareCommit, false, errInvalidTxnState, false, stateNone},
		{statePrepareAbort, false, errConcurrentTransactions, false, stateNone},
		{statePrepareAbort, true, errInvalidTxnState, false, stateNone},
		{stateEmpty, true, errInvalidTxnState, false, stateNone},
	} {
		m := metadataIn(c.state)
		tr, code, _, err := prepareEndTxn(m, 7, 3, c.commit, true, 200)
		if err != nil {
			t.Fatalf("%v commit=%v: %v", c.state, c.commit, err)
		}
		if code != c.wantCode || (tr != nil) != c.wantTransit || m.pending != c.wantPendingT {
			t.Errorf("%v commit=%v: code %d transit %v pending %v", c.state, c.commit, code, tr != nil, m.pending)
		}
	}
	m := metadataIn(stateOngoing)
	if _, code, _, _ := prepareEndTxn(m, 8, 3, true, true, 200); code != errInvalidProducerIDMapping {
		t.Errorf("wrong producer id: %d", code)
	}
	if _, code, _, _ := prepareEndTxn(m, 7, 4, true, true, 200); code != errProducerFenced {
		t.Errorf("client with a newer epoch: %d", code)
	}
	if _, code, _, _ := prepareEndTxn(m, 7, 2, true, false, 200); code != errProducerFenced {
		t.Errorf("older epoch: %d", code)
	}
	// A fence: the abort takes the bumped epoch with it.
	f, err := m.prepareFenceProducerEpoch()
	if err != nil {
		t.Fatal(err)
	}
	if _, code, _, _ := prepareEndTxn(m, 7, 3, true, true, 200); code != errConcurrentTransactions {
		t.Errorf("client EndTxn during a fence: %d", code)
	}
	tr, code, fence, err := prepareEndTxn(m, 7, f.producerEpoch, false, false, 200)
	if err != nil || code != 0 || !fence || tr.producerEpoch != 4 || tr.state != statePrepareAbort || m.producerEpoch != 4 {
		t.Fatalf("fence abort: %+v %d %v %v (epoch %d)", tr, code, fence, err, m.producerEpoch)
	}
}
