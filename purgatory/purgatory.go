package purgatory

import (
	"sync"
	"sync/atomic"
	"time"
)

// Operation is a delayed operation's verdict. TryComplete reports whether
// the operation can be answered now; the purgatory never calls it
// concurrently with itself for one operation, nor after the operation
// completed, so it may record what it found (each partition's outcome) for
// the answer.
type Operation interface {
	TryComplete(now time.Time) bool
}

// Purgatory holds the operations waiting on keys of type K.
type Purgatory[K comparable] struct {
	clock Clock

	mu       sync.Mutex
	watchers map[K][]*Delayed[K]
	// spare holds the emptied lists of keys no longer watched, reused for
	// the next key watched: a follower fetch waits on every partition it
	// replicates, and would otherwise allocate a list per partition per
	// fetch. A key's list is dropped when empty so that the purgatory
	// holds no partition that nothing waits on.
	spare [][]*Delayed[K]
	// watched counts the keys with a watch list, so that a change on a
	// broker where nothing waits (every append standalone, with acks=1
	// producers and consumers that find data) costs one atomic load.
	watched atomic.Int64
}

// Bounds of the spare lists kept: enough for a follower fetch over a few
// thousand partitions, small enough not to matter after a burst.
const (
	maxSpareLists   = 4096
	maxSpareListCap = 16
)

// New returns an empty purgatory; nil clock means SystemClock.
func New[K comparable](clock Clock) *Purgatory[K] {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Purgatory[K]{clock: clock, watchers: map[K][]*Delayed[K]{}}
}

// Now is the purgatory's clock.
func (p *Purgatory[K]) Now() time.Time { return p.clock.Now() }

// Delayed is an operation handed to the purgatory: its owner waits on Done
// and then reads what the operation recorded.
type Delayed[K comparable] struct {
	p    *Purgatory[K]
	op   Operation
	keys []K
	done chan struct{}

	// mu is held while op.TryComplete runs and while the operation
	// completes, so that an expiry cannot answer while a check is still
	// recording outcomes.
	mu        sync.Mutex
	completed bool
	expired   bool
	watching  bool
	timer     Timer
}

// TryCompleteElseWatch checks op at once; if it cannot complete, watches it
// on every key, checks it again (a change may have landed between the first
// check and the watch, and would otherwise be missed until the next one),
// and arms its timeout for deadline. now is the clock's time, read by the
// caller, who usually computed deadline from it: the clock is read once.
// keys must not be empty and must stay unchanged.
func (p *Purgatory[K]) TryCompleteElseWatch(op Operation, keys []K, now, deadline time.Time) *Delayed[K] {
	d := &Delayed[K]{p: p, op: op, keys: keys, done: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if op.TryComplete(now) {
		d.completeLocked(false)
		return d
	}
	p.watch(d)
	if op.TryComplete(now) {
		d.completeLocked(false)
		return d
	}
	d.timer = p.clock.AfterFunc(deadline.Sub(now), d.expire)
	return d
}

// CheckAndComplete checks every operation watching key and completes those
// that can; it returns how many it completed. The caller must not hold a
// lock that an operation's TryComplete takes.
func (p *Purgatory[K]) CheckAndComplete(key K) int {
	if p.watched.Load() == 0 {
		return 0
	}
	// A copy, so that checks run without the purgatory's lock (they take
	// partition locks) and operations completing meanwhile can leave the
	// list. A few waiters per key fit on the stack.
	var buf [8]*Delayed[K]
	p.mu.Lock()
	ops := append(buf[:0], p.watchers[key]...)
	p.mu.Unlock()
	n := 0
	for _, d := range ops {
		if d.tryComplete() {
			n++
		}
	}
	return n
}

// Watched is the number of operations on key's watch list.
func (p *Purgatory[K]) Watched(key K) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.watchers[key])
}

func (p *Purgatory[K]) watch(d *Delayed[K]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range d.keys {
		l, ok := p.watchers[k]
		if !ok {
			p.watched.Add(1)
			if n := len(p.spare); n > 0 {
				l, p.spare = p.spare[n-1], p.spare[:n-1]
			}
		}
		p.watchers[k] = append(l, d)
	}
	d.watching = true
}

func (p *Purgatory[K]) unwatch(d *Delayed[K]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range d.keys {
		l := p.watchers[k]
		for i, w := range l {
			if w == d {
				last := len(l) - 1
				l[i] = l[last]
				l[last] = nil
				l = l[:last]
				break
			}
		}
		if len(l) == 0 {
			if _, ok := p.watchers[k]; ok {
				delete(p.watchers, k)
				p.watched.Add(-1)
				if len(p.spare) < maxSpareLists && cap(l) <= maxSpareListCap {
					p.spare = append(p.spare, l)
				}
			}
			continue
		}
		p.watchers[k] = l
	}
}

func (d *Delayed[K]) tryComplete() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.completed || !d.op.TryComplete(d.p.clock.Now()) {
		return false
	}
	d.completeLocked(false)
	return true
}

// expire is the timeout: the operation completes whatever its state.
func (d *Delayed[K]) expire() { d.ForceComplete() }

// ForceComplete completes the operation now if it has not completed yet
// (its timeout, or its owner giving up: the connection closed), without
// asking it. It reports whether this call completed it.
func (d *Delayed[K]) ForceComplete() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.completed {
		return false
	}
	d.completeLocked(true)
	return true
}

func (d *Delayed[K]) completeLocked(expired bool) {
	d.completed, d.expired = true, expired
	if d.timer != nil {
		d.timer.Stop()
	}
	if d.watching {
		d.p.unwatch(d)
		d.watching = false
	}
	close(d.done)
}

// Done is closed once the operation completed.
func (d *Delayed[K]) Done() <-chan struct{} { return d.done }

// Completed reports whether the operation completed; once it has, what
// TryComplete recorded is final.
func (d *Delayed[K]) Completed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.completed
}

// Expired reports whether the operation was completed by its timeout (or
// ForceComplete) rather than by its own verdict.
func (d *Delayed[K]) Expired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.expired
}
