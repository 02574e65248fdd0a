// `skyfabric oem RUN_DIR`: a finished run's ECI states as a CCSDS OEM (output/oem.hpp), for
// orbit tools that read the standard (Orekit, GMAT, STK).
#include "cli/oem_command.hpp"

#include "cli/command_support.hpp"
#include "cli/oem_checks.hpp"
#include "common/stop_signal.hpp"
#include "output/file_output.hpp"
#include "output/hdf5_file.hpp"
#include "output/hdf5_reader.hpp"
#include "output/oem.hpp"
#include "output/provenance.hpp"
#include "output/summary.hpp"
#include "scenario/yaml_reader.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <streambuf>
#include <string>
#include <vector>

namespace skyfabric::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
    std::string run_dir;
    std::string output;  // "" : RUN_DIR/formation.oem
    std::string satellites;
    CLI::Option* satellites_option = nullptr;
};

// What oem holds in memory (the times and both state arrays, float64) is refused above this: the
// run-size limit `run` applies to memory (docs/scenario-reference.md, "Run size").
constexpr double memory_limit_bytes = 4e9;
// The output must not replace a file of the run it reads: result.h5, summary.json or a file that
// summary.json lists.
void refuse_inputs_of_the_run(const fs::path& target, const fs::path& run_dir) {
    std::vector<std::string> names = {"result.h5", "summary.json"};
    if (const auto summary = output::read_json_file(run_dir / "summary.json"))
        if (const auto files = summary->find("files"); files != summary->end() && files->is_array())
            for (const auto& f : *files)
                if (f.is_string()) names.push_back(f.get<std::string>());
    for (const auto& name : names) {
        std::error_code ec;
        if (fs::equivalent(target, run_dir / name, ec) && !ec)
            throw scenario::ScenarioError("-o " + shown(target.string()) + " is the run's own " + shown(name) +
                                          ": oem does not overwrite an input of the run (choose another file)");
    }
}

// An ostream's bytes into a FileReplacement's temporary, a megabyte at a time.
class ReplacementBuffer : public std::streambuf {
public:
    explicit ReplacementBuffer(output::FileReplacement& file) : file_(file), buffer_(1 << 20) { reset(); }

protected:
    int sync() override {
        file_.write({pbase(), static_cast<std::size_t>(pptr() - pbase())});
        reset();
        return 0;
    }
    int_type overflow(int_type c) override {
        sync();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }

private:
    void reset() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
    output::FileReplacement& file_;
    std::vector<char> buffer_;
};

int interrupted() {
    std::fprintf(stderr, "skyfabric: oem interrupted; nothing was written\n");
    return exit_interrupted;
}

int run(const Options& o) {
    common::install_stop_handlers(common::InterruptedCalls::restart);
    const auto& stop = common::stop_requested();
    const fs::path h5 = fs::path(o.run_dir) / "result.h5";
    if (!fs::is_regular_file(h5))
        throw scenario::ScenarioError(shown(o.run_dir) + ": no result.h5 here (a run folder with output.hdf5: true)");
    const fs::path target = o.output.empty() ? fs::path(o.run_dir) / "formation.oem" : fs::path(o.output);
    const bool to_stdout = output::is_standard_output(target);
    if (!to_stdout) refuse_inputs_of_the_run(target, o.run_dir);
    const output::Hdf5Reader file(h5);
    for (const char* path : {"/formation/position_eci_m", "/formation/velocity_eci_m_s", "/time_s"})
        if (!file.has_dataset(path))
            throw scenario::ScenarioError(h5.string() + ": no " + path + " (run with output.eci: true to keep the ECI states)");
    const auto time_shape = file.shape("/time_s"), position_shape = file.shape("/formation/position_eci_m");
    if (time_shape.size() != 1 || position_shape.size() != 3 || position_shape[2] != 3 ||
        file.shape("/formation/velocity_eci_m_s") != position_shape || position_shape[0] != time_shape[0])
        throw scenario::ScenarioError(h5.string() + ": ECI states are not [time x satellite x 3] over /time_s");
    const double bytes = 8.0 * static_cast<double>(time_shape[0]) * (1.0 + 6.0 * static_cast<double>(position_shape[1]));
    if (bytes > memory_limit_bytes) {
        char text[200];
        std::snprintf(text, sizeof text, ": %llu samples x %llu satellites would take %.1f GB of memory to export, over the %.0f GB limit",
                      static_cast<unsigned long long>(time_shape[0]), static_cast<unsigned long long>(position_shape[1]),
                      bytes / 1e9, memory_limit_bytes / 1e9);
        throw scenario::ScenarioError(h5.string() + text);
    }
    const auto satellite_count = static_cast<std::int64_t>(position_shape[1]);
    const auto satellites = o.satellites_option && o.satellites_option->count() > 0
                                ? parse_satellites(o.satellites, satellite_count)
                                : std::vector<std::int64_t>{};
    std::vector<hsize_t> shape;
    const auto time_s = file.float64("/time_s", shape);
    const auto position = file.float64("/formation/position_eci_m", shape);
    const auto velocity = file.float64("/formation/velocity_eci_m_s", shape);
    if (stop.load()) return interrupted();
    check_values(h5.string(), "/time_s", time_s, oem_time_limit_s, "s", true);
    check_values(h5.string(), "/formation/position_eci_m", position, oem_position_limit_m, "m");
    check_values(h5.string(), "/formation/velocity_eci_m_s", velocity, oem_velocity_limit_m_s, "m/s");
    if (!output::hdf5_run_file_is_complete(h5))
        std::fprintf(stderr, "skyfabric: warning: %s is from a run that did not finish: exporting its %zu samples\n",
                     shown(h5.string()).c_str(), time_s.size());

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
    in.satellite_count = satellite_count;
    in.satellites = satellites;
    in.stop = &stop;
    if (in.epoch_utc.empty()) throw scenario::ScenarioError(h5.string() + ": no epoch_utc root attribute");

    if (to_stdout) {
        if (!output::write_oem(std::cout, in)) return interrupted();
        std::cout << std::flush;
        return std::cout ? exit_ok : exit_run_failure;
    }
    // Staged beside the target and renamed over it whole; on a stop, or any failure, the temporary goes.
    output::FileReplacement staged(target);
    {
        ReplacementBuffer buffer(staged);
        std::ostream out(&buffer);
        out.exceptions(std::ios::badbit);
        if (!output::write_oem(out, in)) return interrupted();
        out.flush();
    }
    if (stop.load()) return interrupted();
    staged.commit();
    std::fprintf(stderr, "skyfabric: wrote %s (%zu satellites x %zu states)\n", shown(target.string()).c_str(),
                 satellites.empty() ? static_cast<std::size_t>(satellite_count) : satellites.size(), time_s.size());
    return exit_ok;
}

}  // namespace

std::function<int()> add_oem_command(CLI::App& app, CLI::App*& command) {
    auto o = std::make_shared<Options>();
    command = app.add_subcommand("oem",
                                 "Export a run's ECI states as a CCSDS Orbit Ephemeris Message (one segment per satellite; "
                                 "frame TOD-labelled mean of date, UTC; docs/output-format.md)");
    command->add_option("run_dir", o->run_dir, "A run's output folder (its result.h5 must hold ECI states)")->required();
    command->add_option("-o,--output", o->output,
                        "OEM file to write (- : standard output; default RUN_DIR/formation.oem; never a file of the run)")
        ->type_name("FILE");
    o->satellites_option =
        command->add_option("--satellites", o->satellites, "Satellite indices to export, each once (default: every one)")
            ->type_name("I,J,...");
    return [o] { return run(*o); };
}

}  // namespace skyfabric::cli
