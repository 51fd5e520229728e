package lobby

import (
	"bytes"
	"context"
	"sort"

	"sirtommy/race"
)

// Presence counts the players now.
func (l *Lobby) Presence() Presence {
	return l.snapshot().Presence
}

// Snapshot is the lobby as a whole now, as the "lobby" message shows it.
func (l *Lobby) Snapshot() *LobbyEvent { return l.snapshot() }

// snapshot is the lobby as a whole: presence and challenges as they are,
// the races as the last heartbeat saw them.
func (l *Lobby) snapshot() *LobbyEvent {
	ev := &LobbyEvent{Challenges: []ChallengeInfo{}, clock: l.deps.Clock}
	ctx, cancel := opCtx()
	open, err := l.deps.Stores.Challenges.List(ctx)
	cancel()
	if err != nil {
		l.log.Warn().Err(err).Msg("challenges not listed")
	}
	ev.Challenges = append(ev.Challenges, open...)
	l.mu.Lock()
	ev.Presence = l.ownPresenceLocked()
	ev.Presence.add(l.others)
	ev.Races = l.listed // replaced, never changed in place
	ev.Mass = l.masses  // likewise
	ev.Arenas = l.arenaList
	l.mu.Unlock()
	ev.Daily = l.dailyBriefs()
	sort.Slice(ev.Challenges, func(i, j int) bool {
		a, b := ev.Challenges[i], ev.Challenges[j]
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return a.ID < b.ID
	})
	return ev
}

// ownPresenceLocked counts this instance's players.
func (l *Lobby) ownPresenceLocked() Presence {
	p := Presence{Online: len(l.online), Queued: len(l.queuedBy), Queues: make(map[string]int), Racing: l.racing}
	for _, q := range l.queuedBy {
		p.Queues[q.variant]++
	}
	return p
}

// sharePresence stores this instance's counts for the others and reads
// theirs (outside the lobby's lock: it waits for the store). On an error
// the last counts read stay.
func (l *Lobby) sharePresence() {
	if l.deps.Stores.Presence == nil {
		return
	}
	l.mu.Lock()
	own := l.ownPresenceLocked()
	l.mu.Unlock()
	ctx, cancel := opCtx()
	defer cancel()
	others, err := l.deps.Stores.Presence.Share(ctx, own)
	if err != nil {
		l.log.Warn().Err(err).Msg("presence not shared")
		return
	}
	l.mu.Lock()
	l.others = others
	l.mu.Unlock()
}

// refreshRaces reads the live races (outside the lobby's lock: each read
// takes the race's) for the list and the count of players racing, and
// adds the other instances' lists (Stores.Races). It runs on the
// heartbeat, so that the lobby's own changes never wait for it.
func (l *Lobby) refreshRaces() {
	var live []ListedRace
	racing := 0
	for _, rc := range l.deps.Races.Races() {
		if rc.State().Over() {
			continue
		}
		in, err := rc.Info(context.Background())
		if err != nil {
			continue
		}
		for _, p := range in.Players {
			if p.Taken && !p.Computer {
				racing++
			}
		}
		if !in.Public || in.State == race.Waiting {
			continue
		}
		sum := RaceSummary{Race: in.Race, Variant: in.Variant, State: in.State, Spectators: in.Spectators, StartAt: in.StartAt,
			Players: make([]PlayerRef, len(in.Players)), Scores: make([]int, len(in.Players))}
		for s, p := range in.Players {
			sum.Players[s] = PlayerRef{Name: p.Name, Computer: p.Computer}
			sum.Scores[s] = in.Counts[s].Score
		}
		live = append(live, ListedRace{sum, in.CreatedAt})
	}
	newestFirst := func(live []ListedRace) {
		sort.Slice(live, func(i, j int) bool {
			if !live[i].Created.Equal(live[j].Created) {
				return live[i].Created.After(live[j].Created)
			}
			return live[i].Race < live[j].Race
		})
	}
	if sh := l.deps.Stores.Races; sh != nil {
		// Only this instance's newest are shared: the list shows the
		// newest of all, which are among them.
		newestFirst(live)
		ctx, cancel := opCtx()
		others, err := sh.ShareRaces(ctx, live[:min(len(live), l.cfg.MaxListed)])
		cancel()
		if err != nil {
			l.log.Warn().Err(err).Msg("race list not shared")
		}
		seen := make(map[string]bool, len(live))
		for _, r := range live {
			seen[r.Race] = true
		}
		for _, r := range others { // a race taken over may be listed twice for a beat
			if !seen[r.Race] {
				seen[r.Race] = true
				live = append(live, r)
			}
		}
	}
	newestFirst(live)
	races := make([]RaceSummary, 0, min(len(live), l.cfg.MaxListed))
	for i := 0; i < len(live) && i < l.cfg.MaxListed; i++ {
		races = append(races, live[i].RaceSummary)
	}
	l.mu.Lock()
	l.listed, l.racing = races, racing
	l.mu.Unlock()
}

// Publish sends every session the lobby as it is now, unless it is the
// same as last sent.
func (l *Lobby) Publish() {
	ev := l.snapshot()
	b, err := ev.body() // without the time, which is written as each connection sends

	if err != nil {
		l.log.Error().Err(err).Msg("lobby snapshot")
		return
	}
	l.mu.Lock()
	if bytes.Equal(b, l.last) {
		l.mu.Unlock()
		return
	}
	l.last = b
	ev.encoded = b // every connection sends these bytes
	subs := make([]race.Subscriber, 0, len(l.sessions))
	for s := range l.sessions {
		subs = append(subs, s.sub)
	}
	l.mu.Unlock()
	for _, sub := range subs {
		sub.Deliver(ev)
	}
}
