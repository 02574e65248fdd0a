#pragma once
// Scenario epoch. UTC is treated as continuous (no leap-second table): the
// Sun/Earth-rotation models here are good to arcseconds, far below what a second moves.
namespace skyfabric::physics {

struct UtcEpoch {
    int year = 2027;
    int month = 3;
    int day = 20;
    int hour = 0;
    int minute = 0;
    double second = 0.0;
    bool operator==(const UtcEpoch&) const = default;
};

// Julian date of the epoch (days).
double julian_date(const UtcEpoch& epoch);

// Greenwich mean sidereal angle (rad, [0, 2pi)) at julian_date + elapsed_s.
double greenwich_sidereal_angle_rad(double julian_date_days, double elapsed_s = 0.0);

}  // namespace skyfabric::physics
