// CUDA twin of the fault sampler: one GPU thread per (trial, satellite) stream, running
// core::sample_satellite_faults, the function the CPU loop runs. Two passes over the same
// counter-based draws: count each stream's events, then (after a prefix sum) write them.
// Compiled with -fmad=false, like the CPU side with -ffp-contract=off.

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include <skyfabric/workloads/faults.hpp>

#include "faults_cuda.hpp"
#include <skyfabric/workloads/cuda_support.cuh>

namespace skyfabric::workloads::detail {

namespace {

struct StreamArgs {
    const double* dose_rate = nullptr;  // satellite-major
    const std::int64_t* window_offsets = nullptr;
    const core::ThinningWindow* windows = nullptr;
    std::int64_t sample_count = 0;
    std::int32_t satellite_count = 0;
    std::int64_t stream_count = 0;  // trials × satellites
    double start_s = 0.0, step_s = 0.0, end_s = 0.0;
    core::FaultMarks marks;
    std::uint64_t key = 0, first_trial = 0;
};

// Stream i: trial first_trial + i / satellites, satellite i % satellites.
template <class Emit>
__device__ void draw_stream(const StreamArgs& a, std::int64_t i, Emit&& emit) {
    const auto satellite = static_cast<std::int32_t>(i % a.satellite_count);
    const std::uint64_t trial = a.first_trial + static_cast<std::uint64_t>(i / a.satellite_count);
    const std::int64_t first = a.window_offsets[satellite];
    core::sample_satellite_faults(a.dose_rate + static_cast<std::int64_t>(satellite) * a.sample_count,
                                  a.windows + first, a.window_offsets[satellite + 1] - first, a.start_s, a.step_s,
                                  a.end_s, a.marks, a.key, trial, satellite, emit);
}

__global__ void count_kernel(StreamArgs a, unsigned long long* counts) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= a.stream_count) return;
    unsigned long long n = 0;
    draw_stream(a, i, [&](const FaultEvent&) { ++n; });
    counts[i] = n;
}

__global__ void fill_kernel(StreamArgs a, const unsigned long long* offsets, FaultEvent* events) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= a.stream_count) return;
    unsigned long long k = offsets[i];
    draw_stream(a, i, [&](const FaultEvent& e) { events[k++] = e; });
}

}  // namespace

std::vector<std::vector<FaultEvent>> cuda_sample_fault_events_batch(const FaultStreams& f, std::uint64_t first_trial,
                                                                    std::int32_t trials) {
    std::vector<std::vector<FaultEvent>> out(static_cast<std::size_t>(trials > 0 ? trials : 0));
    const std::int32_t satellite_count = f.satellite_count;
    if (trials <= 0 || satellite_count <= 0) return out;
    const DeviceArray<double> dose(f.dose_rate_by_satellite);
    const DeviceArray<std::int64_t> window_offsets(f.window_offsets);
    const DeviceArray<core::ThinningWindow> windows(f.windows);
    StreamArgs a;
    a.dose_rate = dose.data;
    a.window_offsets = window_offsets.data;
    a.windows = windows.data;
    a.sample_count = f.sample_count;
    a.satellite_count = satellite_count;
    a.stream_count = static_cast<std::int64_t>(trials) * satellite_count;
    a.start_s = f.start_s;
    a.step_s = f.step_s;
    a.end_s = f.end_s;
    a.marks = f.marks;
    a.key = f.key;
    a.first_trial = first_trial;
    const int threads = 128;
    const auto blocks = static_cast<unsigned>((a.stream_count + threads - 1) / threads);

    const auto streams = static_cast<std::size_t>(a.stream_count);
    DeviceArray<unsigned long long> d_counts(streams);
    count_kernel<<<blocks, threads>>>(a, d_counts.data);
    check_cuda(cudaGetLastError(), "count kernel launch");
    check_cuda(cudaDeviceSynchronize(), "count kernel");
    std::vector<unsigned long long> offsets(streams);
    d_counts.to_host(offsets);
    unsigned long long total = 0;
    for (unsigned long long& o : offsets) {  // exclusive prefix sum
        const unsigned long long n = o;
        o = total;
        total += n;
    }
    if (total == 0) return out;

    const DeviceArray<unsigned long long> d_offsets(offsets);
    DeviceArray<FaultEvent> d_events(static_cast<std::size_t>(total));
    fill_kernel<<<blocks, threads>>>(a, d_offsets.data, d_events.data);
    check_cuda(cudaGetLastError(), "fill kernel launch");
    check_cuda(cudaDeviceSynchronize(), "fill kernel");
    std::vector<FaultEvent> events(static_cast<std::size_t>(total));
    d_events.to_host(events);

    // A trial's streams are consecutive, so its events are one slice.
    for (std::int32_t t = 0; t < trials; ++t) {
        const std::size_t first = offsets[static_cast<std::size_t>(t) * static_cast<std::size_t>(satellite_count)];
        const std::size_t last = t + 1 < trials
                                     ? offsets[static_cast<std::size_t>(t + 1) * static_cast<std::size_t>(satellite_count)]
                                     : static_cast<std::size_t>(total);
        out[static_cast<std::size_t>(t)].assign(events.begin() + static_cast<std::ptrdiff_t>(first),
                                                events.begin() + static_cast<std::ptrdiff_t>(last));
    }
    return out;
}

}  // namespace skyfabric::workloads::detail
