package audit

import "context"

// ReplicaRead reads one replica's batches from offset from (a fetch sent
// to that replica's broker): the records and that replica's high
// watermark.
type ReplicaRead func(ctx context.Context, replica int32, from int64) (records []byte, hw int64, err error)

// CrossFinding is a follower that differs from its leader.
type CrossFinding struct {
	Leader, Follower int32
	Divergence
}

// CrossResult is the outcome of CrossCheck on one partition.
type CrossResult struct {
	// Compared counts follower batches found equal to the leader's.
	Compared int
	Findings []CrossFinding
	// Failed holds the replicas that could not be read, and why; a
	// failed leader fails the whole partition.
	Failed map[int32]error
}

// CrossCheck compares every follower of a partition with its leader from
// offset from up to the lowest high watermark among them, reading each
// through read, as the `kbroker audit` CLI does from outside the cluster.
// Each round reads the leader and the followers still agreeing from the
// same offset, then moves to the least offset every follower agreed up
// to; it ends when no replica holds more below the lowest HW, at the
// first read the leader fails, or when ctx ends.
func CrossCheck(ctx context.Context, leader int32, followers []int32, from int64, read ReplicaRead) CrossResult {
	res := CrossResult{Failed: map[int32]error{}}
	live := append([]int32(nil), followers...)
	for len(live) > 0 && ctx.Err() == nil {
		lrec, end, err := read(ctx, leader, from)
		if err != nil {
			res.Failed[leader] = err
			return res
		}
		lh := Headers(lrec)
		next := int64(-1)
		var still []int32
		recs := map[int32][]byte{}
		for _, f := range live {
			frec, fhw, err := read(ctx, f, from)
			if err != nil {
				res.Failed[f] = err
				continue
			}
			recs[f] = frec
			end = min(end, fhw)
			still = append(still, f)
		}
		live = live[:0]
		for _, f := range still {
			r := Compare(lh, Headers(recs[f]), from, end)
			res.Compared += r.Compared
			if r.Divergence != nil {
				res.Findings = append(res.Findings, CrossFinding{Leader: leader, Follower: f, Divergence: *r.Divergence})
				continue
			}
			live = append(live, f)
			if next < 0 || r.Next < next {
				next = r.Next
			}
		}
		if next <= from {
			break // nothing more below the lowest HW (or everyone diverged)
		}
		from = next
	}
	return res
}
