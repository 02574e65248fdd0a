#pragma once
// A serving run's requests written as they come (docs/output-format.md, "/inference"): one row each in
// arrival order, a column per field, each a chunked dataset extended block by block, so that no
// copy of the whole run's requests is ever held.
#include "output/hdf5_file.hpp"

#include <skyfabric/workloads/serving.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace skyfabric::output {

class RequestTable {
public:
    RequestTable(Hdf5File& file, std::string group, workloads::ServingRouting routing, int compression_level);
    void append(std::span<const workloads::RequestRecord> rows);
    // Writes what is buffered and names the rows' dimension, `request`; nothing may be appended after.
    void finish();

private:
    Hdf5File& file_;
    std::string group_;
    std::vector<std::unique_ptr<Hdf5Series>> columns_;  // in the order of the column list (request_table.cpp)
    std::vector<double> real_;                          // one column of a block
    std::vector<std::int64_t> integer_;
};

}  // namespace skyfabric::output
