// The one producer of an orbital run's topologies (src/simulation/topology_producer.hpp), over a
// stand-in physics whose sample k has time 10·k s: at capacity 0 (the consumer's pulls produce) and
// 16 (a thread produces ahead) the consumer must see the same topologies in the same order, and the
// end (the run's end, a stop, a failure) at the same pull or look-ahead.
#include "simulation/topology_producer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using skyfabric::links::Topology;
using skyfabric::simulation::TopologyProducer;

constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

// Sample k: time 10·k s, k nodes. Ends after `samples`, or stops (false) at `stop_at`, or throws at `fail_at`.
struct StandInPhysics {
    std::size_t samples = 50, stop_at = none, fail_at = none;
    std::size_t next = 0;
    std::atomic<int> inside{0};
    std::atomic<bool> reentered{false};
    bool produce(Topology* t) {
        if (inside.fetch_add(1) != 0) reentered = true;
        struct Leave {
            std::atomic<int>& n;
            ~Leave() { n.fetch_sub(1); }
        } leave{inside};
        if (next >= samples || next == stop_at) return false;
        if (next == fail_at) throw std::runtime_error("diverged at sample " + std::to_string(next));
        if (t) {
            t->time_s = 10.0 * static_cast<double>(next);
            t->node_count = static_cast<std::int32_t>(next);
        }
        ++next;
        return true;
    }
};

// What the consumer saw: each pulled topology's time, what the subscriber was handed, and each end.
struct Consumer {
    std::vector<double> pulled, delivered;
    std::vector<std::string> ends;  // "" for a plain end, else what was thrown
};

std::vector<double> times(std::size_t from, std::size_t to) {
    std::vector<double> t;
    for (std::size_t k = from; k < to; ++k) t.push_back(10.0 * static_cast<double>(k));
    return t;
}

// The stand-in physics, what its consumer saw, and the producer between them (destroyed first).
class ProducerRig {
protected:
    StandInPhysics physics;
    Consumer seen;
    std::optional<TopologyProducer> producer_;
    // The producer at `capacity`, every topology it delivers recorded in seen.delivered.
    TopologyProducer& start(std::size_t capacity) {
        producer_.emplace([this](Topology* t) { return physics.produce(t); }, capacity, [this](std::exception_ptr thrown) {
            if (!thrown) return seen.ends.push_back("");
            try {
                std::rethrow_exception(thrown);
            } catch (const std::runtime_error& e) {
                seen.ends.push_back(e.what());
            }
        });
        producer_->subscribe([this](const Topology& t) { seen.delivered.push_back(t.time_s); });
        return *producer_;
    }
};

class Producer : public ::testing::TestWithParam<std::size_t>, protected ProducerRig {
protected:
    TopologyProducer& start() { return ProducerRig::start(GetParam()); }
};
class InlineProducer : public ::testing::Test, protected ProducerRig {};

TEST_P(Producer, EverySampleReachesTheConsumerInOrderAndTheEndOnce) {
    auto& producer = start();
    Topology t;
    for (std::size_t k = 0; k < 50; ++k) {
        ASSERT_TRUE(producer.pull(t));
        seen.pulled.push_back(t.time_s);
        EXPECT_EQ(t.node_count, static_cast<std::int32_t>(k));
        EXPECT_FALSE(producer.ended());  // the physics' end is not seen before the pull that finds it
        // Never more than `capacity` samples ahead of the pulls.
        EXPECT_LE(producer.produced(), k + 1 + GetParam());
    }
    EXPECT_FALSE(producer.pull(t));
    EXPECT_TRUE(producer.ended());
    EXPECT_FALSE(producer.pull(t));
    EXPECT_EQ(seen.pulled, times(0, 50));
    EXPECT_EQ(seen.delivered, seen.pulled);
    EXPECT_EQ(seen.ends, std::vector<std::string>{""});
    EXPECT_EQ(producer.produced(), 50u);
    EXPECT_FALSE(physics.reentered);
}

// Capacity 0 only: with a thread, how far ahead it is depends on timing (bounded above, tested above).
TEST_F(InlineProducer, NothingIsProducedAheadWithoutAThread) {
    auto& producer = start(0);
    Topology t;
    for (std::size_t k = 1; k <= 3; ++k) {
        ASSERT_TRUE(producer.pull(t));
        EXPECT_EQ(producer.produced(), k);
    }
    EXPECT_TRUE(producer.reach(8));
    EXPECT_EQ(producer.produced(), 8u);
}

TEST_P(Producer, ALookAheadProducesPastThePullsAndThePullsStillComeInOrder) {
    auto& producer = start();
    // Past the thread's capacity: the look-ahead lifts it.
    EXPECT_TRUE(producer.reach(30));
    EXPECT_GE(producer.produced(), 30u);
    EXPECT_TRUE(producer.reach(20));  // already produced
    Topology t;
    for (std::size_t k = 0; k < 5; ++k) {
        ASSERT_TRUE(producer.pull(t));
        seen.pulled.push_back(t.time_s);
    }
    EXPECT_FALSE(producer.ended());
    // Past the run's end: the look-ahead finds the end (seen here, once), the pulls still get every
    // sample produced.
    EXPECT_FALSE(producer.reach(51));
    EXPECT_TRUE(producer.ended());
    EXPECT_EQ(seen.ends, std::vector<std::string>{""});
    EXPECT_EQ(producer.produced(), 50u);
    while (producer.pull(t)) seen.pulled.push_back(t.time_s);
    EXPECT_EQ(seen.pulled, times(0, 50));
    EXPECT_EQ(seen.ends, std::vector<std::string>{""});
}

TEST_P(Producer, AStopEndsTheConsumerAtTheSamplesProducedBeforeIt) {
    physics.stop_at = 20;
    auto& producer = start();
    Topology t;
    while (producer.pull(t)) seen.pulled.push_back(t.time_s);
    EXPECT_EQ(seen.pulled, times(0, 20));
    EXPECT_EQ(seen.ends, std::vector<std::string>{""});
    EXPECT_EQ(producer.produced(), 20u);
}

TEST_P(Producer, AFailureReachesTheConsumerWhereItFindsTheEnd) {
    physics.fail_at = 7;
    auto& producer = start();
    Topology t;
    while (producer.pull(t)) {
        seen.pulled.push_back(t.time_s);
        EXPECT_TRUE(seen.ends.empty());  // not before the samples before it were pulled
    }
    EXPECT_EQ(seen.pulled, times(0, 7));
    EXPECT_EQ(seen.ends, std::vector<std::string>{"diverged at sample 7"});
    EXPECT_NO_THROW(producer.run_out());  // seen already: not thrown again
}

TEST_P(Producer, AFailureNoConsumerReachedIsThrownWhenTheRestIsRunOut) {
    physics.fail_at = 30;
    auto& producer = start();
    Topology t;
    for (int k = 0; k < 3; ++k) ASSERT_TRUE(producer.pull(t));
    EXPECT_THROW(producer.run_out(), std::runtime_error);
    EXPECT_EQ(producer.produced(), 30u);  // every sample before the failure, as producing inline
    EXPECT_EQ(seen.delivered, times(0, 3));  // the rest delivered to no one
    EXPECT_TRUE(seen.ends.empty());
}

TEST_P(Producer, RunOutProducesTheRestOfTheRunForNoOne) {
    physics.samples = 40;
    auto& producer = start();
    Topology t;
    for (int k = 0; k < 10; ++k) ASSERT_TRUE(producer.pull(t));
    producer.run_out();
    EXPECT_EQ(physics.next, 40u);
    EXPECT_EQ(producer.produced(), 40u);
    EXPECT_EQ(seen.delivered, times(0, 10));
    // A look-ahead after the run (a fault trial's compute under power) finds the end.
    EXPECT_TRUE(producer.reach(40));
    EXPECT_FALSE(producer.reach(41));
    EXPECT_TRUE(seen.ends.empty());
}

TEST_P(Producer, LookAheadsFromSeveralThreadsProduceOneSampleAtATime) {
    physics.samples = 200;
    auto& producer = start();
    std::vector<std::thread> threads;
    std::atomic<int> reached{0};
    for (std::size_t i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
            for (std::size_t k = i; k < 150; k += 4)
                if (producer.reach(k + 1)) ++reached;
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(reached.load(), 150);
    EXPECT_GE(producer.produced(), 150u);
    EXPECT_FALSE(physics.reentered);
    Topology t;
    std::vector<double> pulled;
    while (producer.pull(t)) pulled.push_back(t.time_s);
    EXPECT_EQ(pulled, times(0, 200));
}

std::string capacity_name(const ::testing::TestParamInfo<std::size_t>& p) { return "capacity" + std::to_string(p.param); }

INSTANTIATE_TEST_SUITE_P(Capacity, Producer, ::testing::Values(std::size_t{0}, std::size_t{16}), capacity_name);

}  // namespace
