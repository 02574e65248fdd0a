#include "scenario/yaml_reader.hpp"

#include <skyfabric/workloads/input_text.hpp>
#include <skyfabric/workloads/nearest_word.hpp>

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace skyfabric::scenario {

// "a.list[1].b" as --set writes it: "a.list.1.b".
static std::string dotted(const std::string& key_path) {
    std::string out;
    for (const char c : key_path) {
        if (c == '[') out += '.';
        else if (c != ']') out += c;
    }
    return out;
}

std::string location(const YAML::Node& node, const std::string& key_path_text, const SourceInfo& source) {
    // A list's entries are named key[k] here and key.k on the command line: one form for comparing.
    const std::string key_path = dotted(key_path_text);
    for (const auto& p : source.overridden_paths) {
        // An override of this key, of one of its parents, or of the list holding it (p[3]).
        if (key_path == p || key_path.rfind(p + ".", 0) == 0 || key_path.rfind(p + "[", 0) == 0) return "--set " + p + ": ";
    }
    std::ostringstream out;
    out << source.file_name;
    if (node.IsDefined() && node.Mark().line >= 0) {
        out << ':' << node.Mark().line + 1 << ':' << node.Mark().column + 1;
    } else {
        // A node a --set made (a new section holds no position in the file): name the
        // override under it, else the file's start.
        for (const auto& p : source.overridden_paths) {
            if (p.rfind(key_path + ".", 0) == 0) return "--set " + p + ": ";
        }
        const auto dot = key_path.find('.');
        const std::string top = key_path.substr(0, dot);
        for (const auto& p : source.overridden_paths) {
            if (p == top || p.rfind(top + ".", 0) == 0) return "--set " + p + ": ";
        }
        out << ":1:1";
    }
    out << ": ";
    return out.str();
}

std::string nearest_key(const std::string& word, const std::vector<std::string>& candidates) {
    // Only suggest when the typo is plausible: at most a third of the word wrong.
    return workloads::nearest_word(word, candidates, workloads::TypoBound::typed_word);
}

Section::Section(YAML::Node node, std::string path, const SourceInfo* source)
    : node_(std::move(node)), path_(std::move(path)), source_(source) {
    if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
        fail_at(node_, path_.empty() ? "(top level)" : path_, "expected a mapping of keys to values");
    }
}

std::string Section::key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool Section::has(const std::string& key) const {
    return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

YAML::Node Section::value(const std::string& key) const {
    if (!node_.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    return node_[key];
}

void Section::refuse_empty(const std::string& key, const std::string& expected) const {
    if (!node_.IsMap()) return;
    const YAML::Node v = node_[key];
    if (!v.IsDefined() || !v.IsNull()) return;
    // The key's own position: an empty value's mark is wherever the parser stopped.
    for (const auto& entry : node_) {
        if (entry.first.IsScalar() && entry.first.Scalar() == key) {
            fail_at(entry.first, key_path(key), "has no value; expected " + expected + " (leave the key out for the default)");
        }
    }
    fail(key, "has no value; expected " + expected + " (leave the key out for the default)");
}

void Section::fail(const std::string& key, const std::string& message) const {
    const YAML::Node v = value(key);
    fail_at(v.IsDefined() ? v : node_, key_path(key), message);
}

void Section::fail_missing(const std::string& key, const std::string& message) const {
    // A key present here that is a plausible misspelling of the missing one is the likely cause:
    // name it, at its own position, as finish() names any unknown key.
    if (node_.IsMap()) {
        std::vector<std::string> present;
        for (const auto& entry : node_) {
            if (entry.first.IsScalar() && entry.first.Scalar() != key && !read_.count(entry.first.Scalar())) {
                present.push_back(entry.first.Scalar());
            }
        }
        const std::string typo = nearest_key(key, present);
        if (!typo.empty()) {
            for (const auto& entry : node_) {
                if (entry.first.IsScalar() && entry.first.Scalar() == typo) {
                    fail_at(entry.first, key_path(typo),
                            "unknown key (did you mean '" + key + "'?); " + message + " (key '" + key_path(key) + "')");
                }
            }
        }
    }
    fail(key, message);
}

void Section::fail_first_leaf(const std::string& key, const std::string& message) const {
    YAML::Node v = value(key);
    std::string path = key_path(key);
    while (v.IsMap() && v.size() > 0 && v.begin()->first.IsScalar()) {
        path += "." + v.begin()->first.Scalar();
        v = v.begin()->second;
    }
    fail_at(v.IsDefined() ? v : node_, path, message);
}

void Section::fail_at(const YAML::Node& node, const std::string& key_path_text, const std::string& message) const {
    throw ScenarioError(location(node, key_path_text, *source_) + "key '" + key_path_text + "': " + message);
}

namespace {
std::string describe(const YAML::Node& v) {
    if (v.IsScalar()) return workloads::quoted_input(v.Scalar());
    if (v.IsSequence()) return "a list";
    if (v.IsMap()) return "a mapping";
    return "nothing";
}

std::string format_number(double x) {
    std::ostringstream out;
    out << x;
    return out.str();
}
}  // namespace

double Section::number(const std::string& key, double min, double max, std::optional<double> fallback,
                       const char* unit) {
    read_.insert(key);
    const std::string range = "[" + format_number(min) + ", " + format_number(max) + "]" +
                              (*unit ? std::string(" ") + unit : "");
    if (!has(key)) {
        refuse_empty(key, "a number in " + range);
        if (fallback) return *fallback;
        fail_missing(key, std::string("required number") + (*unit ? std::string(" in ") + unit : "") + " is missing");
    }
    const YAML::Node v = value(key);
    double x = 0.0;
    bool ok = v.IsScalar();
    if (ok) {
        const std::string& s = v.Scalar();
        std::size_t used = 0;
        try {
            x = std::stod(s, &used);
        } catch (const std::exception&) {
            ok = false;
        }
        ok = ok && used == s.size() && std::isfinite(x);
    }
    if (!ok) fail(key, "expected a finite number in " + range + ", got " + describe(v));
    if (x < min || x > max) fail(key, "value " + v.Scalar() + " is out of range " + range);
    return x;
}

std::int64_t Section::integer(const std::string& key, std::int64_t min, std::int64_t max,
                              std::optional<std::int64_t> fallback) {
    read_.insert(key);
    const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (!has(key)) {
        refuse_empty(key, "an integer in " + range);
        if (fallback) return *fallback;
        fail_missing(key, "required integer is missing");
    }
    const YAML::Node v = value(key);
    std::int64_t x = 0;
    bool ok = v.IsScalar();
    if (ok) {
        const std::string& s = v.Scalar();
        std::size_t used = 0;
        try {
            x = std::stoll(s, &used, 10);
        } catch (const std::exception&) {
            ok = false;
        }
        ok = ok && used == s.size();
    }
    if (!ok) fail(key, "expected an integer in " + range + ", got " + describe(v));
    if (x < min || x > max) fail(key, "value " + v.Scalar() + " is out of range " + range);
    return x;
}

bool Section::boolean(const std::string& key, std::optional<bool> fallback) {
    read_.insert(key);
    if (!has(key)) {
        refuse_empty(key, "true or false");
        if (fallback) return *fallback;
        fail_missing(key, "required true/false is missing");
    }
    const YAML::Node v = value(key);
    if (v.IsScalar()) {
        const std::string& s = v.Scalar();
        if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
        if (s == "false" || s == "False" || s == "no" || s == "off") return false;
    }
    fail(key, "expected true or false, got " + describe(v));
}

std::string Section::text(const std::string& key, std::optional<std::string> fallback) {
    read_.insert(key);
    if (!has(key)) {
        refuse_empty(key, "text");
        if (fallback) return *fallback;
        fail_missing(key, "required text is missing");
    }
    const YAML::Node v = value(key);
    if (!v.IsScalar()) fail(key, "expected text, got " + describe(v));
    return v.Scalar();
}

std::string Section::choice(const std::string& key, const std::vector<std::string>& choices,
                            std::optional<std::string> fallback) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    refuse_empty(key, "one of " + list);
    const std::string s = text(key, fallback);
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
    const std::string near = nearest_key(s, choices);
    fail(key, "expected one of " + list + ", got " + workloads::quoted_input(s) + (near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

Section Section::section(const std::string& key, bool required) {
    read_.insert(key);
    if (!has(key)) {
        refuse_empty(key, "a mapping of keys to values (write {} for all defaults)");
        if (required) fail_missing(key, "required section is missing");
        return Section(YAML::Node(YAML::NodeType::Undefined), key_path(key), source_);
    }
    return Section(value(key), key_path(key), source_);
}

std::vector<YAML::Node> Section::sequence(const std::string& key) {
    read_.insert(key);
    if (!has(key)) {
        refuse_empty(key, "a list");
        return {};
    }
    const YAML::Node v = value(key);
    if (!v.IsSequence()) fail(key, "expected a list, got " + describe(v));
    return {v.begin(), v.end()};
}

std::vector<double> Section::numbers(const std::string& key, std::size_t count, const char* unit) {
    const auto items = sequence(key);
    if (items.size() != count) {
        fail(key, "expected a list of " + std::to_string(count) + " numbers" +
                      (*unit ? std::string(" in ") + unit : ""));
    }
    std::vector<double> out;
    for (const auto& item : items) {
        std::size_t used = 0;
        double x = 0.0;
        bool ok = item.IsScalar();
        if (ok) {
            try {
                x = std::stod(item.Scalar(), &used);
            } catch (const std::exception&) {
                ok = false;
            }
            ok = ok && used == item.Scalar().size() && std::isfinite(x);
        }
        if (!ok) fail_at(item, key_path(key), "expected a finite number, got " + describe(item));
        out.push_back(x);
    }
    return out;
}

void Section::finish() {
    if (!node_.IsMap()) return;
    const std::vector<std::string> valid(read_.begin(), read_.end());
    for (const auto& entry : node_) {
        // A key that is itself a list or mapping (`? [a, b]`) is no valid key either.
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : describe(entry.first);
        if (read_.count(key)) {
            // Keys read another way (allow(), has()) are checked for a value here.
            if (entry.second.IsNull()) fail_at(entry.first, key_path(key), "has no value (leave the key out for the default)");
            continue;
        }
        const std::string near = nearest_key(key, valid);
        std::string valid_list;
        for (const auto& v : valid) valid_list += (valid_list.empty() ? "" : ", ") + v;
        fail_at(entry.first, key_path(key),
                "unknown key" + (near.empty() ? "" : " (did you mean '" + near + "'?)") + "; valid keys here: " +
                    valid_list);
    }
}

namespace {

std::string at(const std::string& source_name, const YAML::Mark& mark) {
    return source_name + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": ";
}

// Walks the parser's events (no nodes are built): keys per mapping, items per list, nodes.
class StructureCheck : public YAML::EventHandler {
public:
    StructureCheck(const std::string& source_name, const DocumentLimits& limits) : source_(source_name), limits_(limits) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, nullptr); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, nullptr); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
        leaf(mark, &value);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        open(mark, false);
    }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        open(mark, true);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapEnd() override { close(); }

private:
    struct Frame {
        bool map = false;
        bool expecting_key = true;
        std::string path;
        std::string key;  // the current value's key (maps)
        std::size_t items = 0;
        std::map<std::string, YAML::Mark> keys;
    };

    std::string child_path() const {
        if (stack_.empty()) return "";
        const Frame& f = stack_.back();
        if (f.map) return f.path.empty() ? f.key : f.path + "." + f.key;
        return f.path + "[" + std::to_string(f.items - 1) + "]";
    }

    // A node starts: count it, and check it as a key or a list item of its parent.
    void begin(const YAML::Mark& mark, const std::string* scalar) {
        if (++nodes_ > limits_.max_nodes) {
            throw ScenarioError(at(source_, mark) + "the scenario has more than " + std::to_string(limits_.max_nodes) +
                                " values; it cannot describe a run that fits (at most " +
                                std::to_string(limits_.max_sequence_items) + " explicit satellites)");
        }
        if (stack_.empty()) return;
        Frame& f = stack_.back();
        if (!f.map) {
            if (++f.items > limits_.max_sequence_items) {
                throw ScenarioError(at(source_, mark) + "key '" + f.path + "': a list of more than " +
                                    std::to_string(limits_.max_sequence_items) + " items; at most " +
                                    std::to_string(limits_.max_sequence_items) + " are supported");
            }
            return;
        }
        if (!f.expecting_key) return;
        f.key = scalar ? *scalar : "?";
        if (!scalar) return;  // a list or mapping as a key: the loader reports it as an unknown key
        const auto [it, inserted] = f.keys.emplace(*scalar, mark);
        if (!inserted) {
            const std::string path = f.path.empty() ? *scalar : f.path + "." + *scalar;
            throw ScenarioError(at(source_, mark) + "key '" + path + "' is given twice (first at line " +
                                std::to_string(it->second.line + 1) + ", column " + std::to_string(it->second.column + 1) +
                                "); keys in a mapping must be unique");
        }
    }
    // A node ended: the parent's next node is a value after a key, a key after a value.
    void end() {
        if (!stack_.empty() && stack_.back().map) stack_.back().expecting_key = !stack_.back().expecting_key;
    }
    void leaf(const YAML::Mark& mark, const std::string* scalar) {
        begin(mark, scalar);
        end();
    }
    void open(const YAML::Mark& mark, bool map) {
        begin(mark, nullptr);
        Frame f;
        f.map = map;
        f.path = child_path();
        stack_.push_back(std::move(f));
    }
    void close() {
        stack_.pop_back();
        end();
    }

    const std::string& source_;
    const DocumentLimits& limits_;
    std::size_t nodes_ = 0;
    std::vector<Frame> stack_;
};

}  // namespace

void check_utf8(const std::string& text, const std::string& what) {
    const auto bad = workloads::first_invalid_utf8(text);
    if (!bad) return;
    const std::string_view before(text.data(), *bad);
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t line_start = before.rfind('\n');
    const std::size_t column = line_start == std::string_view::npos ? *bad + 1 : *bad - line_start;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(text[*bad]));
    throw ScenarioError(what + ":" + std::to_string(line) + ":" + std::to_string(column) + ": byte " + hex +
                        " is not UTF-8 (text input must be UTF-8; was the file saved as Latin-1?)");
}

void check_document(const std::string& yaml_text, const std::string& source_name, const DocumentLimits& limits) {
    // UTF-16/32 files (with a byte-order mark) are converted by yaml-cpp itself.
    const bool utf16_or_32 = yaml_text.size() >= 2 && ((yaml_text[0] == '\xFE' && yaml_text[1] == '\xFF') ||
                                                      (yaml_text[0] == '\xFF' && yaml_text[1] == '\xFE') ||
                                                      yaml_text[0] == '\0');
    if (!utf16_or_32) check_utf8(yaml_text, source_name);
    std::istringstream in(yaml_text);
    StructureCheck check(source_name, limits);
    try {
        YAML::Parser parser(in);
        parser.HandleNextDocument(check);
    } catch (const YAML::Exception&) {
        // Syntax errors: YAML::Load reports them with their position.
    }
}

std::string read_input_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what) {
    const auto reason = [&](const std::string& why) { return ScenarioError(path.string() + ": " + why); };
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw reason("cannot open the " + what + ": " + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw reason("cannot read the " + what + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw reason("the " + what + " is a folder, not a file");
    if (!S_ISREG(st.st_mode)) throw reason("the " + what + " is not a regular file (a device, FIFO or socket cannot be read as input)");
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        throw reason("the " + what + " is " + std::to_string(st.st_size) + " bytes; at most " + std::to_string(max_bytes) +
                     " are read");
    }
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw reason("cannot read the " + what + ": " + std::strerror(errno));
        }
        if (got == 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
        // A file growing while read is capped too.
        if (text.size() > max_bytes) throw reason("the " + what + " is over " + std::to_string(max_bytes) + " bytes; at most that is read");
    }
    // Every input is UTF-8 text: refused here, before any run, rather than failing when its
    // contents reach summary.json (JSON takes only UTF-8).
    if (text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF"))
        throw reason("the " + what + " is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8");
    check_utf8(text, path.string());
    return text;
}

}  // namespace skyfabric::scenario
