// streamcheck's options: what the environment variables say (docs/streamcheck.md). Pure.
#ifndef STREAMLIKE_SRC_STREAMCHECK_OPTIONS_HPP
#define STREAMLIKE_SRC_STREAMCHECK_OPTIONS_HPP

#include <string>
#include <string_view>
#include <vector>

namespace streamlike::check {

/// One allow-list entry: reports whose call site matches are counted, not reported.
struct allow_entry {
  enum class by { library, symbol, python_module } what = by::library;
  std::string text; // a substring of the library path or symbol; a Python module ("torch.nn")
};

struct options {
  bool wrong_stream = false;      // STREAMLIKE_CHECK contains wrong-stream (or all)
  bool capture = false;           // STREAMLIKE_CHECK contains capture (or all)
  bool strict_stream = false;     // wrong-stream=strict: any stream but the current one, ordered or not
  std::string output;             // STREAMLIKE_CHECK_OUTPUT: the reports' file; empty: stderr
  std::string json;               // STREAMLIKE_CHECK_JSON: a JSON summary written at exit
  bool fail = false;              // STREAMLIKE_CHECK_FAIL=1: exit status 1 if anything was reported
  std::vector<allow_entry> allow; // STREAMLIKE_CHECK_ALLOW: lib:TEXT,sym:TEXT,py:MODULE, comma-separated

  [[nodiscard]] bool any() const noexcept { return wrong_stream || capture; }
};

/// The options from the variables' values (null: unset). Throws std::invalid_argument naming the
/// variable, the value and what was expected for a value it cannot read.
[[nodiscard]] options parse_options(const char* check, const char* output, const char* json, const char* fail,
                                    const char* allow);

/// `path` with each "%p" replaced by `pid`: one file per process when a checked command starts
/// several (a test suite).
[[nodiscard]] std::string with_pid(std::string_view path, long pid);

/// parse_options of the process's environment.
[[nodiscard]] options options_from_environment();

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_OPTIONS_HPP
