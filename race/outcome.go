package race

// Outcome is how a race ended, as Result.Outcome carries it.
type Outcome string

// The outcomes of a race.
const (
	OutcomeWin     Outcome = "win"     // a seat won (Result.Winner)
	OutcomeDraw    Outcome = "draw"    // decided, nobody won
	OutcomeAborted Outcome = "aborted" // ended without a rated result
	OutcomeSolo    Outcome = "solo"    // a solo race ended without the deal won: Scores tell
)

// Reason is why a race ended, as Result.Reason carries it.
type Reason string

// The reasons a race ends.
const (
	ReasonWonDeal     Reason = "won-deal"      // the winner won the deal
	ReasonMoreCards   Reason = "more-cards"    // both were out; more foundation cards won
	ReasonPassed      Reason = "passed"        // the other was out and this one got more cards
	ReasonTime        Reason = "time"          // the time limit; more foundation cards won
	ReasonEqualCards  Reason = "equal-cards"   // a draw: as many foundation cards each
	ReasonForfeit     Reason = "forfeit"       // a disconnected player did not come back in time
	ReasonNoFirstMove Reason = "no-first-move" // aborted: a player did not move in time
	ReasonLeft        Reason = "left"          // aborted: a player left before the start
	ReasonExpired     Reason = "expired"       // aborted: nobody came to play in time
	ReasonShutdown    Reason = "shutdown"      // aborted: the server shut down
	ReasonOut         Reason = "out"           // a solo race: the player is stuck or resigned
)
