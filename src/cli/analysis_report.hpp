#pragma once
// `skyfabric analyze`'s report: the vector figures (viz/plot_analysis.py drawn by Debian's
// /usr/bin/python3 with matplotlib into RUN_DIR/analysis_figures, as the sweep's plots are) and a
// self-contained RUN_DIR/report.html (the figures inlined as SVG, no script, no network access),
// each published atomically. docs/analysis.md "The report".
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace skyfabric::cli {

struct ReportFiles {
    std::filesystem::path html;
    std::vector<std::string> figures;  // names drawn (breakdown, link_heatmap, link_utilisation, stragglers)
    std::string figures_note;          // why figures are missing ("" when the script ran)
};

// Draws the figures from RUN_DIR/analysis.json (written before) and RUN_DIR/result.h5, then writes
// report.html from `analysis` (the analysis.json document) and them. A missing interpreter, script
// or failed plot leaves the report without figures and says so in it (and on stderr unless quiet);
// a report that cannot be written throws.
ReportFiles write_report(const std::filesystem::path& run_dir, const nlohmann::json& analysis, bool quiet);

// The HTML document alone (figures: name → inline SVG text), for tests.
std::string report_html(const nlohmann::json& analysis, const std::vector<std::pair<std::string, std::string>>& figures,
                        const std::string& figures_note);

}  // namespace skyfabric::cli
