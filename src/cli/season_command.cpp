// `skyfabric season`: a year of the scenario's orbit, one orbit a day: eclipse season, beta angle,
// energy per orbit and the compute the power system sustains (physics/season.hpp). Seconds, not a run.
#include "cli/season_command.hpp"

#include "cli/command_support.hpp"

#include "output/file_output.hpp"
#include "output/hdf5_file.hpp"
#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"

#include <skyfabric/physics/constants.hpp>
#include <skyfabric/physics/ground_station.hpp>
#include <skyfabric/physics/season.hpp>
#include <skyfabric/physics/time.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace skyfabric::cli {
namespace {

struct Options {
    std::string scenario_file;
    std::vector<std::string> overrides;
    int year = 0;  // 0: the scenario epoch's year
    std::string csv;
};

// Gregorian calendar date of a Julian date (Fliegel & Van Flandern, CACM 11, 1968), as YYYY-MM-DD.
std::string calendar_date(double julian_date) {
    const long jd = static_cast<long>(std::floor(julian_date + 0.5));
    long l = jd + 68569;
    const long n = 4 * l / 146097;
    l = l - (146097 * n + 3) / 4;
    const long i = 4000 * (l + 1) / 1461001;
    l = l - 1461 * i / 4 + 31;
    const long j = 80 * l / 2447;
    const long day = l - 2447 * j / 80;
    l = j / 11;
    const long month = j + 2 - 12 * l;
    const long year = 100 * (n - 49) + i + l;
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02d", static_cast<int>(year), static_cast<int>(month), static_cast<int>(day));
    return text;
}

// With ground stations: each station's contact with the chief's mean orbit, day by day over the year
// (physics::daily_contact), as monthly means, and the same times the month's cloud-free fraction.
void ground_year(const scenario::Scenario& sc, const physics::KeplerianElements& mean, double j2, double start_jd, int days,
                 std::FILE* report) {
    std::fprintf(report, "\n  ground stations: contact minutes a day with the chief's mean orbit, monthly means"
                         " (cloud-free: times the month's cloud_free)\n  %-24s %-10s", "station", "");
    static const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (const char* m : months) std::fprintf(report, " %6s", m);
    std::fprintf(report, " %8s\n", "year");
    for (const auto& st : sc.ground.segment.stations) {
        const auto contact = physics::daily_contact(mean, j2, start_jd, days, physics::StationFrame(st.site), st.min_elevation_rad);
        std::array<double, 12> sum{}, clear{};
        std::array<int, 12> count{};
        double year = 0.0, year_clear = 0.0;
        for (const auto& d : contact) {
            const auto m = static_cast<std::size_t>(physics::calendar_month(start_jd + d.day + 0.5) - 1);
            const double p = st.kind == links::GroundLinkKind::optical ? st.clouds.cloud_free_fraction[m] : 1.0;
            sum[m] += d.contact_s / 60.0;
            clear[m] += p * d.contact_s / 60.0;
            ++count[m];
            year += d.contact_s / 60.0;
            year_clear += p * d.contact_s / 60.0;
        }
        const auto line = [&](const char* what, const std::array<double, 12>& v, double total) {
            std::fprintf(report, "  %-24s %-10s", what == std::string("contact") ? st.name.c_str() : "", what);
            for (std::size_t m = 0; m < 12; ++m) std::fprintf(report, " %6.1f", count[m] ? v[m] / count[m] : 0.0);
            std::fprintf(report, " %8.1f\n", total / static_cast<double>(contact.size()));
        };
        line("contact", sum, year);
        line("cloud-free", clear, year_clear);
    }
}

int run(const Options& o) {
    const bool csv_to_stdout = output::is_standard_output(o.csv);
    if (!o.csv.empty() && !csv_to_stdout) output::refuse_non_regular_target(o.csv);
    std::FILE* report = csv_to_stdout ? stderr : stdout;  // standard output carries the CSV alone
    const auto sc = scenario::load_scenario_file(o.scenario_file, parse_overrides(o.overrides));
    if (sc.fabric) throw scenario::ScenarioError("season needs an orbit; this scenario runs on a synthetic topology");
    const double j2 = scenario::dynamics_j2(sc) > 0.0 ? scenario::dynamics_j2(sc) : physics::earth_j2;
    physics::KeplerianElements mean = scenario::chief_mean_elements(sc);
    const double epoch_jd = physics::julian_date(sc.orbit.epoch);
    physics::UtcEpoch first = sc.orbit.epoch;
    first.year = o.year > 0 ? o.year : sc.orbit.epoch.year;
    first.month = 1;
    first.day = 1;
    first.hour = first.minute = 0;
    first.second = 0.0;
    const double start_jd = physics::julian_date(first);
    // The node moves at its secular rate from the scenario epoch to the first day (an SSO keeps its LTAN).
    const auto rates = physics::j2_secular_rates(mean.semi_major_axis_m, mean.eccentricity, mean.inclination_rad, j2);
    mean.raan_rad += rates.raan_rad_s * (start_jd - epoch_jd) * physics::seconds_per_day;
    physics::SeasonOptions options;
    physics::UtcEpoch next_year = first;
    next_year.year += 1;
    options.days = static_cast<int>(std::lround(physics::julian_date(next_year) - start_jd));
    options.active_links = sc.links.enabled ? sc.links.topology.terminals.terminals_per_satellite : 0;
    const auto days = physics::eclipse_season(mean, start_jd, j2, sc.power.parameters, options);

    constexpr double deg = 180.0 / physics::pi;
    const auto eclipse = [](const physics::SeasonDay& d) { return d.shadow_s > 0.0; };
    const auto eclipse_days = std::count_if(days.begin(), days.end(), eclipse);
    const auto longest = std::max_element(days.begin(), days.end(), [](auto& a, auto& b) { return a.shadow_s < b.shadow_s; });
    const auto least = std::min_element(days.begin(), days.end(), [](auto& a, auto& b) {
        return a.sustainable_compute < b.sustainable_compute;
    });
    double min_abs_beta = 1e9, compute_sum = 0.0;
    for (const auto& d : days) {
        min_abs_beta = std::min(min_abs_beta, std::abs(d.beta_rad) * deg);
        compute_sum += d.sustainable_compute;
    }
    const auto limited = std::count_if(days.begin(), days.end(), [](auto& d) { return d.sustainable_compute < 1.0; });
    std::fprintf(report, "skyfabric season — %s, %d (one orbit a day, orbit-averaged; power: %s preset%s)\n", sc.name.c_str(), first.year,
                "suncatcher_class", sc.power.enabled ? " with the scenario's power keys" : "");
    std::fprintf(report, "  days with an eclipse                %ld", static_cast<long>(eclipse_days));
    if (eclipse_days > 0) {
        // The season may wrap around the new year: report the first and last eclipse day after a sunlit one.
        std::string from, to;
        for (std::size_t i = 0; i < days.size(); ++i) {
            const bool now = eclipse(days[i]), before = eclipse(days[(i + days.size() - 1) % days.size()]);
            if (now && !before) from = calendar_date(days[i].julian_date);
            if (!now && before) to = calendar_date(days[(i + days.size() - 1) % days.size()].julian_date);
        }
        if (!from.empty()) std::fprintf(report, " (%s to %s%s)", from.c_str(), to.c_str(), to < from ? ", across the new year" : "");
    }
    std::fprintf(report, "\n  longest shadow per orbit            %.1f min (umbra %.1f min) on %s\n", longest->shadow_s / 60.0,
                longest->umbra_s / 60.0, calendar_date(longest->julian_date).c_str());
    std::fprintf(report, "  smallest |beta|                     %.1f deg\n", min_abs_beta);
    std::fprintf(report, "  sustainable compute (min / mean)    %.3f on %s / %.3f; %ld days below full\n", least->sustainable_compute,
                calendar_date(least->julian_date).c_str(), compute_sum / static_cast<double>(days.size()), static_cast<long>(limited));
    std::fprintf(report, "\n  %-10s %8s %10s %10s %12s %12s %10s\n", "date", "beta_deg", "shadow_min", "umbra_min", "array_Wh", "load_Wh",
                "compute");
    for (std::size_t i = 0; i < days.size(); i += 7) {
        const auto& d = days[i];
        std::fprintf(report, "  %-10s %8.1f %10.2f %10.2f %12.1f %12.1f %10.3f\n", calendar_date(d.julian_date).c_str(), d.beta_rad * deg,
                    d.shadow_s / 60.0, d.umbra_s / 60.0, d.generated_wh, d.load_full_wh, d.sustainable_compute);
    }
    if (sc.ground.enabled) ground_year(sc, mean, j2, start_jd, options.days, report);
    if (!o.csv.empty()) {
        std::ostringstream csv;
        csv << "date,day,beta_deg,shadow_min,umbra_min,period_s,array_wh_per_orbit,load_full_wh_per_orbit,energy_margin_wh_per_orbit,"
               "sustainable_compute\n";
        csv.precision(10);
        for (const auto& d : days) {
            csv << calendar_date(d.julian_date) << ',' << d.day << ',' << d.beta_rad * deg << ',' << d.shadow_s / 60.0 << ','
                << d.umbra_s / 60.0 << ',' << d.period_s << ',' << d.generated_wh << ',' << d.load_full_wh << ','
                << d.generated_wh - d.load_full_wh << ',' << d.sustainable_compute << '\n';
        }
        if (csv_to_stdout) {
            std::fputs(csv.str().c_str(), stdout);
            if (std::fflush(stdout) != 0) throw output::OutputError(std::string("cannot write to standard output: ") + std::strerror(errno));
        } else {
            output::write_file_atomically(o.csv, csv.str());
            std::fprintf(report, "\n  every day: %s (scripts/plot --season %s draws it)\n", o.csv.c_str(), o.csv.c_str());
        }
    }
    return 0;
}

}  // namespace

std::function<int()> add_season_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand("season",
                                 "A year of the scenario's orbit, one orbit a day: eclipse season, beta angle, energy per orbit "
                                 "and the compute its power system sustains (seconds; uses the power section or its preset)");
    command->add_option("scenario", o->scenario_file, "Scenario YAML file")->required();
    add_set_option(*command, o->overrides);
    command->add_option("--year", o->year, "Calendar year to scan (default: the scenario epoch's)")->check(CLI::Range(1950, 2199));
    command->add_option("--csv", o->csv, "Write every day to FILE (CSV; - : to standard output, the report then goes to standard error)")->type_name("FILE");
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
