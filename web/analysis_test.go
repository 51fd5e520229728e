package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/web"
	"sirtommy/web/coach"
)

// analysisBudget is the analyses' budget in these tests: small, so that
// under the race detector on a busy machine they finish quickly (what
// they settle may vary with nothing; the tests accept unknown positions).
var analysisBudget = engine.AnalyzeOptions{Solve: engine.SolveOptions{MaxNodes: 20_000, MaxConflicts: 1_000}, MaxProbes: 8}

type analysisBody struct {
	Race    string        `json:"race"`
	State   string        `json:"state"`
	Percent int           `json:"percent"`
	Games   []*coach.Game `json:"games"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (e *env) analysis(id string) (int, analysisBody) {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + "/api/races/" + id + "/analysis")
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var b analysisBody
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, b
}

// analysisDone asks until the analysis is done (each answer 200 or 202).
func (e *env) analysisDone(id string) analysisBody {
	e.t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a safety net only
	last := -1
	for time.Now().Before(deadline) {
		st, b := e.analysis(id)
		switch st {
		case http.StatusOK:
			if b.State != "done" || b.Percent != 100 {
				e.t.Fatalf("200 with %+v", b)
			}
			return b
		case http.StatusAccepted:
			if b.State != "in-progress" || b.Percent < 0 || b.Percent > 99 || len(b.Games) != 0 {
				e.t.Fatalf("202 with %+v", b)
			}
			if b.Percent < last {
				e.t.Logf("progress went back from %d%% to %d%%", last, b.Percent)
			}
			last = b.Percent
		default:
			e.t.Fatalf("status %d %+v", st, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatal("the analysis did not finish")
	return analysisBody{}
}

// botMoves plays the medium bot through the client for at most n moves
// (or until its game is over) and returns them.
func botMoves(c *client, deal uint64, n int) []engine.Move {
	c.t.Helper()
	g := newGame(deal)
	bot := engine.NewBot(engine.Medium, deal)
	var moves []engine.Move
	for g.Status() == engine.Playing && len(moves) < n {
		v := g.Memory()
		m, ok := bot.Choose(&v, g.Moves())
		if !ok {
			break
		}
		if err := g.Apply(m); err != nil {
			c.t.Fatal(err)
		}
		if !c.move(m, "b"+m.String()) {
			break
		}
		moves = append(moves, m)
	}
	return moves
}

// checkGameAnalysis checks one game's analysis against its game text: the
// line replays to a win from the last winnable position, the letters agree
// with the bounds, and a losing move is the move played there.
func checkGameAnalysis(t *testing.T, text string, a *coach.Game) {
	t.Helper()
	rec, err := engine.ParseRecord(text)
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := engine.Variant(rec.Variant)
	if a.Plies != len(rec.Moves) || len(a.Positions) != a.Plies+1 {
		t.Fatalf("%d plies, %d letters, for %d moves", a.Plies, len(a.Positions), len(rec.Moves))
	}
	for p, l := range a.Positions {
		want := '?'
		if p <= a.LastWinnable {
			want = 'w'
		} else if a.FirstLost >= 0 && p >= a.FirstLost {
			want = 'l'
		}
		if l != want {
			t.Fatalf("position %d is %q, want %q (%+v)", p, l, want, a)
		}
	}
	checkChances(t, rules, rec, a)
	if a.LastWinnable < 0 {
		return
	}
	g := engine.New(rules, rec.Deal)
	for _, m := range rec.Moves[:a.LastWinnable] {
		if err := g.ApplyRecorded(m); err != nil {
			t.Fatal(err)
		}
	}
	if a.Verdict == "won" {
		return
	}
	for i, m := range a.Line {
		if err := g.Apply(m); err != nil {
			t.Fatalf("the winning line from position %d: move %d (%s): %v", a.LastWinnable, i+1, m, err)
		}
	}
	if g.Status() != engine.Won || g.Score() != rules.Deck() {
		t.Fatalf("the winning line from position %d ends %s with %d cards", a.LastWinnable, g.Status(), g.Score())
	}
	if a.Verdict == "lost-at" && (a.LosingMove != rec.Moves[a.LastWinnable].String() || a.WinningMove != a.Line[0].String() || a.LosingMove == a.WinningMove) {
		t.Fatalf("losing move %s, winning move %s, played %s", a.LosingMove, a.WinningMove, rec.Moves[a.LastWinnable])
	}
}

// checkChances checks the expert's chances of an analysis: one at the
// start and at the last winnable and first lost positions where the game
// was still being played there, each what engine.ExpertChance says from
// the player's memory of that position.
func checkChances(t *testing.T, rules *engine.Rules, rec engine.Record, a *coach.Game) {
	t.Helper()
	pos := []engine.Game{engine.New(rules, rec.Deal)}
	for _, m := range rec.Moves {
		g := pos[len(pos)-1]
		if err := g.ApplyRecorded(m); err != nil {
			t.Fatal(err)
		}
		pos = append(pos, g)
	}
	var want []int
	for _, p := range []int{0, a.LastWinnable, a.FirstLost} {
		if p >= 0 && pos[p].Status() == engine.Playing && (len(want) == 0 || want[len(want)-1] < p) {
			want = append(want, p)
		}
	}
	checkCurve(t, pos, a)
	if len(a.Chances) != len(want) {
		t.Fatalf("chances at %+v, want them at %v", a.Chances, want)
	}
	for i, c := range a.Chances {
		g := pos[want[i]]
		v := g.Memory()
		share, move := engine.ExpertChance(&v, g.Moves())
		if c.Ply != want[i] || c.Percent != int(share*100+0.5) || c.Move != move {
			t.Fatalf("chance %+v, want %.2f with %s at %d", c, share, move, want[i])
		}
	}
}

// checkCurve checks an analysis's curve against the game's positions
// pos: at most engine.DefaultCurvePoints points, at 0, curveEvery, … and
// the last position, each what engine.ExpertChance says there (100 at a
// won end).
func checkCurve(t *testing.T, pos []engine.Game, a *coach.Game) {
	t.Helper()
	var want []int
	for p := 0; a.CurveEvery > 0 && p <= a.Plies; p += a.CurveEvery {
		want = append(want, p)
	}
	if len(want) > 0 && want[len(want)-1] != a.Plies {
		want = append(want, a.Plies)
	}
	if len(a.Curve) != len(want) || len(want) == 0 || len(want) > engine.DefaultCurvePoints {
		t.Fatalf("curve %+v every %d, want points at %v", a.Curve, a.CurveEvery, want)
	}
	for i, c := range a.Curve {
		g := pos[want[i]]
		v := g.Memory()
		share, _ := engine.ExpertChance(&v, g.Moves())
		if c.Ply != want[i] || c.Percent < 0 || c.Percent > 100 || c.Percent != int(share*100+0.5) {
			t.Fatalf("curve point %+v, want %.2f at %d", c, share, want[i])
		}
		if g.Status() == engine.Won && c.Percent != 100 {
			t.Fatalf("curve point %+v at a won end", c)
		}
	}
}

func TestAnalysisOfNoSuchRace(t *testing.T) {
	e := newEnv(t, nil)
	status, body := e.analysis("nosuchrace")
	if status != http.StatusNotFound || body.Error == nil || body.Error.Code != string(race.CodeNoSuchRace) {
		t.Fatalf("%d %+v, want 404 %s", status, body, race.CodeNoSuchRace)
	}
}

// TestAnalysisOnceForEveryone: before the end, 409 and no work; after it,
// many askers at once start one analysis per game (and one solve of the
// deal's start, shared with the solution endpoint), and every answer is
// 202 with a percentage or 200 with the same analysis.
func TestAnalysisOnceForEveryone(t *testing.T) {
	e := newEnv(t, func(d *web.Deps) { d.SolveBudget, d.AnalysisBudget = browserSolveBudget, analysisBudget })
	const deal = 3
	id, a, b := e.startRace(deal)
	botMoves(a, deal, 200) // to its end: stuck
	botMoves(b, deal, 12)

	status, body := e.analysis(id)
	if status != http.StatusConflict || body.Error == nil || body.Error.Code != string(race.CodeNotOver) || !strings.Contains(body.Error.Message, "once it is over") {
		t.Fatalf("during the race: %d %+v, want 409 %s", status, body, race.CodeNotOver)
	}
	if body.Games != nil || e.srv.Stats.Analyses.Load() != 0 || e.srv.Stats.Solves.Load() != 0 {
		t.Fatalf("work before the end: %+v, %d analyses", body, e.srv.Stats.Analyses.Load())
	}
	b.send(map[string]any{"type": "resign"})
	res := a.result()
	if res == nil {
		t.Fatal("no result")
	}

	var wg sync.WaitGroup
	bodies := make([]analysisBody, 8)
	for i := range bodies {
		wg.Go(func() { bodies[i] = e.analysisDone(id) })
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	first, _ := json.Marshal(bodies[0])
	for _, b := range bodies[1:] {
		if got, _ := json.Marshal(b); string(got) != string(first) {
			t.Fatalf("answers differ:\n%s\n%s", first, got)
		}
	}
	got := bodies[0]
	if len(got.Games) != 2 {
		t.Fatalf("%d games", len(got.Games))
	}
	solverProbes := int64(0)
	for s, g := range got.Games {
		checkGameAnalysis(t, res.Games[s], g)
		for _, p := range g.Probes {
			if p.By == "solver" && p.Ply > 0 {
				solverProbes++
			}
		}
		t.Logf("seat %d: %s, %s, last winnable %d, first lost %d, %s", s, g.Status, g.Verdict, g.LastWinnable, g.FirstLost, g.Positions)
	}
	if got.Games[0].Status != "stuck" || got.Games[1].Status != "resigned" {
		t.Fatalf("statuses %s and %s", got.Games[0].Status, got.Games[1].Status)
	}
	st := &e.srv.Stats
	if st.Analyses.Load() != 2 || st.Solves.Load() != 1 || st.AnalysisSolves.Load() != solverProbes {
		t.Fatalf("%d analyses, %d solves of the deal, %d of positions (the answers show %d)",
			st.Analyses.Load(), st.Solves.Load(), st.AnalysisSolves.Load(), solverProbes)
	}
	// Asked again: the same, without any work.
	if status, again := e.analysis(id); status != http.StatusOK {
		t.Fatalf("again: %d", status)
	} else if b, _ := json.Marshal(again); string(b) != string(first) {
		t.Fatalf("again:\n%s\nwant\n%s", b, first)
	}
	if st.Analyses.Load() != 2 || st.AnalysisSolves.Load() != solverProbes {
		t.Fatal("asked again, analysed again")
	}
}
