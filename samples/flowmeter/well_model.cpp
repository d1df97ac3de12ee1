// Nodal analysis of one well: inflow, tubing, choke, and the bisection that joins them.
#include "samples/flowmeter/well_model.h"

#include <algorithm>
#include <cmath>

namespace flowmeter {
namespace {

constexpr double kGasMolarMass = 0.019;     // kg/mol, a gas of specific gravity about 0.65
constexpr double kGasCompressibility = 0.9; // Z, held constant
constexpr double kGasConstant = 8.314;      // J/(mol K)
constexpr int kTubingSegments = 20;
constexpr int kBisectionSteps = 40;
constexpr double kLowestPressureBar = 1.0;
constexpr double kPi = 3.14159265358979323846;

// Mass rates entering the tubing at one bottomhole pressure.
struct Inflow {
  double liquid = 0.0, gas = 0.0, lift_gas = 0.0;
  double total() const { return liquid + gas + lift_gas; }
  double gas_fraction(double static_fraction) const {
    return total() > 0.0 ? (gas + lift_gas) / total() : static_fraction;
  }
};

// Vogel inflow at p_bh plus the solution gas and the injected lift gas.
Inflow inflow_at(const WellParams& well, const WellControls& controls, double p_bh_bar) {
  Inflow in;
  const double f_gas = well.mass_fractions[0];
  in.liquid = vogel_liquid_rate(well.liquid_rate_max, p_bh_bar, controls.reservoir_pressure_bar);
  in.gas = f_gas < 1.0 ? in.liquid * f_gas / (1.0 - f_gas) : 0.0;
  in.lift_gas = well.gas_lift ? controls.lift_gas_sm3h * kGasStandardDensity / 3600.0 : 0.0;
  return in;
}

// The two-phase multiplier Phi: 1 for a single phase, largest for an even mix.
double two_phase_multiplier(const WellParams& well, double gas_fraction) {
  return 1.0 + 4.0 * gas_fraction * (1.0 - gas_fraction) * well.two_phase_factor;
}

// Everything downstream of the sandface for one bottomhole pressure.
struct Evaluation {
  Inflow inflow;
  double p_wh = 0.0, p_dc = 0.0, t_wh = 0.0, choke_rate = 0.0;
  double residual() const { return choke_rate - inflow.total(); }
};

// Follows the flow from the bottomhole through the tubing to the choke.
Evaluation evaluate(const WellParams& well, const WellControls& controls, double p_bh_bar) {
  Evaluation e;
  e.inflow = inflow_at(well, controls, p_bh_bar);
  const double w = e.inflow.total();
  const double x = e.inflow.gas_fraction(well.mass_fractions[0]);
  e.t_wh = wellhead_temperature(well, w);
  e.p_wh = tubing_outlet_pressure(well, p_bh_bar, w, x);
  e.p_dc = well.separator_pressure_bar + well.flowline_drop_coeff * w * w;
  if (e.p_wh <= 0.0) return e;
  const double rho = mixture_density(x, e.p_wh, e.t_wh, liquid_density(well));
  e.choke_rate = choke_mass_rate(well.choke_coeff, valve_area_fraction(well.valve, controls.choke_opening), rho,
                                 e.p_wh, e.p_dc, two_phase_multiplier(well, x));
  return e;
}

// A dead or shut-in well: static column, no flow, gauges at rest.
WellState dead_state(const WellParams& well, const WellControls& controls) {
  WellState s;
  s.p_bh_bar = controls.reservoir_pressure_bar;
  s.t_bh_k = well.reservoir_temperature_k;
  s.t_wh_k = wellhead_temperature(well, 0.0);
  s.p_wh_bar = std::max(kLowestPressureBar,
                        tubing_outlet_pressure(well, s.p_bh_bar, 0.0, well.mass_fractions[0]));
  s.p_dc_bar = well.separator_pressure_bar;
  return s;
}

}  // namespace

// Vogel's inflow performance relationship.
double vogel_liquid_rate(double liquid_rate_max, double p_bh_bar, double p_res_bar) {
  if (p_res_bar <= 0.0) return 0.0;
  const double r = std::clamp(p_bh_bar / p_res_bar, 0.0, 1.0);
  return liquid_rate_max * std::max(0.0, 1.0 - 0.2 * r - 0.8 * r * r);
}

// Valve characteristic sigma(u).
double valve_area_fraction(ValveCharacteristic valve, double opening) {
  const double u = std::clamp(opening, 0.0, 1.0);
  switch (valve) {
    case ValveCharacteristic::Linear: return u;
    case ValveCharacteristic::QuickOpen: return std::sqrt(u);
    case ValveCharacteristic::EqualPercentage: return (std::pow(30.0, u) - 1.0) / 29.0;
  }
  return u;
}

// Choke equation with the critical pressure ratio.
double choke_mass_rate(double choke_coeff, double area_fraction, double density, double p_in_bar,
                       double p_out_bar, double two_phase_multiplier) {
  if (p_in_bar <= 0.0 || p_out_bar >= p_in_bar || area_fraction <= 0.0) return 0.0;
  const double p_throat = std::max(p_out_bar, kCriticalPressureRatio * p_in_bar);
  const double dp_pa = (p_in_bar - p_throat) * kPaPerBar;
  return choke_coeff * area_fraction * std::sqrt(2.0 * density * dp_pa / two_phase_multiplier);
}

// Ideal gas with a constant Z.
double gas_density(double p_bar, double t_k) {
  return std::max(p_bar, 0.01) * kPaPerBar * kGasMolarMass / (kGasCompressibility * kGasConstant * t_k);
}

// No-slip mixture: specific volumes add by mass fraction.
double mixture_density(double gas_mass_fraction, double p_bar, double t_k, double liquid_density) {
  const double x = std::clamp(gas_mass_fraction, 0.0, 1.0);
  return 1.0 / (x / gas_density(p_bar, t_k) + (1.0 - x) / liquid_density);
}

// Oil and water mixed by their inflow mass fractions.
double liquid_density(const WellParams& well) {
  const double oil = well.mass_fractions[1], water = well.mass_fractions[2];
  if (oil + water <= 0.0) return well.oil_density;
  return 1.0 / ((oil / (oil + water)) / well.oil_density + (water / (oil + water)) / kWaterDensity);
}

// Exponential relaxation with a length that grows with the mass rate.
double wellhead_temperature(const WellParams& well, double total_mass_rate) {
  const double relaxation_m = 300.0 + 80.0 * std::max(total_mass_rate, 0.0);
  return well.ambient_temperature_k +
         (well.reservoir_temperature_k - well.ambient_temperature_k) * std::exp(-well.depth_m / relaxation_m);
}

// Explicit march over kTubingSegments segments, temperature linear between the ends.
double tubing_outlet_pressure(const WellParams& well, double p_bh_bar, double total_mass_rate,
                              double gas_mass_fraction) {
  const double area = kPi * well.tubing_diameter_m * well.tubing_diameter_m / 4.0;
  const double dz = well.depth_m / kTubingSegments;
  const double t_top = wellhead_temperature(well, total_mass_rate);
  const double rho_liquid = liquid_density(well);
  double p = p_bh_bar;
  for (int i = 0; i < kTubingSegments; ++i) {
    const double along = (i + 0.5) / kTubingSegments;
    const double t = well.reservoir_temperature_k + (t_top - well.reservoir_temperature_k) * along;
    const double rho = mixture_density(gas_mass_fraction, p, t, rho_liquid);
    const double friction_pa_per_m =
        well.friction_factor * total_mass_rate * total_mass_rate / (2.0 * well.tubing_diameter_m * rho * area * area);
    p -= (rho * kGravity + friction_pa_per_m) * dz / kPaPerBar;
    if (p < kLowestPressureBar) return -1.0;
  }
  return p;
}

// Bisection on p_bh between 1 bar and p_res for choke flow = inflow.
WellState solve_well(const WellParams& well, const WellControls& controls) {
  if (controls.choke_opening <= 0.0 || controls.reservoir_pressure_bar <= kLowestPressureBar)
    return dead_state(well, controls);
  double lo = kLowestPressureBar, hi = controls.reservoir_pressure_bar;
  if (evaluate(well, controls, hi).residual() <= 0.0) return dead_state(well, controls);
  for (int i = 0; i < kBisectionSteps; ++i) {
    const double mid = 0.5 * (lo + hi);
    (evaluate(well, controls, mid).residual() > 0.0 ? hi : lo) = mid;
  }
  const Evaluation e = evaluate(well, controls, hi);
  if (e.choke_rate <= 0.0) return dead_state(well, controls);
  WellState s;
  s.flowing = true;
  s.p_bh_bar = hi;
  s.p_wh_bar = e.p_wh;
  s.p_dc_bar = e.p_dc;
  s.t_bh_k = well.reservoir_temperature_k;
  s.t_wh_k = e.t_wh;
  s.total_mass_rate = e.inflow.total();
  const double oil = well.mass_fractions[1], water = well.mass_fractions[2];
  const double liquid_split = oil + water > 0.0 ? oil / (oil + water) : 1.0;
  s.oil_sm3h = e.inflow.liquid * liquid_split / well.oil_density * 3600.0;
  s.water_sm3h = e.inflow.liquid * (1.0 - liquid_split) / kWaterDensity * 3600.0;
  s.gas_sm3h = e.inflow.gas / kGasStandardDensity * 3600.0;
  return s;
}

}  // namespace flowmeter
