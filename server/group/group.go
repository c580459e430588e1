package group

import (
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupState names are Kafka's (GroupState.scala); DescribeGroups and
// ListGroups show them verbatim.
type groupState string

const (
	stateEmpty               groupState = "Empty"
	statePreparingRebalance  groupState = "PreparingRebalance"
	stateCompletingRebalance groupState = "CompletingRebalance"
	stateStable              groupState = "Stable"
	stateDead                groupState = "Dead"
)

type protocol struct {
	name     string
	metadata []byte
}

// joinResult is what a waiting JoinGroup receives; the caller turns it into
// a response of its own version.
type joinResult struct {
	errorCode      int16
	memberID       string
	generation     int32
	protocolType   string
	protocol       string
	leader         string
	skipAssignment bool
	members        []kmsg.JoinGroupResponseMember
}

type syncResult struct {
	errorCode    int16
	protocolType string
	protocol     string
	assignment   []byte
}

// member is one classic-protocol group member (Kafka's MemberMetadata).
type member struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	protocolType     string
	protocols        []protocol
	assignment       []byte

	// awaitingJoin / awaitingSync are the channels of a blocked JoinGroup
	// or SyncGroup (buffered, one answer each).
	awaitingJoin chan joinResult
	awaitingSync chan syncResult
	// isNew marks a member added in this rebalance that has not yet received
	// its first JoinGroup answer: it cannot heartbeat, so its session is
	// bounded by newMemberJoinTimeout instead.
	isNew bool

	heartbeat Timer
}

func (m *member) metadata(protocolName string) []byte {
	for _, p := range m.protocols {
		if p.name == protocolName {
			return p.metadata
		}
	}
	return nil
}

// matches reports whether a rejoin carries the same protocols, so no new
// rebalance is needed.
func (m *member) matches(ps []protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i := range ps {
		if ps[i].name != m.protocols[i].name || string(ps[i].metadata) != string(m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// vote is the member's most preferred protocol among candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.name] {
			return p.name
		}
	}
	return ""
}

// group is one classic consumer group and its committed offsets (Kafka's
// GroupMetadata). Every field is guarded by mu.
type group struct {
	mu        sync.Mutex
	id        string
	partition int32

	state          groupState
	stateTimestamp time.Time // when the group last entered its state (zero: unknown)
	protocolType   string    // "" when no member ever joined (simple consumers)
	protocol       string    // selected protocol, "" when none
	generation     int32
	leader         string

	members     map[string]*member
	memberOrder []string          // join order: responses and leader re-election are deterministic
	static      map[string]string // group.instance.id -> member id
	pending     map[string]Timer  // member ids handed out with MEMBER_ID_REQUIRED
	pendingSync map[string]bool   // joined this generation but no SyncGroup yet

	// Rebalance bookkeeping (Kafka's DelayedJoin / InitialDelayedJoin).
	joinTimer        Timer
	initialDelay     bool // joinTimer is the initial delay: only it may end the phase
	newMemberAdded   bool
	initialRemaining time.Duration
	syncTimer        Timer

	// subscribedTopics is known only for "consumer" groups whose members'
	// subscriptions all decode; nil means unknown.
	subscribedTopics map[string]bool

	offsets map[topicPartition]committedOffset
	// pendingTxn holds, by producer id, TxnOffsetCommit offsets written to
	// the log whose transaction has no marker yet (Kafka's
	// pendingTransactionalOffsetCommits). OffsetFetch does not see them.
	pendingTxn map[int64]map[topicPartition]committedOffset
}

func newGroup(id string, partition int32, now time.Time) *group {
	return &group{
		id:             id,
		partition:      partition,
		state:          stateEmpty,
		stateTimestamp: now,
		members:        make(map[string]*member),
		static:         make(map[string]string),
		pending:        make(map[string]Timer),
		pendingSync:    make(map[string]bool),
		offsets:        make(map[topicPartition]committedOffset),
		pendingTxn:     make(map[int64]map[topicPartition]committedOffset),
	}
}

func (g *group) transition(s groupState, now time.Time) {
	g.state = s
	g.stateTimestamp = now
}

func (g *group) add(m *member) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	g.members[m.id] = m
	g.memberOrder = append(g.memberOrder, m.id)
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if g.leader == "" {
		g.leader = m.id
	}
}

func (g *group) remove(id string) {
	m, ok := g.members[id]
	if !ok {
		return
	}
	if m.heartbeat != nil {
		m.heartbeat.Stop()
	}
	delete(g.members, id)
	for i, mid := range g.memberOrder {
		if mid == id {
			g.memberOrder = append(g.memberOrder[:i], g.memberOrder[i+1:]...)
			break
		}
	}
	if m.instanceID != nil && g.static[*m.instanceID] == id {
		delete(g.static, *m.instanceID)
	}
	if g.leader == id {
		g.leader = ""
		if len(g.memberOrder) > 0 {
			g.leader = g.memberOrder[0]
		}
	}
	delete(g.pendingSync, id)
}

// staticFenced reports a known group.instance.id presented with another
// member id: the newer instance took over and this one is a zombie.
func (g *group) staticFenced(instanceID *string, memberID string) bool {
	if instanceID == nil {
		return false
	}
	cur, ok := g.static[*instanceID]
	return ok && cur != memberID
}

func (g *group) numAwaitingJoin() int {
	n := 0
	for _, m := range g.members {
		if m.awaitingJoin != nil {
			n++
		}
	}
	return n
}

func (g *group) allMembersJoined() bool {
	return len(g.pending) == 0 && g.numAwaitingJoin() == len(g.members)
}

// rebalanceTimeout is the largest of the members' rebalance timeouts, as in
// Kafka: the slowest member sets the pace.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		if m.rebalanceTimeout > d {
			d = m.rebalanceTimeout
		}
	}
	return d
}

// supportsProtocols is Kafka's GroupMetadata.supportsProtocols: a member may
// join if it shares the group's protocol type and at least one protocol
// every current member supports.
func (g *group) supportsProtocols(protocolType string, ps []protocol) bool {
	if g.state == stateEmpty {
		return protocolType != "" && len(ps) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	counts := g.protocolCounts()
	for _, p := range ps {
		if counts[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

func (g *group) protocolCounts() map[string]int {
	counts := make(map[string]int)
	for _, m := range g.members {
		for _, p := range m.protocols {
			counts[p.name]++
		}
	}
	return counts
}

// selectProtocol picks, among the protocols every member supports, the one
// most members prefer (Kafka's vote). Kafka breaks ties by hash order; we
// break them by the leader's preference so the choice is deterministic.
func (g *group) selectProtocol() string {
	counts := g.protocolCounts()
	candidates := make(map[string]bool)
	for name, n := range counts {
		if n == len(g.members) {
			candidates[name] = true
		}
	}
	votes := make(map[string]int)
	for _, m := range g.members {
		votes[m.vote(candidates)]++
	}
	best, bestVotes := "", -1
	order := g.memberOrder
	if l, ok := g.members[g.leader]; ok {
		for _, p := range l.protocols {
			if candidates[p.name] && votes[p.name] > bestVotes {
				best, bestVotes = p.name, votes[p.name]
			}
		}
		return best
	}
	for _, id := range order {
		v := g.members[id].vote(candidates)
		if votes[v] > bestVotes {
			best, bestVotes = v, votes[v]
		}
	}
	return best
}

// computeSubscribedTopics decodes the consumer protocol subscriptions; any
// member whose metadata does not decode makes the set unknown (nil).
func (g *group) computeSubscribedTopics() map[string]bool {
	if g.protocolType != consumerProtocolType || g.protocol == "" {
		return nil
	}
	topics := make(map[string]bool)
	for _, m := range g.members {
		var s kmsg.ConsumerMemberMetadata
		if err := s.ReadFrom(m.metadata(g.protocol)); err != nil {
			return nil
		}
		for _, t := range s.Topics {
			topics[t] = true
		}
	}
	return topics
}

func (g *group) currentMemberMetadata() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.memberOrder))
	for _, id := range g.memberOrder {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = m.metadata(g.protocol)
		out = append(out, jm)
	}
	return out
}

// stopTimers releases every timer the group holds.
func (g *group) stopTimers() {
	for _, m := range g.members {
		if m.heartbeat != nil {
			m.heartbeat.Stop()
		}
	}
	for _, t := range g.pending {
		t.Stop()
	}
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
}
