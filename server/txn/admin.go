package txn

import (
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTransactions answers DescribeTransactions (version 0)
// (TransactionCoordinator.handleDescribeTransactions). Authorization is the
// handler's.
func (c *Coordinator) DescribeTransactions(req *kmsg.DescribeTransactionsRequest) *kmsg.DescribeTransactionsResponse {
	resp := kmsg.NewPtrDescribeTransactionsResponse()
	resp.SetVersion(req.Version)
	for _, id := range req.TransactionalIDs {
		resp.TransactionStates = append(resp.TransactionStates, c.describe(id))
	}
	return resp
}

func (c *Coordinator) describe(id string) kmsg.DescribeTransactionsResponseTransactionState {
	s := kmsg.NewDescribeTransactionsResponseTransactionState()
	s.TransactionalID = id
	if c.isClosed() {
		s.ErrorCode = errCoordinatorNotAvailable
		return s
	}
	m, _, code := c.lookupNamed(id, errTransactionalIDNotFound)
	if code != errNone {
		s.ErrorCode = code
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == stateDead {
		s.ErrorCode = errTransactionalIDNotFound
		return s
	}
	for _, tp := range m.partitions.sorted() {
		n := len(s.Topics)
		if n == 0 || s.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			t.Topic = tp.Topic
			s.Topics = append(s.Topics, t)
			n++
		}
		s.Topics[n-1].Partitions = append(s.Topics[n-1].Partitions, tp.Partition)
	}
	s.ProducerID = m.producerID
	s.ProducerEpoch = m.producerEpoch
	s.State = m.state.String()
	s.TimeoutMillis = m.timeoutMs
	s.StartTimestamp = m.startTimestamp
	return s
}

func (c *Coordinator) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// ListTransactions answers ListTransactions in req's version
// (TransactionStateManager.listTransactionStates): version 0 filters by
// state and producer id, version 1 also by how long a transaction has run
// (KIP-994), version 2 also by a regular expression the whole transactional
// id must match (KIP-1152). While any partition loads the answer is
// COORDINATOR_LOAD_IN_PROGRESS. Authorization is the handler's.
func (c *Coordinator) ListTransactions(req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := kmsg.NewPtrListTransactionsResponse()
	resp.SetVersion(req.Version)
	if c.isClosed() {
		resp.ErrorCode = errCoordinatorNotAvailable
		return resp
	}
	states := make(map[txnState]bool)
	for _, name := range req.StateFilters {
		if s, ok := stateFromName(name); ok {
			states[s] = true
		} else {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
		}
	}
	pids := make(map[int64]bool)
	for _, id := range req.ProducerIDFilters {
		pids[id] = true
	}
	duration := int64(-1)
	if req.Version >= 1 {
		duration = req.DurationFilterMillis
	}
	var pattern *regexp.Regexp
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile(`^(?:` + *req.TransactionalIDPattern + `)$`)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		pattern = re
	}

	c.mu.Lock()
	var all []*txnMetadata
	loading := false
	for _, ps := range c.partitions {
		if ps.loading {
			loading = true
			break
		}
		for _, m := range ps.txns {
			all = append(all, m)
		}
	}
	c.mu.Unlock()
	if loading {
		resp.ErrorCode = errLoadInProgress
		resp.UnknownStateFilters = nil
		return resp
	}
	now := c.nowMs()
	for _, m := range all {
		m.mu.Lock()
		include := m.state != stateDead && // being expired
			(len(pids) == 0 || pids[m.producerID]) &&
			(len(req.StateFilters) == 0 || states[m.state]) &&
			(duration < 0 || now-m.startTimestamp > duration) &&
			(pattern == nil || pattern.MatchString(m.id))
		if include {
			s := kmsg.NewListTransactionsResponseTransactionState()
			s.TransactionalID, s.ProducerID, s.TransactionState = m.id, m.producerID, m.state.String()
			resp.TransactionStates = append(resp.TransactionStates, s)
		}
		m.mu.Unlock()
	}
	slices.SortFunc(resp.TransactionStates, func(a, b kmsg.ListTransactionsResponseTransactionState) int {
		return strings.Compare(a.TransactionalID, b.TransactionalID)
	})
	return resp
}
