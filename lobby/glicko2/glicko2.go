// Package glicko2 is Mark Glickman's Glicko-2 rating system, from his paper
// "Example of the Glicko-2 system" (2013): a rating, its deviation (how
// unsure the rating is) and a volatility (how erratic the player is),
// updated from the results of one rating period.
package glicko2

import "math"

// Defaults for a new player and for the system, from the paper.
const (
	// DefaultRating is a new player's rating, on the Glicko scale.
	DefaultRating = 1500.0
	// DefaultDeviation is a new player's rating deviation: very unsure.
	// It is also the largest deviation a rating can have.
	DefaultDeviation = 350.0
	// DefaultVolatility is a new player's volatility.
	DefaultVolatility = 0.06
	// DefaultTau constrains how fast volatility changes; the paper suggests
	// 0.3 to 1.2, and uses 0.5 in its example.
	DefaultTau = 0.5
	// scale converts between the Glicko scale and Glicko-2's (step 2).
	scale = 173.7178
	// epsilon is the convergence tolerance of the volatility iteration
	// (step 5).
	epsilon = 0.000001
)

// Rating is a player's Glicko-2 state on the Glicko scale (1500 centred).
type Rating struct {
	Rating     float64 `json:"rating"`
	Deviation  float64 `json:"deviation"`
	Volatility float64 `json:"volatility"`
}

// New is a new player's rating.
func New() Rating {
	return Rating{Rating: DefaultRating, Deviation: DefaultDeviation, Volatility: DefaultVolatility}
}

// Result is one game of a rating period against an opponent rated
// Opponent: Score is 1 for a win, 0.5 for a draw and 0 for a loss.
type Result struct {
	Opponent Rating
	Score    float64
}

// Score values of a Result.
const (
	Win  = 1.0
	Draw = 0.5
	Loss = 0.0
)

func g(phi float64) float64 { return 1 / math.Sqrt(1+3*phi*phi/(math.Pi*math.Pi)) }

func expect(mu, muj, phij float64) float64 { return 1 / (1 + math.Exp(-g(phij)*(mu-muj))) }

// Update is the player's rating after a rating period with these results,
// with system constant tau. With no results only the deviation grows (step
// 6 of the paper).
func Update(p Rating, results []Result, tau float64) Rating {
	mu := (p.Rating - DefaultRating) / scale
	phi := p.Deviation / scale
	sigma := p.Volatility
	if len(results) == 0 {
		phiStar := math.Sqrt(phi*phi + sigma*sigma)
		return Rating{Rating: p.Rating, Deviation: math.Min(phiStar*scale, DefaultDeviation), Volatility: sigma}
	}
	// Steps 3 and 4: the estimated variance v and improvement delta.
	var vInv, sum float64
	for _, r := range results {
		muj := (r.Opponent.Rating - DefaultRating) / scale
		phij := r.Opponent.Deviation / scale
		gj := g(phij)
		e := expect(mu, muj, phij)
		vInv += gj * gj * e * (1 - e)
		sum += gj * (r.Score - e)
	}
	v := 1 / vInv
	delta := v * sum
	// Step 5: the new volatility, by the Illinois algorithm.
	a := math.Log(sigma * sigma)
	f := func(x float64) float64 {
		ex := math.Exp(x)
		d := phi*phi + v + ex
		return ex*(delta*delta-phi*phi-v-ex)/(2*d*d) - (x-a)/(tau*tau)
	}
	A := a
	var B float64
	if delta*delta > phi*phi+v {
		B = math.Log(delta*delta - phi*phi - v)
	} else {
		k := 1.0
		for f(a-k*tau) < 0 {
			k++
		}
		B = a - k*tau
	}
	fA, fB := f(A), f(B)
	for math.Abs(B-A) > epsilon {
		C := A + (A-B)*fA/(fB-fA)
		fC := f(C)
		if fC*fB <= 0 {
			A, fA = B, fB
		} else {
			fA /= 2
		}
		B, fB = C, fC
	}
	sigmaNew := math.Exp(A / 2)
	// Steps 6 to 8: the new deviation and rating, back on the Glicko scale.
	phiStar := math.Sqrt(phi*phi + sigmaNew*sigmaNew)
	phiNew := 1 / math.Sqrt(1/(phiStar*phiStar)+1/v)
	muNew := mu + phiNew*phiNew*sum
	return Rating{
		Rating:     scale*muNew + DefaultRating,
		Deviation:  math.Min(scale*phiNew, DefaultDeviation),
		Volatility: sigmaNew,
	}
}
