// CUDA backend: one GPU thread per independent problem, running the same host/device
// functions as the CPU backend (maxmin_core.hpp). Compiled with -fmad=false so no
// fused multiply-add changes the rounding relative to the CPU.

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <skyfabric/workloads/maxmin_core.hpp>

#include "flow_solver_cuda.hpp"
#include <skyfabric/workloads/cuda_support.cuh>

namespace skyfabric::workloads::detail {

namespace {

// All problems laid end to end; *_base give each problem's start in the shared arrays.
struct Flat {
    std::vector<std::int64_t> link_base, flow_base, offset_base, incidence_base;
    std::vector<double> capacity, bytes, latency;
    std::vector<int> offsets, links;
    std::int64_t total_links = 0, total_flows = 0;

    explicit Flat(std::span<const FlowProblem> problems) {
        for (const auto& p : problems) {
            link_base.push_back(total_links);
            flow_base.push_back(total_flows);
            offset_base.push_back(static_cast<std::int64_t>(offsets.size()));
            incidence_base.push_back(static_cast<std::int64_t>(links.size()));
            capacity.insert(capacity.end(), p.capacity_Bps.begin(), p.capacity_Bps.end());
            bytes.insert(bytes.end(), p.flow_bytes.begin(), p.flow_bytes.end());
            latency.insert(latency.end(), p.flow_latency_s.begin(), p.flow_latency_s.end());
            offsets.insert(offsets.end(), p.flow_offsets.begin(), p.flow_offsets.end());
            links.insert(links.end(), p.flow_links.begin(), p.flow_links.end());
            total_links += p.link_count();
            total_flows += p.flow_count();
        }
        link_base.push_back(total_links);
        flow_base.push_back(total_flows);
    }
};

struct Args {
    int problems;
    const std::int64_t *link_base, *flow_base, *offset_base, *incidence_base;
    const double *capacity, *bytes, *latency;
    const int *offsets, *links;
    double *rate, *remaining, *finish, *makespan, *link_remaining;
    int *share_count, *order;
    unsigned char *active, *frozen, *saturated;
};

__global__ void rates_kernel(Args a) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= a.problems) return;
    const std::int64_t lb = a.link_base[p], fb = a.flow_base[p];
    const int nl = static_cast<int>(a.link_base[p + 1] - lb);
    const int nf = static_cast<int>(a.flow_base[p + 1] - fb);
    for (int f = 0; f < nf; ++f) a.active[fb + f] = a.bytes[fb + f] > 0.0;
    core::maxmin_rates(nl, a.capacity + lb, nf, a.offsets + a.offset_base[p], a.links + a.incidence_base[p],
                       a.active + fb, a.rate + fb, a.link_remaining + lb, a.share_count + lb,
                       a.saturated + lb, a.frozen + fb);
}

__global__ void drain_kernel(Args a) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= a.problems) return;
    const std::int64_t lb = a.link_base[p], fb = a.flow_base[p];
    const int nl = static_cast<int>(a.link_base[p + 1] - lb);
    const int nf = static_cast<int>(a.flow_base[p + 1] - fb);
    a.makespan[p] = core::drain_flows(nl, a.capacity + lb, nf, a.offsets + a.offset_base[p],
                                      a.links + a.incidence_base[p], a.bytes + fb, a.latency + fb,
                                      a.finish + fb, a.rate + fb, a.remaining + fb, a.active + fb,
                                      a.link_remaining + lb, a.share_count + lb, a.saturated + lb,
                                      a.frozen + fb, a.order + fb);
}

template <typename Kernel>
void launch(std::span<const FlowProblem> problems, Kernel kernel, std::vector<double>& rate,
            std::vector<double>& finish, std::vector<double>& makespan, Flat& flat) {
    const auto nf = static_cast<std::size_t>(flat.total_flows);
    const auto nl = static_cast<std::size_t>(flat.total_links);
    DeviceArray<std::int64_t> link_base(flat.link_base), flow_base(flat.flow_base),
        offset_base(flat.offset_base), incidence_base(flat.incidence_base);
    DeviceArray<double> capacity(flat.capacity), bytes(flat.bytes), latency(flat.latency);
    DeviceArray<int> offsets(flat.offsets), links(flat.links);
    DeviceArray<double> d_rate(nf), d_remaining(nf), d_finish(nf), d_makespan(problems.size()),
        d_link_remaining(nl);
    DeviceArray<int> d_count(nl), d_order(nf);
    DeviceArray<unsigned char> d_active(nf), d_frozen(nf), d_saturated(nl);
    Args a{static_cast<int>(problems.size()), link_base.data, flow_base.data, offset_base.data,
           incidence_base.data, capacity.data, bytes.data, latency.data, offsets.data, links.data,
           d_rate.data, d_remaining.data, d_finish.data, d_makespan.data, d_link_remaining.data,
           d_count.data, d_order.data, d_active.data, d_frozen.data, d_saturated.data};
    const int threads = 128;
    const int blocks = (a.problems + threads - 1) / threads;
    kernel<<<blocks, threads>>>(a);
    check_cuda(cudaGetLastError(), "kernel launch");
    check_cuda(cudaDeviceSynchronize(), "kernel");
    rate.resize(nf);
    finish.resize(nf);
    makespan.resize(problems.size());
    d_rate.to_host(rate);
    d_finish.to_host(finish);
    d_makespan.to_host(makespan);
}

}  // namespace

std::vector<std::vector<double>> cuda_solve_rates_batch(std::span<const FlowProblem> problems) {
    std::vector<std::vector<double>> out;
    if (problems.empty()) return out;
    Flat flat(problems);
    std::vector<double> rate, finish, makespan;
    launch(problems, rates_kernel, rate, finish, makespan, flat);
    for (std::size_t p = 0; p < problems.size(); ++p)
        out.emplace_back(rate.begin() + flat.flow_base[p], rate.begin() + flat.flow_base[p + 1]);
    return out;
}

void cuda_drain_batch(std::span<const FlowProblem> problems, std::vector<DrainResult>& out) {
    out.resize(problems.size());
    if (problems.empty()) return;
    Flat flat(problems);
    std::vector<double> rate, finish, makespan;
    launch(problems, drain_kernel, rate, finish, makespan, flat);
    for (std::size_t p = 0; p < problems.size(); ++p) {
        out[p].finish_s.assign(finish.begin() + flat.flow_base[p], finish.begin() + flat.flow_base[p + 1]);
        out[p].makespan_s = makespan[p];
    }
}

}  // namespace skyfabric::workloads::detail
