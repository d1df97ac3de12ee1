// Nodal analysis of one producing well in fp64: Vogel inflow, tubing pressure
// drop, a choke with a critical pressure ratio, solved for bottomhole pressure
// by bisection. Pressures in bar, temperatures in K, mass rates in kg/s,
// reported volume rates in Sm3/h.
#pragma once

#include <array>

namespace flowmeter {

inline constexpr double kGravity = 9.81;             // m/s2
inline constexpr double kCriticalPressureRatio = 0.544;
inline constexpr double kWaterDensity = 1030.0;      // kg/m3, produced brine
inline constexpr double kGasStandardDensity = 0.85;  // kg/Sm3
inline constexpr double kPaPerBar = 1e5;

// How choke opening u in [0, 1] maps to the fraction of full flow area.
enum class ValveCharacteristic { Linear, QuickOpen, EqualPercentage };

// The static description of one well, drawn once per well.
struct WellParams {
  double depth_m = 3000.0;                 // L, measured depth of the reservoir
  double tubing_diameter_m = 0.1;          // D
  double friction_factor = 0.03;           // Darcy f_D
  double reservoir_pressure_bar = 300.0;   // initial p_res
  double reservoir_temperature_k = 380.0;  // T_res
  double ambient_temperature_k = 290.0;    // surface temperature
  double separator_pressure_bar = 40.0;
  double flowline_drop_coeff = 0.004;      // bar per (kg/s)^2 between choke and separator
  double oil_density = 850.0;              // kg/m3 at standard conditions
  std::array<double, 3> mass_fractions{0.3, 0.5, 0.2};  // inflow gas, oil, water
  double liquid_rate_max = 40.0;           // Vogel w_l,max in kg/s
  double choke_coeff = 0.0015;             // K_c in m2 (discharge coefficient times area)
  ValveCharacteristic valve = ValveCharacteristic::Linear;
  double two_phase_factor = 1.0;           // scales the two-phase multiplier Phi
  bool gas_lift = false;
};

// What changes with time: the operator's settings and the reservoir.
struct WellControls {
  double choke_opening = 0.5;           // u in [0, 1]; 0 is shut in
  double lift_gas_sm3h = 0.0;           // QGL
  double reservoir_pressure_bar = 300.0;
};

// One solved operating point: the gauges and the true rates.
struct WellState {
  bool flowing = false;  // false: no root, a dead well with zero rates
  double p_bh_bar = 0.0, p_wh_bar = 0.0, p_dc_bar = 0.0;
  double t_bh_k = 0.0, t_wh_k = 0.0;
  double total_mass_rate = 0.0;  // kg/s through the choke, lift gas included
  double oil_sm3h = 0.0, gas_sm3h = 0.0, water_sm3h = 0.0;
};

// Vogel's inflow: w_l,max (1 - 0.2 r - 0.8 r^2) with r = p_bh / p_res, clamped to [0, w_l,max].
double vogel_liquid_rate(double liquid_rate_max, double p_bh_bar, double p_res_bar);

// Fraction of full choke area at opening u for a valve characteristic.
double valve_area_fraction(ValveCharacteristic valve, double opening);

// Choke mass flow in kg/s: K_c sigma sqrt(2 rho (p_in - max(p_out, 0.544 p_in)) / Phi);
// zero when p_out >= p_in. Flow is choked (independent of p_out) below the critical ratio.
double choke_mass_rate(double choke_coeff, double area_fraction, double density, double p_in_bar,
                       double p_out_bar, double two_phase_multiplier);

// Ideal-gas density (with a constant compressibility factor) in kg/m3.
double gas_density(double p_bar, double t_k);

// No-slip mixture density for a gas mass fraction x and a liquid density.
double mixture_density(double gas_mass_fraction, double p_bar, double t_k, double liquid_density);

// Liquid density of the well's oil-water mix (by its inflow mass fractions).
double liquid_density(const WellParams& well);

// Wellhead temperature: reservoir temperature relaxing to ambient over the
// tubing, the slower the flow the cooler.
double wellhead_temperature(const WellParams& well, double total_mass_rate);

// Marches the tubing upwards from p_bh (hydrostatic plus Darcy friction);
// returns the wellhead pressure, or a negative value when the column cannot
// reach the surface.
double tubing_outlet_pressure(const WellParams& well, double p_bh_bar, double total_mass_rate,
                              double gas_mass_fraction);

// Solves the well's operating point by bisection on p_bh in fp64.
WellState solve_well(const WellParams& well, const WellControls& controls);

}  // namespace flowmeter
