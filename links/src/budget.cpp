#include <skyfabric/links/budget.hpp>

#include <skyfabric/physics/constants.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace skyfabric::links {

using physics::pi;
using physics::speed_of_light_m_s;

namespace {

constexpr double planck_j_s = 6.62607015e-34;
constexpr double osnr_reference_bandwidth_hz = 12.5e9;  // 0.1 nm at 1550 nm

// J0 by rational/asymptotic approximation (Abramowitz & Stegun style, |err| < 1e-8):
// the Fresnel integrals call it millions of times, std::cyl_bessel_j is ~10x slower.
double bessel_j0(double x) {
    const double ax = std::abs(x);
    if (ax < 8.0) {
        const double y = x * x;
        const double n = 57568490574.0 + y * (-13362590354.0 + y * (651619640.7 + y * (-11214424.18 +
                         y * (77392.33017 + y * (-184.9052456)))));
        const double d = 57568490411.0 + y * (1029532985.0 + y * (9494680.718 + y * (59272.64853 +
                         y * (267.8532712 + y * 1.0))));
        return n / d;
    }
    const double z = 8.0 / ax;
    const double y = z * z;
    const double xx = ax - 0.785398164;
    const double p = 1.0 + y * (-0.1098628627e-2 + y * (0.2734510407e-4 + y * (-0.2073370639e-5 +
                     y * 0.2093887211e-6)));
    const double q = -0.1562499995e-1 + y * (0.1430488765e-3 + y * (-0.6911147651e-5 +
                     y * (0.7621095161e-6 - y * 0.934935152e-7)));
    return std::sqrt(0.636619772 / ax) * (std::cos(xx) * p - z * std::sin(xx) * q);
}

// Gauss–Legendre nodes/weights on [-1, 1] (Newton on P_n), computed once.
struct GaussLegendre {
    static constexpr int n = 10;
    std::array<double, n> x{};
    std::array<double, n> w{};
    GaussLegendre() {
        for (int i = 0; i < n; ++i) {
            double z = std::cos(pi * (i + 0.75) / (n + 0.5));
            double dp = 0.0;
            for (int it = 0; it < 100; ++it) {
                double p0 = 1.0, p1 = z;
                for (int k = 2; k <= n; ++k) {
                    const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n * (z * p1 - p0) / (z * z - 1.0);
                const double dz = p1 / dp;
                z -= dz;
                if (std::abs(dz) < 1e-15) break;
            }
            x[static_cast<std::size_t>(i)] = z;
            w[static_cast<std::size_t>(i)] = 2.0 / ((1.0 - z * z) * dp * dp);
        }
    }
};
const GaussLegendre& gauss_legendre() {
    static const GaussLegendre gl;
    return gl;
}

// Composite Gauss–Legendre nodes on [lo, hi] with `panels` equal panels.
void composite_nodes(double lo, double hi, int panels, std::vector<double>& x, std::vector<double>& w) {
    const auto& gl = gauss_legendre();
    x.clear();
    w.clear();
    const double h = (hi - lo) / panels;
    for (int p = 0; p < panels; ++p) {
        const double mid = lo + (p + 0.5) * h;
        for (int i = 0; i < GaussLegendre::n; ++i) {
            x.push_back(mid + 0.5 * h * gl.x[static_cast<std::size_t>(i)]);
            w.push_back(0.5 * h * gl.w[static_cast<std::size_t>(i)]);
        }
    }
}

// Dimensionless coupling: F = a_T²/(λz), α = a_T/w0, q = a_R/a_T (see header).
double coupling_dimensionless(double fresnel, double alpha, double q) {
    // Panels sized so each holds at most half an oscillation of the phase πFs² and of J0.
    const int panels_s = 4 + static_cast<int>(std::ceil(2.0 * fresnel * std::max(1.0, q)));
    const int panels_t = 4 + static_cast<int>(std::ceil(2.0 * fresnel * q));
    std::vector<double> s, ws, t, wt;
    composite_nodes(0.0, 1.0, panels_s, s, ws);
    composite_nodes(0.0, q, panels_t, t, wt);
    std::vector<std::complex<double>> f(s.size());
    for (std::size_t j = 0; j < s.size(); ++j) {
        const double amp = std::exp(-alpha * alpha * s[j] * s[j]) * s[j] * ws[j];
        const double phase = pi * fresnel * s[j] * s[j];
        f[j] = std::complex<double>(amp * std::cos(phase), amp * std::sin(phase));
    }
    double outer = 0.0;
    for (std::size_t m = 0; m < t.size(); ++m) {
        std::complex<double> inner{0.0, 0.0};
        const double k = 2.0 * pi * fresnel * t[m];
        for (std::size_t j = 0; j < s.size(); ++j) inner += f[j] * bessel_j0(k * s[j]);
        outer += std::norm(inner) * t[m] * wt[m];
    }
    return 16.0 * pi * pi * fresnel * fresnel * alpha * alpha * outer;
}

// Far-field limit of the same quantity: 2π² F² q² (1 − e^{−α²})² / α².
double coupling_far_field(double fresnel, double alpha, double q) {
    const double e = 1.0 - std::exp(-alpha * alpha);
    return 2.0 * pi * pi * fresnel * fresnel * q * q * e * e / (alpha * alpha);
}

// ln(coupling) tabulated on a uniform grid in log10 F; ln coupling is linear in ln F in the
// far field, so linear interpolation there is exact and near field ripples are resolved at
// 32 points per decade.
struct CouplingTable {
    static constexpr double log_f_min = -3.0;
    static constexpr double log_f_max = 1.80618;  // log10(64)
    static constexpr double per_decade = 32.0;
    double alpha = 0.0, q = 0.0;
    std::vector<double> ln_coupling;
    double far_ratio_at_min = 1.0;

    CouplingTable(double alpha_, double q_) : alpha(alpha_), q(q_) {
        const int n = static_cast<int>(std::ceil((log_f_max - log_f_min) * per_decade)) + 1;
        ln_coupling.resize(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            const double f = std::pow(10.0, std::min(log_f_max, log_f_min + i / per_decade));
            ln_coupling[static_cast<std::size_t>(i)] = std::log(coupling_dimensionless(f, alpha, q));
        }
        const double f_min = std::pow(10.0, log_f_min);
        far_ratio_at_min = std::exp(ln_coupling.front()) / coupling_far_field(f_min, alpha, q);
    }

    double operator()(double fresnel) const {
        const double lf = std::log10(fresnel);
        if (lf <= log_f_min) return coupling_far_field(fresnel, alpha, q) * far_ratio_at_min;
        if (lf >= log_f_max) return std::exp(ln_coupling.back());  // geometric near-field limit
        const double x = (lf - log_f_min) * per_decade;
        const auto i = std::min(static_cast<std::size_t>(x), ln_coupling.size() - 2);
        const double u = x - static_cast<double>(i);
        return std::exp((1.0 - u) * ln_coupling[i] + u * ln_coupling[i + 1]);
    }
};

// Process-wide memo of tables keyed by (α, q); a table depends on nothing else.
const CouplingTable& coupling_table(double alpha, double q) {
    static std::mutex mutex;
    static std::map<std::pair<double, double>, std::unique_ptr<CouplingTable>> tables;
    std::lock_guard lock(mutex);
    auto& slot = tables[{alpha, q}];
    if (!slot) slot = std::make_unique<CouplingTable>(alpha, q);
    return *slot;
}

// exp(-z) I0(z), without overflow.
double bessel_i0_scaled(double z) {
    if (z < 500.0) return std::cyl_bessel_i(0.0, z) * std::exp(-z);
    return (1.0 + 1.0 / (8.0 * z)) / std::sqrt(2.0 * pi * z);
}

// Rice density of |e| for a bias b and a circular Gaussian jitter σ per axis:
// x/σ² exp(−(x−b)²/2σ²) · e^{−z}I0(z), z = xb/σ².
double rice_pdf(double x, double b, double s) {
    return x / (s * s) * std::exp(-(x - b) * (x - b) / (2.0 * s * s)) * bessel_i0_scaled(x * b / (s * s));
}

}  // namespace

// ---------------------------------------------------------------- transceivers, DWDM

TransceiverSpec transceiver_400zr() { return {"400zr", 400e9, -20.0, 34.0, 0.0}; }
TransceiverSpec transceiver_800zr() { return {"800zr", 800e9, -17.0, 37.0, 0.0}; }

std::optional<TransceiverSpec> transceiver_preset(std::string_view name) {
    if (name == "400zr") return transceiver_400zr();
    if (name == "800zr") return transceiver_800zr();
    return std::nullopt;
}

double itu_channel_frequency_hz(int n, double grid_spacing_hz) {
    return itu_anchor_frequency_hz + n * grid_spacing_hz;
}

int dwdm_slot_count(double band_hz, double grid_spacing_hz) {
    if (!(grid_spacing_hz > 0.0) || !(band_hz > 0.0)) return 0;
    // small tolerance so 4.8 THz / 75 GHz = 64 exactly despite rounding
    return static_cast<int>(std::floor(band_hz / grid_spacing_hz + 1e-9));
}

int dwdm_channel_count(const DwdmPlan& plan) {
    const int slots = dwdm_slot_count(plan.band_hz, plan.grid_spacing_hz);
    return plan.transceivers_fitted > 0 ? std::min(slots, plan.transceivers_fitted) : slots;
}

// ---------------------------------------------------------------- Friis

double aperture_gain(double aperture_m, double wavelength_m, double efficiency) {
    const double x = pi * aperture_m / wavelength_m;
    return efficiency * x * x;
}

double free_space_path_factor(double distance_m, double wavelength_m) {
    const double x = wavelength_m / (4.0 * pi * distance_m);
    return x * x;
}

FriisBudget friis_budget(double distance_m, const OpticalTerminalParameters& p) {
    FriisBudget b;
    const double g = aperture_gain(p.aperture_m, p.wavelength_m, p.aperture_efficiency);
    b.gain_db = 10.0 * std::log10(g);
    b.received_power_w = p.tx_power_w * g * g * free_space_path_factor(distance_m, p.wavelength_m) *
                         std::pow(10.0, -p.other_losses_db / 10.0);
    b.received_power_dbm = watts_to_dbm(b.received_power_w);
    return b;
}

// ---------------------------------------------------------------- Gaussian beam

double rayleigh_range_m(double waist_radius_m, double wavelength_m) {
    return pi * waist_radius_m * waist_radius_m / wavelength_m;
}

double gaussian_beam_radius_m(double waist_radius_m, double wavelength_m, double distance_m) {
    const double zr = rayleigh_range_m(waist_radius_m, wavelength_m);
    const double r = distance_m / zr;
    return waist_radius_m * std::sqrt(1.0 + r * r);
}

double gaussian_capture_fraction(double receive_radius_m, double beam_radius_m) {
    return 1.0 - std::exp(-2.0 * receive_radius_m * receive_radius_m / (beam_radius_m * beam_radius_m));
}

double truncated_gaussian_far_field_efficiency(double truncation_ratio) {
    const double a2 = truncation_ratio * truncation_ratio;
    const double e = 1.0 - std::exp(-a2);
    return 2.0 / a2 * e * e;
}

double truncated_gaussian_far_field_half_angle_rad(double aperture_radius_m, double wavelength_m,
                                                   double truncation_ratio) {
    const double a2 = truncation_ratio * truncation_ratio;
    // ⟨s²⟩ of the clipped amplitude e^{−α²s²} over the unit disc; its series below α² = 1e-4.
    const double mean_s2 = a2 < 1e-4 ? 0.5 - a2 / 12.0
                                     : (-std::expm1(-a2) - a2 * std::exp(-a2)) / (a2 * -std::expm1(-a2));
    return wavelength_m / (pi * aperture_radius_m * std::sqrt(mean_s2));
}

double truncated_gaussian_far_field_pattern(double off_axis_rad, double aperture_radius_m, double wavelength_m,
                                            double truncation_ratio) {
    const double a2 = truncation_ratio * truncation_ratio;
    const double u = 2.0 * pi / wavelength_m * aperture_radius_m * std::abs(off_axis_rad);
    double amplitude = 0.0;
    if (u > 100.0) {
        // Far sidelobes (< −60 dB): the edge term of an integration by parts, e^{−α²} J1(u)/u, within 2 % of
        // the intensity at u = 100; the quadrature's cost would grow with u.
        amplitude = std::exp(-a2) * std::cyl_bessel_j(1.0, u) / u;
    } else {
        // Panels of at most a quarter of J0's period 2π/u over s ∈ [0, 1].
        std::vector<double> s, w;
        composite_nodes(0.0, 1.0, 2 + static_cast<int>(std::ceil(u / 1.5)), s, w);
        for (std::size_t j = 0; j < s.size(); ++j) amplitude += w[j] * std::exp(-a2 * s[j] * s[j]) * bessel_j0(u * s[j]) * s[j];
    }
    // On axis: ∫0^1 e^{−α²s²} s ds = (1 − e^{−α²}) / (2α²), its limit 1/2 as α → 0.
    const double on_axis = a2 < 1e-8 ? 0.5 : -std::expm1(-a2) / (2.0 * a2);
    const double r = amplitude / on_axis;
    return r * r;
}

double truncated_gaussian_coupling(double distance_m, double transmit_radius_m, double receive_radius_m,
                                   double wavelength_m, double truncation_ratio) {
    const double fresnel = transmit_radius_m * transmit_radius_m / (wavelength_m * distance_m);
    return coupling_table(truncation_ratio, receive_radius_m / transmit_radius_m)(fresnel);
}

double truncated_gaussian_coupling_direct(double distance_m, double transmit_radius_m,
                                          double receive_radius_m, double wavelength_m,
                                          double truncation_ratio) {
    const double fresnel = transmit_radius_m * transmit_radius_m / (wavelength_m * distance_m);
    return coupling_dimensionless(fresnel, truncation_ratio, receive_radius_m / transmit_radius_m);
}

// ---------------------------------------------------------------- pointing

double pointing_mean_loss(double beam_half_angle_rad, double jitter_rad, double static_error_rad) {
    const double t2 = beam_half_angle_rad * beam_half_angle_rad;
    const double d = t2 + 4.0 * jitter_rad * jitter_rad;
    return t2 / d * std::exp(-2.0 * static_error_rad * static_error_rad / d);
}

double pointing_fade_probability(double beam_half_angle_rad, double jitter_rad, double static_error_rad,
                                 double threshold_db) {
    // loss exp(−2e²/θ²) deeper than thr ⇔ e > r_f
    const double r_f = beam_half_angle_rad * std::sqrt(std::log(std::pow(10.0, threshold_db / 10.0)) / 2.0);
    const double b = std::abs(static_error_rad);
    if (!(jitter_rad > 0.0)) return b > r_f ? 1.0 : 0.0;
    const double s = jitter_rad;
    if (b == 0.0) return std::exp(-r_f * r_f / (2.0 * s * s));  // Rayleigh tail
    // Rice CDF by quadrature.
    std::vector<double> x, w;
    composite_nodes(0.0, r_f, 200, x, w);
    double inside = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) inside += w[i] * rice_pdf(x[i], b, s);
    return std::clamp(1.0 - inside, 0.0, 1.0);
}

double pointing_mean_loss_two_ends(double theta_t, double theta_r, double jitter_rad, double static_error_rad) {
    return pointing_mean_loss(theta_t, jitter_rad, static_error_rad) *
           pointing_mean_loss(theta_r, jitter_rad, static_error_rad);
}

double pointing_fade_probability_two_ends(double theta_t, double theta_r, double jitter_rad, double static_error_rad,
                                          double threshold_db) {
    const double c = std::log(std::pow(10.0, threshold_db / 10.0));  // loss exponent at the threshold
    const double b = std::abs(static_error_rad);
    const double s = jitter_rad;
    if (!(s > 0.0)) return 2.0 * b * b / (theta_t * theta_t) + 2.0 * b * b / (theta_r * theta_r) > c ? 1.0 : 0.0;
    if (b == 0.0) {
        // U = 2e_T²/θ_T² ~ Exp(rate Λ_T = θ_T²/4σ²), likewise V; P(U + V > c).
        const double lt = theta_t * theta_t / (4.0 * s * s);
        const double lr = theta_r * theta_r / (4.0 * s * s);
        if (std::abs(lt - lr) <= 1e-9 * std::max(lt, lr)) return (1.0 + lt * c) * std::exp(-lt * c);
        return (lr * std::exp(-lt * c) - lt * std::exp(-lr * c)) / (lr - lt);
    }
    // P(U + V <= c) = ∫ pdf_T(x) P(e_R <= θ_R √((c − 2x²/θ_T²)/2)) dx over x < θ_T √(c/2), both Rice.
    // The Rice density is negligible past b + 10σ: integrate no further (θ_T can be huge in the near field).
    const double reach = b + 10.0 * s;
    std::vector<double> x, w, y, v;
    composite_nodes(0.0, std::min(theta_t * std::sqrt(c / 2.0), reach), 12, x, w);
    double inside = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double rest = c - 2.0 * x[i] * x[i] / (theta_t * theta_t);
        if (rest <= 0.0) continue;
        composite_nodes(0.0, std::min(theta_r * std::sqrt(rest / 2.0), reach), 12, y, v);
        double cdf = 0.0;
        for (std::size_t j = 0; j < y.size(); ++j) cdf += v[j] * rice_pdf(y[j], b, s);
        inside += w[i] * rice_pdf(x[i], b, s) * cdf;
    }
    return std::clamp(1.0 - inside, 0.0, 1.0);
}

// ---------------------------------------------------------------- OSNR, modes, latency

double receiver_osnr_db(double received_power_per_channel_dbm, double noise_figure_db, double wavelength_m) {
    const double photon_j = planck_j_s * speed_of_light_m_s / wavelength_m;
    const double noise_dbm = watts_to_dbm(photon_j * osnr_reference_bandwidth_hz);  // ≈ −58 dBm
    return received_power_per_channel_dbm - noise_figure_db - noise_dbm;
}

double spatial_mode_count(double transmit_aperture_m, double receive_aperture_m, double wavelength_m,
                          double distance_m) {
    const double at = pi * transmit_aperture_m * transmit_aperture_m / 4.0;
    const double ar = pi * receive_aperture_m * receive_aperture_m / 4.0;
    const double ld = wavelength_m * distance_m;
    return at * ar / (ld * ld);
}

double light_time_s(double distance_m) { return distance_m / speed_of_light_m_s; }

double watts_to_dbm(double power_w) { return 10.0 * std::log10(power_w * 1e3); }
double dbm_to_watts(double power_dbm) { return 1e-3 * std::pow(10.0, power_dbm / 10.0); }

// ---------------------------------------------------------------- full budget

namespace {
constexpr int fade_table_points = 65;

// One end's mean of the exact pattern, its angle scaled by `scale` (θ_R/θ_T: a wider transmit beam), over
// a bias b and a circular Gaussian jitter σ per axis: |e| is Rice(b, σ), integrated over b ± 10σ.
double mean_pattern(double scale, double bias_rad, double jitter_rad, double aperture_radius_m, double wavelength_m,
                    double truncation_ratio) {
    const auto pattern = [&](double e) {
        return truncated_gaussian_far_field_pattern(scale * e, aperture_radius_m, wavelength_m, truncation_ratio);
    };
    const double b = std::abs(bias_rad), s = jitter_rad;
    if (!(s > 0.0)) return pattern(b);
    std::vector<double> x, w;
    composite_nodes(std::max(0.0, b - 10.0 * s), b + 10.0 * s, 24, x, w);
    double sum = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double rice = rice_pdf(x[i], b, s);
        sum += w[i] * rice * pattern(x[i]);
        norm += w[i] * rice;
    }
    return sum / norm;  // the density's own quadrature sum, so a flat pattern gives exactly 1
}
}  // namespace

LinkBudgetModel::LinkBudgetModel(const OpticalTerminalParameters& p)
    : p_(p), channels_planned_(dwdm_channel_count(p.dwdm)) {
    coupling_table(p_.truncation_ratio, 1.0);  // build the table now, not on the hot path
    far_half_angle_rad_ =
        truncated_gaussian_far_field_half_angle_rad(0.5 * p_.aperture_m, p_.wavelength_m, p_.truncation_ratio);
    // The exact pattern's mean loss, tabulated once over x = θ_R²/θ_T² (θ_T >= θ_R always): the transmit
    // pattern at angle e√x, the receive end at x = 1. ln of it is near linear in x (exactly, for a
    // Gaussian pattern without jitter), so 65 points interpolate it to well below 1e-4 dB.
    if (p_.pointing_jitter_rad > 0.0 || p_.pointing_static_error_rad != 0.0) {
        ln_mean_loss_table_.resize(fade_table_points);
        for (int i = 0; i < fade_table_points; ++i) {
            const double x = static_cast<double>(i) / (fade_table_points - 1);
            ln_mean_loss_table_[static_cast<std::size_t>(i)] =
                std::log(mean_pattern(std::sqrt(x), p_.pointing_static_error_rad, p_.pointing_jitter_rad,
                                      0.5 * p_.aperture_m, p_.wavelength_m, p_.truncation_ratio));
        }
    }
    // Bias and jitter together need quadrature: tabulate once over x = θ_R²/θ_T² (θ_T >= θ_R always).
    if (p_.pointing_jitter_rad > 0.0 && p_.pointing_static_error_rad != 0.0) {
        fade_table_.resize(fade_table_points);
        for (int i = 0; i < fade_table_points; ++i) {
            const double x = static_cast<double>(i) / (fade_table_points - 1);
            const double theta_t = x > 0.0 ? far_half_angle_rad_ / std::sqrt(x) : 1e6 * far_half_angle_rad_;
            fade_table_[static_cast<std::size_t>(i)] =
                pointing_fade_probability_two_ends(theta_t, far_half_angle_rad_, p_.pointing_jitter_rad,
                                                   p_.pointing_static_error_rad, p_.fade_threshold_db);
        }
    }
}

double LinkBudgetModel::mean_pointing_loss(double theta_t) const {
    if (ln_mean_loss_table_.empty()) return 1.0;
    const double x = std::clamp(far_half_angle_rad_ * far_half_angle_rad_ / (theta_t * theta_t), 0.0, 1.0) *
                     (fade_table_points - 1);
    const auto i = std::min(static_cast<std::size_t>(x), ln_mean_loss_table_.size() - 2);
    const double u = x - static_cast<double>(i);
    return std::exp((1.0 - u) * ln_mean_loss_table_[i] + u * ln_mean_loss_table_[i + 1] + ln_mean_loss_table_.back());
}

double LinkBudgetModel::fade_probability(double theta_t) const {
    // A bias alone is no chance: the exact loss is deeper than the threshold or it is not.
    if (!(p_.pointing_jitter_rad > 0.0) && !ln_mean_loss_table_.empty())
        return -10.0 * std::log10(mean_pointing_loss(theta_t)) > p_.fade_threshold_db ? 1.0 : 0.0;
    // With jitter: the Gaussian pattern's closed forms (budget.hpp gives their error).
    if (fade_table_.empty())
        return pointing_fade_probability_two_ends(theta_t, far_half_angle_rad_, p_.pointing_jitter_rad,
                                                  p_.pointing_static_error_rad, p_.fade_threshold_db);
    const double x = std::clamp(far_half_angle_rad_ * far_half_angle_rad_ / (theta_t * theta_t), 0.0, 1.0) *
                     (fade_table_points - 1);
    const auto i = std::min(static_cast<std::size_t>(x), fade_table_.size() - 2);
    const double u = x - static_cast<double>(i);
    return (1.0 - u) * fade_table_[i] + u * fade_table_[i + 1];
}

LinkBudget LinkBudgetModel::at(double distance_m) const {
    LinkBudget b;
    const double d = std::max(distance_m, 1e-3);
    const double a = 0.5 * p_.aperture_m;
    const double w0 = a / p_.truncation_ratio;
    b.distance_m = distance_m;
    b.rayleigh_range_m = rayleigh_range_m(w0, p_.wavelength_m);
    b.beam_radius_m = gaussian_beam_radius_m(w0, p_.wavelength_m, d);
    b.coupling = truncated_gaussian_coupling(d, a, a, p_.wavelength_m, p_.truncation_ratio);
    b.coupling_db = 10.0 * std::log10(b.coupling);

    // The transmit beam's angular half-width seen from the receiver: the waist over the distance in the
    // near field, the clipped beam's far-field half-angle beyond. The receiver's acceptance is that
    // far-field pattern (reciprocity), at every distance.
    const double near = w0 / d;
    const double half_angle = std::sqrt(near * near + far_half_angle_rad_ * far_half_angle_rad_);
    b.pointing_half_angle_rad = half_angle;
    const double lp = mean_pointing_loss(half_angle);
    b.pointing_loss_db = 10.0 * std::log10(lp);
    b.fade_probability = fade_probability(half_angle);

    // P_R = P_T · coupling · η_R · L_pointing · L_other (all channels of one spatial channel).
    const double total_w = p_.tx_power_w * b.coupling * p_.aperture_efficiency * lp *
                           std::pow(10.0, -p_.other_losses_db / 10.0);
    b.channels_planned = channels_planned_;
    b.osnr_db = 0.0;

    // A lit channel closes when it has sensitivity + margin AND the OSNR the transceiver
    // needs; both are thresholds on per-channel power, so the tighter one decides.
    const double osnr_floor_dbm =
        p_.transceiver.required_osnr_db - receiver_osnr_db(0.0, p_.amplifier_noise_figure_db, p_.wavelength_m);
    const double needed_dbm = std::max(p_.transceiver.sensitivity_dbm + p_.required_margin_db, osnr_floor_dbm);
    int closing = 0;
    if (channels_planned_ > 0) {
        const double per_all_dbm = watts_to_dbm(total_w / channels_planned_);
        if (per_all_dbm >= needed_dbm) {
            closing = channels_planned_;
        } else if (p_.adaptive_channel_count) {
            // n channels close while P_total/n ≥ P_needed.
            const double n = std::floor(total_w / dbm_to_watts(needed_dbm) * (1.0 + 1e-12));
            closing = static_cast<int>(std::clamp(n, 0.0, static_cast<double>(channels_planned_)));
        }
    }
    const int lit = closing > 0 ? closing : std::max(channels_planned_, 1);
    b.channels_closing = closing;
    b.received_power_w = total_w;
    // OSNR is set at the pre-amplifier by the collected power; a channel above the transceiver's
    // overload ceiling is attenuated to it after that (variable attenuator / amplifier gain control),
    // so close links work at the ceiling instead of saturating the receiver.
    const double collected_dbm = watts_to_dbm(total_w / lit);
    b.osnr_db = receiver_osnr_db(collected_dbm, p_.amplifier_noise_figure_db, p_.wavelength_m);
    b.overload_attenuation_db = std::max(0.0, collected_dbm - p_.transceiver.overload_dbm);
    b.received_power_per_channel_dbm = collected_dbm - b.overload_attenuation_db;
    b.received_power_per_channel_w =
        b.overload_attenuation_db > 0.0 ? dbm_to_watts(b.received_power_per_channel_dbm) : total_w / lit;
    b.received_power_per_channel_uw = b.received_power_per_channel_w * 1e6;
    b.margin_db = b.received_power_per_channel_dbm - p_.transceiver.sensitivity_dbm;

    b.spatial_modes = spatial_mode_count(p_.aperture_m, p_.aperture_m, p_.wavelength_m, d);
    // N grows as 1/d^2 (2.6e9 at 1 mm): clamp in floating point before narrowing, or it overflows int.
    const double usable_modes = std::max(1.0, std::floor(b.spatial_modes));
    const int built = std::max(p_.spatial_channels_built, 1);
    b.spatial_channels = closing > 0 ? static_cast<int>(std::min(static_cast<double>(built), usable_modes)) : 0;
    b.capacity_bps = static_cast<double>(b.spatial_channels) * closing * p_.transceiver.rate_bps;
    b.latency_s = light_time_s(distance_m);
    return b;
}

double LinkBudgetModel::full_capacity_reach_m() const {
    double lo = 1.0, hi = 1e10;
    if (at(lo).channels_closing < channels_planned_) return 0.0;
    for (int i = 0; i < 200 && hi / lo > 1.0 + 1e-9; ++i) {
        const double mid = std::sqrt(lo * hi);
        (at(mid).channels_closing >= channels_planned_ ? lo : hi) = mid;
    }
    return lo;
}

LinkBudget budget_at(double distance_m, const OpticalTerminalParameters& p) {
    return LinkBudgetModel(p).at(distance_m);
}

}  // namespace skyfabric::links
