#pragma once
// The output recorders (HDF5, VTK) on a thread of their own, so that writing overlaps the
// simulation: each sample, and each block of a serving run's requests, is copied (its pointers
// and spans name the run's memory, which the next step overwrites) and queued; the simulation
// goes on at once.

#include "simulation/simulation.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace skyfabric::output {

class BackgroundRecorders final : public simulation::Recorder {
public:
    explicit BackgroundRecorders(std::vector<simulation::Recorder*> inner);
    ~BackgroundRecorders() override;  // drops what is still queued (a run that failed) and stops the thread
    BackgroundRecorders(const BackgroundRecorders&) = delete;
    BackgroundRecorders& operator=(const BackgroundRecorders&) = delete;

    void begin(const simulation::RunSetup& setup) override;  // on the caller's thread, before any sample
    // Queues a copy; waits while the queue is full (memory stays bounded). Rethrows the failure of
    // an earlier sample (a full disk), so the run stops as if that sample's write had thrown.
    void record(const simulation::Sample& sample) override;
    // The same for a block of requests.
    void requests(std::size_t run, workloads::ServingRouting routing, std::span<const workloads::RequestRecord> rows) override;
    // Waits until every queued sample is written, rethrows a failure, then ends each recorder.
    void end(const simulation::RunSummary& summary) override;

private:
    struct Owned;
    struct Work;
    void enqueue(std::unique_ptr<Work> work);
    void work();

    std::vector<simulation::Recorder*> inner_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::unique_ptr<Work>> queue_;
    bool busy_ = false;      // the worker is writing what it took off the queue
    bool closing_ = false;
    std::exception_ptr failure_;
    std::thread worker_;
};

}  // namespace skyfabric::output
