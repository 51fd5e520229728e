package main

import (
	"bufio"
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/lobby/sqlstore/sqltest"
	"sirtommy/race/racetest"
	"sirtommy/race/redisrace/redistest"
)

// The fault tests of issue 29 ("Nothing a player builds is lost") on a
// fleet: two instances sharing one Redis (live state) and one PostgreSQL
// database (durable data), with real servers.

// TestFleetFlushallLosesNothing: rated quick-play races between players
// on two instances are played to their end, archived and recorded; then
// Redis loses everything (FLUSHALL). The leaderboard, the profiles with
// their games and rating charts, and the replays answer as before, on
// both instances and on a third one started after the flush (which has
// nothing in memory: its replays come from the archive). One more rated
// race across the two instances then works and is recorded once.
func TestFleetFlushallLosesNothing(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	args := []string{"--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms"}
	a, logA, _, _ := startServe(t, args...)
	b, logB, _, _ := startServe(t, args...)
	var logC *syncBuffer
	defer func() {
		if t.Failed() {
			t.Logf("a %s:\n%s\nb %s:\n%s", a, logA, b, logB)
			if logC != nil {
				t.Logf("c:\n%s", logC)
			}
		}
	}()

	ann, cat := hello(t, a, "ann"), hello(t, a, "cat")
	bob, dan := hello(t, b, "bob"), hello(t, b, "dan")
	// Each pair has a player on each instance; the first queues first.
	var played []string
	races := map[string]playedRace{}
	for _, pair := range [][2]*lobbyClient{{bob, ann}, {cat, dan}, {dan, ann}} {
		id, pr := quickRace(t, pair[0], pair[1])
		played, races[id] = append(played, id), pr
	}
	players := []*lobbyClient{ann, bob, cat, dan}
	games := map[string]int{ann.id: 2, bob.id: 1, cat.id: 1, dan.id: 2}
	for _, base := range []string{a, b} {
		archived(t, base)
	}
	waitStandings(t, a, games)

	paths := []string{"/api/leaderboard/classic"}
	for _, p := range players {
		paths = append(paths, "/api/players/"+p.id, "/api/players/"+p.id+"/games", "/api/players/"+p.id+"/ratings/classic")
	}
	for _, id := range played {
		paths = append(paths, "/api/races/"+id)
	}
	want := fetchAnswers(t, a, paths)
	checkRecorded(t, want, played, games)
	sameAnswers(t, "b before the flush", fetchAnswers(t, b, paths), want, paths)

	if err := rds.Client(t).FlushAll(t.Context()).Err(); err != nil {
		t.Fatalf("FLUSHALL: %v", err)
	}
	sameAnswers(t, "a after the flush", fetchAnswers(t, a, paths), want, paths)
	sameAnswers(t, "b after the flush", fetchAnswers(t, b, paths), want, paths)
	var c string
	c, logC, _, _ = startServe(t, args...)
	sameAnswers(t, "c, started after the flush", fetchAnswers(t, c, paths), want, paths)
	if t.Failed() {
		return
	}

	// The fleet goes on: a rated race across a and b, recorded once.
	id, pr := quickRace(t, bob, ann)
	played, races[id] = append(played, id), pr
	games[ann.id]++
	games[bob.id]++
	for _, base := range []string{a, b} {
		archived(t, base)
	}
	waitStandings(t, c, games)
	checkRecorded(t, fetchAnswers(t, c, paths[:1]), played, games)
	db := openSQL(t, pg)
	waitRows(t, db, played)
	checkRows(t, db, races, games)
}

// playedRace is a rated classic race played to its end: its players by
// seat and its deal, as its result revealed it.
type playedRace struct {
	seats [2]string
	deal  string
}

// dealOf is the deal revealed by a race's result (JSON).
func dealOf(result string) (string, error) {
	var res struct{ Deal string }
	if err := json.Unmarshal([]byte(result), &res); err != nil || res.Deal == "" {
		return "", fmt.Errorf("no deal in the result %s (%v)", result, err)
	}
	return res.Deal, nil
}

// quickRace queues first, then second, for a rated classic race, plays
// both games to their end and returns the race's id and what was played
// once both players have its result, the same.
func quickRace(t *testing.T, first, second *lobbyClient) (string, playedRace) {
	t.Helper()
	first.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	second.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	m1, m2 := first.takeSeat("quick"), second.takeSeat("quick")
	if m1.str("race") != m2.str("race") || first.seat == second.seat {
		t.Fatalf("matched %v / %v", m1, m2)
	}
	first.playBlind()
	second.playBlind()
	r1, r2 := first.result(), second.result()
	if r1 != r2 {
		t.Fatalf("race %s: results differ:\n%s\n%s", first.race, r1, r2)
	}
	var pr playedRace
	pr.seats[first.seat], pr.seats[second.seat] = first.id, second.id
	var err error
	if pr.deal, err = dealOf(r1); err != nil {
		t.Fatalf("race %s: %v", first.race, err)
	}
	return first.race, pr
}

// waitStandings polls the profiles on base until each player's classic
// standing counts the games given (the lobby records a race's end off the
// race's path).
func waitStandings(t *testing.T, base string, games map[string]int) {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for {
		got := make(map[string]int, len(games))
		for id := range games {
			var p struct {
				Standings []struct {
					Variant string
					Games   int
				}
			}
			getJSON(t, base+"/api/players/"+id, &p)
			for _, s := range p.Standings {
				if s.Variant == "classic" {
					got[id] = s.Games
				}
			}
		}
		if reflect.DeepEqual(got, games) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the races' ends were not recorded: games %v, want %v", base, got, games)
		}
		time.Sleep(50 * time.Millisecond) // a poll: the lobby records ends in the background
	}
}

// checkRecorded checks the leaderboard among answers: each player's
// games as given, and the games of all of them twice the races played
// (two players each): every race counted, and once.
func checkRecorded(t *testing.T, got answers, played []string, games map[string]int) {
	t.Helper()
	b, _ := json.Marshal(got["/api/leaderboard/classic"])
	var board struct {
		Standings []struct {
			Player string
			Games  int
		}
	}
	if err := json.Unmarshal(b, &board); err != nil {
		t.Fatalf("leaderboard %s: %v", b, err)
	}
	counted, total := map[string]int{}, 0
	for _, s := range board.Standings {
		counted[s.Player] = s.Games
		total += s.Games
	}
	if !reflect.DeepEqual(counted, games) || total != 2*len(played) {
		t.Errorf("the leaderboard counts %v (%d games), want %v (%d races played)", counted, total, games, len(played))
	}
}

// sameAnswers reports every path whose answer in got differs from want.
func sameAnswers(t *testing.T, who string, got, want answers, paths []string) {
	t.Helper()
	for _, p := range paths {
		if !reflect.DeepEqual(got[p], want[p]) {
			g, _ := json.Marshal(got[p])
			w, _ := json.Marshal(want[p])
			t.Errorf("%s: GET %s answers\n%s\nwhere it answered\n%s", who, p, g, w)
		}
	}
}

// outage is how long PostgreSQL is away in TestFleetPostgresOutage: at
// least this long, and until the races meant to end during the outage
// have ended.
const outage = 10 * time.Second

// outageLoadRaces is how many rated races TestFleetPostgresOutage plays at
// once (twice as many lobby clients): enough for a queue of races to end
// on each instance while PostgreSQL is away and another after, and few
// enough that on a busy 2-core machine, under -race, the whole test takes
// about half a minute, ten seconds of it the outage.
const outageLoadRaces = 50

// Moves each player makes before PostgreSQL stops, and (in the races
// that end after it is back) while it is away. A game lasts 52 moves or
// more (each card of the stock is placed once), so no race ends on
// either count.
const (
	movesBefore = 10
	movesDuring = 10
)

// TestFleetPostgresOutage: two instances share one Redis and one
// PostgreSQL database, reached through a TCP proxy of the test's that can
// cut PostgreSQL off. Many rated quick-play races run at once, the two
// players of each on different instances. PostgreSQL is stopped for
// (at least) ten seconds mid-play: half the races end while it is away,
// the others play on through it and end once it is back. Moves are
// acknowledged throughout (live state is in Redis), /readyz answers 503
// on both instances while it is away and 200 after. Once everything is
// archived and recorded, the database holds each race exactly once:
// archived, recorded as a game with two players and two rating changes;
// each player's standing counts their one race, and they have seen its
// deal and kept their game on it as their best.
func TestFleetPostgresOutage(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{})
	pg := fleetDatabase(t)
	proxy := startPGProxy(t, pg)
	args := []string{"--redis", rds.URL(), "--database", proxy.url, "--secret", testSecret, "--drain-timeout", "100ms"}
	a, logA, _, _ := startServe(t, args...)
	b, logB, _, _ := startServe(t, args...)
	defer func() {
		if t.Failed() {
			t.Logf("a %s:\n%s\nb %s:\n%s", a, logA, b, logB)
		}
	}()

	g := newOutageGates(outageLoadRaces)
	defer g.abortAll()
	races := make([]*outageRace, outageLoadRaces)
	ending := 0 // the races meant to end during the outage
	var wg sync.WaitGroup
	for i := range races {
		// One player on each instance; which queues first alternates.
		pa, pb := hello(t, a, fmt.Sprint("a", i)), hello(t, b, fmt.Sprint("b", i))
		first, second := pb, pa
		if i%2 == 1 {
			first, second = pa, pb
		}
		first.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
		second.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
		m1, m2 := first.takeSeat("quick"), second.takeSeat("quick")
		if m1.str("race") != m2.str("race") || first.seat == second.seat {
			t.Fatalf("matched %v / %v", m1, m2)
		}
		// Half the races end during the outage, of either order of queuing.
		r := &outageRace{id: first.race, during: i%4 < 2}
		if r.during {
			ending++
		}
		r.seats[first.seat].c, r.seats[second.seat].c = first, second
		races[i] = r
		wg.Go(func() { r.err = r.play(g) })
	}

	g.ready.Wait()
	proxy.stop()
	stoppedAt := time.Now()
	g.down.Store(true)
	for _, base := range []string{a, b} {
		if code := readyz(t, base); code != http.StatusServiceUnavailable {
			t.Errorf("%s: /readyz with PostgreSQL away: %d, want 503", base, code)
		}
	}
	close(g.stopped)
	g.outage.Wait()
	time.Sleep(time.Until(stoppedAt.Add(outage)))
	for _, base := range []string{a, b} {
		if code := readyz(t, base); code != http.StatusServiceUnavailable {
			t.Errorf("%s: /readyz after %v without PostgreSQL: %d, want 503", base, time.Since(stoppedAt).Round(time.Millisecond), code)
		}
	}
	// None of the races that ended can be archived yet: they wait.
	qa, qb := archiveQueue(t, a), archiveQueue(t, b)
	if qa+qb != ending {
		t.Errorf("%d+%d races wait for the archive on a and b while PostgreSQL is away, want the %d that ended", qa, qb, ending)
	}
	g.down.Store(false)
	proxy.resume()
	away := time.Since(stoppedAt)
	close(g.resumed)
	for _, base := range []string{a, b} {
		deadline := time.Now().Add(safetyTimeout)
		for readyz(t, base) != http.StatusOK {
			if time.Now().After(deadline) {
				t.Fatalf("%s: /readyz not 200 with PostgreSQL back", base)
			}
			time.Sleep(50 * time.Millisecond) // a poll: the next ping finds it back
		}
	}
	wg.Wait()
	endedAway, refused := 0, 0
	for _, r := range races {
		if r.err != nil {
			t.Errorf("race %s: %v", r.id, r.err)
		}
		if r.endedAway {
			endedAway++
		}
		refused += r.seats[0].refused + r.seats[1].refused
	}
	if t.Failed() {
		return
	}
	t.Logf("%d races; PostgreSQL away for %v; %d races ended while it was away (waiting for the archive then: %d on a, %d on b), %d after; %d moves acknowledged while it was away; %d moves refused as unavailable and sent again",
		len(races), away.Round(time.Millisecond), endedAway, qa, qb, len(races)-endedAway, g.movesAway.Load(), refused)
	if endedAway != ending {
		t.Errorf("%d races ended while PostgreSQL was away, want the %d meant to", endedAway, ending)
	}
	if want := int64(2 * movesDuring * (len(races) - ending)); g.movesAway.Load() < want {
		t.Errorf("%d moves acknowledged while PostgreSQL was away, want %d or more", g.movesAway.Load(), want)
	}

	for _, base := range []string{a, b} {
		archived(t, base)
	}
	db := openSQL(t, pg)
	ids := make([]string, len(races))
	played := make(map[string]playedRace, len(races))
	games := make(map[string]int, 2*len(races))
	for i, r := range races {
		ids[i] = r.id
		played[r.id] = playedRace{seats: [2]string{r.seats[0].c.id, r.seats[1].c.id}, deal: r.deal}
		games[r.seats[0].c.id]++
		games[r.seats[1].c.id]++
	}
	waitRows(t, db, ids)
	checkRows(t, db, played, games)
}

// archiveQueue reads base's sirtommy_archive_queue: the finished races it
// has yet to archive.
func archiveQueue(t *testing.T, base string) int {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "sirtommy_archive_queue "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("sirtommy_archive_queue %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("%s/metrics has no sirtommy_archive_queue (%v)", base, sc.Err())
	return 0
}

// outageGates are the steps of TestFleetPostgresOutage that the races'
// goroutines and the test's go through together.
type outageGates struct {
	ready   sync.WaitGroup // each race: both players made movesBefore moves
	outage  sync.WaitGroup // each race: what it does while PostgreSQL is away is done
	stopped chan struct{}  // closed once PostgreSQL is away
	resumed chan struct{}  // closed once it is back
	abort   chan struct{}  // closed when the test ends: the goroutines give up
	once    sync.Once
	// down is set while PostgreSQL is away; movesAway counts the moves
	// acknowledged then.
	down      atomic.Bool
	movesAway atomic.Int64
}

func newOutageGates(n int) *outageGates {
	g := &outageGates{stopped: make(chan struct{}), resumed: make(chan struct{}), abort: make(chan struct{})}
	g.ready.Add(n)
	g.outage.Add(n)
	return g
}

// abortAll makes every goroutine give up (a failed test leaves some
// waiting on a gate).
func (g *outageGates) abortAll() { g.once.Do(func() { close(g.abort) }) }

// wait waits for gate, or fails when the test ends first.
func (g *outageGates) wait(gate <-chan struct{}) error {
	select {
	case <-gate:
		return nil
	case <-g.abort:
		return errors.New("the test ended")
	}
}

// outageRace is one race of TestFleetPostgresOutage, played on a
// goroutine of its own, which reports errors (never t.Fatal).
type outageRace struct {
	id        string
	seats     [2]blindSeat
	during    bool // meant to end while PostgreSQL is away
	endedAway bool // both players had its result before PostgreSQL came back
	deal      string
	err       error
}

// play plays the race in steps with the others: movesBefore moves each;
// once PostgreSQL is away, to the end (a race meant to end during the
// outage) or movesDuring more moves each, then the rest once it is back.
func (r *outageRace) play(g *outageGates) error {
	ready, outage := sync.OnceFunc(g.ready.Done), sync.OnceFunc(g.outage.Done)
	defer ready()
	defer outage()
	for i := range r.seats {
		if err := r.seats[i].start(g); err != nil {
			return err
		}
	}
	if err := r.playUntil(g, movesBefore); err != nil {
		return err
	}
	ready()
	if err := g.wait(g.stopped); err != nil {
		return err
	}
	if !r.during {
		if err := r.playUntil(g, movesBefore+movesDuring); err != nil {
			return err
		}
		outage()
		if err := g.wait(g.resumed); err != nil {
			return err
		}
	}
	if err := r.playUntil(g, -1); err != nil {
		return err
	}
	var results [2]string
	for i := range r.seats {
		res, err := r.seats[i].result(g)
		if err != nil {
			return err
		}
		results[i] = res
	}
	r.endedAway = g.down.Load()
	if results[0] != results[1] {
		return fmt.Errorf("results differ:\n%s\n%s", results[0], results[1])
	}
	var err error
	r.deal, err = dealOf(results[0])
	return err
}

// playUntil plays the two games in turn, a move each, until each has
// made n moves (n < 0: until both are over).
func (r *outageRace) playUntil(g *outageGates, n int) error {
	for {
		moved := false
		for i := range r.seats {
			s := &r.seats[i]
			if s.over || n >= 0 && s.v.Moves >= n {
				continue
			}
			if err := s.step(g); err != nil {
				return fmt.Errorf("seat %d: %w", i, err)
			}
			moved = true
		}
		if !moved {
			return nil
		}
	}
}

// blindSeat is a lobby client's game, played as lobbyClient.playBlind
// plays it, from a goroutine other than the test's: it returns errors.
type blindSeat struct {
	c       *lobbyClient
	v       engine.View
	over    bool // the game is over, or the race
	refused int  // moves refused as unavailable, and sent again
	// history is the seat's last exchanges, oldest first, for the error
	// of a move refused as not fitting the board the client was sent.
	history []string
}

// historyLen is how many exchanges a blindSeat keeps.
const historyLen = 12

// note keeps one exchange in the seat's history.
func (s *blindSeat) note(format string, args ...any) {
	if len(s.history) == historyLen {
		s.history = slices.Delete(s.history, 0, 1)
	}
	s.history = append(s.history, fmt.Sprintf(format, args...))
}

// maxRefusals bounds how often one move may be refused as unavailable
// (100 ms apart) before the game gives up: moves do not need PostgreSQL,
// so only a busy machine refuses them, and not for long.
const maxRefusals = 100

// start waits for the race to run and reads the seat's board.
func (s *blindSeat) start(g *outageGates) error {
	st, err := s.c.await(g, "running", func(m msg) bool {
		return m.str("type") == "state" && m.str("state") == "running" && m.str("race") == s.c.race
	})
	if err != nil {
		return err
	}
	return s.read(st["you"])
}

// read decodes a board sent by the server.
func (s *blindSeat) read(v any) error {
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, &s.v); err != nil {
		return fmt.Errorf("board %s: %w", b, err)
	}
	s.over = s.v.Status != engine.Playing
	return nil
}

// step plays one move and waits until it is acknowledged, sending it
// again while the server refuses it as unavailable or over budget.
func (s *blindSeat) step(g *outageGates) error {
	mv, ok := racetest.FromView(&s.v)
	if !ok {
		return fmt.Errorf("no move from %+v", s.v)
	}
	// Sent again with the same id, as the protocol asks: a move refused as
	// unavailable may have been stored, and only then is it answered as
	// stored rather than refused as no longer fitting.
	s.c.n++
	id := fmt.Sprint("m", s.c.n)
	for tries := 0; ; {
		if err := s.c.ws.WriteJSON(map[string]any{"v": 1, "type": "move", "id": id, "move": mv.String()}); err != nil {
			return fmt.Errorf("move %s: %w", mv, err)
		}
		s.note("%s %s sent (%d moves acknowledged)", id, mv, s.v.Moves)
		r, err := s.c.await(g, "the answer to "+id, func(x msg) bool { return x.str("id") == id || x.str("code") == "rate-limited" })
		if err != nil {
			return err
		}
		seq, _ := r["seq"].(float64)
		s.note("got %s %s seq %v", r.str("type"), r.str("code"), seq)
		switch code := r.str("code"); {
		case r.str("type") == "moved":
			if g.down.Load() {
				g.movesAway.Add(1)
			}
			// The move's number in the seat's log follows the moves the
			// client was told of: the server played nothing else.
			if want := s.v.Moves + 1; int(seq) != want {
				return fmt.Errorf("move %s (%s) acknowledged as the seat's move %v, want %d; the seat's last exchanges: %s", id, mv, seq, want, strings.Join(s.history, "; "))
			}
			return s.read(r["view"])
		case code == "race-over": // the other player won
			s.over = true
			return nil
		case code == "unavailable" && tries < maxRefusals:
			tries++
			s.refused++
		case code != "rate-limited":
			return fmt.Errorf("move %s: %v; the seat's last exchanges: %s", mv, r, strings.Join(s.history, "; "))
		}
		time.Sleep(100 * time.Millisecond) // over budget, or a busy machine: again
	}
}

// result waits for the race's result.
func (s *blindSeat) result(g *outageGates) (string, error) {
	m, err := s.c.await(g, "the result", func(m msg) bool {
		return m.str("type") == "state" && m["result"] != nil && m.str("race") == s.c.race
	})
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(m["result"])
	return string(b), nil
}

// await is lobbyClient.next for goroutines other than the test's: it
// returns an error instead of failing, and gives up when the test ends.
func (c *lobbyClient) await(g *outageGates, what string, ok func(msg) bool) (msg, error) {
	for i, m := range c.backlog {
		if ok(m) {
			c.backlog = slices.Delete(c.backlog, i, i+1)
			return m, nil
		}
	}
	timeout := time.NewTimer(safetyTimeout)
	defer timeout.Stop()
	for {
		select {
		case m, open := <-c.in:
			if !open {
				return nil, fmt.Errorf("%s: connection closed waiting for %s", c.id, what)
			}
			if ok(m) {
				return m, nil
			}
			c.backlog = append(c.backlog, m)
		case <-timeout.C:
			return nil, fmt.Errorf("%s: no %s in %v", c.id, what, safetyTimeout)
		case <-g.abort:
			return nil, fmt.Errorf("%s: the test ended waiting for %s", c.id, what)
		}
	}
}

// openSQL opens the PostgreSQL database at url for the test to read.
func openSQL(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// waitRows polls the database until every race of ids is archived with
// its end followed up and recorded as a game.
func waitRows(t *testing.T, db *sql.DB, ids []string) {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for {
		followed := queryStrings(t, db, "SELECT id FROM races WHERE followed")
		recorded := queryStrings(t, db, "SELECT race FROM games")
		var missing []string
		for _, id := range ids {
			if !slices.Contains(followed, id) || !slices.Contains(recorded, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d races not archived and recorded: %v", len(missing), missing)
		}
		time.Sleep(100 * time.Millisecond) // a poll: the archive and the lobby catch up in the background
	}
}

// queryStrings runs q, which selects one text column.
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// checkRows checks the durable store of a fleet, read with SQL, against
// the rated classic races played (by id) and each player's number of
// races: every race is archived once and recorded once, as a rated game
// with a row for each player and a rating change for each, and no other;
// each standing counts the player's races; each player has seen the
// deal of each of their races, and has their game on it as their best.
func checkRows(t *testing.T, db *sql.DB, played map[string]playedRace, games map[string]int) {
	t.Helper()
	var ids []string
	for id := range played {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	sameSet := func(what string, got []string) {
		t.Helper()
		slices.Sort(got)
		if !slices.Equal(got, ids) {
			t.Errorf("%s: %d rows %v, want each of the %d races played once %v", what, len(got), got, len(ids), ids)
		}
	}
	sameSet("races (the archive)", queryStrings(t, db, "SELECT id FROM races"))
	sameSet("games", queryStrings(t, db, "SELECT race FROM games"))
	sameSet("rated games", queryStrings(t, db, "SELECT race FROM games WHERE rated AND variant = 'classic'"))

	seats := map[string][2]string{}
	rows, err := db.QueryContext(t.Context(), "SELECT race, seat, player FROM game_players")
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for rows.Next() {
		var race, player string
		var seat int
		if err := rows.Scan(&race, &seat, &player); err != nil {
			t.Fatal(err)
		}
		n[race]++
		if seat == 0 || seat == 1 {
			s := seats[race]
			s[seat] = player
			seats[race] = s
		}
	}
	rows.Close()
	for _, id := range ids {
		if got, want := seats[id], played[id].seats; n[id] != 2 || got != want {
			t.Errorf("game_players of race %s: %d rows, seats %v, want 2 rows, seats %v", id, n[id], got, want)
		}
		delete(n, id)
	}
	if len(n) > 0 {
		t.Errorf("game_players of races not played: %v", n)
	}

	changes := map[string][]string{}
	rows, err = db.QueryContext(t.Context(), "SELECT race, player FROM rating_changes")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var race, player string
		if err := rows.Scan(&race, &player); err != nil {
			t.Fatal(err)
		}
		changes[race] = append(changes[race], player)
	}
	rows.Close()
	for _, id := range ids {
		got, want := changes[id], played[id].seats
		slices.Sort(got)
		w := []string{want[0], want[1]}
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("rating_changes of race %s: %v, want one for each of %v", id, got, w)
		}
		delete(changes, id)
	}
	if len(changes) > 0 {
		t.Errorf("rating_changes of races not played: %v", changes)
	}

	counted := map[string]int{}
	rows, err = db.QueryContext(t.Context(), "SELECT player, games FROM standings WHERE variant = 'classic'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var player string
		var n int
		if err := rows.Scan(&player, &n); err != nil {
			t.Fatal(err)
		}
		counted[player] = n
	}
	rows.Close()
	if !reflect.DeepEqual(counted, games) {
		t.Errorf("standings count games %v, want each player's races %v", counted, games)
	}

	// What follows a race's end beside its rating: its players have seen
	// its deal (no ghost of it for them), and each one's game on it is
	// their best there.
	seen := map[[2]string]bool{}
	for _, row := range queryStrings(t, db, "SELECT player || ' ' || deal FROM seen_deals WHERE variant = 'classic'") {
		player, deal, _ := strings.Cut(row, " ")
		seen[[2]string{player, deal}] = true
	}
	best := map[[2]string]string{}
	rows, err = db.QueryContext(t.Context(), "SELECT player, deal, best FROM best_games WHERE variant = 'classic'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var player, deal, b string
		if err := rows.Scan(&player, &deal, &b); err != nil {
			t.Fatal(err)
		}
		var g struct{ Race string }
		if err := json.Unmarshal([]byte(b), &g); err != nil {
			t.Fatalf("best game %s: %v", b, err)
		}
		best[[2]string{player, deal}] = g.Race
	}
	rows.Close()
	for _, id := range ids {
		pr := played[id]
		for _, p := range pr.seats {
			key := [2]string{p, pr.deal}
			if !seen[key] {
				t.Errorf("race %s: %s has not seen its deal %s", id, p, pr.deal)
			}
			if best[key] != id {
				t.Errorf("race %s: %s's best game on its deal %s is %q", id, p, pr.deal, best[key])
			}
		}
	}
}

// pgProxy is a TCP proxy to the tests' PostgreSQL server that can cut it
// off: stop closes every connection and refuses new ones (closes them at
// once) until resume. A server behind it sees the proxy as its client,
// from its Unix socket when the server is reached through one (so that
// the local trust authentication applies).
type pgProxy struct {
	url     string // the database's URL through the proxy
	ln      net.Listener
	network string // of the server: "unix" or "tcp"
	addr    string

	mu      sync.Mutex
	stopped bool
	conns   map[net.Conn]struct{} // both ends of every open connection
	wg      sync.WaitGroup
}

// startPGProxy starts a proxy to the database at dbURL (a URL of
// fleetDatabase's) and closes it at cleanup.
func startPGProxy(t *testing.T, dbURL string) *pgProxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	p := &pgProxy{conns: make(map[net.Conn]struct{})}
	port := cmp.Or(u.Port(), q.Get("port"), "5432")
	switch host := cmp.Or(q.Get("host"), u.Hostname()); {
	case host == "":
		// No host: the local server's socket, as sqltest's default names it.
		d, _ := url.Parse(sqltest.DefaultServer)
		p.network, p.addr = "unix", path.Join(d.Query().Get("host"), ".s.PGSQL."+port)
	case host[0] == '/':
		p.network, p.addr = "unix", path.Join(host, ".s.PGSQL."+port)
	default:
		p.network, p.addr = "tcp", net.JoinHostPort(host, port)
	}
	p.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	q.Del("host")
	q.Del("port")
	q.Set("sslmode", "disable")
	through := url.URL{Scheme: "postgres", User: u.User, Host: p.ln.Addr().String(), Path: u.Path, RawQuery: q.Encode()}
	p.url = through.String()
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// accept forwards each connection until the listener closes.
func (p *pgProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			_ = c.Close()
			continue
		}
		s, err := net.Dial(p.network, p.addr)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.stopped { // stopped while dialling
			p.mu.Unlock()
			_, _ = c.Close(), s.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(c, s) })
		p.wg.Go(func() { p.pipe(s, c) })
	}
}

// pipe copies from one end to the other; then it closes both.
func (p *pgProxy) pipe(from, to net.Conn) {
	_, _ = io.Copy(to, from)
	p.mu.Lock()
	delete(p.conns, from)
	delete(p.conns, to)
	p.mu.Unlock()
	_, _ = from.Close(), to.Close()
}

// stop cuts PostgreSQL off: every connection is closed by the time it
// returns, and new ones are closed at once.
func (p *pgProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// resume lets new connections through again.
func (p *pgProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = false
}

// close stops the proxy and waits for its goroutines.
func (p *pgProxy) close() {
	_ = p.ln.Close()
	p.stop()
	p.wg.Wait()
}
