// `skyfabric oem RUN_DIR`: a finished run's ECI states as a CCSDS OEM (output/oem.hpp), for
// orbit tools that read the standard (Orekit, GMAT, STK).
#include "cli/oem_command.hpp"

#include "cli/command_support.hpp"
#include "output/file_output.hpp"
#include "output/hdf5_file.hpp"
#include "output/hdf5_reader.hpp"
#include "output/oem.hpp"
#include "output/provenance.hpp"
#include "scenario/yaml_reader.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace skyfabric::cli {
namespace {

struct Options {
    std::string run_dir;
    std::string output;  // "" : RUN_DIR/formation.oem
    std::vector<std::int64_t> satellites;
};

int run(const Options& o) {
    const std::filesystem::path h5 = std::filesystem::path(o.run_dir) / "result.h5";
    if (!std::filesystem::is_regular_file(h5))
        throw scenario::ScenarioError(o.run_dir + ": no result.h5 here (a run folder with output.hdf5: true)");
    const output::Hdf5Reader file(h5);
    for (const char* path : {"/formation/position_eci_m", "/formation/velocity_eci_m_s", "/time_s"})
        if (!file.has_dataset(path))
            throw scenario::ScenarioError(h5.string() + ": no " + path + " (run with output.eci: true to keep the ECI states)");
    std::vector<hsize_t> time_shape, position_shape, velocity_shape;
    const auto time_s = file.float64("/time_s", time_shape);
    const auto position = file.float64("/formation/position_eci_m", position_shape);
    const auto velocity = file.float64("/formation/velocity_eci_m_s", velocity_shape);
    if (position_shape.size() != 3 || position_shape[2] != 3 || velocity_shape != position_shape ||
        position_shape[0] != time_s.size())
        throw scenario::ScenarioError(h5.string() + ": ECI states are not [time x satellite x 3] over /time_s");
    if (!output::hdf5_run_file_is_complete(h5))
        std::fprintf(stderr, "skyfabric: warning: %s is from a run that did not finish: exporting its %zu samples\n",
                     h5.c_str(), time_s.size());

    output::OemInput in;
    in.epoch_utc = file.string_attribute("epoch_utc");
    in.object_prefix = file.string_attribute("scenario_name");
    if (in.object_prefix.empty()) in.object_prefix = "SATELLITE";
    in.creation_utc = output::utc_now_iso8601();
    in.comments = {"skyfabric " + file.string_attribute("skyfabric_version") + " commit " +
                       file.string_attribute("git_commit") + ", scenario sha256 " + file.string_attribute("scenario_sha256"),
                   "from " + h5.string()};
    in.time_s = time_s;
    in.position_m = position;
    in.velocity_m_s = velocity;
    in.satellite_count = static_cast<std::int64_t>(position_shape[1]);
    in.satellites = o.satellites;
    for (const auto s : o.satellites)
        if (s < 0 || s >= in.satellite_count)
            throw scenario::ScenarioError("--satellites: " + std::to_string(s) + " is not a satellite of this run (0.." +
                                          std::to_string(in.satellite_count - 1) + ")");
    if (in.epoch_utc.empty()) throw scenario::ScenarioError(h5.string() + ": no epoch_utc root attribute");

    std::ostringstream text;
    output::write_oem(text, in);
    const std::filesystem::path target =
        o.output.empty() ? std::filesystem::path(o.run_dir) / "formation.oem" : std::filesystem::path(o.output);
    if (output::is_standard_output(target)) {
        std::cout << text.str() << std::flush;
        return std::cout ? exit_ok : exit_run_failure;
    }
    output::write_file_atomically(target, text.str());
    std::fprintf(stderr, "skyfabric: wrote %s (%zu satellites x %zu states)\n", target.c_str(),
                 o.satellites.empty() ? static_cast<std::size_t>(in.satellite_count) : o.satellites.size(), time_s.size());
    return exit_ok;
}

}  // namespace

std::function<int()> add_oem_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand("oem",
                                 "Export a run's ECI states as a CCSDS Orbit Ephemeris Message (one segment per satellite; "
                                 "frame TOD-labelled mean of date, UTC; docs/output-format.md)");
    command->add_option("run_dir", o->run_dir, "A run's output folder (its result.h5 must hold ECI states)")->required();
    command->add_option("-o,--output", o->output, "OEM file to write (- : standard output; default RUN_DIR/formation.oem)")
        ->type_name("FILE");
    command->add_option("--satellites", o->satellites, "Satellite indices to export (default: every one)")
        ->delimiter(',')
        ->type_name("I,J,...");
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
