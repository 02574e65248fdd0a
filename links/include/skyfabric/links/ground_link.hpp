#pragma once
// Satellite-to-ground link budget (docs/inference.md "Serving from the ground"; sources in
// docs/references.md "Ground segment"): an optical link through the atmosphere, or a Ka-band RF
// link at a fixed data rate as the fallback when clouds block the optical one. Pure functions on
// plain structs; SI units, unit suffix on every name.
//
// Optical: P_R = P_T · G_T · G_R · (λ / 4πd)² · 10^(−(A_atm + M_scint + L_other)/10), G = η (πD/λ)²
// (the far-field Friis budget of budget.hpp: at hundreds of km the Fresnel number of these apertures
// is ≪ 1). Atmosphere: the zenith attenuation scaled by the air mass 1/sin(elevation) (a plane-parallel
// atmosphere; within 1 % of a spherical one above 10°). Turbulence (scintillation, beam wander) is a
// stated margin, not a model. Rate: the receiver needs `photons_per_bit` photons per bit, so the link
// carries min(max_rate_bps, P_R / (h ν · photons_per_bit)); below min_rate_bps it does not close (0).
// The uplink is taken as the same budget in reverse (same apertures, same margin).

#include <skyfabric/physics/enum_names.hpp>

namespace skyfabric::links {

enum class GroundLinkKind : unsigned char { optical = 0, ka_band = 1 };
inline constexpr auto ground_link_kind_names =
    physics::enum_names<GroundLinkKind>({{GroundLinkKind::optical, "optical"}, {GroundLinkKind::ka_band, "ka_band"}});

struct OpticalGroundLinkParameters {
    double ground_aperture_m = 1.0;      // the station's telescope
    double space_aperture_m = 0.1;       // the satellite's ground terminal
    double tx_power_w = 1.0;
    double wavelength_m = 1.55e-6;
    double aperture_efficiency = 0.8;    // each end
    double zenith_attenuation_db = 1.0;  // clear-sky absorption and scattering at the zenith
    double scintillation_margin_db = 3.0;
    double other_losses_db = 3.0;        // optics, pointing
    double photons_per_bit = 100.0;      // receiver sensitivity
    double max_rate_bps = 10e9;          // the terminals' line rate
    double min_rate_bps = 1e6;           // below this the link is counted closed
    bool operator==(const OpticalGroundLinkParameters&) const = default;
};

// Slant range to a satellite at orbit radius r seen at elevation ε from a site at radius R_s:
// d = √(r² − R_s² cos² ε) − R_s sin ε (the law of cosines in the centre–site–satellite triangle).
double slant_range_m(double elevation_rad, double site_radius_m, double satellite_radius_m);

// A_zenith / sin(ε), ε clamped at 1° (the plane-parallel air mass diverges at the horizon).
double atmospheric_attenuation_db(double zenith_attenuation_db, double elevation_rad);

struct GroundLinkBudget {
    double range_m = 0.0;
    double free_space_loss_db = 0.0;       // −10 log10 (λ/4πd)², > 0
    double gains_db = 0.0;                 // G_T + G_R
    double atmospheric_attenuation_db = 0.0;
    double received_power_dbm = 0.0;
    double rate_bps = 0.0;                 // 0: does not close
};

GroundLinkBudget optical_ground_link(const OpticalGroundLinkParameters& p, double range_m, double elevation_rad);

}  // namespace skyfabric::links
