#include "cli/analysis_report.hpp"

#include "output/file_output.hpp"
#include "sweep/process_pool.hpp"
#include "sweep/sweep_plot.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

namespace skyfabric::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* figure_names[] = {"breakdown", "link_heatmap", "link_utilisation", "stragglers"};

std::string escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string text_of(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string number(double x, const char* format = "%.4g") {
    if (!std::isfinite(x)) return "–";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, x);
    return buffer;
}

std::string number_of(const json& j, const char* key, const char* format = "%.4g") {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? number(it->get<double>(), format) : "–";
}

std::string percent_of(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? number(100.0 * it->get<double>(), "%+.2f %%") : "–";
}

// The figure's <svg> element and what follows (no XML prolog or doctype, which HTML does not take).
std::string inline_svg(const std::string& file_text) {
    const auto at = file_text.find("<svg");
    return at == std::string::npos ? std::string() : file_text.substr(at);
}

std::string figure(const std::vector<std::pair<std::string, std::string>>& figures, const std::string& name,
                   const std::string& caption) {
    for (const auto& [n, svg] : figures)
        if (n == name) return "<figure class=\"figure\" id=\"figure-" + name + "\">\n" + svg + "\n<figcaption>" + escape(caption) + "</figcaption></figure>\n";
    return "";
}

const json* verification_of(const json& analysis, const std::string& set) {
    const auto v = analysis.find("verification");
    if (v == analysis.end() || !v->contains("reruns")) return nullptr;
    for (const auto& r : (*v)["reruns"])
        if (r.value("set", "") == set) return &r;
    return nullptr;
}

std::string verdict_class(const std::string& verdict) {
    if (verdict == "helps") return "helps";
    if (verdict == "hurts") return "hurts";
    return "neutral";
}

}  // namespace

std::string report_html(const json& a, const std::vector<std::pair<std::string, std::string>>& figures, const std::string& figures_note) {
    std::ostringstream h;
    const std::string scenario = text_of(a, "scenario");
    h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<title>skyfabric analyze — " << escape(scenario) << "</title>\n"
      << "<style>\n"
         "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;line-height:1.4}\n"
         "h1{font-size:1.6em}h2{border-bottom:2px solid #ccc;padding-bottom:.2em;margin-top:1.6em}\n"
         "table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}\n"
         "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
         ".cause{font-weight:bold;color:#a00}.helps{background:#dff5df}.hurts{background:#fadcdc}.neutral{background:#f4f4f4}\n"
         "figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:.85em;color:#555}\n"
         "code{background:#f4f4f4;padding:0 .2em}.note{color:#666;font-style:italic}\n"
         "</style>\n</head>\n<body>\n";
    h << "<h1>Why was this run slow? <code>" << escape(scenario) << "</code></h1>\n";

    // Summary.
    const auto& patterns = a.contains("anti_patterns") ? a["anti_patterns"] : json::array();
    std::size_t recommendations = 0;
    for (const auto& p : patterns) recommendations += p.value("recommendations", json::array()).size();
    h << "<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n";
    h << "<tr><th>scenario</th><td>" << escape(scenario) << "</td></tr>\n";
    h << "<tr><th>run</th><td>" << escape(text_of(a, "kind")) << ", folder <code>" << escape(text_of(a, "run_dir")) << "</code></td></tr>\n";
    h << "<tr><th>scenario sha256</th><td><code>" << escape(text_of(a, "scenario_sha256")) << "</code></td></tr>\n";
    h << "<tr><th>cause named first</th><td class=\"cause\">"
      << (a.contains("primary_cause") && a["primary_cause"].is_string() ? escape(a["primary_cause"].get<std::string>())
                                                                        : std::string("none above the detectors' thresholds"))
      << "</td></tr>\n";
    if (a.contains("breakdowns"))
        for (const auto& b : a["breakdowns"])
            h << "<tr><th>" << escape(text_of(b, "subject")) << "</th><td>" << escape(text_of(b, "total_name")) << " "
              << number_of(b, "total_s") << " s</td></tr>\n";
    h << "<tr><th>anti-patterns</th><td>" << patterns.size() << " detected, " << recommendations << " recommendations"
      << (a.contains("verification") ? ", verified by rerunning the scenario (same seed)" : ", not verified (analyze --verify reruns them)")
      << "</td></tr>\n</table>\n</section>\n";

    // Breakdown.
    h << "<section id=\"breakdown\">\n<h2>Breakdown</h2>\n";
    h << figure(figures, "breakdown", "Each breakdown as a stacked bar: parts in seconds that add up to the total.");
    if (a.contains("breakdowns"))
        for (const auto& b : a["breakdowns"]) {
            h << "<table>\n<caption>" << escape(text_of(b, "subject")) << ": " << escape(text_of(b, "total_name")) << " "
              << number_of(b, "total_s") << " s (parts add up within " << number_of(b, "max_relative_residual", "%.2g")
              << " relative)</caption>\n<tr><th>part</th><th>seconds</th><th>share</th></tr>\n";
            for (const auto& p : b["parts"])
                h << "<tr><td>" << escape(text_of(p, "name")) << "</td><td class=\"n\">" << number_of(p, "seconds", "%.6g")
                  << "</td><td class=\"n\">" << number(100.0 * p.value("share", 0.0), "%.1f %%") << "</td></tr>\n";
            h << "</table>\n";
        }
    h << "</section>\n";

    // Hot spots.
    h << "<section id=\"hot-spots\">\n<h2>Hot spots</h2>\n";
    h << figure(figures, "link_heatmap", "Links × time: each of the busiest links' utilisation per time bin (/workload/link_epochs).");
    h << figure(figures, "link_utilisation",
                "The links ranked by utilisation over the run (the run kept one total per link: run with output.trace or "
                "output.vtk for the links × time heat map).");
    h << figure(figures, "stragglers", "Straggler timeline: the step time, and each cluster's lowest state of charge and mean shadow.");
    if (a.contains("hot_spots") && !a["hot_spots"].empty()) {
        h << "<table>\n<tr><th>kind</th><th>name</th><th>value</th><th>unit</th><th>note</th></tr>\n";
        for (const auto& s : a["hot_spots"])
            h << "<tr><td>" << escape(text_of(s, "kind")) << "</td><td>" << escape(text_of(s, "name")) << "</td><td class=\"n\">"
              << number_of(s, "value") << "</td><td>" << escape(text_of(s, "unit")) << "</td><td>" << escape(text_of(s, "note"))
              << "</td></tr>\n";
        h << "</table>\n";
    } else {
        h << "<p class=\"note\">No hot spots: the run has no link traffic and no cluster in shadow or below full charge.</p>\n";
    }
    h << "</section>\n";

    // Anti-patterns.
    h << "<section id=\"anti-patterns\">\n<h2>Anti-patterns</h2>\n";
    if (patterns.empty()) h << "<p class=\"note\">None above the detectors' thresholds (docs/analysis.md).</p>\n";
    h << "<ol>\n";
    for (const auto& p : patterns) {
        h << "<li id=\"anti-pattern-" << escape(text_of(p, "id")) << "\"><b>" << escape(text_of(p, "title")) << "</b> (<code>"
          << escape(text_of(p, "id")) << "</code>, impact " << number(100.0 * p.value("impact", 0.0), "%.2f %%") << ")";
        if (p.contains("explained_by") && p["explained_by"].is_string())
            h << " — explained by <code>" << escape(p["explained_by"].get<std::string>()) << "</code>";
        h << "<br>cause: <span class=\"cause\">" << escape(text_of(p, "cause")) << "</span><br>evidence: " << escape(text_of(p, "evidence"))
          << "<br>rule: " << escape(text_of(p, "threshold")) << "</li>\n";
    }
    h << "</ol>\n</section>\n";

    // Recommendations.
    h << "<section id=\"recommendations\">\n<h2>Recommendations</h2>\n";
    if (recommendations == 0) {
        h << "<p class=\"note\">No recommendation: no anti-pattern detected.</p>\n";
    } else {
        h << "<table>\n<tr><th>change</th><th>for</th><th>metric</th><th>expected</th><th>why</th><th>verified: before → after</th>"
             "<th>expected / measured change</th><th>verdict</th></tr>\n";
        for (const auto& p : patterns)
            for (const auto& r : p.value("recommendations", json::array())) {
                const std::string set = text_of(r, "set");
                const json* v = verification_of(a, set);
                const std::string verdict = v ? text_of(*v, "verdict") : std::string("not verified");
                h << "<tr class=\"" << verdict_class(verdict) << "\"><td><code>--set " << escape(set) << "</code></td><td>"
                  << escape(text_of(p, "id")) << "</td><td>" << escape(text_of(r, "metric"))
                  << (text_of(r, "algorithm").empty() ? "" : " (" + escape(text_of(r, "algorithm")) + ")") << "</td><td>"
                  << escape(text_of(r, "expected")) << "</td><td>" << escape(text_of(r, "why")) << "</td><td class=\"n\">"
                  << (v ? number_of(*v, "baseline", "%.6g") + " → " + number_of(*v, "after", "%.6g") : std::string("–"))
                  << "</td><td class=\"n\">" << percent_of(r, "expected_relative_change") << " / "
                  << (v ? percent_of(*v, "measured_relative_change") : std::string("–")) << "</td><td>" << escape(verdict) << "</td></tr>\n";
            }
        h << "</table>\n";
        if (!a.contains("verification")) h << "<p class=\"note\">Run <code>skyfabric analyze RUN_DIR --verify</code> to measure each change.</p>\n";
    }
    h << "</section>\n";
    if (!figures_note.empty()) h << "<p class=\"note\">Figures: " << escape(figures_note) << "</p>\n";
    h << "<footer class=\"note\">Written by <code>skyfabric analyze</code> (docs/analysis.md); analysis.json holds every number shown.</footer>\n";
    h << "</body>\n</html>\n";
    return h.str();
}

ReportFiles write_report(const fs::path& run_dir, const json& analysis, bool quiet) {
    ReportFiles out;
    const fs::path figures_dir = run_dir / "analysis_figures";
    const fs::path log = run_dir / "analysis_figures.log";
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const std::string script = sweep::viz_script(exe, "plot_analysis.py", "SKYFABRIC_PLOT_ANALYSIS");
    const char* python = "/usr/bin/python3";
    if (script.empty()) {
        out.figures_note = "not drawn: viz/plot_analysis.py not found (set SKYFABRIC_PLOT_ANALYSIS)";
    } else if (access(python, X_OK) != 0) {
        out.figures_note = std::string("not drawn: ") + python + " not found (scripts/setup installs it with matplotlib and h5py)";
    } else {
        // Debian's interpreter with its own packages: no PYTHONPATH/PYTHONHOME from a venv.
        auto environment = sweep::environment_without({"PYTHONPATH", "PYTHONHOME"});
        environment.push_back("MPLBACKEND=Agg");
        pid_t pid = -1;
        const int rc = sweep::spawn_logged({python, script, run_dir.string(), "--out", figures_dir.string()}, environment, log, pid);
        if (rc != 0) {
            out.figures_note = std::string("not drawn: cannot start ") + python + ": " + std::strerror(rc);
        } else {
            int status = 0;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                out.figures_note = "not drawn: viz/plot_analysis.py failed (see " + log.string() + ")";
            else
                fs::remove(log, ec);
        }
    }
    std::vector<std::pair<std::string, std::string>> figures;
    if (out.figures_note.empty())
        for (const char* name : figure_names) {
            const fs::path svg = figures_dir / (std::string(name) + ".svg");
            if (!fs::is_regular_file(svg, ec)) continue;
            std::ifstream in(svg, std::ios::binary);
            std::ostringstream text;
            text << in.rdbuf();
            const std::string element = inline_svg(text.str());
            if (element.empty()) continue;
            figures.emplace_back(name, element);
            out.figures.push_back(name);
        }
    if (!out.figures_note.empty() && !quiet) std::fprintf(stderr, "skyfabric: analyze: warning: figures %s\n", out.figures_note.c_str());
    out.html = run_dir / "report.html";
    output::write_file_atomically(out.html, report_html(analysis, figures, out.figures_note));
    return out;
}

}  // namespace skyfabric::cli
