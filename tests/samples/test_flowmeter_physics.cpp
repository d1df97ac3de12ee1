// The flow-meter well model against hand-computed values: Vogel inflow, the
// choke equation and its critical pressure ratio, gas and liquid densities,
// the tubing column, and the solved operating point.
#include <catch2/catch.hpp>
#include <cmath>

#include "samples/flowmeter/well_model.h"

using namespace flowmeter;

namespace {

// A mid-size naturally flowing well.
WellParams test_well() {
  WellParams w;
  w.depth_m = 2500.0;
  w.tubing_diameter_m = 0.1;
  w.friction_factor = 0.03;
  w.reservoir_pressure_bar = 280.0;
  w.reservoir_temperature_k = 363.0;
  w.ambient_temperature_k = 290.0;
  w.separator_pressure_bar = 30.0;
  w.flowline_drop_coeff = 0.004;
  w.oil_density = 850.0;
  w.mass_fractions = {0.3, 0.5, 0.2};
  w.liquid_rate_max = 40.0;
  w.choke_coeff = 0.002;
  return w;
}

}  // namespace

TEST_CASE("Vogel inflow: qmax at zero bottomhole pressure, zero at reservoir pressure", "[unit][flowmeter][physics]") {
  CHECK(vogel_liquid_rate(40.0, 0.0, 300.0) == Approx(40.0));
  CHECK(vogel_liquid_rate(40.0, 300.0, 300.0) == Approx(0.0).margin(1e-12));
  // r = 0.5: 1 - 0.2 * 0.5 - 0.8 * 0.25 = 0.7
  CHECK(vogel_liquid_rate(40.0, 150.0, 300.0) == Approx(28.0));
  // Above reservoir pressure nothing flows in (no negative inflow).
  CHECK(vogel_liquid_rate(40.0, 320.0, 300.0) == Approx(0.0).margin(1e-12));
}

TEST_CASE("choke flow is independent of downstream pressure below the critical ratio", "[unit][flowmeter][physics]") {
  // Choked: throat at 0.544 * 100 bar; w = 0.001 * sqrt(2 * 500 * 45.6e5) = 67.5278 kg/s.
  const double choked_30 = choke_mass_rate(0.001, 1.0, 500.0, 100.0, 30.0, 1.0);
  const double choked_50 = choke_mass_rate(0.001, 1.0, 500.0, 100.0, 50.0, 1.0);
  CHECK(choked_30 == Approx(67.5278).epsilon(1e-5));
  CHECK(choked_50 == Approx(choked_30).epsilon(1e-12));
  // Just at the critical ratio it is the same flow; above it the flow falls.
  CHECK(choke_mass_rate(0.001, 1.0, 500.0, 100.0, 54.4, 1.0) == Approx(choked_30).epsilon(1e-12));
  // Subcritical: w = 0.001 * sqrt(2 * 500 * 20e5) = 44.7214 kg/s.
  CHECK(choke_mass_rate(0.001, 1.0, 500.0, 100.0, 80.0, 1.0) == Approx(44.7214).epsilon(1e-5));
  // The two-phase multiplier divides under the root; half area halves the flow.
  CHECK(choke_mass_rate(0.001, 1.0, 500.0, 100.0, 80.0, 4.0) == Approx(44.7214 / 2.0).epsilon(1e-5));
  CHECK(choke_mass_rate(0.001, 0.5, 500.0, 100.0, 80.0, 1.0) == Approx(44.7214 / 2.0).epsilon(1e-5));
  // No flow against the pressure difference.
  CHECK(choke_mass_rate(0.001, 1.0, 500.0, 100.0, 100.0, 1.0) == 0.0);
  CHECK(choke_mass_rate(0.001, 1.0, 500.0, 100.0, 120.0, 1.0) == 0.0);
}

TEST_CASE("valve characteristics map opening to area", "[unit][flowmeter][physics]") {
  CHECK(valve_area_fraction(ValveCharacteristic::Linear, 0.25) == Approx(0.25));
  CHECK(valve_area_fraction(ValveCharacteristic::QuickOpen, 0.25) == Approx(0.5));
  CHECK(valve_area_fraction(ValveCharacteristic::EqualPercentage, 0.0) == Approx(0.0).margin(1e-12));
  CHECK(valve_area_fraction(ValveCharacteristic::EqualPercentage, 1.0) == Approx(1.0));
  // (30^0.5 - 1) / 29 = (5.477226 - 1) / 29 = 0.154387
  CHECK(valve_area_fraction(ValveCharacteristic::EqualPercentage, 0.5) == Approx(0.154387).epsilon(1e-5));
  CHECK(valve_area_fraction(ValveCharacteristic::Linear, 1.5) == Approx(1.0));
}

TEST_CASE("gas, liquid and mixture densities", "[unit][flowmeter][physics]") {
  // 100 bar, 350 K: 1e7 * 0.019 / (0.9 * 8.314 * 350) = 72.5492 kg/m3
  CHECK(gas_density(100.0, 350.0) == Approx(72.5492).epsilon(1e-5));
  WellParams w = test_well();
  w.mass_fractions = {0.0, 0.5, 0.5};
  // 1 / (0.5 / 850 + 0.5 / 1030) = 931.383 kg/m3
  CHECK(liquid_density(w) == Approx(931.383).epsilon(1e-5));
  // Half gas by mass at 100 bar / 350 K with 931.383 kg/m3 liquid: 1 / (0.5 / 72.5492 + 0.5 / 931.383)
  CHECK(mixture_density(0.5, 100.0, 350.0, 931.383) == Approx(134.616).epsilon(1e-4));
  CHECK(mixture_density(0.0, 100.0, 350.0, 931.383) == Approx(931.383));
}

TEST_CASE("a static liquid column loses rho g L", "[unit][flowmeter][physics]") {
  WellParams w = test_well();
  w.depth_m = 3000.0;
  w.mass_fractions = {0.0, 0.5, 0.5};
  // 300 bar - 931.383 * 9.81 * 3000 / 1e5 = 25.894 bar
  CHECK(tubing_outlet_pressure(w, 300.0, 0.0, 0.0) == Approx(25.894).epsilon(1e-4));
  // Too heavy to reach the surface from 200 bar.
  CHECK(tubing_outlet_pressure(w, 200.0, 0.0, 0.0) < 0.0);
  // Flow adds friction: the outlet pressure drops further.
  CHECK(tubing_outlet_pressure(w, 300.0, 30.0, 0.0) < 25.894);
}

TEST_CASE("the solved operating point balances choke flow and inflow", "[unit][flowmeter][physics]") {
  const WellParams w = test_well();
  const WellControls c{0.6, 0.0, w.reservoir_pressure_bar};
  const WellState s = solve_well(w, c);
  REQUIRE(s.flowing);
  CHECK(s.p_bh_bar > 1.0);
  CHECK(s.p_bh_bar < w.reservoir_pressure_bar);
  CHECK(s.p_wh_bar > s.p_dc_bar);
  const double liquid = vogel_liquid_rate(w.liquid_rate_max, s.p_bh_bar, w.reservoir_pressure_bar);
  const double total = liquid / (1.0 - w.mass_fractions[0]);
  CHECK(s.total_mass_rate == Approx(total).epsilon(1e-9));
  const double rho = mixture_density(w.mass_fractions[0], s.p_wh_bar, s.t_wh_k, liquid_density(w));
  const double phi = 1.0 + 4.0 * 0.3 * 0.7 * w.two_phase_factor;
  const double choke = choke_mass_rate(w.choke_coeff, 0.6, rho, s.p_wh_bar, s.p_dc_bar, phi);
  CHECK(choke == Approx(total).epsilon(1e-6));
  // Rates split by mass fraction: oil 0.5 / 850, water 0.2 / 1030, gas 0.3 / 0.85 per kg of inflow.
  CHECK(s.oil_sm3h == Approx(total * 0.5 / 850.0 * 3600.0).epsilon(1e-9));
  CHECK(s.water_sm3h == Approx(total * 0.2 / 1030.0 * 3600.0).epsilon(1e-9));
  CHECK(s.gas_sm3h == Approx(total * 0.3 / 0.85 * 3600.0).epsilon(1e-9));
  // Opening the choke further produces more.
  CHECK(solve_well(w, {1.0, 0.0, w.reservoir_pressure_bar}).total_mass_rate > s.total_mass_rate);
}

TEST_CASE("a shut-in or dead well has zero rates and static pressures", "[unit][flowmeter][physics]") {
  const WellParams w = test_well();
  const WellState shut = solve_well(w, {0.0, 0.0, w.reservoir_pressure_bar});
  CHECK_FALSE(shut.flowing);
  CHECK(shut.oil_sm3h == 0.0);
  CHECK(shut.gas_sm3h == 0.0);
  CHECK(shut.water_sm3h == 0.0);
  CHECK(shut.p_bh_bar == Approx(w.reservoir_pressure_bar));
  CHECK(shut.p_dc_bar == Approx(w.separator_pressure_bar));
  // A reservoir depleted below the separator pressure (30 bar) cannot push any flow: no root, a dead well.
  const WellState dead = solve_well(w, {1.0, 0.0, 25.0});
  CHECK_FALSE(dead.flowing);
  CHECK(dead.oil_sm3h == 0.0);
}
