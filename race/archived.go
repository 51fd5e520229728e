package race

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"sirtommy/engine"
)

// archivedRace is the Handle of a race found only in the archive
// (Service.Open, once the live store has let it go): finished, read only.
// It answers as a finished live race does: its public record, a watch's
// final state, and race-over to everything that would play.
type archivedRace struct {
	a     Archived
	clock Clock
}

var _ Handle = (*archivedRace)(nil)

// ID is the race's id.
func (r *archivedRace) ID() string { return r.a.Info.Race }

// State is the race's final state (Finished: only those are archived).
func (r *archivedRace) State() State { return r.a.Info.State }

func (r *archivedRace) over() error { return Errorf(CodeRaceOver, "the race is %s", r.a.Info.State) }

// Join is refused: the race is over.
func (r *archivedRace) Join(string, string, Subscriber) (Ticket, error) { return Ticket{}, r.over() }

// Resume is refused: the race is over (its seats' tokens are not kept).
func (r *archivedRace) Resume(string, string, string, Subscriber) (Ticket, error) {
	return Ticket{}, r.over()
}

// Leave does nothing: nobody holds a seat.
func (r *archivedRace) Leave(int, Subscriber) {}

// Move is refused: the race is over.
func (r *archivedRace) Move(int, string, string) error { return r.over() }

// Resign is refused: the race is over.
func (r *archivedRace) Resign(int, string) error { return r.over() }

// Berserk is refused: the race is over.
func (r *archivedRace) Berserk(int) error { return r.over() }

// Rematch is refused: the race is over and its players have left it, so
// nobody is there to agree to another.
func (r *archivedRace) Rematch(int) (string, error) {
	return "", Errorf(CodeRaceOver, "the race is %s and archived: a rematch is asked for while both players are still at it", r.a.Info.State)
}

// Watch sends sub the race's final state, as a spectator of the finished
// live race gets it: both final boards (face down while the deal is
// sealed) and the result. Nothing follows.
func (r *archivedRace) Watch(sub Subscriber) (cancel func()) {
	sub.Deliver(r.watchState())
	return func() {}
}

// Info is the archived public record, without what a sealed deal hides
// until it opens (as Race.Info), with no spectators.
func (r *archivedRace) Info(context.Context) (Info, error) { return r.info(), nil }

func (r *archivedRace) sealed() bool {
	return !r.a.SealedUntil.IsZero() && r.clock.Now().Before(r.a.SealedUntil)
}

func (r *archivedRace) info() Info {
	in := r.a.Info
	in.Spectators = 0
	in.Moves = slices.Clone(in.Moves)
	if in.Result != nil {
		res := *in.Result
		if r.sealed() {
			res.Deal, res.Salt, res.Games = "", "", make([]string, len(res.Games))
			in.Moves = nil
		}
		in.Result = &res
	}
	return in
}

// watchVer is the version of the only state an archived race sends its
// spectators: the start of a feed (never 0, which JSON leaves out).
const watchVer = 1

// watchState is the final state a spectator gets. Its match is the
// result's (after this round).
func (r *archivedRace) watchState() *StateEvent {
	in := r.info()
	ev := &StateEvent{
		Race: in.Race, State: in.State, Variant: in.Variant, Players: in.Players,
		Deal: in.Deal, Commitment: in.Commitment, TimeLimitMs: in.TimeLimit,
		Now: r.clock.Now(), Result: in.Result, Ver: watchVer,
	}
	if in.StartAt != nil {
		start := *in.StartAt
		end := start.Add(time.Duration(in.TimeLimit) * time.Millisecond)
		ev.StartAt, ev.EndsAt = &start, &end
	}
	if res := in.Result; res != nil && res.Match != nil && (res.Match.BestOf > 1 || res.Match.Prev != "") {
		m := *res.Match
		ev.Match = &m
	}
	if boards, err := finalBoards(&r.a.Info, r.sealed()); err == nil {
		ev.Boards, ev.Counts = boards, slices.Clone(in.Counts)
	}
	return ev
}

// finalBoards deals in's deal again and replays its moves: both boards as
// the race ended, every stock card face down when sealed.
func finalBoards(in *Info, sealed bool) ([]engine.View, error) {
	if in.Result == nil {
		return nil, fmt.Errorf("race %s: no result", in.Race)
	}
	rules, err := engine.Variant(in.Variant)
	if err != nil {
		return nil, fmt.Errorf("race %s: %w", in.Race, err)
	}
	deal, err := strconv.ParseUint(in.Result.Deal, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("race %s: deal %q: %w", in.Race, in.Result.Deal, err)
	}
	views := make([]engine.View, len(in.Players))
	games := make([]engine.Game, len(views))
	for i := range games {
		games[i] = engine.New(rules, deal)
	}
	for _, m := range in.Moves {
		if m.Seat < 0 || m.Seat >= len(games) {
			return nil, fmt.Errorf("race %s: move %+v: no such seat", in.Race, m)
		}
		if _, _, err := replayRecord(&games[m.Seat], m); err != nil {
			return nil, fmt.Errorf("race %s: seat %d move %d %q: %w", in.Race, m.Seat, m.Seq, m.Move, err)
		}
	}
	var s sight
	if sealed {
		s = newSight(rules, deal)
	}
	for i := range views {
		views[i] = games[i].View()
		if sealed {
			s.mask(&views[i], 0)
		}
	}
	return views, nil
}

// Final is finished race id's whole public record, for the server's own
// use (the day's board keeps its leader's moves): its result with the
// deal and both games, and every move, even while its deal is sealed. It
// is the race's here, or the archive's; CodeNotOver while the race runs
// here, CodeUnavailable while it is still on its way to the archive or
// the archive cannot be read, CodeNoSuchRace when neither has it.
func (s *Service) Final(ctx context.Context, id string) (Info, error) {
	if r, err := s.Get(id); err == nil {
		if !r.State().Over() {
			return Info{}, Errorf(CodeNotOver, "race %s is not over", id)
		}
		return r.info(ctx, true)
	}
	if s.arch == nil {
		return Info{}, Errorf(CodeNoSuchRace, "no race has id %q", id)
	}
	a, ok, err := s.deps.Archive.Get(ctx, id)
	switch {
	case err != nil:
		return Info{}, &Error{Code: CodeUnavailable, Message: "the archive cannot be read now; try again shortly", Err: fmt.Errorf("race %s: read the archive: %w", id, err)}
	case ok:
		return a.Info, nil
	case s.arch.holds(id):
		return Info{}, Errorf(CodeUnavailable, "race %s is being archived; try again shortly", id)
	}
	return Info{}, Errorf(CodeNoSuchRace, "no race has id %q", id)
}

// openArchived is the handle of race id from the archive, when the live
// store does not have it (notFound is what it said).
func (s *Service) openArchived(ctx context.Context, id string, notFound error) (Handle, error) {
	a, ok, err := s.deps.Archive.Get(ctx, id)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "the race's record cannot be read now; try again shortly", Err: fmt.Errorf("race %s: read the archive: %w", id, err)}
	}
	if !ok {
		return nil, notFound
	}
	return &archivedRace{a: a, clock: s.deps.Clock}, nil
}

// archived is the race's record for the archive, once it is over.
func (r *Race) archived(ctx context.Context) (Archived, error) {
	in, err := r.info(ctx, true)
	if err != nil {
		return Archived{}, err
	}
	r.mu.Lock()
	defer r.unlock()
	a := Archived{Info: in, Tag: r.opts.Tag, SealedUntil: r.opts.SealedUntil, EndedAt: r.endedAt, Ghosts: make([]string, len(r.seats))}
	for i := range r.seats {
		if g := r.seats[i].ghost(); g != nil {
			a.Ghosts[i] = g.rec.Ref
		}
	}
	return a, nil
}
