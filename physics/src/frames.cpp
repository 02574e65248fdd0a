#include <skyfabric/physics/frames.hpp>

namespace skyfabric::physics {
namespace {

// Angular velocity of the LVLH frame in ECI: w = (r x v) / r^2, i.e. |h|/r^2 about the orbit
// normal. This is the exact rate of the radial axis; the small roll rate a_h r/h that an
// out-of-plane force adds is left out, so the map is a function of the chief state alone
// (and both directions use the same w, so round trips are exact).
Eigen::Vector3d frame_rate_eci(const CartesianState& chief) {
    return chief.position_m.cross(chief.velocity_m_s) / chief.position_m.squaredNorm();
}

}  // namespace

// x = r/|r|, z = h/|h|, y = z x x.
Eigen::Matrix3d lvlh_to_eci_rotation(const CartesianState& chief_eci) {
    const Eigen::Vector3d x = chief_eci.position_m.normalized();
    const Eigen::Vector3d z = chief_eci.position_m.cross(chief_eci.velocity_m_s).normalized();
    Eigen::Matrix3d m;
    m.col(0) = x;
    m.col(1) = z.cross(x);
    m.col(2) = z;
    return m;
}

// r_d = r_c + R rho, v_d = v_c + R rho_dot + w x (R rho).
CartesianState lvlh_to_eci(const CartesianState& chief_eci, const RelativeState& deputy_lvlh) {
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief_eci);
    const Eigen::Vector3d w = frame_rate_eci(chief_eci);
    const Eigen::Vector3d dr = rot * deputy_lvlh.position_m;
    return {chief_eci.position_m + dr, chief_eci.velocity_m_s + rot * deputy_lvlh.velocity_m_s + w.cross(dr)};
}

// rho = R^T (r_d - r_c), rho_dot = R^T (v_d - v_c - w x (r_d - r_c)).
RelativeState eci_to_lvlh(const CartesianState& chief_eci, const CartesianState& deputy_eci) {
    const Eigen::Matrix3d rot = lvlh_to_eci_rotation(chief_eci);
    const Eigen::Vector3d w = frame_rate_eci(chief_eci);
    const Eigen::Vector3d dr = deputy_eci.position_m - chief_eci.position_m;
    const Eigen::Vector3d dv = deputy_eci.velocity_m_s - chief_eci.velocity_m_s - w.cross(dr);
    return {rot.transpose() * dr, rot.transpose() * dv};
}

}  // namespace skyfabric::physics
