#include "output/request_table.hpp"

#include <cstdint>

namespace skyfabric::output {

namespace {

using R = workloads::RequestRecord;

// One column: a float64 (`real`) or an int64 (`integer`) dataset: ids and token counts exceed
// 2^31 (a lognormal's tail, a long trace), so every count is stored in 64 bits.
struct Column {
    const char* name;
    const char* units;
    double (*real)(const R&);
    std::int64_t (*integer)(const R&);
};

const Column columns[] = {
    {"id", "1", nullptr, [](const R& r) -> std::int64_t { return r.request.id; }},
    {"arrival_s", "s", [](const R& r) { return r.request.arrival_s; }, nullptr},
    {"prompt_tokens", "1", nullptr, [](const R& r) -> std::int64_t { return r.request.prompt_tokens; }},
    {"cached_tokens", "1", nullptr, [](const R& r) -> std::int64_t { return r.request.cached_tokens; }},
    {"output_tokens", "1", nullptr, [](const R& r) -> std::int64_t { return r.request.output_tokens; }},
    {"status", "1", nullptr, [](const R& r) -> std::int64_t { return static_cast<int>(r.status); }},
    {"prefill_instance", "1", nullptr, [](const R& r) -> std::int64_t { return r.prefill_instance; }},
    {"decode_instance", "1", nullptr, [](const R& r) -> std::int64_t { return r.decode_instance; }},
    {"prefill_start_s", "s", [](const R& r) { return r.prefill_start_s; }, nullptr},
    {"prefill_end_s", "s", [](const R& r) { return r.prefill_end_s; }, nullptr},
    {"first_token_s", "s", [](const R& r) { return r.first_token_s; }, nullptr},
    {"finish_s", "s", [](const R& r) { return r.finish_s; }, nullptr},
    {"ttft_s", "s", [](const R& r) { return r.ttft_s(); }, nullptr},
    {"tpot_s", "s", [](const R& r) { return r.tpot_s(); }, nullptr},
    {"kv_bytes", "B", [](const R& r) { return r.kv_bytes; }, nullptr},
    {"kv_transfer_s", "s", [](const R& r) { return r.kv_transfer_s(); }, nullptr},
    {"tokens_generated", "1", nullptr, [](const R& r) -> std::int64_t { return r.tokens_generated; }},
    {"requeues", "1", nullptr, [](const R& r) -> std::int64_t { return r.requeues; }},
};

}  // namespace

RequestTable::RequestTable(Hdf5File& file, std::string group, workloads::ServingRouting routing, int compression_level)
    : file_(file), group_(std::move(group)) {
    // Times and bytes are stored raw, like the satellites' states (docs/output-format.md, "Compression"):
    // their mantissas hardly deflate. Counts, instances and statuses deflate well.
    for (const auto& c : columns)
        columns_.push_back(std::make_unique<Hdf5Series>(file_, group_ + "/" + c.name, std::vector<hsize_t>{},
                                                        c.real ? ElementType::float64 : ElementType::int64, c.units,
                                                        c.real ? 0 : compression_level));
    file_.set_enum_names(group_ + "/status", "status_names", workloads::request_status_names.numbered());
    file_.set_attribute(group_, "routing", workloads::to_string(routing));
}

void RequestTable::append(std::span<const workloads::RequestRecord> rows) {
    for (std::size_t k = 0; k < columns_.size(); ++k) {
        const Column& c = columns[k];
        if (c.real) {
            real_.clear();
            for (const auto& r : rows) real_.push_back(c.real(r));
            columns_[k]->append_rows(real_.data(), real_.size());
        } else {
            integer_.clear();
            for (const auto& r : rows) integer_.push_back(c.integer(r));
            columns_[k]->append_rows(integer_.data(), integer_.size());
        }
    }
}

void RequestTable::finish() {
    const hsize_t count = columns_.empty() ? 0 : columns_.front()->rows();
    for (auto& c : columns_) c->flush();  // here, where a failure is reported (a destructor swallows it)
    columns_.clear();                      // closed before the dimension is attached
    file_.make_dimension(group_ + "/request", count);
    file_.attach_dimension_to_group(group_, group_ + "/request");
}

}  // namespace skyfabric::output
