// Trial scheduling (jit/cost/trial.h): which candidate the next trial call
// runs, and when a trial has what it needs, whatever happens to the tickets.
#include <catch2/catch.hpp>

#include <optional>

#include "jit/cost/trial.h"

namespace cost = canary::jit::cost;

namespace {

cost::Trial trial_of(int candidates) {
  cost::Trial t;
  for (int i = 0; i < candidates; ++i) t.candidates.emplace_back();
  return t;
}

cost::TrialSample ran(bool timed = true, bool shadowed = false) {
  cost::TrialSample s;
  s.call_us = 10.0;
  s.candidate_ran = true;
  s.timed = timed;
  s.shadowed = shadowed;
  return s;
}

cost::TrialSample refused_in_shared_shadow() {
  cost::TrialSample s;
  s.timed = false;  // another candidate's call re-ran it for a shared shadow; its guards refused
  return s;
}

// Plays one trial call as the engine and a session do: a ticket, then its
// sample; a shadowed call also re-runs (untimed) every other candidate that
// still wants a shadow, as Engine::shadow_candidates hands them out.
std::optional<std::uint32_t> play(cost::Trial& t, const canary::CostModelOptions& o, const cost::TrialSample& s) {
  const std::optional<std::uint32_t> c = cost::next_candidate(t, o, true);
  if (!c) return c;
  ++t.candidates[*c].issued;
  ++t.tickets;
  if (s.shadowed)
    for (std::uint32_t i = 0; i < t.candidates.size(); ++i)
      if (i != *c && cost::wants_shadow(t.candidates[i], o)) cost::add_sample(t.candidates[i], ran(false, true));
  cost::add_sample(t.candidates[*c], s);
  return c;
}

// Plays calls whose candidate always runs (shadowed once its latency samples
// are in) until the trial is complete; returns how many it took.
int play_until_complete(cost::Trial& t, const canary::CostModelOptions& o) {
  int calls = 0;
  while (!cost::trial_complete(t, o) && calls < 100) {
    const auto c = cost::next_candidate(t, o, true);
    REQUIRE(c);  // while the trial is incomplete, some call can help it
    const bool shadow = t.candidates[*c].measured.latency_us.size() >= static_cast<std::size_t>(o.trial_calls);
    play(t, o, ran(true, shadow));
    ++calls;
  }
  CHECK(cost::trial_complete(t, o));
  return calls;
}

}  // namespace

TEST_CASE("trial schedule: each candidate gets a warm-up, its timed calls and a shadow, then the trial is complete",
          "[unit][cost]") {
  canary::CostModelOptions o;
  o.trial_calls = 3;
  o.shadow_samples = 1;
  cost::Trial t = trial_of(3);
  // Warm-up and 3 timed calls each, then one shadowed call that re-runs
  // the other two for the same reference run.
  CHECK(play_until_complete(t, o) == 3 * (1 + 3) + 1);
  for (const cost::TrialCandidate& c : t.candidates) {
    CHECK(c.measured.latency_us.size() >= 3);
    CHECK(c.measured.shadow_calls == 1);
  }
}

TEST_CASE("trial schedule: a ticket that ends without a timed sample is made up, never waited for forever",
          "[unit][cost]") {
  // A ticket whose call ended before the candidate ran leaves no sample (a
  // session hands such tickets back, but one handed out to a session that
  // goes away is lost all the same); a refusal seen in another candidate's
  // shared shadow counts as refused without a ticket of its own. Either way
  // the candidate is scheduled again until it has its timed calls.
  canary::CostModelOptions o;
  o.trial_calls = 2;
  o.shadow_samples = 1;
  cost::Trial t = trial_of(2);
  ++t.candidates[1].issued;  // the lost ticket
  ++t.tickets;
  SECTION("a lost ticket") { CHECK(t.candidates[1].refused == 0); }
  SECTION("a lost ticket and a refusal in a shared shadow") {
    cost::add_sample(t.candidates[1], refused_in_shared_shadow());
    CHECK(t.candidates[1].refused == 1);
  }
  play_until_complete(t, o);
  CHECK(t.candidates[1].measured.latency_us.size() >= 2);
  CHECK(t.candidates[1].measured.shadow_calls == 1);
}

TEST_CASE("trial schedule: a candidate whose guards refuse trial_calls calls stops being scheduled", "[unit][cost]") {
  canary::CostModelOptions o;
  o.trial_calls = 2;
  o.shadow_samples = 1;
  cost::Trial t = trial_of(1);
  cost::TrialSample refused;
  refused.call_us = 10.0;
  for (int i = 0; i < 2; ++i) REQUIRE(play(t, o, refused) == 0u);
  CHECK_FALSE(cost::next_candidate(t, o, true));
  CHECK(cost::trial_complete(t, o));
}
