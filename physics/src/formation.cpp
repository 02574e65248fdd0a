#include <skyfabric/physics/formation.hpp>

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/relative_motion.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace skyfabric::physics {
namespace {

// Rates of the (trimmed) in-plane and cross-track oscillations; c = 1 without the trim.
struct Rates {
    double nc;       // along-track coupling n c
    double w;        // in-plane frequency n sqrt(2 - c^2)
    double q;        // cross-track frequency n sqrt(3c^2 - 2)
};

Rates rates_for(double n, const BoundedOrbitOptions& o) {
    double c = 1.0;
    if (o.j2_trim && o.chief_semi_major_axis_m > 0.0) {
        c = std::sqrt(1.0 + schweighart_sedwick_s(o.chief_semi_major_axis_m, o.chief_inclination_rad));
    }
    return {n * c, n * std::sqrt(2.0 - c * c), n * std::sqrt(3.0 * c * c - 2.0)};
}

// Out-of-plane offset in quadrature with the radial motion (z follows y/2, which lags x by 90 deg):
// when a satellite crosses the chief's radial level its cross-track offset is largest.
double out_of_plane_position(const Eigen::Vector2d& xy, double amplitude_m) {
    const double rho = std::hypot(xy.x(), 0.5 * xy.y());
    return rho > 0.0 ? amplitude_m * 0.5 * xy.y() / rho : 0.0;
}

std::vector<RelativeState> finish(std::vector<Eigen::Vector2d> points, double n, const BoundedOrbitOptions& o) {
    // Centre first, then by distance in the (x, y/2) metric, ties by x then y: stable,
    // platform-independent. The distance key is computed once per point, not per comparison.
    using Key = std::tuple<double, double, double>;
    std::vector<Key> keys;
    keys.reserve(points.size());
    for (const auto& p : points) keys.emplace_back(std::round((p.x() * p.x() + 0.25 * p.y() * p.y()) * 1e6), p.x(), p.y());
    std::sort(keys.begin(), keys.end());
    std::vector<RelativeState> out;
    out.reserve(keys.size());
    for (const auto& [distance_key, x, y] : keys) {
        const Eigen::Vector2d p(x, y);
        RelativeState s;
        s.position_m = Eigen::Vector3d(p.x(), p.y(), out_of_plane_position(p, o.out_of_plane_amplitude_m));
        s.velocity_m_s = bounded_relative_velocity(s.position_m, n, o);
        out.push_back(s);
    }
    return out;
}

}  // namespace

// HCW bounded, centred ellipse: vy = -2 n x (no drift), vx = n y / 2 (centre on the chief), so
// x(t) = x0 cos nt + (y0/2) sin nt, y(t) = -2 x0 sin nt + y0 cos nt: in (x, y/2) the lattice rotates rigidly.
// J2 trim (Schweighart-Sedwick): y' + 2nc x = 0 removes drift, then x'' = -w^2 x with w = n sqrt(2 - c^2)
// and y = -(2nc/w) * (x in quadrature), so centring needs vx = w^2 y / (2 n c); axis ratio 2c / sqrt(2 - c^2).
// Cross-track: z = A (y/2)/rho (quadrature with x), z' = -A q x/rho with rho = |(x, y/2)|.
Eigen::Vector3d bounded_relative_velocity(const Eigen::Vector3d& p, double n, const BoundedOrbitOptions& o) {
    const Rates r = rates_for(n, o);
    Eigen::Vector3d v(r.w * r.w * p.y() / (2.0 * r.nc), -2.0 * r.nc * p.x(), 0.0);
    const double rho = std::hypot(p.x(), 0.5 * p.y());
    if (o.out_of_plane_amplitude_m > 0.0 && rho > 0.0) {
        v.z() = -o.out_of_plane_amplitude_m * r.q * p.x() / rho;
    }
    return v;
}

namespace {

// (i dx)^2 + (j dy / 2)^2 <= (R/2)^2 on the integer grid.
std::vector<Eigen::Vector2d> suncatcher_points(double radius_m, double radial_pitch_m, double along_track_pitch_m) {
    const double half = 0.5 * radius_m;
    const int imax = static_cast<int>(std::floor(half / radial_pitch_m + 1e-9));
    const int jmax = static_cast<int>(std::floor(radius_m / along_track_pitch_m + 1e-9));
    std::vector<Eigen::Vector2d> pts;
    for (int i = -imax; i <= imax; ++i) {
        for (int j = -jmax; j <= jmax; ++j) {
            const double x = i * radial_pitch_m;
            const double y = j * along_track_pitch_m;
            if (x * x + 0.25 * y * y <= half * half * (1.0 + 1e-12)) pts.emplace_back(x, y);
        }
    }
    return pts;
}

// Hexagonal lattice of pitch p in the scaled plane (x, y/2), where HCW motion is a rigid rotation,
// so physical neighbour distances breathe between p and 2p; kept inside |(x, y/2)| <= R/2.
std::vector<Eigen::Vector2d> hexagonal_points(double radius_m, double pitch_m) {
    const double half = 0.5 * radius_m;
    const int kmax = static_cast<int>(std::ceil(half / pitch_m * 2.0)) + 1;
    const double h = std::sqrt(3.0) / 2.0;
    std::vector<Eigen::Vector2d> pts;
    for (int a = -kmax; a <= kmax; ++a) {
        for (int b = -kmax; b <= kmax; ++b) {
            const double x = pitch_m * (a + 0.5 * b);
            const double w = pitch_m * h * b;  // scaled along-track y/2
            if (x * x + w * w <= half * half * (1.0 + 1e-12)) pts.emplace_back(x, 2.0 * w);
        }
    }
    return pts;
}

}  // namespace

std::vector<RelativeState> suncatcher_lattice(double radius_m, double radial_pitch_m, double along_track_pitch_m,
                                              double n, const BoundedOrbitOptions& o) {
    return finish(suncatcher_points(radius_m, radial_pitch_m, along_track_pitch_m), n, o);
}

std::vector<RelativeState> hexagonal_lattice(double radius_m, double pitch_m, double n, const BoundedOrbitOptions& o) {
    return finish(hexagonal_points(radius_m, pitch_m), n, o);
}

std::size_t suncatcher_lattice_size(double radius_m, double radial_pitch_m, double along_track_pitch_m) {
    return suncatcher_points(radius_m, radial_pitch_m, along_track_pitch_m).size();
}

std::size_t hexagonal_lattice_size(double radius_m, double pitch_m) { return hexagonal_points(radius_m, pitch_m).size(); }

namespace {

// Mean rate of the along-track angle lambda = u + Omega cos i (cos i of the chief held fixed).
double along_track_rate_rad_s(double a, double i, double cos_i_chief, double j2) {
    const J2SecularRates r = j2_secular_rates(a, 0.0, i, j2);
    return r.arg_latitude_rad_s() + r.raan_rad_s * cos_i_chief;
}

}  // namespace

// HCW state -> relative elements at the chief's mean argument of latitude u (D'Amico 2010, Eq. 2.19,
// inverted): x = a(da - dex cos u - dey sin u), y = a(dlambda + 2 dex sin u - 2 dey cos u),
// z = a(dix sin u - diy cos u), vx = an(dex sin u - dey cos u), vy = an(-3/2 da + 2 dex cos u + 2 dey sin u),
// vz = an(dix cos u + diy sin u).
FormationInitialState j2_mean_element_formation(const KeplerianElements& chief_mean,
                                                std::span<const RelativeState> design, double j2) {
    const double a = chief_mean.semi_major_axis_m;
    const double e = chief_mean.eccentricity;
    const double inc = chief_mean.inclination_rad;
    const double n = mean_motion_rad_s(a, earth_mu_m3_s2);
    const double u = chief_mean.arg_perigee_rad + mean_anomaly_from_true_rad(chief_mean.true_anomaly_rad, e);
    const double cu = std::cos(u), su = std::sin(u);

    FormationInitialState out;
    out.chief_eci = keplerian_to_cartesian(mean_to_osculating(chief_mean, j2), earth_mu_m3_s2);

    // d(lambda rate)/di and /da by central differences of the first-order rates (smooth, exact to ~1e-9).
    const double ci = std::cos(inc);
    const double h_i = 1e-6, h_a = 1.0;
    const double rate_di = (along_track_rate_rad_s(a, inc + h_i, ci, j2) - along_track_rate_rad_s(a, inc - h_i, ci, j2)) / (2 * h_i);
    const double rate_da = (along_track_rate_rad_s(a + h_a, inc, ci, j2) - along_track_rate_rad_s(a - h_a, inc, ci, j2)) / (2 * h_a);

    out.satellites_lvlh.reserve(design.size());
    for (const RelativeState& s : design) {
        const Eigen::Vector3d p = s.position_m / a;
        const Eigen::Vector3d v = s.velocity_m_s / (a * n);
        const double da_design = 2.0 * v.y() + 4.0 * p.x();  // 0 for a bounded HCW design (vy = -2 n x)
        const double c_sum = da_design - p.x();  // dex cos u + dey sin u
        const double s_diff = v.x();             // dex sin u - dey cos u
        const double dex = c_sum * cu + s_diff * su;
        const double dey = c_sum * su - s_diff * cu;
        const double dlambda = p.y() - 2.0 * v.x();
        const double dix = p.z() * su + v.z() * cu;
        const double diy = -p.z() * cu + v.z() * su;
        // Drift-free semi-major axis: the design's own da (0 for a bounded design) is replaced by the one
        // that makes d(lambda)/dt equal to the chief's.
        const double da = -rate_di * dix / rate_da;

        const double ex = e * std::cos(chief_mean.arg_perigee_rad) + dex;
        const double ey = e * std::sin(chief_mean.arg_perigee_rad) + dey;
        const double d_raan = diy == 0.0 ? 0.0 : diy / std::sin(inc);  // in-plane: no node shift (also at i = 0)
        KeplerianElements m;
        m.semi_major_axis_m = a + da;
        m.eccentricity = std::hypot(ex, ey);
        m.inclination_rad = inc + dix;
        m.raan_rad = chief_mean.raan_rad + d_raan;
        m.arg_perigee_rad = m.eccentricity > 0.0 ? std::atan2(ey, ex) : 0.0;
        const double u_sat = u + dlambda - d_raan * ci;
        m.true_anomaly_rad = true_anomaly_from_mean_rad(u_sat - m.arg_perigee_rad, m.eccentricity);
        const CartesianState eci = keplerian_to_cartesian(mean_to_osculating(m, j2), earth_mu_m3_s2);
        out.satellites_lvlh.push_back(eci_to_lvlh(out.chief_eci, eci));
    }
    return out;
}

}  // namespace skyfabric::physics
