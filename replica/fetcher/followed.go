package fetcher

import "github.com/kbroker/kbroker/replica"

// Followed is a partition this broker fetches and the leader it fetches
// it from.
type Followed struct {
	replica.TopicPartition
	Leader BrokerEndpoint
}

// Followed lists the partitions in the fetching phase: in step with their
// leader as far as the follower knows. Partitions still truncating, parked
// or backing off after an error are left out, so that a reader comparing
// replicas (replica/audit) does not look at a log that is about to change
// below its high watermark.
func (m *Manager) Followed() []Followed {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Clock.Now()
	var out []Followed
	for key, f := range m.fetchers {
		f.mu.Lock()
		for tp, st := range f.parts {
			if st.phase == fetching && st.ready(now) && m.owner[tp] == key {
				out = append(out, Followed{TopicPartition: tp, Leader: f.leader})
			}
		}
		f.mu.Unlock()
	}
	return out
}
