// IdleHelpers: every item of a run done once, by the caller alone when no helper is idle, shared
// with idle helpers otherwise; several runs at once; a body's exception rethrown by its run.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <skyfabric/workloads/idle_helpers.hpp>

namespace sw = skyfabric::workloads;

namespace {

void wait_until_idle(const sw::IdleHelpers& helpers) {
    while (!helpers.any_idle()) std::this_thread::yield();
}

}  // namespace

TEST(IdleHelpers, WithNoneIdleTheCallerDoesEveryItemInOrder) {
    sw::IdleHelpers helpers;
    EXPECT_FALSE(helpers.any_idle());
    std::vector<std::size_t> order;
    const auto caller = std::this_thread::get_id();
    bool elsewhere = false;
    helpers.run(50, [&](std::size_t i) {
        order.push_back(i);
        elsewhere = elsewhere || std::this_thread::get_id() != caller;
    });
    ASSERT_EQ(order.size(), 50u);
    for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
    EXPECT_FALSE(elsewhere);
    helpers.run(0, [](std::size_t) { FAIL() << "no items"; });
}

TEST(IdleHelpers, AnIdleHelperTakesItemsAndEachIsDoneOnce) {
    sw::IdleHelpers helpers;
    std::thread helper([&] { helpers.serve(); });
    wait_until_idle(helpers);
    // Item 0 waits for an item done on another thread: the run ends only if the helper works on it.
    const auto caller = std::this_thread::get_id();
    std::mutex m;
    std::condition_variable cv;
    bool other_thread_did_one = false;
    std::vector<std::atomic<int>> times(2000);
    helpers.run(times.size(), [&](std::size_t i) {
        ++times[i];
        std::unique_lock lock(m);
        if (std::this_thread::get_id() != caller) {
            other_thread_did_one = true;
            cv.notify_all();
        } else if (i == 0) {
            EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return other_thread_did_one; }));
        }
    });
    for (std::size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i].load(), 1) << i;
    EXPECT_TRUE(other_thread_did_one);
    helpers.close();
    helper.join();
    EXPECT_FALSE(helpers.any_idle());
}

TEST(IdleHelpers, SeveralRunsAtOnceAndAnExceptionReachesItsRun) {
    sw::IdleHelpers helpers;
    std::vector<std::thread> pool;
    for (int h = 0; h < 3; ++h) pool.emplace_back([&] { helpers.serve(); });
    wait_until_idle(helpers);
    std::vector<std::atomic<int>> a(5000), b(5000);
    std::thread other([&] {
        helpers.run(b.size(), [&](std::size_t i) { ++b[i]; });
    });
    helpers.run(a.size(), [&](std::size_t i) { ++a[i]; });
    other.join();
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].load(), 1) << i;
        EXPECT_EQ(b[i].load(), 1) << i;
    }
    wait_until_idle(helpers);
    std::atomic<int> done{0};
    EXPECT_THROW(helpers.run(100,
                             [&](std::size_t i) {
                                 ++done;
                                 if (i == 37) throw std::runtime_error("item 37");
                             }),
                 std::runtime_error);
    EXPECT_EQ(done.load(), 100);  // the other items are still done
    helpers.close();
    for (auto& t : pool) t.join();
}
