package main

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// volatile are the fields of an API answer that change by themselves
// (who watches, is online or connected now), left out when two answers
// are compared.
var volatile = map[string]bool{"spectators": true, "online": true, "presence": true, "connected": true}

// answers are the bodies of GET requests, by path, as decoded JSON with
// the volatile fields left out.
type answers map[string]any

// fetchAnswers reads every path from base; each must answer 200.
func fetchAnswers(t *testing.T, base string, paths []string) answers {
	t.Helper()
	out := answers{}
	for _, p := range paths {
		res, err := http.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v %s", p, res.StatusCode, err, b)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		out[p] = withoutVolatile(v)
	}
	return out
}

func withoutVolatile(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if volatile[k] {
				delete(x, k)
			} else {
				x[k] = withoutVolatile(x[k])
			}
		}
	case []any:
		for i := range x {
			x[i] = withoutVolatile(x[i])
		}
	}
	return v
}

// analysisDone polls a race's analysis until it is done.
func analysisDone(t *testing.T, base, race string) {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/api/races/" + race + "/analysis")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return
		}
		time.Sleep(200 * time.Millisecond) // a poll: the analysis runs in the background
	}
	t.Fatalf("the analysis of %s did not finish", race)
}

// welcomed says hello as a new player named name and returns the client
// and the player's token.
func welcomed(t *testing.T, base, name string) (*lobbyClient, string) {
	t.Helper()
	c := dial(t, base)
	c.send(map[string]any{"type": "hello", "id": "h", "name": name})
	w := c.next("welcome", ofType("welcome"))
	return &lobbyClient{client: c, id: w.str("player")}, w.str("token")
}

// archived waits until base's archive has every finished race
// (sirtommy_archive_queue 0 in /metrics).
func archived(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), "\nsirtommy_archive_queue 0\n") {
			return
		}
		time.Sleep(100 * time.Millisecond) // a poll: the archiver writes off the move path
	}
	t.Fatal("the archive's queue did not empty")
}

// TestRestartKeepsWhatPlayersBuilt: the README's server (SQLite in --data,
// no --secret) hosts a rated quick-play race, a ghost race, a day's deal
// and an analysis; it is stopped with SIGTERM and started again, then
// killed with SIGKILL and started again. Each time the leaderboard, the
// profiles with their games and rating charts, the replays, the
// analysis, the ghost challenge and the day's board answer as before, and
// the players' old tokens still name them.
func TestRestartKeepsWhatPlayersBuilt(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	args := []string{"--data", data, "--spectator-delay", "0s", "--drain-timeout", "5s"}
	base, proc := startProcess(t, bin, args...)

	ann, annToken := welcomed(t, base, "ann")
	bob, bobToken := welcomed(t, base, "bob")
	cat, catToken := welcomed(t, base, "cat")
	bob.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	ann.request(map[string]any{"type": "queue", "variant": "classic"}, "queued")
	ann.takeSeat("quick")
	bob.takeSeat("quick")
	ann.playBlind()
	bob.playBlind()
	ann.result()
	rated := ann.race

	g := ann.request(map[string]any{"type": "ghost", "race": ann.race, "seat": ann.seat}, "ghost-made")
	ghost, _ := g["ghost"].(map[string]any)["id"].(string)
	cat.accept(map[string]any{"type": "race-ghost", "ghost": ghost})
	cat.takeSeat("ghost")
	cat.playBlind()
	cat.result()
	ghostRace := cat.race
	ann.next("ghost-raced", ofType("ghost-raced"))

	bob.accept(map[string]any{"type": "play-daily", "variant": "classic"})
	bob.takeSeat("daily")
	bob.playBlind()
	bob.result()
	analysisDone(t, base, rated)

	paths := []string{
		"/api/leaderboard/classic",
		"/api/players/" + ann.id, "/api/players/" + bob.id, "/api/players/" + cat.id,
		"/api/players/" + ann.id + "/games", "/api/players/" + ann.id + "/ratings/classic",
		"/api/races/" + rated, "/api/races/" + ghostRace,
		"/api/races/" + rated + "/analysis",
		"/api/ghosts/" + ghost,
		"/api/daily?variant=classic&player=" + bob.id,
	}
	// The lobby records a race's end off the race's path: wait for it.
	deadline := time.Now().Add(safetyTimeout)
	for {
		var p struct {
			Standings []struct{ Games int }
			Ghosts    *struct{ Against []any }
		}
		getJSON(t, base+"/api/players/"+ann.id, &p)
		var d struct{ Players int }
		getJSON(t, base+"/api/daily?variant=classic", &d)
		if len(p.Standings) == 1 && p.Standings[0].Games == 1 && p.Ghosts != nil && len(p.Ghosts.Against) == 1 && d.Players == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the races' ends were not recorded: %+v, %d on the day's board", p, d.Players)
		}
		time.Sleep(50 * time.Millisecond) // a poll, as above
	}
	archived(t, base)
	want := fetchAnswers(t, base, paths)

	for _, stop := range []struct {
		name string
		sig  syscall.Signal
	}{{"SIGTERM", syscall.SIGTERM}, {"SIGKILL", syscall.SIGKILL}} {
		if err := proc.Signal(stop.sig); err != nil {
			t.Fatal(err)
		}
		if _, err := proc.Wait(); err != nil {
			t.Fatalf("%s: %v", stop.name, err)
		}
		base, proc = startProcess(t, bin, args...)
		got := fetchAnswers(t, base, paths)
		for _, p := range paths {
			if !reflect.DeepEqual(got[p], want[p]) {
				a, _ := json.Marshal(want[p])
				b, _ := json.Marshal(got[p])
				t.Errorf("after %s, GET %s answers\n%s\nwhere it answered\n%s", stop.name, p, b, a)
			}
		}
		for name, tok := range map[string]string{ann.id: annToken, bob.id: bobToken, cat.id: catToken} {
			c := dial(t, base)
			c.send(map[string]any{"type": "hello", "id": "h", "token": tok})
			if w := c.next("welcome", ofType("welcome")); w.str("player") != name {
				t.Errorf("after %s, the token of %s names %q", stop.name, name, w.str("player"))
			}
		}
	}
}

// getJSON decodes the answer of GET url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
