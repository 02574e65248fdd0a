#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/geodetic.hpp>
#include <skyfabric/physics/time.hpp>

#include <cmath>

namespace skyfabric::physics {

namespace {
constexpr double wgs84_a = earth_equatorial_radius_m;
constexpr double wgs84_f = earth_flattening;
constexpr double wgs84_b = wgs84_a * (1.0 - wgs84_f);
constexpr double wgs84_e2 = wgs84_f * (2.0 - wgs84_f);                 // first eccentricity squared
constexpr double wgs84_ep2 = wgs84_e2 / ((1.0 - wgs84_f) * (1.0 - wgs84_f));  // second, e'^2 = e^2/(1-e^2)
}  // namespace

Eigen::Vector3d eci_to_ecef(const Eigen::Vector3d& r, double theta) {
    const double c = std::cos(theta);
    const double s = std::sin(theta);
    return {c * r.x() + s * r.y(), -s * r.x() + c * r.y(), r.z()};
}

Geodetic ecef_to_geodetic(const Eigen::Vector3d& r) {
    Geodetic g;
    const double p = std::hypot(r.x(), r.y());
    g.longitude_rad = std::atan2(r.y(), r.x());
    if (p == 0.0 && r.z() == 0.0) return g;  // the centre: undefined, report the origin
    // Bowring iteration on the parametric (reduced) latitude beta.
    double beta = std::atan2(r.z(), (1.0 - wgs84_f) * p);
    double phi = 0.0;
    for (int i = 0; i < 4; ++i) {
        const double sb = std::sin(beta);
        const double cb = std::cos(beta);
        phi = std::atan2(r.z() + wgs84_ep2 * wgs84_b * sb * sb * sb, p - wgs84_e2 * wgs84_a * cb * cb * cb);
        beta = std::atan2((1.0 - wgs84_f) * std::sin(phi), std::cos(phi));
    }
    const double sphi = std::sin(phi);
    const double n = wgs84_a / std::sqrt(1.0 - wgs84_e2 * sphi * sphi);
    g.latitude_rad = phi;
    g.altitude_m = p * std::cos(phi) + r.z() * sphi - wgs84_a * wgs84_a / n;
    return g;
}

Eigen::Vector3d geodetic_to_ecef(const Geodetic& g) {
    const double sphi = std::sin(g.latitude_rad);
    const double cphi = std::cos(g.latitude_rad);
    const double n = wgs84_a / std::sqrt(1.0 - wgs84_e2 * sphi * sphi);
    return {(n + g.altitude_m) * cphi * std::cos(g.longitude_rad), (n + g.altitude_m) * cphi * std::sin(g.longitude_rad),
            (n * (1.0 - wgs84_e2) + g.altitude_m) * sphi};
}

Geodetic eci_to_geodetic(const Eigen::Vector3d& r, double epoch_julian_date_days, double elapsed_s) {
    return ecef_to_geodetic(eci_to_ecef(r, greenwich_sidereal_angle_rad(epoch_julian_date_days, elapsed_s)));
}

}  // namespace skyfabric::physics
