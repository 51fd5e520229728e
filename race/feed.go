package race

import (
	"time"

	"github.com/gammazero/deque"

	"sirtommy/engine"
)

// feed is the spectators' feed of a race: the games as far as it has
// reached, what spectators may see of them (the fair view, fair.go), and
// what waits for the spectator delay. Its methods know nothing of the
// race around it: the race calls them with its lock held, publishes what
// they make, and runs the feed's timer.
type feed struct {
	// sight is where each card of the race's deal lies in its stock.
	sight sight
	// games are the seats' games as the spectators have been shown them.
	games []engine.Game
	// seq, move and atMs are each seat's last board event released.
	seq  []int
	move []string
	atMs []int64
	// connected is each seat's presence as released.
	connected []bool
	// hid is whether each seat's board, as last made, had a card face
	// down: only such a board can need a reveal.
	hid []bool
	// state is the last state event released, without boards.
	state *StateEvent
	// ver is the version of the last event released: epoch<<32, plus one,
	// plus the events released since this copy of the race was made.
	ver uint64
	// queue holds, in public races, what waits for the spectator delay,
	// timer releasing its head. A ring, as a slice taken from the front
	// and appended to was reallocated over and over (a quarter of the
	// bytes a move allocated).
	queue deque.Deque[delayed]
	timer Timer
	// armed is set while timer runs; gen numbers its arming
	// (armFeedLocked).
	armed bool
	gen   uint64
}

// verEpochShift places a race copy's epoch above its event count: a race
// taken over by another instance continues at a higher version.
const verEpochShift = 32

// feedRoom is the room a race's delayed feed starts with, so that it
// does not grow three times in every public race: 10 s of both players'
// moves at 2 a second each, and a few states.
const feedRoom = 64

// feedItem is on its way to the spectators: an event, or (ev nil) a
// seat's move, which the feed's game of the seat plays when the feed
// reaches it, and of which the board is made then. A move's item holds
// no event of its own (it was half of what a move allocated, for the few
// races watched), nor the seat's game after it: the feed keeps one game
// per seat and plays the moves in their order, so that an item is a
// tenth of a game's size, and every public race queues one per move.
type feedItem struct {
	ev   Event
	move feedMove
}

// feedMove is a seat's move as the feed plays and shows it.
type feedMove struct {
	seat, seq int
	move      string // the notation logged, shown to spectators
	atMs      int64
	play      engine.Move // what the seat's game played, unless resign
	resign    bool
}

// delayed is an item of the spectators' feed and when it is due.
type delayed struct {
	due  time.Time
	item feedItem
}

// reset starts the feed at games (by seat), whose last logged moves are
// last and whose players' presence is connected, with the state state
// and version epoch<<verEpochShift + 1. It keeps games.
func (f *feed) reset(s sight, games []engine.Game, last []MoveRecord, connected []bool, state *StateEvent, epoch uint64) {
	n := len(games)
	f.sight, f.games, f.state = s, games, state
	f.seq, f.move, f.atMs = make([]int, n), make([]string, n), make([]int64, n)
	f.connected, f.hid = connected, make([]bool, n)
	for i := range games {
		f.seq[i], f.atMs[i], f.move[i] = last[i].Seq, last[i].AtMs, last[i].Move
	}
	f.ver = epoch<<verEpochShift + 1 // the feed's start; never 0, which JSON leaves out
}

// play plays m on the feed's game of its seat, which stands where the
// seat's game stood before m: the feed starts from the seats' games and
// gets every move of theirs, in order, until the race ends. It records m
// as the seat's last move.
func (f *feed) play(m *feedMove) error {
	f.seq[m.seat], f.move[m.seat], f.atMs[m.seat] = m.seq, m.move, m.atMs
	g := &f.games[m.seat]
	if m.resign {
		g.Resign()
		return nil
	}
	// ApplyRecorded, as a restored race's log replays: it plays a live
	// move as Apply did, and a move logged before the turn it implies.
	return g.ApplyRecorded(m.play)
}

// shows reports whether spectators see the games' cards as they are: the
// race is over (as of the feed) and its deal not sealed.
func (f *feed) shows(sealed bool) bool { return f.state.State.Over() && !sealed }

// revealLimit is the number of stock cards, from the top, that spectators
// may see: every racer still playing (as of the feed) has turned them.
// Over races show everything; a sealed deal nothing.
func (f *feed) revealLimit(sealed bool) int {
	if sealed {
		return 0
	}
	if f.state.State.Over() {
		return f.sight.n
	}
	limit := f.sight.n
	for i := range f.games {
		if g := &f.games[i]; g.Status() == engine.Playing {
			limit = min(limit, f.sight.turned(g))
		}
	}
	return limit
}

// view is seat i's board as spectators may see it at the feed's point:
// the one function that makes a spectator's board. Before the start no
// turned card is shown (as to the players themselves); cards not every
// racer still playing has turned are Hidden.
func (f *feed) view(i int, sealed bool) engine.View {
	v := f.games[i].View()
	f.hid[i] = false
	switch st := f.state.State; {
	case st == Waiting || st == Countdown:
		v.Turned = []engine.Card{}
		return v
	case f.shows(sealed):
		return v
	}
	f.hid[i] = f.sight.mask(&v, f.revealLimit(sealed))
	return v
}

// notation is a move's notation as spectators may see it: its card "??"
// while hidden ("??>W1").
func (f *feed) notation(move string, sealed bool) string {
	if len(move) < 3 || move[2] != '>' {
		return move // "R", "resign"
	}
	c, err := engine.ParseCard(move[:2])
	if err != nil || f.shows(sealed) || !f.sight.hidden(c, f.revealLimit(sealed)) {
		return move
	}
	return "??" + move[2:]
}

// counts is seat i's counts at the feed's point.
func (f *feed) counts(i int) Counts {
	g := &f.games[i]
	return Counts{Score: g.Score(), Stock: g.StockLeft(), Status: g.Status(), Moves: g.Plies(), Connected: f.connected[i]}
}

// boards are the seats' boards and counts at the feed's point.
func (f *feed) boards(sealed bool) ([]engine.View, []Counts) {
	boards, counts := make([]engine.View, len(f.games)), make([]Counts, len(f.games))
	for i := range f.games {
		boards[i], counts[i] = f.view(i, sealed), f.counts(i)
	}
	return boards, counts
}

// board is seat s's board event at the feed's point, numbered with the
// next version; reveal marks a board sent again because cards on it may
// be shown now.
func (f *feed) board(race string, s int, reveal, sealed bool) *BoardEvent {
	f.ver++
	return &BoardEvent{
		Race: race, Seat: s, Seq: f.seq[s], Move: f.notation(f.move[s], sealed), AtMs: f.atMs[s],
		View: f.view(s, sealed), Counts: f.counts(s), Reveal: reveal, Ver: f.ver,
	}
}

// holds reports whether seat s's board at the feed's point holds a card
// whose stock index is in [lo, hi).
func (f *feed) holds(s, lo, hi int) bool {
	v := f.games[s].View()
	in := func(c engine.Card) bool {
		p := int(f.sight.pos[c])
		return c != engine.NoCard && p >= lo && p < hi
	}
	for _, c := range v.Turned {
		if in(c) {
			return true
		}
	}
	for p := range v.Waste {
		for _, c := range v.Waste[p].Cards {
			if in(c) {
				return true
			}
		}
	}
	for p := range v.Foundations {
		if in(v.Foundations[p].Top) {
			return true
		}
	}
	return false
}

// delay queues it, due at due.
func (f *feed) delay(it feedItem, due time.Time) {
	if f.queue.Cap() == 0 {
		f.queue.SetBaseCap(feedRoom)
	}
	f.queue.PushBack(delayed{due: due, item: it})
}

// due takes the queue's head if it is due by now.
func (f *feed) due(now time.Time) (feedItem, bool) {
	if f.queue.Len() == 0 || f.queue.Front().due.After(now) {
		return feedItem{}, false
	}
	return f.queue.PopFront().item, true
}
