// What `mpirun -n N skyfabric run` sends between ranks (cli/run_ranks.hpp): a constellation's
// algorithm results as bytes and back, every field and record kept; a cut message is refused.
#include "cli/run_ranks.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace sw = skyfabric::workloads;

namespace {

sw::ClusterTrainingResult sample(sw::ClusterAlgorithm algorithm, double scale) {
    sw::ClusterTrainingResult r;
    r.algorithm = algorithm;
    r.steps = 17;
    r.end_s = 1234.5 * scale;
    r.tokens_per_s = 3.25e7 * scale;
    r.outer_wait_mean_s = 0.125;
    r.bytes_outside_own_clusters = 42.0;
    r.truncated = true;
    r.rounds.push_back({1, 2, 3, 50, 10.0, 20.0, 21.0, 22.5});
    sw::StepRecord step;
    step.step = 4;
    step.end_s = 9.75 * scale;
    step.status = sw::StepStatus::stalled;
    r.training.steps = {step, step};
    sw::CollectiveRecord c;
    c.bytes = 1e9;
    c.completed = false;
    r.training.collectives = {c};
    r.training.links = {{3, 7, 1e6, 2e6, 0.5}};
    r.training.link_epochs = {{0.0, 1.0, 3, 7, 4e11, 0.25}};
    r.training.summary.step_time_p99_s = 2.5 * scale;
    r.training.summary.replans = 9;
    return r;
}

}  // namespace

TEST(RunRanks, AlgorithmResultsCrossBetweenRanksWhole) {
    const std::vector<sw::ClusterTrainingResult> sent{sample(sw::ClusterAlgorithm::hierarchical, 1.0),
                                                      sample(sw::ClusterAlgorithm::noloco, 3.0), {}};
    const std::string bytes = skyfabric::cli::encode_algorithm_results(sent);
    const auto got = skyfabric::cli::decode_algorithm_results(bytes);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(skyfabric::cli::encode_algorithm_results(got), bytes);  // every field, as sent
    EXPECT_EQ(got[1].algorithm, sw::ClusterAlgorithm::noloco);
    EXPECT_EQ(got[1].end_s, 1234.5 * 3.0);
    EXPECT_TRUE(got[1].truncated);
    ASSERT_EQ(got[1].rounds.size(), 1u);
    EXPECT_EQ(got[1].rounds[0].end_s, 22.5);
    ASSERT_EQ(got[1].training.steps.size(), 2u);
    EXPECT_EQ(got[1].training.steps[1].status, sw::StepStatus::stalled);
    EXPECT_EQ(got[1].training.steps[1].end_s, 9.75 * 3.0);
    ASSERT_EQ(got[0].training.link_epochs.size(), 1u);
    EXPECT_EQ(got[0].training.link_epochs[0].capacity_bps, 4e11);
    EXPECT_FALSE(got[0].training.collectives.at(0).completed);
    EXPECT_EQ(got[0].training.summary.replans, 9);
    EXPECT_TRUE(got[2].rounds.empty());

    // A message cut short, or with bytes to spare, is refused rather than read as results.
    EXPECT_THROW(skyfabric::cli::decode_algorithm_results(bytes.substr(0, bytes.size() - 3)), std::runtime_error);
    EXPECT_THROW(skyfabric::cli::decode_algorithm_results(bytes + "x"), std::runtime_error);
    // A record that keeps its routes cannot be sent (they are not part of the message).
    std::vector<sw::ClusterTrainingResult> with_routes(1);
    with_routes[0].training.tours = std::make_shared<const std::vector<sw::RingTour>>();
    EXPECT_THROW(skyfabric::cli::encode_algorithm_results(with_routes), std::logic_error);
}
