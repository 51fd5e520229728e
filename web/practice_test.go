package web_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/web"
	"sirtommy/web/coach"
)

// practiceBody is the reply of POST /api/races/{id}/practice.
type practiceBody struct {
	Verdict web.PracticeVerdict `json:"verdict"`
	Reason  string              `json:"reason"`
	Message string              `json:"message"`
	Move    string              `json:"move"`
	Line    []engine.Move       `json:"line"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// practise sends body as a try at race id.
func (e *env) practise(id, body string) (int, practiceBody) {
	e.t.Helper()
	res, err := http.Post(e.ts.URL+"/api/races/"+id+"/practice", "application/json", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var b practiceBody
	if err := json.NewDecoder(res.Body).Decode(&b); err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, b
}

// try is the body of a try.
func try(seat, position int, move string) string {
	return fmt.Sprintf(`{"seat":%d,"position":%d,"move":%q}`, seat, position, move)
}

// lostRace plays a race on deal 3 whose seat 0 plays the medium bot to
// stuck (its game lost by a move, as TestBrowserWhereYouLostIt's) and
// whose seat 1 resigns after 12 moves; it returns the race, seat 0's game
// and its analysis with the coach's budgets. Before the end it checks
// that a try is refused with 409 and costs no solve.
func lostRace(t *testing.T, e *env) (string, engine.Record, engine.GameAnalysis) {
	t.Helper()
	const deal = 3
	id, a, b := e.startRace(deal)
	botMoves(a, deal, 200)
	botMoves(b, deal, 12)
	st, body := e.practise(id, try(0, 0, "AS>F1"))
	if st != http.StatusConflict || body.Error == nil || body.Error.Code != string(race.CodeNotOver) {
		t.Fatalf("during the race: %d %+v, want 409 %s", st, body, race.CodeNotOver)
	}
	if n := e.srv.Stats.PracticeSolves.Load(); n != 0 {
		t.Fatalf("%d solves during the race", n)
	}
	b.send(map[string]any{"type": "resign"})
	res := a.result()
	if res == nil {
		t.Fatal("no result")
	}
	rec, err := engine.ParseRecord(res.Games[0])
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := engine.Variant(rec.Variant)
	start := engine.New(rules, rec.Deal)
	an, err := engine.AnalyzeGame(&start, rec.Moves, engine.AnalyzeOptions{Solve: engine.SolveOptions{MaxNodes: coach.PositionMaxNodes, MaxConflicts: coach.PositionMaxConflicts}})
	if err != nil {
		t.Fatal(err)
	}
	if an.LastWinnable < 0 || an.FirstLost != an.LastWinnable+1 || len(an.Line) == 0 {
		t.Fatalf("seat 0's game is not lost by one move: %+v", an)
	}
	return id, rec, an
}

// TestPracticeJudgesTries: at the last winnable position of a game lost
// by a move, the solver's move is accepted with a winning line that
// replays, the move played is refused as losing too, an illegal one with
// the engine's reason; a try judged before costs no solve.
func TestPracticeJudgesTries(t *testing.T) {
	e := newEnv(t, nil)
	id, rec, an := lostRace(t, e)
	n := an.LastWinnable
	rules, _ := engine.Variant(rec.Variant)
	at := engine.New(rules, rec.Deal)
	for _, m := range rec.Moves[:n] {
		if err := at.ApplyRecorded(m); err != nil {
			t.Fatal(err)
		}
	}

	right := an.Line[0].String()
	st, got := e.practise(id, try(0, n, right))
	if st != http.StatusOK || got.Verdict != web.PracticeWinnable || got.Move != right {
		t.Fatalf("the solver's move %s: %d %+v", right, st, got)
	}
	after := at
	if err := after.Apply(an.Line[0]); err != nil {
		t.Fatal(err)
	}
	for i, m := range got.Line {
		if err := after.Apply(m); err != nil {
			t.Fatalf("the reply's line, move %d (%s): %v", i+1, m, err)
		}
	}
	if after.Status() != engine.Won {
		t.Fatalf("the reply's line ends %s", after.Status())
	}

	wrong := rec.Moves[n].String()
	st, got = e.practise(id, try(0, n, wrong))
	if st != http.StatusOK || got.Verdict != web.PracticeLost || !strings.Contains(got.Message, "this loses too") || len(got.Line) != 0 {
		t.Fatalf("the move played, %s: %d %+v", wrong, st, got)
	}
	if got.Reason != "solver" && got.Reason != "stuck" {
		t.Fatalf("lost with reason %q", got.Reason)
	}

	// An illegal move: the first card placed on a foundation that does
	// not take it, refused with the engine's reason and sentence.
	var illegal *engine.IllegalMoveError
	for _, c := range at.Moves() { // a legal card; every foundation tried
		for f := range 4 {
			g := at
			if c.Kind == engine.Place && errors.As(g.Apply(engine.PlaceMove(c.Card, engine.F(f))), &illegal) {
				break
			}
		}
		if illegal != nil {
			break
		}
	}
	if illegal == nil {
		t.Fatal("no illegal move found")
	}
	st, got = e.practise(id, try(0, n, illegal.Move.String()))
	if st != http.StatusOK || got.Verdict != web.PracticeIllegal || got.Reason != illegal.Reason.String() || got.Message != illegal.Detail {
		t.Fatalf("%s: %d %+v, want illegal %s %q", illegal.Move, st, got, illegal.Reason, illegal.Detail)
	}

	solves := e.srv.Stats.PracticeSolves.Load()
	if solves < 1 || solves > 2 {
		t.Fatalf("%d solves for two legal tries", solves)
	}
	if st, again := e.practise(id, try(0, n, strings.ToLower(right))); st != http.StatusOK || again.Verdict != web.PracticeWinnable {
		t.Fatalf("again: %d %+v", st, again)
	}
	if e.srv.Stats.PracticeSolves.Load() != solves {
		t.Fatal("a try judged before was solved again")
	}
}

// TestPracticeBadInput: each bad request is refused with its status and
// code, and costs no solve.
func TestPracticeBadInput(t *testing.T) {
	e := newEnv(t, nil)
	id, rec, an := lostRace(t, e)
	n, plies := an.LastWinnable, len(rec.Moves)
	for _, c := range []struct {
		id, body string
		status   int
		code     race.Code
		says     string
	}{
		{"nosuchrace", try(0, 0, "AS>F1"), http.StatusNotFound, race.CodeNoSuchRace, ""},
		{id, try(2, n, "AS>F1"), http.StatusBadRequest, web.CodeBadPractice, "seat must be from 0 to 1, not 2"},
		{id, try(-1, n, "AS>F1"), http.StatusBadRequest, web.CodeBadPractice, "seat must be"},
		{id, try(0, -1, "AS>F1"), http.StatusBadRequest, web.CodeBadPractice, "position must be from 0"},
		{id, try(0, plies+1, "AS>F1"), http.StatusBadRequest, web.CodeBadPractice, fmt.Sprintf("position must be from 0 to %d", plies)},
		{id, try(0, n, "ZZ>Q9"), http.StatusBadRequest, web.CodeBadPractice, "is not a move"},
		{id, try(0, n, "AS"), http.StatusBadRequest, web.CodeBadPractice, "is not a move"},
		{id, `{"seat":0,"move":"AS>F1"}`, http.StatusBadRequest, web.CodeBadPractice, "all needed"},
		{id, `{"seat":0,"position":1}`, http.StatusBadRequest, web.CodeBadPractice, "all needed"},
		{id, `{"seat":0,"position":1,"move":"AS>F1","extra":1}`, http.StatusBadRequest, web.CodeBadJSON, "unknown field"},
		{id, `{"seat":"0"`, http.StatusBadRequest, web.CodeBadJSON, ""},
		{id, `{"seat":0,"position":1,"move":"` + strings.Repeat("x", 5000) + `"}`, http.StatusRequestEntityTooLarge, web.CodeTooLarge, ""},
	} {
		st, got := e.practise(c.id, c.body)
		if st != c.status || got.Error == nil || got.Error.Code != string(c.code) || !strings.Contains(got.Error.Message, c.says) {
			t.Errorf("%.60s: %d %+v, want %d %s %q", c.body, st, got.Error, c.status, c.code, c.says)
		}
	}
	if n := e.srv.Stats.PracticeSolves.Load(); n != 0 {
		t.Fatalf("%d solves for bad requests", n)
	}
}

// TestPracticeRateLimited: past the address's tries a minute, 429.
func TestPracticeRateLimited(t *testing.T) {
	e := newEnv(t, func(d *web.Deps) { d.Limits.PracticePerMinute = 2 })
	for i, want := range []int{http.StatusNotFound, http.StatusNotFound, http.StatusTooManyRequests} {
		if st, got := e.practise("nosuchrace", try(0, 0, "AS>F1")); st != want {
			t.Fatalf("request %d: %d %+v, want %d", i+1, st, got, want)
		}
	}
}
