package loadtest

// Arena runs (Config.Arena): the players join one arena instead of quick
// play, and the arena pairs them again whenever their race ends; the
// spectators watch the arena's leaderboard instead of races. What is
// measured is what a player of the arena waits for: from the end of
// their race (its final state) to their next pairing (matched), and how
// often each watcher is sent the leaderboard.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// ArenaReport is what an arena run measured.
type ArenaReport struct {
	Arena string `json:"arena"` // the arena's id
	// Players joined it; Watchers followed it without joining.
	Players  int `json:"players"`
	Watchers int `json:"watchers"`
	// FirstPairing is from a player's arena-join to their first matched;
	// Repairing from the final state of a race of theirs to their next
	// matched (the arena's pairing delay). Only ends after the warm-up
	// are in Repairing.
	FirstPairing Quantiles `json:"joinToFirstPairing"`
	Repairing    Quantiles `json:"raceEndToNextPairing"`
	// Updates counts the leaderboard messages the arena pushed to its
	// players and watchers (replies to their own requests left out), and
	// Gaps the time between two of them to one connection.
	Updates int64     `json:"updates"`
	Gaps    Quantiles `json:"gapBetweenUpdates"`
	// ShortestGapMs is the shortest of Gaps: under a second, some
	// connection was sent the leaderboard twice within a second.
	ShortestGapMs float64 `json:"shortestGapMs"`
	// UpdatesPerSecond is Updates over the connections following the
	// arena and the run's length: at most 1 when batched by the second.
	UpdatesPerSecond float64 `json:"updatesPerConnectionSecond"`
}

// arenaRun is the shared state of an arena run's measures.
type arenaRun struct {
	id                  string
	first, repair, gaps *latency
	updates             atomic.Int64
}

func newArenaRun(id string) *arenaRun {
	return &arenaRun{id: id, first: newLatency(), repair: newLatency(), gaps: newLatency()}
}

// report is the arena's part of the run's report.
func (a *arenaRun) report(players, watchers int, elapsed time.Duration) *ArenaReport {
	rep := &ArenaReport{Arena: a.id, Players: players, Watchers: watchers,
		FirstPairing: a.first.quantiles(), Repairing: a.repair.quantiles(),
		Updates: a.updates.Load(), Gaps: a.gaps.quantiles()}
	a.gaps.mu.Lock()
	if a.gaps.h.TotalCount() > 0 {
		rep.ShortestGapMs = float64(a.gaps.h.Min()) / 1000
	}
	a.gaps.mu.Unlock()
	if n := players + watchers; n > 0 && elapsed > 0 {
		rep.UpdatesPerSecond = float64(rep.Updates) / float64(n) / elapsed.Seconds()
	}
	return rep
}

// arenaFollower times one connection's leaderboard updates.
type arenaFollower struct {
	last time.Time
}

// pushed counts an arena message the server pushed (not a reply).
func (f *arenaFollower) pushed(a *arenaRun) {
	now := time.Now()
	a.updates.Add(1)
	if !f.last.IsZero() {
		a.gaps.record(now.Sub(f.last))
	}
	f.last = now
}

// arenaReplyHead starts an arena message that answers a request (it has
// an id); a pushed update has none.
var arenaReplyHead = []byte(`{"v":1,"type":"arena","id":`)

// isArenaPush reports whether b is an arena update the server pushed.
func isArenaPush(b []byte) bool { return !bytes.HasPrefix(b, arenaReplyHead) }

// resolveTimeout bounds finding the arena before the run (a variable
// for the tests of an arena never listed).
var resolveTimeout = 10 * time.Second

// resolveArena finds the arena named (by id or by name) among those the
// lobby lists at url, preferring one running to one starting soon,
// waiting up to resolveTimeout for it to be listed.
func resolveArena(ctx context.Context, url, named string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	// A websocket of its own, read here (the run's connections have a
	// reader goroutine that keeps only what the players use).
	d := websocket.Dialer{HandshakeTimeout: dialTimeout}
	ws, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return "", fmt.Errorf("dial %s: %w", url, err)
	}
	defer ws.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = ws.SetWriteDeadline(dl)
		_ = ws.SetReadDeadline(dl)
	}
	for _, m := range []outMsg{{V: 1, Type: "hello", ID: "h"}, {V: 1, Type: "lobby", ID: "l"}} {
		if err := ws.WriteJSON(m); err != nil {
			return "", fmt.Errorf("write: %w", err)
		}
	}
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return "", fmt.Errorf("no arena running or soon is named %q (%w)", named, err)
		}
		if peekType(b) != "lobby" {
			continue
		}
		var lobby struct {
			Arenas []struct {
				ID     string `json:"id"`
				Name   string `json:"name"`
				Status string `json:"status"`
			} `json:"arenas"`
		}
		if err := json.Unmarshal(b, &lobby); err != nil {
			return "", fmt.Errorf("arena %q: reading the lobby: %w", named, err)
		}
		found := ""
		for _, a := range lobby.Arenas {
			if (a.ID == named || a.Name == named) && (a.Status == "running" || (a.Status == "soon" && found == "")) {
				found = a.ID
			}
		}
		if found != "" {
			return found, nil
		}
		// Not listed yet: a server just started makes its scheduled
		// arenas at its first heartbeat, and sends the lobby again.
	}
}

// arenaWatcher follows the arena's leaderboard until the run ends.
func (r *run) arenaWatcher(ctx context.Context, sem chan struct{}) {
	c := r.dialNext(ctx, sem)
	if c == nil {
		return
	}
	defer c.close()
	if err := c.send(outMsg{V: 1, Type: "hello", ID: "h"}); err != nil {
		r.errs.add("client-write")
		return
	}
	if err := c.send(outMsg{V: 1, Type: "arena-watch", ID: "aw", Arena: r.arena.id}); err != nil {
		r.errs.add("client-write")
		return
	}
	var f arenaFollower
	for {
		select {
		case m, ok := <-c.inbox:
			if !ok {
				r.connEnded(ctx, c)
				return
			}
			switch m.Type {
			case "arena":
				if m.pushed {
					f.pushed(r.arena)
				}
			case "error":
				r.errs.add(m.Code)
			}
		case <-ctx.Done():
			return
		}
	}
}
