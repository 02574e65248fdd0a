#pragma once
// Exact ECI <-> LVLH (Hill) transforms. LVLH: x radial outward, y along-track
// (completes the triad), z orbit normal (angular momentum). Relative velocity is
// the time derivative seen in the rotating frame: v_rel = R^T (v_d - v_c - w x r).
#include <skyfabric/physics/orbit.hpp>

#include <Eigen/Core>
#include <Eigen/Geometry>  // cross products of the frame maps

namespace skyfabric::physics {

struct RelativeState {  // in LVLH, rotating-frame derivative
    Eigen::Vector3d position_m = Eigen::Vector3d::Zero();
    Eigen::Vector3d velocity_m_s = Eigen::Vector3d::Zero();
    bool operator==(const RelativeState&) const = default;
};

// Columns are the LVLH unit axes expressed in ECI (maps LVLH -> ECI).
Eigen::Matrix3d lvlh_to_eci_rotation(const CartesianState& chief_eci);

CartesianState lvlh_to_eci(const CartesianState& chief_eci, const RelativeState& deputy_lvlh);
RelativeState eci_to_lvlh(const CartesianState& chief_eci, const CartesianState& deputy_eci);

}  // namespace skyfabric::physics
