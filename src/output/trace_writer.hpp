#pragma once
// Chrome trace-event / Perfetto JSON timelines (open in https://ui.perfetto.dev or
// chrome://tracing). The JSON Object Format:
//   {"traceEvents":[…], "displayTimeUnit":"ms", "metadata":{…}}
// with timestamps and durations in microseconds (ts = (time_s − time_origin_s)·1e6).
//
// Streamed and bounded: events are buffered and appended in blocks; after every block the
// closing tail (`],"displayTimeUnit":…,"metadata":{…}}`) is rewritten after the last
// event, so the file on disk is valid JSON between writes — an interrupted run leaves a
// readable trace with metadata "complete": false. Timeline events (X, i, C) outside the
// time window are skipped; once max_events of them are written, further ones are dropped
// and the metadata says so ("truncated": true, "truncated_at_s", "events_dropped"). Naming
// events (ph "M": process_name, thread_name, sort indices) are always written and do not
// count against max_events.

#include <skyfabric/workloads/training.hpp>

#include "output/file_output.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace skyfabric::output {

struct TraceOptions {
    std::int64_t max_events = 1'000'000;  // timeline events (X, i, C); < 0: no limit
    double window_start_s = -std::numeric_limits<double>::infinity();  // keep events that
    double window_end_s = std::numeric_limits<double>::infinity();     // overlap [start, end]
    double time_origin_s = 0.0;           // simulation time at ts = 0
    std::size_t flush_bytes = 1 << 20;    // buffered bytes before a block is appended
};

enum class InstantScope : std::uint8_t { thread = 0, process = 1, global = 2 };

class TraceWriter {
public:
    // Writes through a FileReplacement (file_output.hpp): the file appears at `path` when closed;
    // until then the temporary beside it holds valid JSON. Path "-": standard output, written at
    // the close. Throws ScenarioError for a path that is a device, FIFO, link or folder, and
    // OutputError (with the OS reason) when it cannot be written.
    TraceWriter(std::filesystem::path path, TraceOptions options = {});
    ~TraceWriter();  // close(), errors swallowed
    TraceWriter(const TraceWriter&) = delete;
    TraceWriter& operator=(const TraceWriter&) = delete;

    // Track naming (ph "M"). One process per group of tracks, one thread per track.
    void process_name(std::int32_t pid, std::string_view name);
    void process_sort_index(std::int32_t pid, std::int32_t index);
    void thread_name(std::int32_t pid, std::int32_t tid, std::string_view name);
    void thread_sort_index(std::int32_t pid, std::int32_t tid, std::int32_t index);

    // Timeline events. Each returns true when written, false when skipped (outside the
    // window, bound reached, non-finite time, or closed). args: a JSON object or null.
    bool complete(std::int32_t pid, std::int32_t tid, std::string_view name, std::string_view category,
                  double start_s, double duration_s, const nlohmann::json& args = nullptr);
    bool instant(std::int32_t pid, std::int32_t tid, std::string_view name, std::string_view category,
                 double time_s, const nlohmann::json& args = nullptr, InstantScope scope = InstantScope::thread);
    // A counter track named `name` in process pid; series: {"series name": number, …}.
    bool counter(std::int32_t pid, std::string_view name, double time_s, const nlohmann::json& series);

    // Top-level "metadata" object entries (scenario name, version, …); last value wins.
    void metadata(std::string_view key, nlohmann::json value);

    // Appends buffered events and rewrites the tail now.
    void flush();
    // Writes the rest, marks "complete": true and closes the file. Idempotent.
    void close();

    bool is_open() const { return file_ != nullptr; }
    bool truncated() const { return dropped_ > 0; }
    std::int64_t events_written() const { return written_; }
    std::int64_t events_dropped() const { return dropped_; }
    std::int64_t events_outside_window() const { return outside_window_; }
    const std::filesystem::path& path() const { return path_; }
    // Where the trace is until close() (empty for standard output).
    std::filesystem::path temporary_path() const;
    const TraceOptions& options() const { return options_; }

private:
    bool admit(double start_s, double end_s);
    void append(const std::string& event);
    void finish_event(std::string& event, std::string_view name, std::string_view category,
                      const nlohmann::json& args);
    std::string tail(bool complete) const;
    void write_block(bool complete);

    std::filesystem::path path_;
    std::optional<FileReplacement> out_;  // absent: standard output (file_ is a tmpfile until the close)
    TraceOptions options_;
    std::FILE* file_ = nullptr;
    std::string pending_;
    long tail_offset_ = 0;       // where the next block starts (the tail is after it)
    std::size_t tail_length_ = 0;  // bytes of the tail last written (for padding)
    bool first_event_ = true;
    std::int64_t written_ = 0;
    std::int64_t dropped_ = 0;
    std::int64_t outside_window_ = 0;
    double truncated_at_s_ = std::numeric_limits<double>::quiet_NaN();
    nlohmann::json metadata_ = nlohmann::json::object();
};

// ------------------------------------------------------------- training timeline

// Link samples for counter tracks, e.g. one per link per output step of the run.
struct LinkCounterSample {
    double time_s = 0.0;
    std::int32_t source = 0;
    std::int32_t target = 0;
    double capacity_bps = 0.0;  // per direction
    double utilisation = std::numeric_limits<double>::quiet_NaN();  // 0…1; NaN: unknown
};

struct TrainingTraceOptions {
    std::int32_t pid = 1;             // process holding the rank tracks ("ranks")
    std::int32_t collectives_pid = 2; // process holding the collective stream track
    std::int32_t links_pid = 3;       // process holding the link counter tracks
    // Write every stride-th step (and its collectives). 0: auto — the smallest stride that
    // keeps the estimated events within the writer's max_events.
    std::int64_t step_stride = 0;
    std::vector<std::int32_t> rank_nodes;  // rank → satellite id, to name the track; may be empty
    std::int32_t busiest_links = 8;   // counter tracks for the links with most utilisation
    std::string label;                // prefixes the process names ("ring: ranks"); empty: none
    std::int64_t event_budget = -1;   // timeline events this call may use (auto stride); < 0: the writer's max_events
    std::int32_t sort_index = 0;      // of the first process; the others follow
};

// Writes a data-parallel TrainingResult as a timeline:
//   pid "ranks": one thread for every rank ("all N ranks (in step) · sats a–b"): steps are
//     global in data parallelism, so N tracks would carry the same slices. Per written step a
//     "step N" slice (args: status, compute_s, communication_s, exposed_communication_s) with
//     nested, non-overlapping children "compute" [start, start + compute_s] and, when the step
//     ran past its compute, "exposed communication" — or "stalled" / "incomplete" by status —
//     [start + compute_s, end].
//   pid "collectives": one thread "collective stream" with a slice per collective (name
//     e.g. "all_reduce ring", args: bytes, algBw_GBps, busBw_GBps, stalled_s, lost_s) —
//     they overlap compute (gradient buckets), hence their own track — and an instant
//     "stall" on collectives that waited for a path, "incomplete" on ones that never ended.
//   pid "links": counter tracks "link a-b" (capacity_Gbps, utilisation) for the busiest
//     links (by result.links utilisation), from link_samples when given, else the run's
//     mean utilisation at the first and last step.
// Also sets metadata: ranks, steps_total, steps_written, step_stride (prefixed with label + "_" when
// a label is given).
// Returns the step stride used (1: every step written).
std::int64_t write_training_trace(TraceWriter& writer, const workloads::TrainingResult& result, std::int32_t ranks,
                          const TrainingTraceOptions& options = {},
                          std::span<const LinkCounterSample> link_samples = {});

}  // namespace skyfabric::output
