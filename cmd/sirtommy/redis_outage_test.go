package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"sirtommy/race"
	"sirtommy/race/redisrace/redistest"
)

// outageRaces is how many races play at once through the Redis outage.
const outageRaces = 6

// acked is a move the server acknowledged ("moved").
type acked struct {
	seat, seq int
	move      string
}

// TestRedisOutageUnderLoadLosesNoAcknowledgedMove plays several races
// across two instances at once, every player moving as fast as the server
// answers; Redis is stopped mid-run and started again. Moves sent while it
// is away are refused ("unavailable") and sent again. Once every race is
// over, each race's log (GET /api/races/{id}, read from Redis) holds every
// move a player was told was accepted, and nothing else.
func TestRedisOutageUnderLoadLosesNoAcknowledgedMove(t *testing.T) {
	noLeaks(t)
	rds := redistest.Start(t, redistest.Options{AppendOnly: true})
	pg := fleetDatabase(t)
	a, logA, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	b, logB, _, _ := startServe(t, "--redis", rds.URL(), "--database", pg, "--secret", testSecret, "--drain-timeout", "100ms")
	defer func() {
		if t.Failed() {
			t.Logf("a:\n%s\nb:\n%s", logA, logB)
		}
	}()
	type seated struct {
		id     string
		p      [2]*player
		acks   [2][]acked
		refuse [2]int
		landed [2]int // left unanswered, yet in the log
	}
	races := make([]*seated, outageRaces)
	for i := range races {
		id, p0, p1 := raceAcross(t, a, b)
		races[i] = &seated{id: id, p: [2]*player{p0, p1}}
	}
	var total atomic.Int64
	errs := make(chan error, 2*outageRaces)
	var wg sync.WaitGroup
	for _, r := range races {
		for s := range 2 {
			wg.Go(func() {
				if err := playOut(r.p[s], &total, func(x acked) { r.acks[s] = append(r.acks[s], x) }, &r.refuse[s], &r.landed[s]); err != nil {
					errs <- fmt.Errorf("race %s seat %d: %w", r.id, s, err)
				}
			})
		}
	}
	// Stop Redis once the races are well under way, and start it again.
	deadline := time.Now().Add(safetyTimeout)
	for total.Load() < 8*outageRaces && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	before := total.Load()
	rds.Stop() // Redis serves on until it has shut down
	down := total.Load()
	time.Sleep(time.Second)
	during := total.Load() - down
	rds.StartAgain()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	refused, landed := 0, 0
	for _, r := range races {
		refused += r.refuse[0] + r.refuse[1]
		landed += r.landed[0] + r.landed[1]
		info := raceInfo(t, a, r.id)
		if !info.State.Over() {
			t.Fatalf("race %s is %s after both games ended", r.id, info.State)
		}
		logged := make(map[acked]bool, len(info.Moves))
		for _, m := range info.Moves {
			logged[acked{m.Seat, m.Seq, m.Move}] = true
		}
		n := 0
		for s := range 2 {
			n += len(r.acks[s])
			for _, x := range r.acks[s] {
				if !logged[x] {
					t.Errorf("race %s: acknowledged move %+v is not in the log", r.id, x)
				}
			}
		}
		if extra := r.landed[0] + r.landed[1]; n+extra != len(info.Moves) {
			t.Errorf("race %s: %d moves acknowledged and %d unanswered but landed, %d in the log", r.id, n, extra, len(info.Moves))
		}
	}
	if before == 0 || total.Load() <= down+during {
		t.Errorf("moves acknowledged: %d before the outage, %d in all: the outage was not in mid-run", before, total.Load())
	}
	t.Logf("%d moves acknowledged: %d before Redis was asked to stop, %d while it shut down, %d while it was down (in flight as it went); %d refusals, %d unanswered moves that reached the log",
		total.Load(), before, down-before, during, refused, landed)
}

// answerTimeout bounds the wait for a move's answer: a request forwarded
// to an owner that is gone may take three tries of the forward and the
// takeover (2 s each) before it is refused.
const answerTimeout = 20 * time.Second

// maxTries bounds the refusals of one move (50 ms apart): Redis is away
// for a second, and back well within this.
const maxTries = 200

// playOut plays p's game to its end (or the race's) with the first legal
// move, sending a refused move again after a pause, and reports each
// acknowledgement. It runs on its own goroutine, so it returns errors
// instead of failing.
func playOut(p *player, total *atomic.Int64, ack func(acked), refused, landed *int) error {
	tries := 0 // refusals of the move now being sent
	for !p.game.Status().Over() {
		if tries > maxTries {
			return fmt.Errorf("move refused %d times in a row", tries)
		}
		m := p.game.AppendMoves(nil)[0]
		// One id per move, kept when it is sent again: a move stored although
		// its answer was lost is then answered as stored.
		if tries == 0 {
			p.n++
		}
		id := fmt.Sprint("m", p.n)
		if err := p.c.ws.WriteJSON(map[string]any{"v": 1, "type": "move", "id": id, "move": m.String()}); err != nil {
			return err
		}
		r, err := p.c.wait(answerTimeout, func(x msg) bool {
			p.keepToken(x)
			return x.str("id") == id || x.str("code") == "rate-limited"
		})
		if err != nil {
			// No answer: the request or its reply was lost while the race
			// changed instances, as a client's may be; it reads its game
			// again to learn whether the move counted.
			r = msg{"type": "error", "code": "no-answer"}
		}
		if r.str("type") == "moved" {
			tries = 0
			if err := p.game.Apply(m); err != nil {
				return err
			}
			seq, _ := r["seq"].(float64)
			ack(acked{p.seat, int(seq), r.str("move")})
			total.Add(1)
			continue
		}
		switch r.str("code") {
		case "unavailable": // Redis away, or loading its file after the restart
			tries++
			*refused++
		case "rate-limited":
		case "race-over": // the other player won
			return nil
		case "no-answer":
			// The request or its answer was lost while the race changed
			// instances: read the seat's state again, as a browser does on
			// "state", to learn whether the move counted.
			moves, over, err := resync(p)
			switch {
			case err != nil:
				return fmt.Errorf("after %s to %s: %w", r.str("code"), id, err)
			case over:
				return nil
			case moves == p.game.Plies()+1:
				if err := p.game.Apply(m); err != nil {
					return err
				}
				*landed++
			case moves != p.game.Plies():
				return fmt.Errorf("move %s: %s, and the server's game has %d moves, ours %d", m, r.str("code"), moves, p.game.Plies())
			}
			tries = 0
			continue
		default:
			return fmt.Errorf("move %s refused: %v", m, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// keepToken keeps the seat's token from a joined: every resume spends
// the token it was given, whether this client sent it or a server that
// attached the connection again (a takeover, a pub/sub lapse) did; the
// browser keeps it the same way.
func (p *player) keepToken(x msg) {
	if x.str("type") == "joined" {
		p.token = x.str("token")
	}
}

// resync opens a new connection for p, resumes its seat and returns the
// number of moves the server's game of the seat has, or over when the
// race has ended.
func resync(p *player) (moves int, over bool, err error) {
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+p.c.ws.RemoteAddr().String()+"/ws", nil)
	if err != nil {
		return 0, false, err
	}
	p.c.t.Cleanup(func() { _ = ws.Close() })
	_ = p.c.ws.Close()
	c := &client{t: p.c.t, ws: ws, in: make(chan msg, 1024)}
	go func() {
		defer close(c.in)
		for {
			var m msg
			if err := ws.ReadJSON(&m); err != nil {
				return
			}
			c.in <- m
		}
	}()
	p.c = c
	var st msg
	for try := 0; ; try++ {
		if err := ws.WriteJSON(map[string]any{"v": 1, "type": "resume", "race": p.race, "token": p.token}); err != nil {
			return 0, false, err
		}
		st, err = c.wait(answerTimeout, func(x msg) bool {
			p.keepToken(x)
			return x.str("type") == "state" && x["you"] != nil || x.str("type") == "error"
		})
		if err != nil {
			return 0, false, err
		}
		if st.str("code") != "unavailable" || try == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond) // Redis still loading, or the race changing hands
	}
	if st.str("code") == "race-over" {
		return 0, true, nil
	}
	you, _ := st["you"].(map[string]any)
	n, ok := you["moves"].(float64)
	if !ok {
		return 0, false, fmt.Errorf("resume: %v", st)
	}
	return int(n), false, nil
}

// wait is next for other goroutines than the test's: it returns an error.
func (c *client) wait(d time.Duration, ok func(msg) bool) (msg, error) {
	timeout := time.After(d)
	for {
		select {
		case m, open := <-c.in:
			if !open {
				return nil, fmt.Errorf("connection closed")
			}
			if ok(m) {
				return m, nil
			}
		case <-timeout:
			return nil, fmt.Errorf("no answer in %v", d)
		}
	}
}

// raceInfo reads a race's public record, with its moves once it is over.
func raceInfo(t *testing.T, base, id string) race.Info {
	t.Helper()
	var info race.Info
	deadline := time.Now().Add(safetyTimeout)
	for {
		res, err := http.Get(base + "/api/races/" + id)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(res.Body).Decode(&info)
		res.Body.Close()
		if err != nil {
			t.Fatalf("race %s: %d %v", id, res.StatusCode, err)
		}
		// The referee decides once both games are over; give it a moment.
		if info.State.Over() || time.Now().After(deadline) {
			return info
		}
		time.Sleep(20 * time.Millisecond)
	}
}
