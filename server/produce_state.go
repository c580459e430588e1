package server

// dataPath is the produce/fetch path's broker-wide state: the producer-id
// allocator and the fetch sessions. Each partition's producer table lives
// in its log (logstore.Log.ActiveProducers), which checks and updates it
// on every append.
type dataPath struct {
	b *Broker

	producerIDs *producerIDManager
	sessions    *fetchSessionCache
}

func newDataPath(b *Broker) *dataPath {
	d := &dataPath{
		b:        b,
		sessions: newFetchSessionCache(defaultFetchSessionSlots, b.logger),
	}
	d.producerIDs = &producerIDManager{claim: b.claimProducerIDBlock}
	return d
}
