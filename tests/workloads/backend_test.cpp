// The backend choice (backend.hpp): names, resolving `auto` to what this machine has, refusing CUDA
// where it cannot run with the reason, and the stop flag the long computations poll.
#include <atomic>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <skyfabric/workloads/backend.hpp>

namespace sw = skyfabric::workloads;

TEST(Backend, NamesRoundTripAndUnknownNamesAreRefused) {
    for (const auto b : {sw::Backend::automatic, sw::Backend::cpu, sw::Backend::cuda})
        EXPECT_EQ(sw::parse_backend(sw::to_string(b)), b);
    EXPECT_EQ(sw::to_string(sw::Backend::automatic), "auto");
    EXPECT_THROW(sw::parse_backend("gpu"), std::invalid_argument);
    EXPECT_THROW(sw::parse_backend(""), std::invalid_argument);
}

TEST(Backend, AutoTakesADeviceWhenThereIsOneAndCudaWithoutOneSaysWhy) {
    const bool device = sw::cuda_device_count() > 0;
    EXPECT_EQ(sw::cuda_unavailable_reason().empty(), device);
    EXPECT_EQ(sw::resolve_backend(sw::Backend::cpu), sw::Backend::cpu);
    EXPECT_EQ(sw::resolve_backend(sw::Backend::automatic), device ? sw::Backend::cuda : sw::Backend::cpu);
    if (device) {
        EXPECT_EQ(sw::resolve_backend(sw::Backend::cuda), sw::Backend::cuda);
    } else {
        try {
            sw::resolve_backend(sw::Backend::cuda);
            ADD_FAILURE() << "cuda resolved on a machine without a device";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(sw::cuda_unavailable_reason()), std::string::npos) << e.what();
        }
    }
}

TEST(Backend, AStopFlagIsSeenOnlyOnceSet) {
    std::atomic<bool> stop{false};
    EXPECT_FALSE(sw::stop_requested(nullptr));
    EXPECT_FALSE(sw::stop_requested(&stop));
    EXPECT_NO_THROW(sw::throw_if_stopped(&stop));
    EXPECT_NO_THROW(sw::throw_if_stopped(nullptr));
    stop = true;
    EXPECT_TRUE(sw::stop_requested(&stop));
    EXPECT_THROW(sw::throw_if_stopped(&stop), sw::Interrupted);
}
