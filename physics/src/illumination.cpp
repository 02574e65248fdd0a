#include <skyfabric/physics/illumination.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/orbit.hpp>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>

namespace skyfabric::physics {

Eigen::Vector3d sun_position_eci_m(double julian_date_days) {
    const double g = (357.528 + 0.9856003 * (julian_date_days - 2451545.0)) * pi / 180.0;
    const double distance_au = 1.00014 - 0.01671 * std::cos(g) - 0.00014 * std::cos(2.0 * g);
    return sun_direction_eci(julian_date_days) * distance_au * astronomical_unit_m;
}

double shadow_fraction(const Eigen::Vector3d& r, const Eigen::Vector3d& sun, ShadowModel model) {
    if (model == ShadowModel::cylindrical) {
        const Eigen::Vector3d s = sun.normalized();
        const double along = r.dot(s);
        return along < 0.0 && (r - along * s).norm() < earth_shadow_radius_m ? 1.0 : 0.0;
    }
    const Eigen::Vector3d to_sun = sun - r;
    const double a = std::asin(std::min(1.0, sun_radius_m / to_sun.norm()));    // Sun's apparent radius
    const double b = std::asin(std::min(1.0, earth_shadow_radius_m / r.norm()));  // Earth's
    const double c = std::acos(std::clamp(-r.dot(to_sun) / (r.norm() * to_sun.norm()), -1.0, 1.0));  // separation
    if (c >= a + b) return 0.0;          // disks apart: full sunlight
    if (c <= b - a) return 1.0;          // Sun behind the Earth: umbra
    if (c <= a - b) return b * b / (a * a);  // Earth inside the Sun's disk (annular)
    const double x = (c * c + a * a - b * b) / (2.0 * c);
    const double y = std::sqrt(std::max(0.0, a * a - x * x));
    const double overlap = a * a * std::acos(std::clamp(x / a, -1.0, 1.0)) +
                           b * b * std::acos(std::clamp((c - x) / b, -1.0, 1.0)) - c * y;
    return std::clamp(overlap / (pi * a * a), 0.0, 1.0);
}

double beta_angle_rad(const Eigen::Vector3d& r, const Eigen::Vector3d& v, const Eigen::Vector3d& sun) {
    return std::asin(std::clamp(r.cross(v).normalized().dot(sun.normalized()), -1.0, 1.0));
}

}  // namespace skyfabric::physics
