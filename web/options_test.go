package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"sirtommy/lobby"
	"sirtommy/race"
	"sirtommy/web"
)

// badOptions are option fields out of range, each with the words its
// refusal must name.
var badOptions = []struct {
	name   string
	fields map[string]any
	names  string // what the message must contain
}{
	{"time limit 0", map[string]any{"timeLimitSeconds": 0}, "timeLimitSeconds must be from 1 to 3600"},
	{"time limit negative", map[string]any{"timeLimitSeconds": -5}, "timeLimitSeconds must be from 1 to 3600"},
	{"time limit too long", map[string]any{"timeLimitSeconds": 3601}, "timeLimitSeconds must be from 1 to 3600"},
	{"best of 0", map[string]any{"bestOf": 0}, "bestOf must be odd, from 1 to 9"},
	{"best of -1", map[string]any{"bestOf": -1}, "bestOf must be odd, from 1 to 9"},
	{"best of even", map[string]any{"bestOf": 2}, "bestOf must be odd, from 1 to 9"},
	{"best of 11", map[string]any{"bestOf": 11}, "bestOf must be odd, from 1 to 9"},
	{"deal not a number", map[string]any{"deal": "x12"}, "deal must be a decimal number from 0 to 18446744073709551615"},
	{"deal too big", map[string]any{"deal": "18446744073709551616"}, "deal must be a decimal number"},
	{"unknown variant", map[string]any{"variant": "klondike"}, `variant "klondike" is unknown`},
	{"unknown grade", map[string]any{"grade": "brutal"}, `grade "brutal" is unknown: it must be one of easy, medium, hard`},
	{"grade of an ungraded variant", map[string]any{"variant": "in-suit", "grade": "easy"}, "the deals of in-suit are not graded"},
	{"grade and a deal", map[string]any{"grade": "hard", "deal": "7"}, "name a deal or ask for a grade, not both"},
}

// postRace posts body to /api/races and returns the status and the
// error's code and message, if any.
func postRace(t *testing.T, e *env, body string) (int, race.Code, string) {
	t.Helper()
	res, err := http.Post(e.ts.URL+"/api/races", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct {
			Code    race.Code
			Message string
		}
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out.Error.Code, out.Error.Message
}

// TestAPIRefusesBadOptions: every option out of range, an explicit 0
// included, is refused with 400 bad-options naming the field and its
// range, and makes no race; absent fields take the defaults.
func TestAPIRefusesBadOptions(t *testing.T) {
	e := newEnv(t, nil)
	cases := append([]struct {
		name   string
		fields map[string]any
		names  string
	}{
		{"pace 1 ms", map[string]any{"computer": map[string]any{"level": "easy", "paceMs": 1}}, "computer.paceMs must be from 100 to 60000"},
		{"pace negative", map[string]any{"computer": map[string]any{"level": "easy", "paceMs": -1}}, "computer.paceMs must be from 100 to 60000"},
		{"pace 0", map[string]any{"computer": map[string]any{"level": "easy", "paceMs": 0}}, "computer.paceMs must be from 100 to 60000"},
		{"public with a deal", map[string]any{"public": true, "deal": "7"}, "only private races name one"},
	}, badOptions...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := json.Marshal(tc.fields)
			status, code, message := postRace(t, e, string(body))
			if status != http.StatusBadRequest || code != race.CodeBadOptions || !strings.Contains(message, tc.names) {
				t.Errorf("%s: %d %s %q; want 400 %s naming %q", body, status, code, message, race.CodeBadOptions, tc.names)
			}
		})
	}
	if n := len(e.races.Races()); n != 0 {
		t.Errorf("%d races made by refused requests", n)
	}
	// A known grade is taken, and the race commits to it (section 6).
	graded := e.create(`{"grade":"hard","computer":{"level":"expert"}}`)
	if in := e.info(graded); len(in.Commitment) != 64 {
		t.Errorf("graded race: commitment %q", in.Commitment)
	}
	id := e.create(`{"computer":{"level":"easy"}}`)
	if in := e.info(id); in.TimeLimit != race.DefaultTimeLimit.Milliseconds() {
		t.Errorf("absent time limit: %d ms", in.TimeLimit)
	}
}

// TestLobbyRefusesBadOptions: invite and challenge refuse the same fields
// as the API, with the same code and sentence; queue refuses an unknown
// variant.
func TestLobbyRefusesBadOptions(t *testing.T) {
	e := newLobbyEnv(t, lobby.Config{})
	a := e.dial()
	a.hello("ann")
	for _, typ := range []string{"invite", "challenge"} {
		for _, tc := range badOptions {
			if typ == "challenge" && tc.fields["deal"] != nil {
				continue // challenges name no deal at all: below
			}
			t.Run(typ+"/"+tc.name, func(t *testing.T) {
				fields := map[string]any{"type": typ, "id": "o"}
				for k, v := range tc.fields {
					fields[k] = v
				}
				m := a.expectError(fields, race.CodeBadOptions)
				var body struct{ Message string }
				_ = json.Unmarshal(m.raw, &body)
				if !strings.Contains(body.Message, tc.names) {
					t.Errorf("%s %v: message %q does not name %q", typ, tc.fields, body.Message, tc.names)
				}
			})
		}
	}
	m := a.expectError(map[string]any{"type": "challenge", "id": "c", "deal": "7"}, race.CodeBadOptions)
	if !strings.Contains(string(m.raw), "deal") {
		t.Errorf("challenge with a deal: %s", m.raw)
	}
	m = a.expectError(map[string]any{"type": "queue", "id": "q", "variant": "klondike"}, race.CodeBadOptions)
	if !strings.Contains(string(m.raw), `variant \"klondike\" is unknown`) {
		t.Errorf("queue with an unknown variant: %s", m.raw)
	}
	m = a.expectError(map[string]any{"type": "queue", "id": "q", "grade": "brutal"}, race.CodeBadOptions)
	if !strings.Contains(string(m.raw), `grade \"brutal\" is unknown`) {
		t.Errorf("queue with an unknown grade: %s", m.raw)
	}
	// play-computer takes no options: it plays the queue's variant, which
	// queue checked. Without a queue it is refused as such.
	a.expectError(map[string]any{"type": "play-computer", "id": "pc"}, lobby.CodeNotQueued)
	// Absent fields take the defaults, written out in the reply.
	a.send(map[string]any{"type": "invite", "id": "ok"})
	inv := decode[struct {
		Options lobby.RaceOptions
	}](t, a.untilType("invited"))
	if inv.Options.TimeLimitSeconds == nil || *inv.Options.TimeLimitSeconds != 600 || inv.Options.BestOf == nil || *inv.Options.BestOf != 1 {
		t.Errorf("defaults not written out: %+v", inv.Options)
	}
}

// TestRaceLimitCountsRacesMade: --api-races-per-minute counts races made,
// as documented: refused requests (bad options, bad JSON) do not use the
// address's budget, and once it is spent the next request is 429.
func TestRaceLimitCountsRacesMade(t *testing.T) {
	limits := web.DefaultLimits()
	limits.RacesPerMinute = 2
	e := newEnv(t, func(d *web.Deps) { d.Limits = limits })
	for range 5 {
		if status, code, _ := postRace(t, e, `{"bestOf":0}`); status != http.StatusBadRequest || code != race.CodeBadOptions {
			t.Fatalf("bad options: %d %s", status, code)
		}
		if status, _, _ := postRace(t, e, `{"nope":1}`); status != http.StatusBadRequest {
			t.Fatalf("bad JSON: %d", status)
		}
	}
	e.create(`{}`)
	e.create(`{}`)
	if status, code, _ := postRace(t, e, `{}`); status != http.StatusTooManyRequests || code != web.CodeRateLimited {
		t.Errorf("a third race in a minute: %d %s, want 429 %s", status, code, web.CodeRateLimited)
	}
	if n := len(e.races.Races()); n != 2 {
		t.Errorf("%d races made, want 2", n)
	}
}

// TestCreateRaceReadsEveryOption: POST /api/races reads the options
// race.Choice defines (embedded in its body) and its own deal, which may
// be a JSON number: a race made with them reports them.
func TestCreateRaceReadsEveryOption(t *testing.T) {
	e := newEnv(t, nil)
	for _, body := range []string{
		`{"variant":"aces-out","deal":7,"timeLimitSeconds":120,"bestOf":3}`,
		`{"variant":"aces-out","deal":"7","timeLimitSeconds":120,"bestOf":3}`,
	} {
		res, err := http.Post(e.ts.URL+"/api/races", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Race string `json:"race"`
			Deal string `json:"deal"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusCreated {
			t.Fatalf("%s: status %d, %v", body, res.StatusCode, err)
		}
		r, err := e.races.Get(out.Race)
		if err != nil {
			t.Fatal(err)
		}
		st := r.FinalFor(-1, false)
		if out.Deal != "7" || st.Variant != "aces-out" || st.TimeLimitMs != 120_000 || st.Match == nil || st.Match.BestOf != 3 {
			t.Errorf("%s: made deal %q, variant %q, %d ms, match %+v", body, out.Deal, st.Variant, st.TimeLimitMs, st.Match)
		}
	}
}
