package web_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby"
	"sirtommy/race"
	"sirtommy/race/racetest"
	"sirtommy/web"
)

// observation is one message a connection other than a racer's own seat
// received, with how many moves each seat had sent when it was read: an
// upper bound on each racer's progress when the server wrote it.
type observation struct {
	who  string
	raw  []byte
	sent [2]int
}

// leakRun plays one race and records everything its onlookers get.
type leakRun struct {
	t    *testing.T
	e    *lobbyEnv
	race string
	// seats are the racers' connections by seat.
	seats [2]*client
	// sent is each seat's moves as sent, in notation.
	sent [2][]string
	// onlookers are the connections that are not a racer's seat: a
	// watch as each racer (their lobby identity), an anonymous watch and
	// a lobby connection; over marks those that saw the end.
	onlookers []*client
	names     []string
	over      []bool
	obs       []observation
	pings     int
	// live is set when the spectators' feed has no delay: then, after each
	// drain, the anonymous spectator's boards must be the racers' boards
	// with exactly the cards not every racer still playing has turned
	// face down (pictures, checked at the end, once the deal is known).
	live     bool
	boards   [2]*engine.View
	pictures []picture
}

// picture is what the anonymous spectator showed after a drain.
type picture struct {
	boards [2]engine.View
	sent   [2]int
}

func (r *leakRun) record(who string, raw []byte) {
	r.obs = append(r.obs, observation{who: who, raw: raw, sent: [2]int{len(r.sent[0]), len(r.sent[1])}})
}

// drain reads every onlooker's messages up to a pong, and polls the API.
func (r *leakRun) drain() {
	r.t.Helper()
	for i, c := range r.onlookers {
		r.pings++
		id := "p" + strconv.Itoa(r.pings)
		c.send(map[string]any{"type": "ping", "id": id})
		for {
			m := c.read()
			if m.Type == "pong" && m.ID == id {
				break
			}
			if r.over[i] {
				continue // the race is over: everything may be shown
			}
			if m.Type == "state" && m.State.Over() {
				r.over[i] = true
				continue
			}
			r.record(r.names[i], m.raw)
			if r.names[i] != "anonymous watch" {
				continue
			}
			switch {
			case m.Type == "state" && m.Boards != nil:
				r.boards = [2]*engine.View{&m.Boards[0], &m.Boards[1]}
			case m.Type == "board":
				r.boards[*m.Seat] = m.View
			}
		}
	}
	if r.live && !r.over[2] && r.boards[0] != nil && r.boards[1] != nil {
		r.pictures = append(r.pictures, picture{boards: [2]engine.View{*r.boards[0], *r.boards[1]}, sent: [2]int{len(r.sent[0]), len(r.sent[1])}})
	}
	for _, c := range r.seats { // the racers read what came, the end included
		r.pings++
		id := "p" + strconv.Itoa(r.pings)
		c.send(map[string]any{"type": "ping", "id": id})
		c.until(func(m msg) bool { return m.Type == "pong" && m.ID == id })
	}
	for _, path := range []string{"/api/races/" + r.race, "/api/lobby"} {
		res, err := http.Get(r.e.ts.URL + path)
		if err != nil {
			r.t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			r.t.Fatal(err)
		}
		if !strings.Contains(string(b), `"state":"finished"`) && !strings.Contains(string(b), `"state":"aborted"`) {
			r.record("GET "+path, b)
		}
	}
}

// move plays seat's next move (from its own view); false when its game or
// the race is over.
func (r *leakRun) move(seat int) bool {
	r.t.Helper()
	c := r.seats[seat]
	v := lastView(c)
	if c.finished() || v == nil || v.Status != engine.Playing {
		return false
	}
	mv, ok := racetest.FromView(v)
	if !ok {
		r.t.Fatalf("no move from view %+v", v)
	}
	r.sent[seat] = append(r.sent[seat], mv.String())
	id := "m" + strconv.Itoa(len(r.sent[seat]))
	c.send(map[string]any{"type": "move", "move": mv.String(), "id": id})
	m := c.until(func(m msg) bool { return m.Type == "error" || (m.Type == "moved" && m.ID == id) })
	if m.Type == "error" {
		if m.Code == race.CodeRaceOver {
			r.sent[seat] = r.sent[seat][:len(r.sent[seat])-1]
			return false
		}
		r.t.Fatalf("move %s refused: %s", mv, m.raw)
	}
	return true
}

func (r *leakRun) finished() bool { return r.seats[0].finished() || r.seats[1].finished() }

// play runs the race to its end: the fast seat plays fastPer moves a
// second, the other one move every slowEvery seconds.
func (r *leakRun) play(fast, fastPer, slowEvery int) {
	r.t.Helper()
	for step := 0; !r.finished(); step++ {
		for range fastPer {
			r.move(fast)
		}
		if step%slowEvery == 0 {
			r.move(1 - fast)
		}
		r.e.clock.Advance(time.Second)
		r.drain()
		if step > 2000 {
			r.t.Fatal("the race does not end")
		}
	}
	r.e.clock.Advance(time.Minute) // whatever the delay still held
	r.drain()
}

// check replays the race from its revealed deal and fails on any card an
// onlooker got before every racer still playing had turned it.
func (r *leakRun) check(variant string) {
	r.t.Helper()
	res := r.seats[0].result()
	deal, err := strconv.ParseUint(res.Deal, 10, 64)
	if err != nil {
		r.t.Fatalf("result deal %q", res.Deal)
	}
	sight, err := racetest.NewSight(variant, deal)
	if err != nil {
		r.t.Fatal(err)
	}
	boards, hidden, ahead, reveals := 0, 0, 0, 0
	for _, o := range r.obs {
		games, err := sight.Replay([][]string{r.sent[0][:o.sent[0]], r.sent[1][:o.sent[1]]})
		if err != nil {
			r.t.Fatal(err)
		}
		if err := sight.Check(o.raw, games); err != nil {
			r.t.Fatalf("%s got %v", o.who, err)
		}
		if strings.Contains(string(o.raw), `"type":"board"`) {
			boards++
		}
		if strings.Contains(string(o.raw), `"??"`) {
			hidden++
		}
		if strings.Contains(string(o.raw), `"reveal":true`) {
			reveals++
		}
		if d := games[0].StockLeft() - games[1].StockLeft(); d > 5 || d < -5 {
			ahead++
		}
	}
	// Live, the spectator sees both boards as they are, with only the
	// cards it may not see face down.
	for _, p := range r.pictures {
		games, err := sight.Replay([][]string{r.sent[0][:p.sent[0]], r.sent[1][:p.sent[1]]})
		if err != nil {
			r.t.Fatal(err)
		}
		for s := range 2 {
			if got, want := fmt.Sprint(p.boards[s]), fmt.Sprint(sight.Mask(games[s].View(), games)); got != want {
				r.t.Fatalf("after %v moves the spectator shows seat %d as\n%s\nwant\n%s", p.sent, s, got, want)
			}
		}
	}
	if r.live && len(r.pictures) == 0 {
		r.t.Fatal("no picture of the live boards checked")
	}
	// The run must have tested something: boards seen while one racer
	// was far ahead of the other.
	if boards == 0 || ahead == 0 || hidden == 0 || reveals == 0 {
		r.t.Fatalf("nothing tested: %d boards, %d observations with a racer far ahead, %d with hidden cards, %d reveals",
			boards, ahead, hidden, reveals)
	}
	r.t.Logf("%d observations, %d boards, %d with hidden cards, %d reveals", len(r.obs), boards, hidden, reveals)
}

// newLeakRun seats a and b (whose welcomes are wa, wb) in race id from
// their matched messages, opens the onlookers and runs the countdown.
func newLeakRun(t *testing.T, e *lobbyEnv, a, b *client, wa, wb welcome) *leakRun {
	t.Helper()
	ma := a.takeSeat()
	b.takeSeat()
	r := &leakRun{t: t, e: e, race: ma.Race}
	r.seats[a.seat], r.seats[b.seat] = a, b
	// Each racer watches their own race on a second connection with
	// their lobby identity; someone anonymous watches; someone sits in
	// the lobby.
	for i, w := range []welcome{wa, wb} {
		c := e.dial()
		c.send(map[string]any{"type": "hello", "token": w.Token, "id": "h"})
		c.untilType("welcome")
		c.send(map[string]any{"type": "watch", "race": ma.Race, "id": "w"})
		c.untilType("watching")
		r.onlookers = append(r.onlookers, c)
		r.names = append(r.names, "racer "+strconv.Itoa(i)+"'s watch")
	}
	anon := e.dial()
	anon.send(map[string]any{"type": "watch", "race": ma.Race, "id": "w"})
	anon.untilType("watching")
	lob := e.dial()
	lob.hello("wes")
	r.onlookers = append(r.onlookers, anon, lob)
	r.names = append(r.names, "anonymous watch", "lobby")
	r.over = make([]bool, len(r.onlookers))
	a.untilState(race.Countdown)
	b.untilState(race.Countdown)
	r.drain()
	e.clock.Advance(race.DefaultCountdown)
	a.untilState(race.Running)
	b.untilState(race.Running)
	return r
}

// TestOnlookersNeverSeeCardsAhead is the information invariant end to
// end: in public (delayed) and private races, with one racer far ahead of
// the other, no connection but a racer's own seat (not their own second
// connection, not an anonymous spectator, not the lobby, not the API) gets
// a card that a racer still playing has not turned.
func TestOnlookersNeverSeeCardsAhead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		public  bool
		delay   time.Duration
		fast    int
		fastPer int
		slow    int
	}{
		{name: "public delayed, seat 0 far ahead", public: true, delay: 5 * time.Second, fast: 0, fastPer: 6, slow: 4},
		{name: "public undelayed, seat 1 far ahead", public: true, delay: 0, fast: 1, fastPer: 5, slow: 3},
		{name: "private, seat 0 far ahead", public: false, fast: 0, fastPer: 6, slow: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newLobbyEnv(t, lobby.Config{SpectatorDelay: tc.delay})
			a, b := e.dial(), e.dial()
			wa, wb := a.hello("ann"), b.hello("bob")
			if tc.public {
				a.send(map[string]any{"type": "queue", "variant": "classic", "id": "q"})
				a.untilType("queued")
				b.send(map[string]any{"type": "queue", "variant": "classic", "id": "q"})
			} else {
				a.send(map[string]any{"type": "invite", "deal": "7", "id": "i"})
				inv := decode[invited](t, a.untilType("invited"))
				b.send(map[string]any{"type": "accept-invite", "code": inv.Code, "id": "a"})
			}
			r := newLeakRun(t, e, a, b, wa, wb)
			r.live = tc.delay == 0
			r.play(tc.fast, tc.fastPer, tc.slow)
			r.check("classic")
		})
	}
}

// stateRank orders a race's states: a spectator's must never go back.
var stateRank = map[race.State]int{race.Waiting: 0, race.Countdown: 1, race.Running: 2, race.Finished: 3, race.Aborted: 3}

// feedMsg is what the feed test reads of a spectator's message.
type feedMsg struct {
	Type   string
	Ver    uint64
	State  race.State
	Seat   int
	Seq    int
	Reveal bool
	Boards *[2]engine.View
}

// checkFeed fails unless the spectator's messages only move forward: a
// version one above the one before on every message of the feed, states
// in order, each seat's board seq never going back.
func checkFeed(t *testing.T, who string, c *client) {
	t.Helper()
	var last uint64
	rank, seqs := -1, [2]int{}
	n := 0
	for _, m := range c.all {
		if m.Type == "watching" || m.Type == "pong" {
			continue
		}
		f := decode[feedMsg](t, m)
		if f.Ver == 0 {
			t.Fatalf("%s: no version on %s", who, m.raw)
		}
		snapshot := f.Type == "state" && n == 0
		switch {
		case snapshot:
		case f.Ver != last+1:
			t.Fatalf("%s: version %d after %d: %s", who, f.Ver, last, m.raw)
		}
		last = f.Ver
		n++
		switch f.Type {
		case "state":
			if f.State.Over() && strings.Contains(string(m.raw), `"??"`) {
				t.Fatalf("%s: the final state still hides cards: %s", who, m.raw)
			}
			if f.Boards == nil {
				t.Fatalf("%s: a state without boards: %s", who, m.raw)
			}
			if r := stateRank[f.State]; r < rank {
				t.Fatalf("%s: state %s after a later one: %s", who, f.State, m.raw)
			} else {
				rank = r
			}
		case "board":
			if f.Seq < seqs[f.Seat] || (f.Seq == seqs[f.Seat] && !f.Reveal) {
				t.Fatalf("%s: seat %d board seq %d after %d: %s", who, f.Seat, f.Seq, seqs[f.Seat], m.raw)
			}
			seqs[f.Seat] = f.Seq
		}
	}
	if n == 0 {
		t.Fatalf("%s got nothing", who)
	}
}

// settle reads c's messages up to a pong.
func settle(c *client, id string) {
	c.send(map[string]any{"type": "ping", "id": id})
	c.until(func(m msg) bool { return m.Type == "pong" && m.ID == id })
}

// TestSpectatorFeedOnlyMovesForward: spectators who come at every phase of
// a race (waiting, countdown, just after the start, after one racer is
// out, over) see versions one by one and states only moving forward,
// with and without a spectator delay; one who asks again (watch again, as
// a client does on a gap) gets a fresh state that the feed continues.
func TestSpectatorFeedOnlyMovesForward(t *testing.T) {
	for _, delay := range []time.Duration{0, 5 * time.Second} {
		t.Run("delay "+delay.String(), func(t *testing.T) {
			e := newEnv(t, func(d *web.Deps) { d.SpectatorDelay = delay })
			id := e.create(`{"public":true}`)
			var watchers []*client
			var names []string
			watch := func(name string) *client {
				w := e.dial()
				w.send(map[string]any{"type": "watch", "race": id, "id": "w"})
				w.untilType("watching")
				watchers, names = append(watchers, w), append(names, name)
				return w
			}
			watch("waiting")
			a, b := e.dial(), e.dial()
			a.join(id, "ann")
			watch("one seat taken")
			b.join(id, "bob")
			a.untilState(race.Countdown)
			watch("countdown")
			e.clock.Advance(race.DefaultCountdown)
			st := a.untilState(race.Running)
			b.untilState(race.Running)
			e.clock.Advance(time.Second)
			again := watch("a second after the start")
			// ann places a few cards on the waste and resigns with no card
			// on the foundations, so that the race goes on for bob.
			v := st.You
			for i := range 3 {
				mv := engine.PlaceMove(v.Turned[0], engine.W(i%4))
				if !a.move(mv, "a"+strconv.Itoa(i)) {
					t.Fatal("race over")
				}
				v = lastView(a)
				e.clock.Advance(time.Second)
			}
			a.send(map[string]any{"type": "resign", "id": "r"})
			a.until(func(m msg) bool { return m.Type == "moved" && m.ID == "r" })
			watch("after ann resigned")
			// The spectator who asks again mid-race.
			settle(again, "s1")
			again.send(map[string]any{"type": "watch", "race": id, "id": "w2"})
			again.untilType("watching")
			e.clock.Advance(time.Second)
			bv := lastView(b)
			for i := 0; !b.finished() && i < 200; i++ {
				mv, ok := racetest.FromView(bv)
				if !ok {
					break
				}
				if !b.move(mv, "b"+strconv.Itoa(i)) {
					break
				}
				bv = lastView(b)
				if i%3 == 0 {
					e.clock.Advance(time.Second)
				}
			}
			if !b.finished() {
				t.Fatal("bob never passed ann")
			}
			watch("over")
			e.clock.Advance(time.Minute)
			for i, w := range watchers {
				settle(w, "end")
				if i == 3 {
					checkResync(t, names[i], w)
				} else {
					checkFeed(t, names[i], w)
				}
				if !w.finished() {
					t.Errorf("%s never saw the end", names[i])
				}
			}
		})
	}
}

// checkResync checks a spectator who watched again: its feed before and
// after the second watch each move forward, and the second state is not
// behind what the first feed had reached.
func checkResync(t *testing.T, who string, c *client) {
	t.Helper()
	cut := -1
	for i, m := range c.all {
		if m.Type == "watching" && m.ID == "w2" {
			cut = i
		}
	}
	if cut < 0 {
		t.Fatalf("%s: no second watching", who)
	}
	all := c.all
	first := &client{t: t, all: all[:cut]}
	second := &client{t: t, all: all[cut:]}
	checkFeed(t, who+" (first watch)", first)
	checkFeed(t, who+" (watching again)", second)
	var lastBefore, snap feedMsg
	rank := 0
	for _, m := range first.all {
		if m.Type != "watching" && m.Type != "pong" {
			lastBefore = decode[feedMsg](t, m)
			if lastBefore.Type == "state" {
				rank = stateRank[lastBefore.State]
			}
		}
	}
	for _, m := range second.all {
		if m.Type == "state" {
			snap = decode[feedMsg](t, m)
			break
		}
	}
	if snap.Ver < lastBefore.Ver || stateRank[snap.State] < rank {
		t.Fatalf("%s: the fresh state (ver %d, %s) is behind the feed (ver %d)", who, snap.Ver, snap.State, lastBefore.Ver)
	}
}
