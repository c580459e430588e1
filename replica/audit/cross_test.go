package audit

import (
	"context"
	"errors"
	"testing"
)

// replicaReads serves ReplicaRead from fake logs, at most maxBytes per read.
func replicaReads(logs map[int32]*fakeLog, maxBytes int) ReplicaRead {
	return func(_ context.Context, id int32, from int64) ([]byte, int64, error) {
		l, ok := logs[id]
		if !ok {
			return nil, 0, errors.New("broker down")
		}
		b, err := l.Read(from, l.HighWatermark(), maxBytes)
		return b, l.HighWatermark(), err
	}
}

func TestCrossCheckAgrees(t *testing.T) {
	logs := map[int32]*fakeLog{1: newFakeLog(6), 2: newFakeLog(6), 3: newFakeLog(6)}
	// Small reads: several rounds.
	r := CrossCheck(context.Background(), 1, []int32{2, 3}, 0, replicaReads(logs, 130))
	if len(r.Findings) != 0 || len(r.Failed) != 0 || r.Compared != 12 {
		t.Fatalf("got %+v, want 12 batches compared and nothing else", r)
	}
}

func TestCrossCheckFindsTheDivergentFollower(t *testing.T) {
	logs := map[int32]*fakeLog{1: newFakeLog(6), 2: newFakeLog(6), 3: newFakeLog(6)}
	logs[3].corrupt(4)
	r := CrossCheck(context.Background(), 1, []int32{2, 3}, 0, replicaReads(logs, 130))
	if len(r.Findings) != 1 {
		t.Fatalf("got %+v", r)
	}
	f := r.Findings[0]
	if f.Leader != 1 || f.Follower != 3 || f.Offset != 40 || f.Leader == f.Follower || f.Divergence.Leader.CRC == f.Divergence.Follower.CRC {
		t.Fatalf("finding %+v", f)
	}
	// Replica 2 is still read to the end.
	if r.Compared != 6+4 {
		t.Fatalf("compared %d, want 6 of replica 2 and 4 of replica 3", r.Compared)
	}
}

func TestCrossCheckStopsAtTheLowestHW(t *testing.T) {
	logs := map[int32]*fakeLog{1: newFakeLog(6), 2: newFakeLog(6)}
	logs[2].corrupt(5)
	logs[2].hw = 50 // the differing batch is not committed there yet
	r := CrossCheck(context.Background(), 1, []int32{2}, 0, replicaReads(logs, 1<<20))
	if len(r.Findings) != 0 || r.Compared != 5 {
		t.Fatalf("got %+v", r)
	}
}

func TestCrossCheckUnreachableReplicas(t *testing.T) {
	logs := map[int32]*fakeLog{1: newFakeLog(3), 2: newFakeLog(3)}
	r := CrossCheck(context.Background(), 1, []int32{2, 3}, 0, replicaReads(logs, 1<<20))
	if r.Failed[3] == nil || len(r.Findings) != 0 || r.Compared != 3 {
		t.Fatalf("got %+v", r)
	}
	r = CrossCheck(context.Background(), 9, []int32{1, 2}, 0, replicaReads(logs, 1<<20))
	if r.Failed[9] == nil || r.Compared != 0 {
		t.Fatalf("leader down: got %+v", r)
	}
}
