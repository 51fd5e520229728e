package web_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"sirtommy/lobby"
	"sirtommy/race"
)

// arenaPlayer is one of TestArenaOfTwelve's players.
type arenaPlayer struct {
	c    *client
	w    welcome
	read int // c.all up to here has been looked at
	// races are their races, opponents the players of them, in order;
	// sheet the points the model gives each race, streak its wins in a
	// row.
	races     []string
	opponents []string
	sheet     []int
	marks     string // the sheet as the arena writes it
	streak    int
}

// TestArenaOfTwelve runs an arena of 12 players over real websockets on
// a fake clock: ten join before the start and two late, one pauses while
// waiting and comes back, one pauses while racing and is out of the pool
// after that race; races end in wins either way and in draws; the time
// runs out with races under way, which finish and count. Every pairing
// is checked (never the same opponent twice in a row, nobody paired
// while paused or racing), and every player's points and sheet against
// a model of the rules (win 2, draw 1, loss 0, doubled after two wins in
// a row until a race is not won), as are the podium and the refusals.
func TestArenaOfTwelve(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	start := e.clock.Now().Add(time.Minute).Truncate(time.Second)
	// Five minutes, each race's limit too: the last round's races, made
	// a few minutes before the end, finish after it, in their time.
	spec := lobby.ArenaSpec{Name: "Test arena", Variant: "classic", TimeLimit: 5 * time.Minute, Duration: 5 * time.Minute}
	a, err := e.lobby.MakeArena("test-arena", spec, start)
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]*arenaPlayer, 12)
	byID := map[string]*arenaPlayer{}
	for i := range ps {
		c := e.dial()
		ps[i] = &arenaPlayer{c: c, w: c.hello("p" + strconv.Itoa(i))}
		byID[ps[i].w.Player] = ps[i]
	}
	join := func(p *arenaPlayer) lobby.ArenaView {
		t.Helper()
		p.c.send(map[string]any{"type": "arena-join", "arena": a.ID, "id": "aj"})
		m := p.c.until(func(m msg) bool { return m.ID == "aj" })
		if m.Type != "arena" {
			t.Fatalf("%s joins: %s", p.w.Name, m.raw)
		}
		return decode[struct{ Arena lobby.ArenaView }](t, m).Arena
	}
	for _, p := range ps[:10] {
		if v := join(p); v.Status != lobby.ArenaSoon || v.You == nil || v.You.State != lobby.EntryWaiting {
			t.Fatalf("%s joined %+v", p.w.Name, v)
		}
	}
	ps[0].c.expectError(map[string]any{"type": "arena-join", "arena": a.ID, "id": "again"}, lobby.CodeInArena)
	ps[0].c.expectError(map[string]any{"type": "arena-join", "arena": "nope", "id": "x"}, lobby.CodeNoSuchArena)
	ps[10].c.expectError(map[string]any{"type": "arena-pause", "arena": a.ID, "id": "x"}, lobby.CodeNotInArena)

	for e.clock.Now().Before(start) {
		e.clock.Advance(time.Second)
	}

	// view reads the arena as a watcher sees it now (the reply comes
	// after every message sent to the connection before it).
	tag := 0
	view := func(p *arenaPlayer) lobby.ArenaView {
		t.Helper()
		tag++
		id := "v" + strconv.Itoa(tag)
		p.c.send(map[string]any{"type": "arena-watch", "arena": a.ID, "id": id})
		return decode[struct{ Arena lobby.ArenaView }](t, p.c.until(func(m msg) bool { return m.ID == id })).Arena
	}
	// settled waits until no player is racing: every race's end counted.
	settled := func() lobby.ArenaView {
		t.Helper()
		deadline := time.Now().Add(safetyTimeout)
		for {
			v := view(ps[0])
			if v.Racing == 0 {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("players still racing: %+v", v.Standings)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	outcomes := map[bool]int{} // races won, and drawn
	paused := map[string]bool{}
	racedLast := map[string]string{}
	rounds := 0
	// round pairs the pool (a heartbeat), plays every race it made with
	// outcome, and, unless the time runs out first (overAt), waits until
	// they are counted. It returns the players who raced.
	round := func(outcome func(i int) int, during func()) []*arenaPlayer {
		t.Helper()
		rounds++
		e.clock.Advance(time.Second) // the heartbeat pairs
		var paired []*arenaPlayer
		for _, p := range ps {
			view(p) // every message sent before is read
			for _, m := range p.c.all[p.read:] {
				if m.Type == "matched" {
					paired = append(paired, p)
				}
			}
		}
		type pair struct {
			p    [2]*arenaPlayer
			race string
		}
		var pairs []pair
		seen := map[string]bool{}
		for _, p := range paired {
			var mt struct {
				Race, Via, Arena string
				Seat             int
				Opponent         lobby.PlayerRef
			}
			for _, m := range p.c.all[p.read:] {
				if m.Type == "matched" {
					mt = decode[struct {
						Race, Via, Arena string
						Seat             int
						Opponent         lobby.PlayerRef
					}](t, m)
				}
			}
			p.read = len(p.c.all)
			if mt.Via != "arena" || mt.Arena != a.ID {
				t.Fatalf("%s matched %+v", p.w.Name, mt)
			}
			if paused[p.w.Player] {
				t.Fatalf("round %d: %s paired while paused", rounds, p.w.Name)
			}
			if racedLast[p.w.Player] == mt.Opponent.ID {
				t.Fatalf("round %d: %s paired with %s again", rounds, p.w.Name, mt.Opponent.Name)
			}
			p.c.send(map[string]any{"type": "join", "race": mt.Race, "id": "j" + strconv.Itoa(rounds)})
			j := p.c.until(func(m msg) bool { return m.Type == "joined" || m.Type == "error" })
			if j.Type != "joined" || *j.Seat != mt.Seat {
				t.Fatalf("%s joins %s: %s", p.w.Name, mt.Race, j.raw)
			}
			p.c.seat = mt.Seat
			if !seen[mt.Race] {
				seen[mt.Race] = true
				o := byID[mt.Opponent.ID]
				pr := pair{race: mt.Race}
				pr.p[mt.Seat], pr.p[1-mt.Seat] = p, o
				pairs = append(pairs, pr)
			}
		}
		if 2*len(pairs) != len(paired) {
			t.Fatalf("round %d: %d paired in %d races", rounds, len(paired), len(pairs))
		}
		// In the countdown, the first race's seat 0 goes berserk (half
		// their time, a point more for a win), but in the rounds whose
		// clock runs on.
		berserk := len(pairs) > 0 && during == nil
		if berserk {
			b := pairs[0].p[0]
			b.c.send(map[string]any{"type": "berserk", "id": "b"})
			if m := b.c.until(func(m msg) bool { return m.ID == "b" }); m.Type != "berserked" {
				t.Fatalf("%s berserk: %s", b.w.Name, m.raw)
			}
		}
		e.clock.Advance(race.DefaultCountdown)
		for _, pr := range pairs {
			for _, p := range pr.p {
				p.c.untilState(race.Running)
				if during != nil {
					// A first move each, before the clock moves on: a
					// race with a player who never moved is aborted.
					p.c.playBlind(*lastRunning(p.c).You, 1)
				}
			}
		}
		if berserk && rounds == 1 {
			late := pairs[0].p[1]
			late.c.expectError(map[string]any{"type": "berserk", "id": "late"}, race.CodeBerserkLate)
		}
		if during != nil {
			during()
		}
		for i, pr := range pairs {
			// The loser (both, for a draw) resigns; the winner plays on
			// until they have more cards.
			intended := outcome(i) // 0 or 1: that seat wins; 2: a draw
			for s, p := range pr.p {
				if s != intended {
					p.c.send(map[string]any{"type": "resign", "id": "r" + strconv.Itoa(rounds)})
					p.c.until(func(m msg) bool { return m.ID == "r"+strconv.Itoa(rounds) })
				}
			}
			if intended < 2 {
				w := pr.p[intended]
				w.c.playBlind(*lastView(w.c), 200)
			}
			var res *race.Result
			for _, p := range pr.p {
				res = p.c.result()
			}
			winner := 2 // as it ended: after a first move each, a resignation may not be a draw
			if res.Winner != nil {
				winner = *res.Winner
			}
			if during == nil && winner != intended {
				t.Fatalf("race %s: %s by %s, want seat %d (2: a draw)", pr.race, res.Outcome, res.Reason, intended)
			}
			outcomes[winner == 2]++
			// The model: each player's points.
			for s, p := range pr.p {
				o := pr.p[1-s]
				p.opponents = append(p.opponents, o.w.Player)
				p.races = append(p.races, pr.race)
				racedLast[p.w.Player] = o.w.Player
				pts := 0
				switch {
				case winner == s:
					pts = 2
				case winner == 2:
					pts = 1
				}
				mark := ""
				if p.streak >= 2 {
					pts, mark = pts*2, "!"
				}
				if berserk && i == 0 && s == 0 && winner == 0 {
					pts++ // a win with berserk
				}
				p.marks += strconv.Itoa(pts) + mark
				if winner == s {
					p.streak++
				} else {
					p.streak = 0
				}
				p.sheet = append(p.sheet, pts)
			}
		}
		for _, p := range ps {
			// The next round's race is read from here: the helpers that
			// look for a result or a view look through all a client got.
			p.c.all, p.read = nil, 0
		}
		return paired
	}
	check := func(v lobby.ArenaView) {
		t.Helper()
		if len(v.Standings) != v.Players {
			t.Fatalf("%d standings of %d players", len(v.Standings), v.Players)
		}
		for i, st := range v.Standings {
			p := byID[st.Player]
			want := 0
			for _, pts := range p.sheet {
				want += pts
			}
			if st.Points != want || st.Sheet != p.marks || st.Races != len(p.sheet) || st.Fire != (p.streak >= 2) {
				t.Errorf("%s: %d points, sheet %q in %d races, on fire %v; the model: %d, %q, %v", st.Name, st.Points, st.Sheet, st.Races, st.Fire, want, p.marks, p.streak >= 2)
			}
			if i > 0 && v.Standings[i-1].Points < st.Points {
				t.Errorf("standings out of order: %+v", v.Standings)
			}
		}
	}

	// Round 1: ten at 0 points; seat 0 wins, seat 1 wins, a draw, in turn.
	if got := round(func(i int) int { return i % 3 }, nil); len(got) != 10 {
		t.Fatalf("round 1 paired %d of 10", len(got))
	}
	check(settled())
	// p3 pauses while waiting; the two late ones join.
	ps[3].c.send(map[string]any{"type": "arena-pause", "arena": a.ID, "id": "pause"})
	ps[3].c.until(func(m msg) bool { return m.ID == "pause" })
	paused[ps[3].w.Player] = true
	join(ps[10])
	join(ps[11])
	round(func(i int) int { return i % 2 }, nil)
	check(settled())
	// p3 comes back; p5 pauses during the next race if it races.
	join(ps[3])
	delete(paused, ps[3].w.Player)
	var pausedRacing *arenaPlayer
	got := round(func(int) int { return 0 }, func() {
		for _, p := range []*arenaPlayer{ps[5], ps[6], ps[7]} {
			if v := view(p); v.You != nil && v.You.State == lobby.EntryRacing {
				p.c.send(map[string]any{"type": "arena-pause", "arena": a.ID, "id": "pause"})
				p.c.until(func(m msg) bool { return m.ID == "pause" })
				pausedRacing = p
				return
			}
		}
	})
	if pausedRacing == nil || len(got) < 10 {
		t.Fatalf("round 3: paired %d, paused while racing %v", len(got), pausedRacing)
	}
	check(settled())
	paused[pausedRacing.w.Player] = true
	if v := view(pausedRacing); v.You.State != lobby.EntryPaused {
		t.Fatalf("%s paused while racing is %s after the race", pausedRacing.w.Name, v.You.State)
	}
	for r := 0; r < 3; r++ {
		round(func(i int) int { return (i + r) % 3 }, nil)
		check(settled())
	}
	// The time runs out while a round's races are under way: they finish
	// and count, and nobody is paired after.
	var finishing lobby.ArenaView
	round(func(i int) int { return i % 2 }, func() {
		e.clock.Advance(a.EndAt.Sub(e.clock.Now()))
		finishing = view(ps[0])
	})
	if finishing.Status != lobby.ArenaFinishing || finishing.Racing == 0 {
		t.Fatalf("at the end with races under way: %s, %d racing", finishing.Status, finishing.Racing)
	}
	final := settled()
	check(final)
	e.clock.Advance(time.Second)
	for _, p := range ps {
		view(p)
		for _, m := range p.c.all[p.read:] {
			if m.Type == "matched" {
				t.Fatalf("%s paired after the end: %s", p.w.Name, m.raw)
			}
		}
	}
	final = view(ps[0])
	if final.Status != lobby.ArenaOver || len(final.Podium) != 3 || final.Podium[0] != final.Standings[0] {
		t.Fatalf("over: %s, podium %+v", final.Status, final.Podium)
	}
	ps[0].c.expectError(map[string]any{"type": "arena-join", "arena": a.ID, "id": "late"}, lobby.CodeArenaOver)
	// Nobody met the same opponent twice in a row.
	for _, p := range ps {
		for i := 1; i < len(p.opponents); i++ {
			if p.opponents[i] == p.opponents[i-1] {
				t.Errorf("%s raced %s twice in a row", p.w.Name, byID[p.opponents[i]].w.Name)
			}
		}
	}
	// After the end, each player's races, to replay: the model's races,
	// opponents and points, in order; every race once in the arena's.
	type results struct {
		Results []lobby.ArenaResult `json:"results"`
	}
	for _, p := range ps {
		var got results
		if st := e.get("/api/arenas/"+a.ID+"/results?player="+p.w.Player, &got); st != http.StatusOK || len(got.Results) != len(p.races) {
			t.Fatalf("%s's results: %d, %d races; the model: %d", p.w.Name, st, len(got.Results), len(p.races))
		}
		for k, r := range got.Results {
			s := slices.Index(r.Players[:], p.w.Player)
			if s < 0 || r.Race != p.races[k] || r.Players[1-s] != p.opponents[k] || r.Scores[s].Points != p.sheet[k] || r.Names[s] != p.w.Name {
				t.Errorf("%s's race %d: %+v; the model: %s against %s, %d points", p.w.Name, k, r, p.races[k], byID[p.opponents[k]].w.Name, p.sheet[k])
			}
		}
	}
	var all results
	if st := e.get("/api/arenas/"+a.ID+"/results", &all); st != http.StatusOK || len(all.Results) != final.Played {
		t.Errorf("the arena's results: %d, %d races of %d played", st, len(all.Results), final.Played)
	}
	counted := map[string]bool{}
	for _, r := range all.Results {
		if counted[r.Race] {
			t.Errorf("race %s counted twice", r.Race)
		}
		counted[r.Race] = true
	}
	if st := e.get("/api/arenas/nope/results", nil); st != http.StatusNotFound {
		t.Errorf("an unknown arena's results: %d, want 404", st)
	}
	b, _ := json.Marshal(final.Podium)
	t.Logf("%d rounds, %d races; podium %s", rounds, final.Played, b)
	if final.Played < 25 || outcomes[false] < 10 || outcomes[true] < 5 {
		t.Errorf("%d races played, %d won, %d drawn: too few to tell", final.Played, outcomes[false], outcomes[true])
	}
}

// lastRunning is the last "running" state the client got.
func lastRunning(c *client) msg {
	for i := len(c.all) - 1; i >= 0; i-- {
		if m := c.all[i]; m.Type == "state" && m.State == race.Running {
			return m
		}
	}
	c.t.Fatal("no running state")
	return msg{}
}

// TestArenaPausesWhoLeft: a player who joined and left (no session
// anywhere) is not paired, and once away from the pool for 30 s of
// heartbeats is paused, so that the leaderboard and the pool say so;
// their points stay, and joining again puts them back.
func TestArenaPausesWhoLeft(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	start := e.clock.Now().Add(time.Minute).Truncate(time.Second)
	spec := lobby.ArenaSpec{Name: "Test arena", Variant: "classic", TimeLimit: 5 * time.Minute, Duration: 30 * time.Minute}
	a, err := e.lobby.MakeArena("test-arena", spec, start)
	if err != nil {
		t.Fatal(err)
	}
	ann, bob, cat, dan := e.dial(), e.dial(), e.dial(), e.dial()
	wa := ann.hello("ann")
	bob.hello("bob")
	cat.hello("cat")
	dan.hello("dan")
	for _, c := range []*client{ann, bob, cat} {
		c.send(map[string]any{"type": "arena-join", "arena": a.ID, "id": "aj"})
		if m := c.until(func(m msg) bool { return m.ID == "aj" }); m.Type != "arena" {
			t.Fatalf("join: %s", m.raw)
		}
	}
	tag := 0
	annState := func() lobby.EntryState {
		t.Helper()
		tag++
		id := "v" + strconv.Itoa(tag)
		dan.send(map[string]any{"type": "arena-watch", "arena": a.ID, "id": id})
		v := decode[struct{ Arena lobby.ArenaView }](t, dan.until(func(m msg) bool { return m.ID == id })).Arena
		for _, st := range v.Standings {
			if st.Player == wa.Player {
				return st.State
			}
		}
		t.Fatalf("ann is not on the leaderboard: %+v", v.Standings)
		return ""
	}
	ann.ws.Close()
	for e.clock.Now().Before(start) {
		e.clock.Advance(time.Second)
	}
	e.clock.Advance(time.Second) // the first pairing: bob and cat, not ann
	for _, c := range []*client{bob, cat} {
		if m := decode[matched](t, c.untilType("matched")); m.Via != "arena" || m.Opponent.ID == wa.Player {
			t.Fatalf("paired %+v", m)
		}
	}
	for range 20 {
		e.clock.Advance(time.Second)
	}
	if st := annState(); st != lobby.EntryWaiting {
		t.Fatalf("ann, away for 20 s, is %s; want still waiting", st)
	}
	deadline := time.Now().Add(safetyTimeout)
	for annState() != lobby.EntryPaused {
		if time.Now().After(deadline) {
			t.Fatal("ann, away for good, was never paused")
		}
		e.clock.Advance(time.Second)
	}
	back := e.dial()
	back.helloAs(wa)
	back.send(map[string]any{"type": "arena-join", "arena": a.ID, "id": "again"})
	v := decode[struct{ Arena lobby.ArenaView }](t, back.until(func(m msg) bool { return m.ID == "again" })).Arena
	if v.You == nil || v.You.State != lobby.EntryWaiting {
		t.Fatalf("ann back: %+v", v.You)
	}
}
