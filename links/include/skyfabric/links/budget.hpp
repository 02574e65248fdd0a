#pragma once
// Optical inter-satellite link budget: beam propagation (near and far field), pointing,
// DWDM channel plan, receiver sensitivity and OSNR, spatial channels, capacity, latency.
// Pure functions on plain structs; SI units, unit suffix on every name.
//
// Which propagation model, and why (see docs/references.md "Optical links"):
//  * Friis (paper Eq. 1) P_R = P_T G_T G_R (λ/4πd)² L, G = η(πD/λ)², is a far-field law:
//    it assumes a²/(λd) ≪ 1. At 200 m with D = 10 cm the Fresnel number is ≈ 8 and Friis
//    would claim P_R > P_T (+14..+34 dB over 1 km..100 m): unphysical.
//  * An untruncated Gaussian beam (w0 = a) saturates correctly in the near field but its
//    far-field gain is 2(πD/λ)², +4 dB above the paper's Friis (η = 0.8 each end), so it
//    fails the far-field cross-check.
//  * The model used: a Gaussian of waist w0 = a/α (α = 1.12, the Klein & Degnan optimum)
//    clipped by the transmit aperture, propagated by Fresnel diffraction (Hankel transform)
//    and integrated over the receive aperture. It covers near and far field with one
//    formula: it saturates at ≈ −0.46 dB at 200 m, and in the far field it IS Friis with
//    G_T = g(α)(πD/λ)², g(1.12) = 0.8145 ≈ the paper's 80 %. The receiver's own efficiency
//    (obscuration, coupling into fibre) is `aperture_efficiency`, so with the paper's
//    defaults the model lies 10·log10(0.8145/0.8) = 0.08 dB above Eq. 1 at 5000 km.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skyfabric::links {

// ---------------------------------------------------------------- transceivers, DWDM

// A coherent pluggable: line rate per direction, receiver sensitivity per channel, and the
// OSNR (0.1 nm reference bandwidth) it needs.
struct TransceiverSpec {
    std::string name = "400zr";
    double rate_bps = 400e9;
    double sensitivity_dbm = -20.0;   // paper: −20 dBm per channel needed
    double required_osnr_db = 34.0;   // 400ZR at −20 dBm input (docs/references.md: ≥ 34 dB)
    // Receive-overload ceiling per channel: 400ZR's receive range ends at 0 dBm (docs/references.md:
    // −12…0 dBm at OSNR ≥ 26 dB, −20…0 dBm at OSNR ≥ 34 dB). Stronger channels are attenuated
    // to it (LinkBudget::overload_attenuation_db).
    double overload_dbm = 0.0;
    bool operator==(const TransceiverSpec&) const = default;
};

// 400ZR: DP-16QAM ~60 GBd on a 75/100 GHz grid; −20..0 dBm at OSNR ≥ 34 dB (OIF 400ZR).
TransceiverSpec transceiver_400zr();
// 800ZR: DP-16QAM ~118 GBd (needs ≥ 150 GHz grid). Assumed figures, not a datasheet:
// the 400ZR point scaled by the doubled symbol rate (+3 dB) — −17 dBm, OSNR ≥ 37 dB; the same
// 0 dBm overload ceiling as 400ZR.
TransceiverSpec transceiver_800zr();
// "400zr" or "800zr" (case-sensitive, lower case); nullopt for anything else.
std::optional<TransceiverSpec> transceiver_preset(std::string_view name);

// ITU-T G.694.1 DWDM grid: f_n = 193.1 THz + n Δ. Channel count is how many slots fit the
// band, capped by the number of transceivers fitted.
struct DwdmPlan {
    double grid_spacing_hz = 100e9;    // paper: 100 GHz
    double band_hz = 4.8e12;           // C-band ≈ 4.8 THz
    int transceivers_fitted = 24;      // paper: 24 × 400G
    bool operator==(const DwdmPlan&) const = default;
};
inline constexpr double itu_anchor_frequency_hz = 193.1e12;
double itu_channel_frequency_hz(int n, double grid_spacing_hz);
// floor(band / spacing), capped by transceivers_fitted (if > 0).
int dwdm_slot_count(double band_hz, double grid_spacing_hz);
int dwdm_channel_count(const DwdmPlan& plan);

// ---------------------------------------------------------------- terminal parameters

struct OpticalTerminalParameters {
    double aperture_m = 0.10;            // transmit and receive aperture diameter (paper: 10 cm)
    double tx_power_w = 5.0;             // amplifier (EDFA) output per spatial channel, split over DWDM channels
    double wavelength_m = 1.55e-6;
    double aperture_efficiency = 0.8;    // paper η; Friis uses it at both ends, the Fresnel model at the receiver
    double truncation_ratio = 1.12;      // α = a / w0 of the clipped transmit Gaussian (Klein & Degnan optimum)
    double other_losses_db = 3.0;        // paper L = −3 dB (optics, pointing margin lumped)
    // Pointing of each terminal (both ends alike): the transmitter's error steers the beam off the
    // receiver, the receiver's error tilts the arriving wave off its fibre (same pattern, by
    // reciprocity). The paper lumps pointing into L, so 0 by default.
    double pointing_static_error_rad = 0.0;  // bias, each end
    double pointing_jitter_rad = 0.0;        // rms per axis, each end
    double fade_threshold_db = 3.0;      // a fade is instantaneous pointing loss deeper than this
    double amplifier_noise_figure_db = 5.0;  // receive pre-amplifier
    double required_margin_db = 3.0;     // a channel counts only with this much power margin
    int spatial_channels_built = 1;      // apertures/modes per terminal actually built
    bool adaptive_channel_count = true;  // light fewer channels (more power each) when not all close
    DwdmPlan dwdm{};
    TransceiverSpec transceiver{};
    bool operator==(const OpticalTerminalParameters&) const = default;
};

// ---------------------------------------------------------------- far field (Friis, paper Eq. 1)

// G = η (πD/λ)², as a ratio.
double aperture_gain(double aperture_m, double wavelength_m, double efficiency);
// (λ / 4πd)², as a ratio (< 1).
double free_space_path_factor(double distance_m, double wavelength_m);

// (The paper's "divergence ≈ 18.9 µrad" is 1.22 λ/D, the Airy first-null half-angle of a uniformly lit
// aperture; no part of this model uses it. Pointing uses the clipped Gaussian's far-field half-angle.)
struct FriisBudget {
    double gain_db = 0.0;             // each end
    double received_power_w = 0.0;    // total, all channels
    double received_power_dbm = 0.0;
};
// P_R = P_T G_T G_R (λ/4πd)² L with G = η(πD/λ)² at both ends.
FriisBudget friis_budget(double distance_m, const OpticalTerminalParameters& p);

// ---------------------------------------------------------------- Gaussian beam, near + far field

// z_R = π w0² / λ.
double rayleigh_range_m(double waist_radius_m, double wavelength_m);
// w(z) = w0 √(1 + (z/z_R)²).
double gaussian_beam_radius_m(double waist_radius_m, double wavelength_m, double distance_m);
// Fraction of an (untruncated) Gaussian of radius w caught by a circle of radius a:
// η = 1 − exp(−2a²/w²).
double gaussian_capture_fraction(double receive_radius_m, double beam_radius_m);
// Klein & Degnan far-field efficiency of a Gaussian clipped at α = a/w0 (no obscuration):
// g(α) = (2/α²)(1 − e^{−α²})²; 0.8145 at α = 1.12.
double truncated_gaussian_far_field_efficiency(double truncation_ratio);
// 1/e² half-angle θ of the Gaussian exp(−2e²/θ²) that has the same on-axis curvature as the far-field
// intensity of that clipped beam (exact to second order in the pointing error e, the regime of
// µrad pointing): the pattern is |∫0^1 e^{−α²s²} J0(k a θ s) s ds|², so
//   θ = λ / (π a √⟨s²⟩),  ⟨s²⟩ = [1 − e^{−α²}(1 + α²)] / [α² (1 − e^{−α²})].
// Limits: α → ∞ (unclipped) λ/(π w0); α → 0 (uniform, Airy) √2 λ/(π a). D = 10 cm, 1550 nm,
// α = 1.12: 15.6 µrad, where the unclipped beam's λ/(π w0) is 11.1 µrad (a 2× deeper loss in dB).
double truncated_gaussian_far_field_half_angle_rad(double aperture_radius_m, double wavelength_m,
                                                   double truncation_ratio);

// The clipped beam's far-field intensity at an angle e off axis, relative to on axis (the exact pattern the
// half-angle above matches to second order): [∫0^1 e^{−α²s²} J0(k a e s) s ds / ∫0^1 e^{−α²s²} s ds]².
// α → ∞: exp(−2e²/θ²), θ = λα/(πa) (the Gaussian beam); α → 0: the Airy pattern [2 J1(kae)/(kae)]².
double truncated_gaussian_far_field_pattern(double off_axis_rad, double aperture_radius_m, double wavelength_m,
                                            double truncation_ratio);

// Fraction of the (untruncated) transmit beam power that lands inside a receive aperture
// of radius a_R at distance z, for a Gaussian of waist a_T/α clipped at radius a_T.
// Fresnel (paraxial) diffraction, F = a_T²/(λz), s = r/a_T, t = ρ/a_T, q = a_R/a_T:
//   I(t) = ∫0^1 e^{−α²s²} e^{iπFs²} J0(2πF s t) s ds,
//   coupling = 16 π² F² α² ∫0^q |I(t)|² t dt.
// As F → 0 this becomes g(α)(πD_T/λ)²(πD_R/λ)²(λ/4πd)², i.e. Friis.
// Served from a cached table in log F (built once per (α, q), exact below F = 1e-3 by the
// far-field asymptote, clamped at the geometric near-field limit above F = 64).
double truncated_gaussian_coupling(double distance_m, double transmit_radius_m, double receive_radius_m,
                                   double wavelength_m, double truncation_ratio);
// The same integral evaluated directly (slow; for tests and table building).
double truncated_gaussian_coupling_direct(double distance_m, double transmit_radius_m,
                                          double receive_radius_m, double wavelength_m,
                                          double truncation_ratio);

// ---------------------------------------------------------------- pointing

// Closed forms for a Gaussian pattern exp(−2e²/θ²). LinkBudgetModel uses them only for the fade
// probability under jitter; its mean loss uses the clipped beam's exact pattern (above), which the
// Gaussian of the same curvature makes too shallow by a fourth-order term: 0.21 dB per end at
// e = 0.64 θ (10 µrad bias, D = 10 cm: −3.55 against −3.76 dB per end, −7.10 against −7.52 dB for both).
// Beam 1/e² half-angle seen from the receiver: w(d)/d (→ λ/(π w0) in the far field).
// Instantaneous loss for a pointing error e: exp(−2e²/θ²). With static bias b and rms
// jitter σ per axis (Rice-distributed |e|), the mean is
//   θ²/(θ² + 4σ²) · exp(−2b²/(θ² + 4σ²)).
double pointing_mean_loss(double beam_half_angle_rad, double jitter_rad, double static_error_rad);
// P(instantaneous loss deeper than threshold_db) = P(|e| > r_f), r_f² = θ² ln(10^{thr/10}) / 2.
double pointing_fade_probability(double beam_half_angle_rad, double jitter_rad, double static_error_rad,
                                 double threshold_db);
// Both ends mispointed independently (same jitter and bias at each): loss exp(−2e_T²/θ_T² − 2e_R²/θ_R²).
// Mean: the product of the two one-end means. Fade: P(2e_T²/θ_T² + 2e_R²/θ_R² > ln 10^{thr/10});
// without bias a sum of two exponentials, closed form (Λ_i = θ_i²/4σ²):
//   (Λ_R e^{−Λ_T c} − Λ_T e^{−Λ_R c}) / (Λ_R − Λ_T)   [(1 + Λc) e^{−Λc} when equal];
// with bias by quadrature over the transmit error (Rice), the receive side a Rice CDF.
double pointing_mean_loss_two_ends(double transmit_half_angle_rad, double receive_half_angle_rad, double jitter_rad,
                                   double static_error_rad);
double pointing_fade_probability_two_ends(double transmit_half_angle_rad, double receive_half_angle_rad,
                                          double jitter_rad, double static_error_rad, double threshold_db);

// ---------------------------------------------------------------- OSNR, modes, latency

// OSNR in 0.1 nm (12.5 GHz) of a pre-amplified receiver: P_in / (NF · hν · B_ref)
// ≈ P_in[dBm] + 58 − NF[dB] at 1550 nm.
double receiver_osnr_db(double received_power_per_channel_dbm, double noise_figure_db, double wavelength_m);
// Spatial degrees of freedom, one polarisation: N ≈ A_T A_R / (λd)² (Miller 2000).
double spatial_mode_count(double transmit_aperture_m, double receive_aperture_m, double wavelength_m,
                          double distance_m);
// Light time d / c.
double light_time_s(double distance_m);

double watts_to_dbm(double power_w);
double dbm_to_watts(double power_dbm);

// ---------------------------------------------------------------- the full budget

// Every column of the `skyfabric link-budget` table, for one distance.
struct LinkBudget {
    double distance_m = 0.0;
    double beam_radius_m = 0.0;          // w(d) of the equivalent Gaussian (w0 = a/α)
    double rayleigh_range_m = 0.0;
    double coupling = 0.0;               // fraction of transmit power in the receive aperture
    double coupling_db = 0.0;
    double pointing_half_angle_rad = 0.0;  // transmit beam seen from the receiver: √((w0/d)² + θ_ff²)
    double pointing_loss_db = 0.0;       // mean, both ends, ≤ 0
    double fade_probability = 0.0;
    double received_power_w = 0.0;       // all lit channels, one spatial channel
    double received_power_per_channel_w = 0.0;
    double received_power_per_channel_uw = 0.0;
    double received_power_per_channel_dbm = 0.0;  // into the transceiver: capped at its overload ceiling
    double overload_attenuation_db = 0.0;  // ≥ 0: taken out so a channel stays at the ceiling
    double margin_db = 0.0;              // per-channel power − sensitivity (for the lit channels)
    double osnr_db = 0.0;
    int channels_planned = 0;            // DWDM slots × transceivers
    int channels_closing = 0;            // those that close with the required margin and OSNR
    double spatial_modes = 0.0;          // N = A_T A_R/(λd)²
    int spatial_channels = 0;            // min(built, max(1, floor N)); 0 if nothing closes
    double capacity_bps = 0.0;           // per direction: spatial × closing × rate
    double latency_s = 0.0;
};

// Budget evaluator for one parameter set. Cheap to call per link (table lookup).
class LinkBudgetModel {
public:
    explicit LinkBudgetModel(const OpticalTerminalParameters& p);
    LinkBudget at(double distance_m) const;
    // Largest distance at which all planned channels close (bisection on `at`).
    double full_capacity_reach_m() const;
    const OpticalTerminalParameters& parameters() const { return p_; }

    // Far-field 1/e² half-angle of the clipped transmit beam, also the receive acceptance half-angle.
    double far_field_half_angle_rad() const { return far_half_angle_rad_; }

private:
    double fade_probability(double transmit_half_angle_rad) const;
    // Mean pointing loss of both ends (a ratio ≤ 1) for the transmit beam's half-angle θ_T ≥ θ_R.
    double mean_pointing_loss(double transmit_half_angle_rad) const;

    OpticalTerminalParameters p_;
    int channels_planned_ = 0;
    double far_half_angle_rad_ = 0.0;
    // One end's mean loss under the exact pattern (bias and jitter), ln, tabulated in x = θ_R²/θ_T² ∈ [0, 1]:
    // the transmit pattern widened in angle by θ_T/θ_R (near field), the receive end at x = 1. Empty
    // without pointing errors.
    std::vector<double> ln_mean_loss_table_;
    // Fade probability with bias and jitter, tabulated in x = θ_R²/θ_T² ∈ [0, 1] (θ_T ≥ θ_R).
    std::vector<double> fade_table_;
};

// One-liner for the CLI: LinkBudgetModel(p).at(distance_m).
LinkBudget budget_at(double distance_m, const OpticalTerminalParameters& p = {});

}  // namespace skyfabric::links
