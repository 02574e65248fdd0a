#pragma once
// CCSDS Orbit Ephemeris Message (OEM, CCSDS 502.0-B-3, KVN form): every satellite's ECI states as
// one segment each, for other tools (Orekit, GMAT, STK) to read.
//
// Frame: skyfabric's inertial frame is the Earth's mean equator and equinox of the epoch's date
// (the Sun ephemeris and sidereal angle it is built on are of date; precession over a run is
// neglected). CCSDS has no mean-of-date frame; it is labelled TOD, the nearest standard one, from
// which it differs by nutation (at most ~20 arcseconds), below the Sun ephemeris' own ~0.01 deg.
// Time: UTC, taken as continuous (no leap second inside a run, as the propagator takes it).
#include <atomic>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
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
    const std::atomic<bool>* stop = nullptr;  // polled every few thousand lines (a user's Ctrl-C)
};

// Writes the message: km and km/s as the standard asks. Header and metadata values are written on
// one line each, any control character in them shown as \xNN (a run folder's name may hold a
// newline). Throws std::invalid_argument on an epoch that does not parse or on inconsistent sizes.
// Returns false when `stop` was set before the message was whole (what was written is a part).
bool write_oem(std::ostream& out, const OemInput& in);

// A KVN value on one line: control characters (a newline in a folder's name) as \xNN.
std::string kvn_value(std::string_view text);

// "2027-03-20T00:00:00Z" + seconds -> "2027-03-20T00:00:10.000000" (UTC, microseconds; continuous).
std::string utc_after(const std::string& epoch_utc, double seconds);

}  // namespace skyfabric::output
