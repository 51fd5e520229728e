package race_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"sirtommy/engine"
	"sirtommy/race"
	"sirtommy/race/memrace"
	"sirtommy/race/racetest"
)

// splitBus is a bus that relays over memrace.Bus and notes which topics'
// events would have gone to other instances (Publish) and which stayed
// here (PublishLocal).
type splitBus struct {
	*memrace.Bus
	mu        sync.Mutex
	elsewhere []string // "topic type" for each event sent out
}

func (b *splitBus) Publish(topic string, ev race.Event) {
	b.mu.Lock()
	b.elsewhere = append(b.elsewhere, topic+" "+ev.EventType())
	b.mu.Unlock()
	b.Bus.Publish(topic, ev)
}

func (b *splitBus) PublishLocal(topic string, ev race.Event) { b.Bus.Publish(topic, ev) }

func (b *splitBus) Relays() bool { return true }

// sent returns and forgets the events sent out so far.
func (b *splitBus) sent() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.elsewhere
	b.elsewhere = nil
	return out
}

// remoteRecorder stands for a connection on another instance.
type remoteRecorder struct{ racetest.Recorder }

func (*remoteRecorder) Remote() bool { return true }

// TestEventsLeaveTheInstanceOnlyWhereFollowed: a move's events go to
// other instances only on the topics a connection there follows (a
// remote seat, a remote spectator); a race whose people are all on its
// instance sends none of them out (issue #19: Redis commands per move).
func TestEventsLeaveTheInstanceOnlyWhereFollowed(t *testing.T) {
	clock := racetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bus := &splitBus{Bus: memrace.NewBus()}
	opts := named(5)
	opts.SpectatorDelay = time.Second
	r, err := race.New("r1", opts, race.Deps{Clock: clock, Log: zerolog.Nop(), Store: memrace.NewStore(), Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	var subs [2]racetest.Recorder
	var toks [2]string
	for s := range 2 {
		tk, err := r.Join("p", "", &subs[s])
		if err != nil {
			t.Fatal(err)
		}
		toks[s] = tk.Token
	}
	clock.Advance(race.DefaultCountdown)
	rules, _ := engine.Variant("classic")
	games := [2]engine.Game{engine.New(rules, 5), engine.New(rules, 5)}
	move := func(s int) {
		t.Helper()
		m := games[s].AppendMoves(nil)[0]
		if err := r.Move(s, m.String(), ""); err != nil {
			t.Fatal(err)
		}
		if err := games[s].Apply(m); err != nil {
			t.Fatal(err)
		}
		clock.Advance(opts.SpectatorDelay + race.FeedSlack) // the board reaches the feed
	}
	local := &racetest.Recorder{}
	cancelLocal := r.Watch(local)
	bus.sent()
	move(0)
	move(1)
	if out := bus.sent(); len(out) != 0 {
		t.Errorf("everyone on this instance, yet sent out: %v", out)
	}

	// Seat 1's player is now on another instance.
	remote := &remoteRecorder{}
	if _, err := r.Resume(toks[1], "", "", remote); err != nil {
		t.Fatal(err)
	}
	bus.sent()
	move(0)
	move(1)
	want := []string{"r1/seat/1 opponent", "r1/seat/1 moved"}
	if out := bus.sent(); !slices.Equal(out, want) {
		t.Errorf("with seat 1 remote, sent out %v, want %v", out, want)
	}

	// And a spectator on another instance: the boards go out too.
	watcher := &remoteRecorder{}
	cancel := r.Watch(watcher)
	bus.sent()
	move(0)
	clock.Advance(time.Second) // the spectators' count, once a second
	want = []string{"r1/seat/1 opponent", "r1/watch board", "r1/seat/1 spectators", "r1/watch spectators"}
	if out := bus.sent(); !slices.Equal(out, want) {
		t.Errorf("with a remote spectator, sent out %v, want %v", out, want)
	}
	cancel()
	cancelLocal()
	clock.Advance(time.Second)
	bus.sent()
	move(0)
	if out, want := bus.sent(), []string{"r1/seat/1 opponent"}; !slices.Equal(out, want) {
		t.Errorf("the remote spectator gone, sent out %v, want %v", out, want)
	}
	if len(subs[0].Events()) == 0 || len(local.Events()) == 0 {
		t.Error("the local seat or spectator got nothing")
	}
}
