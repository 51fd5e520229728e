package lobby

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"sirtommy/race"
)

// offerComputer offers the computer to this instance's players who
// waited long enough.
func (l *Lobby) offerComputer() {
	if l.deps.Computer == nil {
		return
	}
	l.mu.Lock()
	now := l.deps.Clock.Now()
	type offer struct {
		sub race.Subscriber
		ev  *OfferEvent
		at  time.Time
	}
	var offers []offer
	for _, q := range l.queuedBy {
		if !q.offered && now.Sub(q.since) >= l.cfg.ComputerOfferAfter {
			q.offered = true
			offers = append(offers, offer{q.s.sub, &OfferEvent{Variant: q.variant, WaitedMs: now.Sub(q.since).Milliseconds()}, q.since})
		}
	}
	l.mu.Unlock()
	sort.Slice(offers, func(i, j int) bool { return offers[i].at.Before(offers[j].at) })
	for _, o := range offers {
		o.sub.Deliver(o.ev)
	}
}

// PlayComputer takes the player out of their queue into a race against the
// computer, in the queue's variant (CodeNotQueued if not queued, or if
// they were paired with someone meanwhile: leaving the shared queue is
// the claim). The race is unrated.
func (s *Session) PlayComputer() error {
	l := s.l
	if l.deps.Computer == nil {
		return race.Errorf(CodeNoComputer, "this server has no computer players")
	}
	seed := randomSeed()
	bot, err := l.deps.Computer(l.cfg.ComputerLevel, seed)
	if err != nil {
		return &race.Error{Code: race.CodeInternal, Message: "the computer player could not be made", Err: fmt.Errorf("lobby: computer: %w", err)}
	}
	who := s.Player()
	l.mu.Lock()
	q := l.queuedBy[who.ID]
	l.mu.Unlock()
	if q == nil || q.s != s {
		return race.Errorf(CodeNotQueued, "you are not in a queue")
	}
	ctx, cancel := opCtx()
	left, err := l.deps.Stores.Queue.Leave(ctx, who.ID)
	cancel()
	if err != nil {
		return unavailable(err)
	}
	if !left {
		return race.Errorf(CodeNotQueued, "you are not in a queue: you were just paired")
	}
	l.mu.Lock()
	if l.queuedBy[who.ID] == q {
		delete(l.queuedBy, who.ID)
	}
	l.mu.Unlock()
	return l.start(pairing{
		opts:    race.Options{Variant: q.variant, Grade: q.grade, Unrated: true},
		via:     ViaComputer,
		players: []PlayerRef{{ID: who.ID, Name: who.Name}, {Name: "computer", Computer: true}},
		dests:   []dest{{s: s}, {}},
		bot:     race.Computer{Player: bot, Level: l.cfg.ComputerLevel, Seed: seed, Pace: l.cfg.ComputerPace},
	})
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
