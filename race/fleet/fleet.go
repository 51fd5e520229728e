// Package fleet spreads races over several instances (Redis mode): the
// rules of one race stay in package race; what lets a race run on one
// instance while its players and spectators are connected to others is
// here. Each live race has one owner, the instance that holds its lease
// (Leases) and runs it; every other instance's connections hold a proxy
// that forwards their requests to the owner (forward.go, over the Wire)
// and follows the race's topics on the bus. When an owner dies, drains
// or loses its lease, the next request, or the lease loop (Run), takes
// the race over once its lease is gone (whether an owner is gone is its
// lease's to say; a finished race is never taken over): it is rebuilt
// from its record and event log (race.Restore) and the takeover is
// announced on the race's OwnerTopic. Every connection attaches to it
// again, on that announcement or, when it never came (the instance was
// cut off), when the instance finds it lost the lease or its pub/sub
// subscriptions lapsed (attach.go).
//
// The import goes one way: fleet imports race, never the reverse; race
// declares the Fleet it hands its fleet-wide jobs to, and redisrace
// implements Cluster.
//
// # Lock order
//
// Outermost first, around race's own (docs/concurrency.md):
//
//  1. proxy.mu: one connection's handle; held to look where its race
//     runs and attach the connection there, never across a round trip
//     (a forwarded request, the bus's sync, a takeover).
//  2. None: a takeover (Fleet.takeovers, one per race at a time) holds
//     no lock of the fleet's across its Cluster calls and rebuild.
//  3. The race's and the Service's locks (package race).
//  4. Fleet.remoteMu, Fleet.releasedMu, tokenBox.mu: leaves;
//     Fleet.connsMu, held while subscribing to the bus (whose locks are
//     leaves).
package fleet

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"sirtommy/race"
)

// clusterTimeout bounds one call to the Cluster: a healthy Redis answers
// in under a millisecond.
const clusterTimeout = 2 * time.Second

// Leases decide which instance runs each live race: its owner, who holds
// a lease that expires when the instance dies.
type Leases interface {
	// Instance names this instance.
	Instance() string
	// Claim makes this instance the race's owner if it has none (or it is
	// this one already); it reports whether this instance owns it now. A
	// live lease is never taken: whether an owner is gone is its lease's
	// to say. A finished race (its record says it is over) is claimed by
	// nobody: Claim fails with ErrOver (wrapped).
	Claim(ctx context.Context, id string) (bool, error)
	// Renew extends this instance's leases on races ids and returns those
	// it no longer owns.
	Renew(ctx context.Context, ids []string) (lost []string, err error)
	// Owners reads which instance holds the lease of each race ids ("" for
	// none).
	Owners(ctx context.Context, ids []string) (map[string]string, error)
	// Orphans lists live races whose owner's lease has expired.
	Orphans(ctx context.Context) ([]string, error)
	// Release gives up ownership of a race that is over.
	Release(ctx context.Context, id string) error
	// Handover gives up ownership of a live race so that another instance
	// takes it over at once (this one is shutting down).
	Handover(ctx context.Context, id string) error
}

// Cluster is everything the fleet runs on: the races' records (also the
// races' own Deps.Records), the leases and the wire between the
// instances. redisrace.Cluster is one.
type Cluster interface {
	race.Records
	Leases
	Wire
}

// Errors of a forwarded request and of Leases.Claim.
var (
	ErrNoOwner      = errors.New("the race has no live owner")
	ErrOwnerIsMe    = errors.New("this instance owns the race")
	ErrOwnerChanged = errors.New("another instance owns the race now")
	ErrOver         = errors.New("the race is over: nobody takes it over")
	// ErrClosed is a call cut short because the transport is closing
	// (the instance stops).
	ErrClosed = errors.New("the transport is closed")
)

// Syncer is implemented by buses whose subscriptions take effect later
// (redisrace.Bus): Sync waits until the ones made so far are live.
type Syncer interface {
	Sync(ctx context.Context) error
}

// Fleet is one instance's part of the fleet: it registers the races its
// Service makes, opens races wherever they run, serves the requests
// other instances forward to it, keeps its leases and takes races over.
type Fleet struct {
	svc     *race.Service
	cluster Cluster
	bus     race.Bus
	deps    race.Deps

	// The takeovers under way, one per race (takeOver).
	takeovers singleflight.Group
	// This instance's connections to each race (attach.go).
	connsMu sync.Mutex
	conns   map[string]*raceConns
	// The connections of other instances attached to races here.
	remoteMu sync.Mutex
	remotes  map[string]*remoteConn
	// The requests forwarded to other instances, and theirs here.
	fwd *forwarder
	// Topic numbers for this instance's connections to races elsewhere.
	nextConn atomic.Uint64
	// The races here whose lease was given up (finished, or copies of
	// finished races for reading).
	releasedMu sync.Mutex
	released   map[*race.Race]bool

	// holdSeats: this instance plays its connections' seats of races
	// elsewhere (HoldSeats).
	holdSeats bool

	// ctx ends the fleet's background work (Close): the connections
	// being attached again, counted by work. workMu orders background's
	// Add before Close's Wait: ctx is cancelled under it, so no WaitGroup
	// grows from zero while waited on, and nothing starts after Close.
	ctx    context.Context
	cancel context.CancelFunc
	workMu sync.Mutex
	work   sync.WaitGroup
}

// New makes svc's fleet over c, and answers the requests other instances
// forward to this one. svc's races must have c as their Deps.Records.
func New(svc *race.Service, c Cluster) *Fleet {
	f := &Fleet{svc: svc, cluster: c, bus: svc.Deps().Bus, deps: svc.Deps(),
		remotes: make(map[string]*remoteConn), released: make(map[*race.Race]bool),
		conns: make(map[string]*raceConns)}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	if l, ok := f.bus.(Lapser); ok {
		l.OnLapse(func() { f.background(f.resync) })
	}
	svc.UseFleet(f)
	f.fwd = newForwarder(f.ctx, c, f.serve, f.deps)
	return f
}

var _ race.Fleet = (*Fleet)(nil)

// Close stops the fleet's background work, the connections being
// attached again, and waits for it (Run calls it when its context ends).
func (f *Fleet) Close() {
	f.workMu.Lock()
	f.cancel()
	f.workMu.Unlock()
	f.work.Wait()
}

// background runs fn on a goroutine of its own, unless the fleet is
// closed; Close waits for it.
func (f *Fleet) background(fn func()) {
	f.workMu.Lock()
	defer f.workMu.Unlock()
	if f.ctx.Err() != nil {
		return
	}
	f.work.Add(1)
	go func() {
		defer f.work.Done()
		fn()
	}()
}

// Register makes this instance the owner of a new race and stores its
// record.
func (f *Fleet) Register(ctx context.Context, rec *race.Record) error {
	ok, err := f.cluster.Claim(ctx, rec.ID)
	if err == nil && !ok {
		err = errors.New("a new race id is already owned")
	}
	if err != nil {
		return err
	}
	if err := f.cluster.Save(ctx, rec); err != nil {
		_ = f.cluster.Release(ctx, rec.ID)
		return err
	}
	return nil
}

// Unregister gives up a new race that will not run.
func (f *Fleet) Unregister(ctx context.Context, id string) { _ = f.cluster.Release(ctx, id) }

// Handover stops this instance's copies of the live races and hands them
// over to the other instances, whose players resume them there.
func (f *Fleet) Handover(ctx context.Context, races []*race.Race) {
	for _, r := range races {
		if r.State().Over() {
			continue
		}
		r.Stop()
		r.FlushRecords() // the next owner reads the race as it stood here
		hctx, cancel := context.WithTimeout(ctx, clusterTimeout)
		if err := f.cluster.Handover(hctx, r.ID()); err != nil {
			f.deps.Log.Warn().Err(err).Str("race", r.ID()).Msg("race not handed over; another instance takes it when its lease runs out")
		}
		cancel()
	}
}

// Open finds a race for a connection: a proxy that takes each request to
// wherever the race runs (here, or forwarded to its owner, or here again
// after taking it over from a dead owner); a finished race is the race
// itself, rebuilt here for its record when it is not here.
func (f *Fleet) Open(ctx context.Context, id string) (race.Handle, error) {
	r, err := f.svc.Get(id)
	switch {
	case err == nil && r.State().Over():
		return r, nil
	case err == nil:
		return f.newProxy(id), nil
	}
	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	rec, ok, err := f.cluster.Load(ctx, id)
	if err != nil {
		return nil, &race.Error{Code: race.CodeUnavailable, Message: "the race's record cannot be read now; try again shortly", Err: err}
	}
	if !ok {
		return nil, race.Errorf(race.CodeNoSuchRace, "no race has id %q", id)
	}
	if rec.State.Over() {
		return f.restoreOver(ctx, rec)
	}
	return f.newProxy(id), nil
}

// newProxy is a connection's Handle of live race id, not yet attached.
func (f *Fleet) newProxy(id string) *proxy {
	p := &proxy{f: f, id: id, topic: f.connTopic(id)}
	p.gate.init(f.svc, id)
	return p
}

func (f *Fleet) connTopic(raceID string) string {
	return raceID + "/conn/" + f.cluster.Instance() + "/" + strconv.FormatUint(f.nextConn.Add(1), 10)
}

// markReleased records that r's lease was given up; it reports whether
// it was not already.
func (f *Fleet) markReleased(r *race.Race) bool {
	f.releasedMu.Lock()
	defer f.releasedMu.Unlock()
	if f.released[r] {
		return false
	}
	f.released[r] = true
	return true
}

func (f *Fleet) isReleased(r *race.Race) bool {
	f.releasedMu.Lock()
	defer f.releasedMu.Unlock()
	return f.released[r]
}

// pruneReleased forgets the races the Service no longer lists (evicted).
func (f *Fleet) pruneReleased(listed []*race.Race) {
	keep := make(map[*race.Race]bool, len(listed))
	for _, r := range listed {
		keep[r] = true
	}
	f.releasedMu.Lock()
	defer f.releasedMu.Unlock()
	for r := range f.released {
		if !keep[r] {
			delete(f.released, r)
		}
	}
}
