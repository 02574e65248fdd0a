#pragma once
// CCSDS Orbit Ephemeris Message (OEM, CCSDS 502.0-B-3, KVN form): every satellite's ECI states as
// one segment each, for other tools (Orekit, GMAT, STK) to read.
//
// Frame: skyfabric's inertial frame is the Earth's mean equator and equinox of the epoch's date
// (the Sun ephemeris and sidereal angle it is built on are of date; precession over a run is
// neglected). CCSDS has no mean-of-date frame; it is labelled TOD, the nearest standard one, from
// which it differs by nutation (at most ~20 arcseconds), below the Sun ephemeris' own ~0.01 deg.
// Time: UTC, taken as continuous (no leap second inside a run, as the propagator takes it).
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace skyfabric::output {

struct OemInput {
    std::string epoch_utc;       // ISO-8601, e.g. 2027-03-20T00:00:00Z (result.h5 root epoch_utc)
    std::string object_prefix;   // OBJECT_NAME = prefix + "-" + satellite index
    std::string creation_utc;    // CREATION_DATE
    std::vector<std::string> comments;  // header COMMENT lines (provenance)
    std::span<const double> time_s;     // [T] seconds from the epoch
    std::span<const double> position_m;   // [T × N × 3], ECI
    std::span<const double> velocity_m_s; // [T × N × 3], ECI
    std::int64_t satellite_count = 0;     // N
    std::vector<std::int64_t> satellites; // which to write (empty: all), in this order
};

// Writes the message: km and km/s as the standard asks. Throws std::invalid_argument on an
// epoch that does not parse or on inconsistent sizes.
void write_oem(std::ostream& out, const OemInput& in);

// "2027-03-20T00:00:00Z" + seconds -> "2027-03-20T00:00:10.000000" (UTC, microseconds; continuous).
std::string utc_after(const std::string& epoch_utc, double seconds);

}  // namespace skyfabric::output
