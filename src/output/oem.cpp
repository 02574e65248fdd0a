#include "output/oem.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace skyfabric::output {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
}

// An epoch parsed once: day number and microseconds into that day.
struct Epoch {
    std::int64_t day = 0;
    double second_of_day = 0.0;
};

Epoch parse_epoch(const std::string& epoch_utc) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, consumed = 0;
    double s = 0.0;
    if (std::sscanf(epoch_utc.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &s, &consumed) != 6 ||
        mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || !(s >= 0.0 && s < 61.0))
        throw std::invalid_argument("OEM: epoch '" + kvn_value(epoch_utc.substr(0, 80)) + (epoch_utc.size() > 80 ? "..." : "") +
                                    "' is not ISO-8601 UTC");
    return {days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)), (h * 60.0 + mi) * 60.0 + s};
}

std::string stamp(const Epoch& epoch, double seconds) {
    // Whole microseconds from the epoch's midnight: no 59.9999995 printed as 60. Beyond ~290,000
    // years the count would overflow: refused (the `oem` command refuses such times up front).
    const double us_real = std::round((epoch.second_of_day + seconds) * 1e6);
    if (!(std::fabs(us_real) < 9e18)) throw std::invalid_argument("OEM: a time of " + std::to_string(seconds) + " s is out of range");
    const auto us = static_cast<std::int64_t>(us_real);
    constexpr std::int64_t us_per_day = 86'400'000'000;
    std::int64_t day = us / us_per_day, rest = us % us_per_day;
    if (rest < 0) rest += us_per_day, --day;
    std::int64_t year = 0;
    unsigned month = 0, dom = 0;
    civil_from_days(epoch.day + day, year, month, dom);
    char text[64];
    std::snprintf(text, sizeof text, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%06lld", static_cast<long long>(year), month, dom,
                  static_cast<long long>(rest / 3'600'000'000), static_cast<long long>(rest / 60'000'000 % 60),
                  static_cast<long long>(rest / 1'000'000 % 60), static_cast<long long>(rest % 1'000'000));
    return text;
}

}  // namespace

std::string kvn_value(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        } else {
            out += c;
        }
    }
    return out;
}

std::string utc_after(const std::string& epoch_utc, double seconds) { return stamp(parse_epoch(epoch_utc), seconds); }

bool write_oem(std::ostream& out, const OemInput& in) {
    const auto samples = in.time_s.size();
    const auto n = static_cast<std::size_t>(in.satellite_count);
    if (in.position_m.size() != samples * n * 3 || in.velocity_m_s.size() != samples * n * 3)
        throw std::invalid_argument("OEM: positions and velocities must be [samples x satellites x 3]");
    if (samples == 0) throw std::invalid_argument("OEM: no samples");
    std::vector<std::int64_t> which = in.satellites;
    if (which.empty())
        for (std::int64_t i = 0; i < in.satellite_count; ++i) which.push_back(i);
    for (const std::int64_t sat : which)
        if (sat < 0 || sat >= in.satellite_count) throw std::invalid_argument("OEM: no satellite " + std::to_string(sat));
    const Epoch epoch = parse_epoch(in.epoch_utc);
    const auto stopped = [&in] { return in.stop && in.stop->load(std::memory_order_relaxed); };

    out << "CCSDS_OEM_VERS = 2.0\n";
    for (const auto& c : in.comments) out << "COMMENT " << kvn_value(c) << "\n";
    out << "CREATION_DATE = " << kvn_value(in.creation_utc) << "\n"
        << "ORIGINATOR = SKYFABRIC\n";
    const std::string first = stamp(epoch, in.time_s.front()), last = stamp(epoch, in.time_s.back());
    const std::string prefix = kvn_value(in.object_prefix);
    char line[512];
    std::size_t lines = 0;
    for (const std::int64_t sat : which) {
        out << "\nMETA_START\n"
            << "OBJECT_NAME = " << prefix << "-" << sat << "\n"
            << "OBJECT_ID = " << prefix << "-" << sat << "\n"
            << "CENTER_NAME = EARTH\n"
            << "REF_FRAME = TOD\n"
            << "TIME_SYSTEM = UTC\n"
            << "START_TIME = " << first << "\n"
            << "STOP_TIME = " << last << "\n"
            << "META_STOP\n"
            << "COMMENT Mean equator and equinox of the epoch's date, labelled TOD (nutation, <= ~20 arcsec, not "
               "modelled); km, km/s\n";
        const auto s = static_cast<std::size_t>(sat);
        for (std::size_t k = 0; k < samples; ++k) {
            if (++lines % 4096 == 0 && stopped()) return false;
            const double* p = &in.position_m[(k * n + s) * 3];
            const double* v = &in.velocity_m_s[(k * n + s) * 3];
            // 0.1 um and 0.1 nm/s: far finer than anything the model resolves.
            std::snprintf(line, sizeof line, "%s %.10f %.10f %.10f %.13f %.13f %.13f\n", stamp(epoch, in.time_s[k]).c_str(),
                          p[0] / 1e3, p[1] / 1e3, p[2] / 1e3, v[0] / 1e3, v[1] / 1e3, v[2] / 1e3);
            out << line;
        }
    }
    return !stopped();
}

}  // namespace skyfabric::output
