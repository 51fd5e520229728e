package race

import (
	"slices"
	"sync"
	"time"

	"sirtommy/engine"
)

// This file is the spectators' side of a race: what they may see (sight),
// and how the race sends them its feed (feed.go) as it moves on.
//
// The information invariant: no connection other than a racer's own seat
// ever receives a card that a racer who is still playing has not turned
// yet. Both racers play the same deal, so a card is known by its index in
// the deal's stock; a spectator may see card c when every racer still
// playing has turned c (its index is below the number of cards the racer
// has turned from the first pass's stock; a racer who has redealt has
// turned them all), or when the race is over. Before that the card is
// Hidden ("??") in its place. feed.view is the one place where a
// spectator's board is made: the state sent on watch, every board event,
// every state event and the final state all come from it.
//
// The feed is what spectators have been sent: the games as of its point
// (behind the live games by the spectator delay in public races, or level
// with them), the last state event, and a version that grows by one with
// every event released to the spectators. Boards are masked by the
// games as of the feed's point, never the live ones, so that a delayed
// feed says nothing about the live games either; as the feed's games only
// move forward and the live ones are at least as far, whatever the feed
// shows every racer still playing has turned.

// sight knows where each card of a deal lies in its stock.
type sight struct {
	// pos is each card's index in the first pass's stock, top first; -1
	// for cards never in it (the preset starters, shown from the start).
	pos [256]int8
	// n is the stock's length.
	n int
}

func newSight(rules *engine.Rules, deal uint64) sight {
	var s sight
	for i := range s.pos {
		s.pos[i] = -1
	}
	stock, _ := engine.Layout(rules, deal)
	for i, c := range stock {
		s.pos[c] = int8(i)
	}
	s.n = len(stock)
	return s
}

// turned is how many cards of the first pass's stock g has turned: all of
// them once it has redealt.
func (s *sight) turned(g *engine.Game) int {
	if redeals := g.Rules().Redeals; redeals > 0 {
		if v := g.View(); v.RedealsLeft < redeals {
			return s.n
		}
	}
	return s.n - g.StockLeft()
}

// hidden reports whether card c is shown face down to someone who may see
// the stock's first limit cards.
func (s *sight) hidden(c engine.Card, limit int) bool {
	p := s.pos[c]
	return p >= 0 && int(p) >= limit
}

// mask turns face down the cards of v that someone who may see the
// stock's first limit cards may not see, and reports whether there were
// any.
func (s *sight) mask(v *engine.View, limit int) bool {
	hid := false
	for k, c := range v.Turned {
		if s.hidden(c, limit) {
			v.Turned[k], hid = engine.Hidden, true
		}
	}
	for p := range v.Waste {
		for k, c := range v.Waste[p].Cards {
			if s.hidden(c, limit) {
				v.Waste[p].Cards[k], hid = engine.Hidden, true
			}
		}
	}
	for p := range v.Foundations {
		if c := v.Foundations[p].Top; c != engine.NoCard && s.hidden(c, limit) {
			v.Foundations[p].Top, hid = engine.Hidden, true
		}
	}
	return hid
}

// initFeedLocked starts the feed at the race as it is, with the games
// games (the live ones, or for a race rebuilt mid-delay the ones as of the
// delay) whose last logged moves are last, and version
// epoch<<verEpochShift + 1.
func (r *Race) initFeedLocked(games []engine.Game, last []MoveRecord, epoch uint64) {
	r.epoch = epoch
	connected := make([]bool, len(r.seats))
	for s := range r.seats {
		connected[s] = r.seats[s].connected
	}
	r.feed.reset(newSight(r.rules, r.deal), games, last, connected, r.snapshotLocked(-1), epoch)
}

// watchSnapshotLocked is the state a new spectator gets: the feed as far
// as it has reached (not the live race: older events may still wait in
// the delay), with its version; the next event released is ver+1.
func (r *Race) watchSnapshotLocked() *StateEvent {
	ev := *r.feed.state
	ev.Now = r.clock.Now()
	ev.Spectators = r.spectators
	ev.Boards, ev.Counts = r.feed.boards(r.sealedLocked())
	ev.Ver = r.feed.ver
	return &ev
}

// releaseLocked moves the feed forward by one item and sends the
// spectators what it changes, each event with the next version.
func (r *Race) releaseLocked(it *feedItem) {
	f := &r.feed
	if it.ev == nil {
		m := &it.move
		sealed := r.sealedLocked()
		before := f.revealLimit(sealed)
		if err := f.play(m); err != nil {
			r.log.Error().Err(err).Int("seat", m.seat).Int("seq", m.seq).Msg("the spectators' feed could not play a move")
		}
		r.sendBoardLocked(m.seat, false)
		if after := f.revealLimit(sealed); after != before {
			for o := range f.games {
				if o != m.seat && f.hid[o] && f.holds(o, before, after) {
					// Another seat's board shows cards that every racer
					// still playing has turned now: it is sent again,
					// face up.
					r.sendBoardLocked(o, true)
				}
			}
		}
		return
	}
	switch e := it.ev.(type) {
	case *PresenceEvent:
		f.connected[e.Seat] = e.Connected
		st := *f.state
		st.Players = slices.Clone(st.Players) // the state sent before keeps its own
		st.Players[e.Seat].Connected = e.Connected
		f.state = &st
		r.sendWatchersLocked(e)
	case *StateEvent:
		if e.State.Over() {
			// The race is over: the feed catches up with the games as
			// they ended, and shows them.
			for s := range r.seats {
				f.games[s] = r.seats[s].game
				f.connected[s] = r.seats[s].connected
			}
		}
		f.state = e
		if r.spectators == 0 {
			f.ver++ // as in sendBoardLocked
			return
		}
		out := *e
		out.Boards, out.Counts = f.boards(r.sealedLocked())
		r.sendWatchersLocked(&out)
	default:
		r.sendWatchersLocked(e)
	}
}

// sendBoardLocked sends seat s's board at the feed's point; reveal marks
// a board sent again because cards on it may be shown now.
func (r *Race) sendBoardLocked(s int, reveal bool) {
	if r.spectators == 0 {
		// Nobody to show it to (spectators on other instances are
		// counted too): the version moves on all the same, and whoever
		// comes gets the boards from the feed's games.
		r.feed.ver++
		return
	}
	// Made for the spectators alone: its version is set in place, where
	// sendWatchersLocked copies an event others may hold.
	r.publishLocked(r.fan.watch(), r.feed.board(r.id, s, reveal, r.sealedLocked()))
}

// versioned is an event that spectators get with the feed's version: a
// copy of it carrying ver (the original may be on its way to players,
// who get no version).
type versioned interface {
	withVer(ver uint64) Event
}

func (e *StateEvent) withVer(v uint64) Event      { c := *e; c.Ver = v; return &c }
func (e *BoardEvent) withVer(v uint64) Event      { c := *e; c.Ver = v; return &c }
func (e *PresenceEvent) withVer(v uint64) Event   { c := *e; c.Ver = v; return &c }
func (e *SpectatorsEvent) withVer(v uint64) Event { c := *e; c.Ver = v; return &c }
func (e *RematchEvent) withVer(v uint64) Event    { c := *e; c.Ver = v; return &c }
func (e *NextEvent) withVer(v uint64) Event       { c := *e; c.Ver = v; return &c }

// sendWatchersLocked publishes ev to the spectators with the next
// version. Every event on the watch topic goes through here but the
// boards sendBoardLocked makes, which number themselves the same way.
func (r *Race) sendWatchersLocked(ev Event) {
	r.feed.ver++
	if v, ok := ev.(versioned); ok {
		ev = v.withVer(r.feed.ver)
	}
	r.publishLocked(r.fan.watch(), ev)
}

// Watch subscribes a spectator; sub first receives a StateEvent. Call
// cancel when the spectator leaves.
func (r *Race) Watch(sub Subscriber) (cancel func()) {
	r.mu.Lock()
	defer r.unlock()
	now := r.clock.Now()
	if r.feedIdleLocked() {
		// What is due is released before the new spectator's state, and
		// the feed's timer runs from now on.
		r.releaseDueLocked(now)
	}
	r.spectators++
	remote := isRemote(sub)
	if remote {
		r.remoteSpectators++
	}
	if !r.fan.relays {
		r.armFeedLocked(now)
	}
	r.sendLocked(sub, r.watchSnapshotLocked())
	r.spectatorsChangedLocked()
	unsub := r.subscribeLocked(r.fan.watch(), sub)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			unsub()
			r.spectators--
			if remote {
				r.remoteSpectators--
			}
			r.spectatorsChangedLocked()
			r.unlock()
		})
	}
}

// spectatorsEvery is the shortest time between two spectators messages of
// a race.
const spectatorsEvery = time.Second

// spectatorsChangedLocked schedules a spectators message, unless one is
// due already or the race is over.
func (r *Race) spectatorsChangedLocked() {
	if r.watchT != nil || r.state.Over() || r.stopped {
		return
	}
	r.watchT = r.clock.AfterFunc(spectatorsEvery, func() {
		r.mu.Lock()
		defer r.unlock()
		r.watchT = nil
		if r.state.Over() || r.stopped || r.spectators == r.told {
			return
		}
		r.told = r.spectators
		// Not game information: nobody's feed delays it.
		ev := &SpectatorsEvent{Race: r.id, Count: r.spectators}
		for s := range r.seats {
			r.publishLocked(s, ev)
		}
		r.sendWatchersLocked(ev)
	})
}

// publishWatchLocked sends ev to the spectators, after the spectator
// delay in public races.
func (r *Race) publishWatchLocked(ev Event) { r.feedLocked(feedItem{ev: ev}) }

// feedLocked adds it to the spectators' feed: at once, or after the
// spectator delay in public races that are not over. What is due by now
// goes first: a race's events release its feed (see FeedSlack).
func (r *Race) feedLocked(it feedItem) {
	if r.opts.SpectatorDelay <= 0 || r.state.Over() {
		r.releaseLocked(&it)
		return
	}
	now := r.clock.Now()
	if r.releaseDueLocked(now) && r.feed.armed {
		// The head moved on: the timer waits for the new one.
		r.feed.timer.Stop()
		r.feed.armed = false
	}
	r.feed.delay(it, now.Add(r.opts.SpectatorDelay))
	r.armFeedLocked(now)
}

// FeedSlack is how long after an item of the spectators' feed is due
// its timer releases it, if no event of the race (a move, a spectator)
// has done so first. In a race being played that is what happens: its
// spectators' boards go out from the mover's goroutine, up to FeedSlack
// later than the delay asks (never earlier), and cost no wake-up of
// their own. A timer per item, and its goroutine, was most of the feed's
// cost.
const FeedSlack = 250 * time.Millisecond

// feedIdleLocked reports whether the feed's delay runs without a timer:
// on one instance (memory mode, and the single binary whose races are
// kept in SQLite) while nobody watches, what is due is released by the
// next event or the next spectator (Watch), as nobody can tell when. A
// busy server's public races mostly have no spectators, and a timer for
// each of their moves (and a goroutine when it fires) was a tenth of its
// CPU. Where the bus relays to other instances (Redis mode) the timer
// always runs: the other instances' spectators follow the feed.
func (r *Race) feedIdleLocked() bool { return !r.fan.relays && r.spectators == 0 }

// armFeedLocked starts the timer that releases the feed's head, FeedSlack
// after it is due, unless it runs already or the feed is idle. Its
// callback does nothing if the timer was stopped meanwhile (a call that
// Stop came too late for), so that no more than one runs at a time.
func (r *Race) armFeedLocked(now time.Time) {
	if r.feed.armed || r.feed.queue.Len() == 0 || r.feedIdleLocked() {
		return
	}
	r.feed.armed = true
	r.feed.gen++
	gen := r.feed.gen
	r.feed.timer = r.clock.AfterFunc(r.feed.queue.Front().due.Add(FeedSlack).Sub(now), func() { r.releaseDue(gen) })
}

// releaseDue is the feed's timer (armFeedLocked) of generation gen.
func (r *Race) releaseDue(gen uint64) {
	r.mu.Lock()
	defer r.unlock()
	if !r.feed.armed || gen != r.feed.gen {
		return // stopped, and another armed since, or none
	}
	r.feed.armed = false
	now := r.clock.Now()
	r.releaseDueLocked(now)
	r.armFeedLocked(now)
}

// releaseDueLocked releases the feed's items that are due, and reports
// whether there were any.
func (r *Race) releaseDueLocked(now time.Time) bool {
	released := false
	for {
		it, ok := r.feed.due(now)
		if !ok {
			return released
		}
		r.releaseLocked(&it)
		released = true
	}
}
