#include <skyfabric/physics/time.hpp>

#include <skyfabric/physics/constants.hpp>

#include <cmath>

namespace skyfabric::physics {

// Julian date of a Gregorian calendar date (Vallado, Fundamentals of Astrodynamics, Alg. 14):
// JD = 367 Y - floor(7 (Y + floor((M+9)/12)) / 4) + floor(275 M / 9) + D + 1721013.5 + UT/24.
// Valid 1900-2100, which covers every scenario epoch.
double julian_date(const UtcEpoch& epoch) {
    const double y = epoch.year;
    const double m = epoch.month;
    const double day_fraction = (epoch.hour + (epoch.minute + epoch.second / 60.0) / 60.0) / 24.0;
    return 367.0 * y - std::floor(7.0 * (y + std::floor((m + 9.0) / 12.0)) / 4.0) + std::floor(275.0 * m / 9.0) +
           epoch.day + 1721013.5 + day_fraction;
}

// GMST, IAU 1982 (Vallado Eq. 3-47), T in Julian centuries of UT1 from J2000:
// GMST[s] = 67310.54841 + (876600 h + 8640184.812866) T + 0.093104 T^2 - 6.2e-6 T^3.
double greenwich_sidereal_angle_rad(double julian_date_days, double elapsed_s) {
    // Split whole days from seconds so the small elapsed time keeps its precision.
    const double t_centuries = (julian_date_days - 2451545.0 + elapsed_s / seconds_per_day) / 36525.0;
    const double base_s = 67310.54841 + 0.093104 * t_centuries * t_centuries -
                          6.2e-6 * t_centuries * t_centuries * t_centuries;
    // (876600 h) T is a whole number of sidereal-day multiples of 86400 s per day of
    // elapsed UT1 plus the fraction; evaluate it as 86400 s per UT1 day times 1.00273790935.
    const double ut_days = julian_date_days - 2451545.0;
    const double rate_term_s = std::fmod(ut_days, 1.0) * seconds_per_day + elapsed_s +
                               8640184.812866 * t_centuries;
    double seconds = std::fmod(base_s + rate_term_s, seconds_per_day);
    if (seconds < 0.0) seconds += seconds_per_day;
    return seconds / seconds_per_day * 2.0 * pi;
}

}  // namespace skyfabric::physics
