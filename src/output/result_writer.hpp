#pragma once
// Writes a run to result.h5 as it goes; the layout is the contract in docs/output-format.md.
#include "output/hdf5_file.hpp"
#include "output/provenance.hpp"
#include "output/request_table.hpp"
#include "simulation/simulation.hpp"

#include <filesystem>
#include <memory>
#include <optional>

namespace skyfabric::output {

class ResultWriter final : public simulation::Recorder {
public:
    // provenance: the run's, computed once for all its files (provenance_of hashes the settings).
    ResultWriter(std::filesystem::path path, Provenance provenance);
    ~ResultWriter() override;
    void begin(const simulation::RunSetup& setup) override;
    void record(const simulation::Sample& sample) override;
    void end(const simulation::RunSummary& summary) override;
    // A serving run's requests go to /inference/requests (the first run) or /inference/requests_<routing> as they come.
    void requests(std::size_t run, workloads::ServingRouting routing, std::span<const workloads::RequestRecord> rows) override;

private:
    struct Series;
    std::filesystem::path path_;
    Provenance provenance_;
    std::unique_ptr<Hdf5File> file_;
    std::unique_ptr<Series> series_;
    std::vector<std::unique_ptr<RequestTable>> request_tables_;  // per serving run; null: no request yet
    std::vector<double> row_;
    int compression_level_ = 4;
    bool eci_ = true;
    double ttft_slo_s_ = 0.0, tpot_slo_s_ = 0.0;  // a serving run's objectives, as the request tables' attributes
    std::int64_t max_queued_requests_ = 0;
    std::string ground_station_names_;          // "0: name, 1: name, ...": the ground tables' station columns      // inference.max_queued_requests, a request table's attribute
};

}  // namespace skyfabric::output
