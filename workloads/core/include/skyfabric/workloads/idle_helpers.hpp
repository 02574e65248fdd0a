#pragma once
// Threads that have run out of their own work lend a hand to those still busy. A constellation's
// algorithms replay side by side, one per thread, and the longest (hierarchical) goes on alone
// after the others end; its route searches are independent per pair, so the idle threads search
// them too (RouteCache::prefetch). What a helper computes is what the caller would have: only the
// time changes. Pure: no I/O.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace skyfabric::workloads {

class IdleHelpers {
public:
    // Whether some thread waits in serve() now: when none does, run() does every item itself.
    bool any_idle() const { return idle_.load(std::memory_order_relaxed) > 0; }
    // How many wait in serve() now.
    std::int32_t idle_count() const { return idle_.load(std::memory_order_relaxed); }
    // How many run() calls so far were offered to helpers (some idle when they began).
    std::int64_t shared_runs() const { return shared_runs_.load(std::memory_order_relaxed); }
    // body(0) … body(n − 1), each once, on this thread and on the helpers idle now; returns once
    // all are done, rethrowing the first exception a body threw.
    void run(std::size_t n, const std::function<void(std::size_t)>& body);
    // A thread with nothing left of its own: does the items of every run() under way, until close().
    void serve();
    void close();

private:
    struct Job {
        std::size_t n = 0;
        const std::function<void(std::size_t)>* body = nullptr;
        std::atomic<std::size_t> next{0};
        std::size_t done = 0;   // under mutex_
        std::int32_t users = 0;  // helpers taking items from it, under mutex_
        std::exception_ptr error;  // under mutex_
    };
    // Takes items of job until none is left; returns how many it did. Records a body's exception.
    std::size_t work_on(Job& job);
    Job* job_with_items() const;  // under mutex_
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Job*> jobs_;  // run()s under way
    std::atomic<std::int32_t> idle_{0};
    std::atomic<std::int64_t> shared_runs_{0};
    bool closed_ = false;
};

// threads − 1 threads serving `helpers` while it lives (0: every core): a pool for a caller with
// one thing to do at a time (`skyfabric collective --threads`, a benchmark), whose runs the caller
// and they share.
class HelperThreads {
public:
    HelperThreads(IdleHelpers& helpers, std::int32_t threads);
    ~HelperThreads();
    HelperThreads(const HelperThreads&) = delete;
    HelperThreads& operator=(const HelperThreads&) = delete;

private:
    IdleHelpers& helpers_;
    std::vector<std::thread> threads_;
};

}  // namespace skyfabric::workloads
