package race

import "context"

// Handle is what a connection holds of a race: the race itself when this
// instance runs it, (Redis mode) race/fleet's proxy, which takes every
// request to the instance that does, or a finished race read from the
// Archive once the live store has let it go. They behave alike; Race
// documents the methods.
type Handle interface {
	ID() string
	State() State
	Join(name, id string, sub Subscriber) (Ticket, error)
	Resume(token, player, id string, sub Subscriber) (Ticket, error)
	Leave(s int, sub Subscriber)
	Watch(sub Subscriber) (cancel func())
	Move(s int, text, id string) error
	Resign(s int, id string) error
	Rematch(s int) (string, error)
	Berserk(s int) error
	Info(ctx context.Context) (Info, error)
}

var _ Handle = (*Race)(nil)
