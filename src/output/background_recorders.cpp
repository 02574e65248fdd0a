#include "output/background_recorders.hpp"
#include "output/hdf5_file.hpp"

#include <optional>

namespace skyfabric::output {
namespace {
// Samples queued at most: a few seconds of a day's run at 81 satellites, a few hundred MB at
// 10,000 (a snapshot and a topology per sample); of a serving run's request blocks, ~15 MB.
constexpr std::size_t queue_limit = 32;
}  // namespace

// A sample and everything it points at, owned.
struct BackgroundRecorders::Owned {
    explicit Owned(const simulation::Sample& s) : sample(s) {
        if (s.snapshot) {
            snapshot = *s.snapshot;
            sample.snapshot = &snapshot;
        }
        if (s.topology) {
            topology = *s.topology;
            sample.topology = &*topology;
        }
        if (s.aggregation) {
            aggregation = *s.aggregation;
            sample.aggregation = &*aggregation;
        }
        link_events.assign(s.link_events.begin(), s.link_events.end());
        sample.link_events = link_events;
        delta_v_m_s.assign(s.delta_v_m_s.begin(), s.delta_v_m_s.end());
        sample.delta_v_m_s = delta_v_m_s;
        dose_rate_rad_s.assign(s.dose_rate_rad_s.begin(), s.dose_rate_rad_s.end());
        sample.dose_rate_rad_s = dose_rate_rad_s;
        dose_rad.assign(s.dose_rad.begin(), s.dose_rad.end());
        sample.dose_rad = dose_rad;
    }
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;

    simulation::Sample sample;
    physics::FormationSnapshot snapshot;
    std::optional<links::Topology> topology;
    std::optional<simulation::AggregationSample> aggregation;
    std::vector<links::LinkEvent> link_events;
    std::vector<double> delta_v_m_s, dose_rate_rad_s, dose_rad;
};

// What one queued item writes: a sample, or a block of a serving run's requests.
struct BackgroundRecorders::Work {
    std::unique_ptr<Owned> sample;
    std::size_t run = 0;
    workloads::ServingRouting routing{};
    std::vector<workloads::RequestRecord> rows;

    void write(simulation::Recorder& r) const {
        if (sample) r.record(sample->sample);
        else r.requests(run, routing, rows);
    }
};

BackgroundRecorders::BackgroundRecorders(std::vector<simulation::Recorder*> inner)
    : inner_(std::move(inner)), worker_([this] {
          silence_hdf5_on_this_thread();  // the recorders it drives write result.h5 from here
          work();
      }) {}

BackgroundRecorders::~BackgroundRecorders() {
    {
        std::lock_guard lock(mutex_);
        closing_ = true;
        queue_.clear();
    }
    changed_.notify_all();
    worker_.join();
}

void BackgroundRecorders::begin(const simulation::RunSetup& setup) {
    for (auto* r : inner_) r->begin(setup);
}

void BackgroundRecorders::record(const simulation::Sample& sample) {
    auto work = std::make_unique<Work>();
    work->sample = std::make_unique<Owned>(sample);  // copied before waiting: the copy is the caller's work
    enqueue(std::move(work));
}

void BackgroundRecorders::requests(std::size_t run, workloads::ServingRouting routing,
                                   std::span<const workloads::RequestRecord> rows) {
    auto work = std::make_unique<Work>();
    work->run = run;
    work->routing = routing;
    work->rows.assign(rows.begin(), rows.end());
    enqueue(std::move(work));
}

void BackgroundRecorders::enqueue(std::unique_ptr<Work> work) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.size() < queue_limit || failure_; });
    if (failure_) std::rethrow_exception(failure_);
    queue_.push_back(std::move(work));
    lock.unlock();
    changed_.notify_all();
}

void BackgroundRecorders::end(const simulation::RunSummary& summary) {
    {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return (queue_.empty() && !busy_) || failure_; });
        if (failure_) std::rethrow_exception(failure_);
    }
    for (auto* r : inner_) r->end(summary);
}

void BackgroundRecorders::work() {
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [this] { return closing_ || !queue_.empty(); });
        if (closing_) return;
        auto work = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        lock.unlock();
        std::exception_ptr failed;
        try {
            for (auto* r : inner_) work->write(*r);
        } catch (...) {
            failed = std::current_exception();
        }
        lock.lock();
        busy_ = false;
        if (failed) {
            failure_ = failed;
            queue_.clear();
        }
        changed_.notify_all();
        if (failed) {
            // Nothing more is written; wait to be closed.
            changed_.wait(lock, [this] { return closing_; });
            return;
        }
    }
}

}  // namespace skyfabric::output
