package lobby

import "sirtommy/race"

// Error codes the lobby adds to race's; the lobby refuses with *race.Error
// so that the web layer maps every refusal the same way (PROTOCOL.md).
const (
	CodeInvalidToken    race.Code = "invalid-token"      // a player token that is malformed or not signed by this server
	CodeExpiredToken    race.Code = "expired-token"      // a player token past its expiry: get a new one
	CodeBadName         race.Code = "bad-name"           // a display name empty, too long, or with control characters or markup
	CodeNotIdentified   race.Code = "not-identified"     // a lobby request before hello
	CodeAlreadyQueued   race.Code = "already-queued"     // in a queue or with an open challenge already
	CodeNotQueued       race.Code = "not-queued"         // leaving a queue, or asking for the computer, while not in one
	CodeNoSuchInvite    race.Code = "no-such-invite"     // no invite has that code
	CodeInviteExpired   race.Code = "invite-expired"     // the invite is too old, or already used
	CodeOwnInvite       race.Code = "own-invite"         // accepting the invite you made
	CodeInviterAway     race.Code = "inviter-away"       // the invite's author has no connection now: try again later
	CodeNoSuchChallenge race.Code = "no-such-challenge"  // no open challenge has that id (taken or withdrawn)
	CodeOwnChallenge    race.Code = "own-challenge"      // accepting your own challenge
	CodeNotYourSeat     race.Code = race.CodeNotYourSeat // a race whose seats are reserved for other players
	CodeNoSuchPlayer    race.Code = "no-such-player"     // no player has that id
	CodeNoComputer      race.Code = "no-computer"        // this server has no computer players
	CodeInRace          race.Code = "in-race"            // queuing or starting a race while in a lobby race not over
)
