#include <skyfabric/links/ground_link.hpp>

#include <skyfabric/links/budget.hpp>
#include <skyfabric/physics/constants.hpp>

#include <algorithm>
#include <cmath>

namespace skyfabric::links {

namespace {
constexpr double planck_j_s = 6.62607015e-34;  // exact (SI 2019)
}

double slant_range_m(double elevation_rad, double site_radius_m, double satellite_radius_m) {
    const double c = site_radius_m * std::cos(elevation_rad);
    return std::sqrt(satellite_radius_m * satellite_radius_m - c * c) - site_radius_m * std::sin(elevation_rad);
}

double atmospheric_attenuation_db(double zenith_attenuation_db, double elevation_rad) {
    return zenith_attenuation_db / std::sin(std::max(elevation_rad, physics::pi / 180.0));
}

GroundLinkBudget optical_ground_link(const OpticalGroundLinkParameters& p, double range_m, double elevation_rad) {
    GroundLinkBudget b;
    b.range_m = range_m;
    b.free_space_loss_db = -10.0 * std::log10(free_space_path_factor(range_m, p.wavelength_m));
    b.gains_db = 10.0 * std::log10(aperture_gain(p.space_aperture_m, p.wavelength_m, p.aperture_efficiency) *
                                   aperture_gain(p.ground_aperture_m, p.wavelength_m, p.aperture_efficiency));
    b.atmospheric_attenuation_db = atmospheric_attenuation_db(p.zenith_attenuation_db, elevation_rad);
    const double received_dbw = 10.0 * std::log10(p.tx_power_w) + b.gains_db - b.free_space_loss_db -
                                b.atmospheric_attenuation_db - p.scintillation_margin_db - p.other_losses_db;
    b.received_power_dbm = received_dbw + 30.0;
    const double photon_j = planck_j_s * physics::speed_of_light_m_s / p.wavelength_m;
    const double rate = std::min(p.max_rate_bps, std::pow(10.0, received_dbw / 10.0) / (photon_j * p.photons_per_bit));
    b.rate_bps = rate >= p.min_rate_bps ? rate : 0.0;
    return b;
}

}  // namespace skyfabric::links
