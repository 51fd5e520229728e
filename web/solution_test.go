package web_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
)

type solutionBody struct {
	Result     string `json:"result"`
	BestScore  int    `json:"bestScore"`
	ScoreExact bool   `json:"scoreExact"`
	Nodes      int64  `json:"nodes"`
	Game       string `json:"game"`
	Error      *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (e *env) solution(id string) (int, solutionBody) {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + "/api/races/" + id + "/solution")
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Fatalf("content type %q", ct)
	}
	var b solutionBody
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, b
}

func TestSolutionOnlyOnceTheRaceIsOver(t *testing.T) {
	e := newEnv(t, nil)
	const deal = 7
	id, a, b := e.startRace(deal)

	status, body := e.solution(id)
	if status != http.StatusConflict || body.Error == nil || body.Error.Code != string(race.CodeNotOver) {
		t.Fatalf("during the race: %d %+v, want 409 %s", status, body, race.CodeNotOver)
	}
	if n := e.srv.Stats.Solves.Load(); n != 0 {
		t.Fatalf("%d solves before the end", n)
	}

	a.send(map[string]any{"type": "resign"})
	b.send(map[string]any{"type": "resign"})
	if r := a.result(); r == nil || r.Deal != "7" {
		t.Fatalf("result %+v", r)
	}

	// Several askers at once: one solve.
	var wg sync.WaitGroup
	bodies := make([]solutionBody, 3)
	for i := range bodies {
		wg.Go(func() {
			var st int
			st, bodies[i] = e.solution(id)
			if st != http.StatusOK {
				t.Errorf("after the end: status %d %+v", st, bodies[i])
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	got := bodies[0]
	for _, b := range bodies[1:] {
		if b != got {
			t.Fatalf("answers differ: %+v and %+v", got, b)
		}
	}
	switch got.Result {
	case "won", "lost", "unknown":
	default:
		t.Fatalf("result %q", got.Result)
	}
	if got.Nodes <= 0 || got.BestScore <= 0 {
		t.Fatalf("answer %+v", got)
	}
	if got.Result == "won" && (got.BestScore != 52 || !got.ScoreExact) {
		t.Fatalf("a win of %d cards, exact %v", got.BestScore, got.ScoreExact)
	}
	if got.Result == "unknown" && got.ScoreExact && got.BestScore == 52 {
		t.Fatalf("unknown yet an exact 52: %+v", got)
	}
	rec, err := engine.ParseRecord(got.Game)
	if err != nil {
		t.Fatalf("game text %q: %v", got.Game, err)
	}
	g, err := rec.Replay()
	if err != nil {
		t.Fatalf("the solver's game does not replay: %v", err)
	}
	if rec.Deal != deal || g.Score() != got.BestScore {
		t.Fatalf("the game is deal %d scoring %d; want deal %d scoring %d", rec.Deal, g.Score(), deal, got.BestScore)
	}

	// Asked again: the cached answer, not a second solve.
	status, again := e.solution(id)
	if status != http.StatusOK || again != got {
		t.Fatalf("second answer %d %+v, want %+v", status, again, got)
	}
	if n := e.srv.Stats.Solves.Load(); n != 1 {
		t.Fatalf("%d solves, want 1", n)
	}
}

func TestSolutionOfNoSuchRace(t *testing.T) {
	e := newEnv(t, nil)
	status, body := e.solution("nosuchrace")
	if status != http.StatusNotFound || body.Error == nil || body.Error.Code != string(race.CodeNoSuchRace) {
		t.Fatalf("%d %+v, want 404 %s", status, body, race.CodeNoSuchRace)
	}
}
