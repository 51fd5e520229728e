package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"sirtommy/race"
)

// Re-attachment: a connection attached to its race (here, or through the
// race's owner elsewhere) must follow the race when it changes hands,
// without sending anything: a spectator sends nothing, nor does an idle
// player or one whose game is over. It does not rest on one message.
// Every connection of a race is attached again, at once, when
//
//   - the race's new owner announces itself on its OwnerTopic (a takeover);
//   - this instance loses the race's lease (a renewal refused, or the
//     race stopped by a fenced write: an append, a decision); the
//     announcement may never have reached this instance, cut off from
//     Redis when it was made;
//   - the bus's subscriptions lapsed (a pub/sub reconnect, Lapser): what
//     was published meanwhile, an announcement or a final state, is lost,
//     so the owner of every race followed is read again and every
//     connection to a race that runs elsewhere is attached again.
//
// Attached again, a player resumes its seat with its latest token and a
// spectator watches again: each gets a fresh joined and state (a
// spectator's versions are a new epoch's after a takeover), which fills
// whatever was missed; a finished race sends its final state.

// Lapser is implemented by buses whose subscriptions may lapse
// (redisrace.Bus): f is called after each lapse.
type Lapser interface {
	OnLapse(f func())
}

// Re-attachment timing.
const (
	// reattachTries is how many times a connection tries to attach again
	// while the race's instance cannot be reached (the partition that
	// caused it may not have healed everywhere): 6.3 s in all.
	reattachTries = 6
	// reattachPause is the first pause between tries; it doubles.
	reattachPause = 100 * time.Millisecond
	// resyncTries bounds the reads of the races' owners after a lapse.
	resyncTries = 5
)

// raceConns are this instance's connections to one race, and their one
// subscription to its OwnerTopic.
type raceConns struct {
	proxies map[*proxy]struct{}
	unsub   func()
}

// follow lists p among the connections of its race, subscribing to the
// race's OwnerTopic for the first. Called with p.mu held.
func (f *Fleet) follow(p *proxy) {
	f.connsMu.Lock()
	defer f.connsMu.Unlock()
	rc := f.conns[p.id]
	if rc == nil {
		rc = &raceConns{proxies: make(map[*proxy]struct{})}
		rc.unsub = f.bus.Subscribe(OwnerTopic(p.id), ownerSub{f: f, race: p.id})
		f.conns[p.id] = rc
	}
	rc.proxies[p] = struct{}{}
}

// unfollow takes p off its race's connections.
func (f *Fleet) unfollow(p *proxy) {
	f.connsMu.Lock()
	defer f.connsMu.Unlock()
	rc := f.conns[p.id]
	if rc == nil {
		return
	}
	delete(rc.proxies, p)
	if len(rc.proxies) == 0 {
		rc.unsub()
		delete(f.conns, p.id)
	}
}

// followed lists the races this instance has connections to.
func (f *Fleet) followed() []string {
	f.connsMu.Lock()
	defer f.connsMu.Unlock()
	ids := make([]string, 0, len(f.conns))
	for id := range f.conns {
		ids = append(ids, id)
	}
	return ids
}

// reattachRace attaches every connection of race id again, each on a
// goroutine of its own. It closes their feed gates first: what the
// race's owner publishes before it has sent a connection its fresh
// snapshot is in that snapshot, and must not reach it twice.
func (f *Fleet) reattachRace(id string) {
	f.connsMu.Lock()
	var ps []*proxy
	if rc := f.conns[id]; rc != nil {
		for p := range rc.proxies {
			ps = append(ps, p)
		}
	}
	f.connsMu.Unlock()
	for _, p := range ps {
		p.gate.shut()
		f.background(p.reattach)
	}
}

// ownerSub hears a race's new owner for this instance's connections.
type ownerSub struct {
	f    *Fleet
	race string
}

// Deliver attaches the race's connections again. It never blocks: the
// attaching runs on goroutines of their own, since a request may hold a
// connection's proxy.
func (o ownerSub) Deliver(ev race.Event) {
	if _, ok := ev.(*OwnerEvent); ok {
		o.f.reattachRace(o.race)
	}
}

// lost is called when this instance lost race r (its lease another's,
// or its writes fenced): r stops, and its connections here attach to the
// race wherever it runs now.
func (f *Fleet) lost(r *race.Race) {
	f.svc.Drop(r)
	r.Stop()
	f.reattachRace(r.ID())
}

// resync follows a lapse of the bus's subscriptions: it reads again the
// owner of every race this instance has connections to, and attaches
// again every connection to a race that does not run here.
func (f *Fleet) resync() {
	f.catchUpHeld()
	ids := f.followed()
	if len(ids) == 0 {
		return
	}
	var owners map[string]string
	for try := range resyncTries {
		ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
		var err error
		owners, err = f.cluster.Owners(ctx, ids)
		cancel()
		if err == nil {
			f.fwd.remember(owners)
			break
		}
		f.deps.Log.Warn().Err(err).Int("try", try+1).Msg("owners not read again after a pub/sub lapse")
		select {
		case <-f.ctx.Done():
			return
		case <-time.After(reattachPause << try):
		}
	}
	me := f.cluster.Instance()
	n := 0
	for _, id := range ids {
		if r, err := f.svc.Get(id); err == nil && !r.Halted() && (owners == nil || owners[id] == me) {
			continue // it runs here: its connections here missed nothing
		}
		f.reattachRace(id)
		n++
	}
	f.deps.Log.Info().Int("races", n).Msg("connections attached again after a pub/sub lapse")
}

// reattach attaches the connection again where its race runs now. One
// re-attachment of a connection runs at a time: the causes come together
// (a lost lease, a lapse, the new owner's announcement), and two resumes
// of one seat at once would each get a token, the later answer perhaps
// first, leaving the connection with one the seat no longer has. A cause
// that comes during a run has it run once more when it ends: the run may
// have asked the owner before.
func (p *proxy) reattach() {
	p.mu.Lock()
	if p.reattaching {
		p.reattachAgain = true
		p.mu.Unlock()
		return
	}
	p.reattaching = true
	p.mu.Unlock()
	for {
		p.reattachTrying()
		p.mu.Lock()
		again := p.reattachAgain
		p.reattaching, p.reattachAgain = again, false
		p.mu.Unlock()
		if !again {
			return
		}
	}
}

// reattachTrying attaches the connection again, trying again while the
// race's instance cannot be reached.
func (p *proxy) reattachTrying() {
	pause := reattachPause
	for try := 1; ; try++ {
		err := p.attachAgain()
		if err == nil {
			return
		}
		if errors.Is(err, ErrClosed) {
			return // this instance stops
		}
		if race.ErrorCode(err) != race.CodeUnavailable || try == reattachTries {
			p.f.deps.Log.Warn().Err(err).Str("race", p.id).Int("tries", try).Msg("connection not attached again")
			return
		}
		select {
		case <-p.f.ctx.Done():
			return
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// attachAgain attaches the connection again, once: a player resumes the
// seat with its latest token, a spectator watches again. The race's owner
// (a new one never saw the connection) has it then: the seat is connected
// there (a grace period the takeover armed stops) and the connection gets
// a fresh joined and state, or a spectator's state. A finished race sends
// its final state from its stored record.
func (p *proxy) attachAgain() error {
	p.mu.Lock()
	player, watched, token, who := p.player, p.watched, p.token.get(), p.who
	attached := p.sub != nil
	p.mu.Unlock()
	if !attached || !player && !watched {
		return nil // the connection left meanwhile
	}
	var err error
	if player {
		var rep *Reply
		var r *race.Race
		rep, r, err = p.call(&Request{Op: OpResume, Token: token, Player: who})
		if r != nil && r.State().Over() {
			err = race.Errorf(race.CodeRaceOver, "the race is over") // here() could not resume it
		}
		if err == nil && rep != nil {
			if err = rep.Err.err(); err == nil {
				p.mu.Lock()
				p.token.set(rep.Token)
				p.seated(rep.Seat)
				p.mu.Unlock()
			}
		}
	} else {
		var r *race.Race
		_, r, err = p.call(&Request{Op: OpWatch})
		p.mu.Lock()
		if r != nil && p.cancelW == nil && p.watched {
			p.cancelW = r.Watch(p.sub)
		}
		p.mu.Unlock()
	}
	if race.ErrorCode(err) == race.CodeRaceOver {
		// The race ended (perhaps as its owner went: the final state may
		// never have been published, or not reached this instance): the
		// connection gets the final state from the stored record.
		return p.sendFinal()
	}
	return err
}

// sendFinal delivers the finished race's final state to the connection,
// as the race's record has it: a player's view of its seat, or a
// spectator's.
func (p *proxy) sendFinal() error {
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	r, err := p.f.openOver(ctx, p.id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	sub, seat, player := p.sub, p.seat, p.player
	p.mu.Unlock()
	sub.Deliver(r.FinalFor(seat, player))
	return nil
}

// tokenBox is the seat's latest token, which the race that runs it sends
// in "joined" whenever the connection resumes it (here or forwarded). Its
// lock is a leaf: Deliver takes it under a race's lock.
type tokenBox struct {
	mu  sync.Mutex
	tok string
}

func (b *tokenBox) get() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tok
}

func (b *tokenBox) set(t string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tok = t
}

// catchUpHeld reads the log of every race this instance still owns with
// a seat held on another instance, after a lapse of the bus's
// subscriptions: the records its holders sent meanwhile are lost. A race
// another instance took over meanwhile is not read (its copy here stops
// once the lease loop finds it lost). It stops at the first failure
// (Redis is away again): the next lapse tries again, and a race's end
// counts what it missed anyway (race.Race.ApplyRemote).
func (f *Fleet) catchUpHeld() {
	var held []*race.Race
	var ids []string
	for _, r := range f.svc.Races() {
		if !r.Halted() && r.HeldElsewhere() {
			held, ids = append(held, r), append(ids, r.ID())
		}
	}
	if len(held) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, clusterTimeout)
	owners, err := f.cluster.Owners(ctx, ids)
	cancel()
	if err != nil {
		f.deps.Log.Warn().Err(err).Msg("owners not read for the held seats' moves after a pub/sub lapse")
		return
	}
	me := f.cluster.Instance()
	for _, r := range held {
		if owners[r.ID()] != me {
			continue
		}
		ctx, cancel := context.WithTimeout(f.ctx, clusterTimeout)
		err := r.CatchUp(ctx)
		cancel()
		if err != nil {
			f.deps.Log.Warn().Err(err).Str("race", r.ID()).Msg("held seats' moves not read after a pub/sub lapse")
			return
		}
	}
}
