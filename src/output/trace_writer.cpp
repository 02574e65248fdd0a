#include "output/trace_writer.hpp"

#include "output/hdf5_file.hpp"  // OutputError

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

namespace skyfabric::output {

namespace {

// Shortest text that reads back as the same double (JSON has no inf/NaN: callers check).
void put_number(std::string& out, double v) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc{} ? end : buf);
}

void put_string(std::string& out, std::string_view s) {
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string begin_event(char phase, std::int32_t pid, std::int32_t tid) {
    std::string e = "{\"ph\":\"";
    e += phase;
    e += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid);
    return e;
}

void put_args(std::string& out, const nlohmann::json& args) {
    if (args.is_null()) return;
    out += ",\"args\":";
    out += args.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string link_name(std::int32_t a, std::int32_t b) {
    return "link " + std::to_string(a) + "-" + std::to_string(b);
}

}  // namespace

// ------------------------------------------------------------------ TraceWriter

TraceWriter::TraceWriter(std::filesystem::path path, TraceOptions options)
    : path_(std::move(path)), options_(options) {
    if (is_standard_output(path_)) {
        file_ = std::tmpfile();  // the tail is rewritten in place: a pipe cannot seek
        if (!file_) throw OutputError(std::string("cannot create a temporary file for the trace: ") + std::strerror(errno));
    } else {
        out_.emplace(path_);
        file_ = ::fdopen(out_->fd(), "wb");
        if (!file_) throw OutputError("cannot write trace file " + path_.string() + ": " + std::strerror(errno));
        out_->release_fd();  // file_ owns it now
    }
    static constexpr char head[] = "{\"traceEvents\":[\n";
    std::fwrite(head, 1, sizeof head - 1, file_);
    tail_offset_ = static_cast<long>(sizeof head - 1);
    metadata_["trace_format"] = "Chrome trace-event JSON (ts, dur in microseconds)";
    write_block(false);
}

TraceWriter::~TraceWriter() {
    try {
        close();
    } catch (...) {  // out_ removes the temporary
    }
}

std::filesystem::path TraceWriter::temporary_path() const { return out_ ? out_->temporary() : std::filesystem::path(); }

namespace {

// Copies the finished trace in `from` to standard output.
void copy_to_standard_output(std::FILE* from) {
    std::rewind(from);
    char buffer[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, from)) > 0) {
        if (std::fwrite(buffer, 1, n, stdout) != n) break;
    }
    if (std::ferror(from) || std::fflush(stdout) != 0 || std::ferror(stdout))
        throw OutputError(std::string("cannot write the trace to standard output: ") + std::strerror(errno));
}

}  // namespace

std::string TraceWriter::tail(bool complete) const {
    nlohmann::json m = metadata_;
    m["complete"] = complete;
    m["time_origin_s"] = options_.time_origin_s;
    m["events_written"] = written_;
    m["max_events"] = options_.max_events;
    m["truncated"] = dropped_ > 0;
    if (dropped_ > 0) {
        m["events_dropped"] = dropped_;
        m["truncated_at_s"] = truncated_at_s_;
    }
    if (std::isfinite(options_.window_start_s)) m["window_start_s"] = options_.window_start_s;
    if (std::isfinite(options_.window_end_s)) m["window_end_s"] = options_.window_end_s;
    if (outside_window_ > 0) m["events_outside_window"] = outside_window_;
    std::string t = "\n],\"displayTimeUnit\":\"ms\",\"metadata\":";
    t += m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    t += "}\n";
    return t;
}

void TraceWriter::write_block(bool complete) {
    if (!file_) return;
    if (std::fseek(file_, tail_offset_, SEEK_SET) != 0)
        throw OutputError("cannot write trace file " + path_.string() + ": " + std::strerror(errno));
    if (!pending_.empty()) std::fwrite(pending_.data(), 1, pending_.size(), file_);
    tail_offset_ += static_cast<long>(pending_.size());
    pending_.clear();
    std::string t = tail(complete);
    // Pad with whitespace over a longer previous tail (JSON allows trailing whitespace).
    if (t.size() < tail_length_) t.append(tail_length_ - t.size(), ' ');
    tail_length_ = t.size();
    std::fwrite(t.data(), 1, t.size(), file_);
    if (std::fflush(file_) != 0 || std::ferror(file_))
        throw OutputError("cannot write trace file " + path_.string() + ": " + std::strerror(errno));
}

void TraceWriter::append(const std::string& event) {
    if (!file_) return;
    if (!first_event_) pending_ += ",\n";
    first_event_ = false;
    pending_ += event;
    if (pending_.size() >= options_.flush_bytes) write_block(false);
}

bool TraceWriter::admit(double start_s, double end_s) {
    if (!file_ || !std::isfinite(start_s) || !std::isfinite(end_s)) return false;
    if (end_s < options_.window_start_s || start_s > options_.window_end_s) {
        ++outside_window_;
        return false;
    }
    if (options_.max_events >= 0 && written_ >= options_.max_events) {
        if (dropped_ == 0) truncated_at_s_ = start_s;
        ++dropped_;
        return false;
    }
    ++written_;
    return true;
}

void TraceWriter::process_name(std::int32_t pid, std::string_view name) {
    std::string e = begin_event('M', pid, 0) + ",\"name\":\"process_name\",\"args\":{\"name\":";
    put_string(e, name);
    e += "}}";
    append(e);
}

void TraceWriter::process_sort_index(std::int32_t pid, std::int32_t index) {
    append(begin_event('M', pid, 0) + ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" +
           std::to_string(index) + "}}");
}

void TraceWriter::thread_name(std::int32_t pid, std::int32_t tid, std::string_view name) {
    std::string e = begin_event('M', pid, tid) + ",\"name\":\"thread_name\",\"args\":{\"name\":";
    put_string(e, name);
    e += "}}";
    append(e);
}

void TraceWriter::thread_sort_index(std::int32_t pid, std::int32_t tid, std::int32_t index) {
    append(begin_event('M', pid, tid) + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" +
           std::to_string(index) + "}}");
}

// The name, category and args every timeline event ends with; then the event is queued.
void TraceWriter::finish_event(std::string& e, std::string_view name, std::string_view category,
                               const nlohmann::json& args) {
    e += ",\"name\":";
    put_string(e, name);
    if (!category.empty()) {
        e += ",\"cat\":";
        put_string(e, category);
    }
    put_args(e, args);
    e += "}";
    append(e);
}

bool TraceWriter::complete(std::int32_t pid, std::int32_t tid, std::string_view name, std::string_view category,
                           double start_s, double duration_s, const nlohmann::json& args) {
    if (!(duration_s >= 0.0)) return false;
    if (!admit(start_s, start_s + duration_s)) return false;
    std::string e = begin_event('X', pid, tid) + ",\"ts\":";
    put_number(e, (start_s - options_.time_origin_s) * 1e6);
    e += ",\"dur\":";
    put_number(e, duration_s * 1e6);
    finish_event(e, name, category, args);
    return true;
}

bool TraceWriter::instant(std::int32_t pid, std::int32_t tid, std::string_view name, std::string_view category,
                          double time_s, const nlohmann::json& args, InstantScope scope) {
    if (!admit(time_s, time_s)) return false;
    std::string e = begin_event('i', pid, tid) + ",\"ts\":";
    put_number(e, (time_s - options_.time_origin_s) * 1e6);
    e += ",\"s\":\"";
    e += scope == InstantScope::global ? 'g' : scope == InstantScope::process ? 'p' : 't';
    e += '"';
    finish_event(e, name, category, args);
    return true;
}

bool TraceWriter::counter(std::int32_t pid, std::string_view name, double time_s, const nlohmann::json& series) {
    if (!series.is_object()) throw std::invalid_argument("TraceWriter::counter: series must be a JSON object");
    nlohmann::json finite = nlohmann::json::object();
    for (const auto& [key, value] : series.items())
        if (value.is_number() && std::isfinite(value.get<double>())) finite[key] = value;
    if (finite.empty()) return false;
    if (!admit(time_s, time_s)) return false;
    std::string e = begin_event('C', pid, 0) + ",\"ts\":";
    put_number(e, (time_s - options_.time_origin_s) * 1e6);
    e += ",\"name\":";
    put_string(e, name);
    put_args(e, finite);
    e += "}";
    append(e);
    return true;
}

void TraceWriter::metadata(std::string_view key, nlohmann::json value) { metadata_[std::string(key)] = std::move(value); }

void TraceWriter::flush() { write_block(false); }

void TraceWriter::close() {
    if (!file_) return;
    try {
        write_block(true);
        if (!out_) copy_to_standard_output(file_);
    } catch (...) {
        std::fclose(std::exchange(file_, nullptr));
        throw;
    }
    if (std::fclose(std::exchange(file_, nullptr)) != 0)
        throw OutputError("cannot write trace file " + path_.string() + ": " + std::strerror(errno));
    if (out_) out_->commit();
}

// ------------------------------------------------------------- training timeline

std::int64_t write_training_trace(TraceWriter& writer, const workloads::TrainingResult& result, std::int32_t ranks,
                          const TrainingTraceOptions& options, std::span<const LinkCounterSample> link_samples) {
    if (ranks < 1) throw std::invalid_argument("write_training_trace: ranks must be >= 1");
    const auto& steps = result.steps;
    const TraceOptions& limits = writer.options();
    auto in_window = [&](double a, double b) { return b >= limits.window_start_s && a <= limits.window_end_s; };

    // Collectives by step, so a sampled step writes its own.
    std::map<std::int64_t, std::vector<const workloads::CollectiveRecord*>> by_step;
    for (const auto& c : result.collectives) by_step[c.step].push_back(&c);

    // Stride: fit the estimated timeline events within max_events (names are free).
    std::int64_t stride = options.step_stride;
    if (stride <= 0) {
        std::int64_t estimate = 0;
        for (const auto& s : steps) {
            if (!in_window(s.start_s, s.end_s)) continue;
            const auto it = by_step.find(s.step);
            estimate += 3 + 2 * static_cast<std::int64_t>(it == by_step.end() ? 0 : it->second.size());
        }
        const std::int64_t limit = options.event_budget >= 0 ? options.event_budget : limits.max_events;
        const std::int64_t budget = limit < 0 ? estimate : std::max<std::int64_t>(1, limit - 64);
        stride = estimate <= budget ? 1 : (estimate + budget - 1) / budget;
    }

    // Every rank steps together (a step's start, compute and end are the job's, not a rank's), so the
    // ranks share one track: N identical tracks made a 324-rank trace 31 MB and told nothing more.
    const std::string prefix = options.label.empty() ? "" : options.label + ": ";
    writer.process_name(options.pid, prefix + "ranks");
    writer.process_sort_index(options.pid, options.sort_index);
    std::string track = "all " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks (in step)");
    if (!options.rank_nodes.empty()) {
        const auto [lo, hi] = std::minmax_element(options.rank_nodes.begin(), options.rank_nodes.end());
        track += " · sats " + std::to_string(*lo) + (*hi != *lo ? "–" + std::to_string(*hi) : "");
    }
    writer.thread_name(options.pid, 0, track);
    writer.thread_sort_index(options.pid, 0, 0);
    writer.process_name(options.collectives_pid, prefix + "collectives");
    writer.process_sort_index(options.collectives_pid, options.sort_index + 1);
    writer.thread_name(options.collectives_pid, 0, "collective stream");

    std::int64_t written_steps = 0;
    std::int64_t index = 0;
    for (const auto& s : steps) {
        if (!in_window(s.start_s, s.end_s)) continue;
        if (index++ % stride != 0) continue;
        ++written_steps;
        const double step_s = s.end_s - s.start_s;
        const double compute_s = std::clamp(s.compute_s, 0.0, std::isfinite(step_s) ? step_s : s.compute_s);
        const double tail_s = step_s - compute_s;
        const nlohmann::json step_args{{"status", workloads::step_status_names.name(s.status)},
                                       {"compute_s", s.compute_s},
                                       {"communication_s", s.communication_s},
                                       {"exposed_communication_s", s.exposed_communication_s},
                                       {"synchronised", s.synchronised}};
        const char* tail_name = s.status == workloads::StepStatus::stalled      ? "stalled"
                                : s.status == workloads::StepStatus::incomplete ? "incomplete"
                                                                                : "exposed communication";
        const std::string step_name = "step " + std::to_string(s.step);
        writer.complete(options.pid, 0, step_name, "step", s.start_s, step_s, step_args);
        writer.complete(options.pid, 0, "compute", "compute", s.start_s, compute_s);
        // Starts exactly where compute ends and ends where the step ends: nested.
        if (tail_s > 0.0) writer.complete(options.pid, 0, tail_name, "communication", s.start_s + compute_s, tail_s);
        const auto it = by_step.find(s.step);
        if (it == by_step.end()) continue;
        for (const auto* c : it->second) {
            const std::string name = workloads::to_string(c->op) + " " + workloads::to_string(c->algorithm);
            const nlohmann::json args{{"step", c->step},
                                      {"bytes", c->bytes},
                                      {"algBw_GBps", c->alg_bw_Bps / 1e9},
                                      {"busBw_GBps", c->bus_bw_Bps / 1e9},
                                      {"stalled_s", c->stalled_s},
                                      {"lost_s", c->lost_s}};
            if (!c->completed || !std::isfinite(c->end_s)) {
                writer.instant(options.collectives_pid, 0, "incomplete", "stall", c->start_s, args);
                continue;
            }
            writer.complete(options.collectives_pid, 0, name, "collective", c->start_s, c->end_s - c->start_s, args);
            if (c->stalled_s > 0.0) writer.instant(options.collectives_pid, 0, "stall", "stall", c->start_s, args);
        }
    }

    // Link counters for the busiest links.
    std::vector<workloads::LinkUtilisation> busiest(result.links.begin(), result.links.end());
    std::sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) {
        return a.utilisation != b.utilisation ? a.utilisation > b.utilisation
                                              : (a.source != b.source ? a.source < b.source : a.target < b.target);
    });
    if (options.busiest_links >= 0 && busiest.size() > static_cast<std::size_t>(options.busiest_links))
        busiest.resize(static_cast<std::size_t>(options.busiest_links));
    if (!busiest.empty()) {
        writer.process_name(options.links_pid, prefix + "links (busiest)");
        writer.process_sort_index(options.links_pid, options.sort_index + 2);
        std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> wanted;
        for (const auto& l : busiest) wanted.emplace(std::pair{l.source, l.target}, 0);
        if (!link_samples.empty()) {
            for (const auto& sample : link_samples) {
                if (!wanted.count({sample.source, sample.target})) continue;
                writer.counter(options.links_pid, link_name(sample.source, sample.target), sample.time_s,
                               {{"capacity_Gbps", sample.capacity_bps / 1e9}, {"utilisation", sample.utilisation}});
            }
        } else if (!steps.empty()) {
            for (const auto& l : busiest) {
                for (double t : {steps.front().start_s, steps.back().end_s})
                    writer.counter(options.links_pid, link_name(l.source, l.target), t,
                                   {{"utilisation_mean", l.utilisation}});
            }
        }
    }

    const std::string key = options.label.empty() ? "" : options.label + "_";
    writer.metadata(key + "ranks", ranks);
    writer.metadata(key + "steps_total", static_cast<std::int64_t>(steps.size()));
    writer.metadata(key + "steps_written", written_steps);
    writer.metadata(key + "step_stride", stride);
    return stride;
}

}  // namespace skyfabric::output
