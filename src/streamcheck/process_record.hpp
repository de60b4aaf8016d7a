// streamcheck: the record each checked process writes into STREAMLIKE_CHECK_RECORDS=DIR
// (docs/streamcheck.md, "One record per process"), DIR/streamcheck-<pid>.json, which a command
// that ran many processes (a test suite) merges: whether the process was checked, why not, and its
// reports. Pure but for the files: no CUDA call, no CUPTI type.
#ifndef STREAMLIKE_SRC_STREAMCHECK_PROCESS_RECORD_HPP
#define STREAMLIKE_SRC_STREAMCHECK_PROCESS_RECORD_HPP

#include <string>
#include <string_view>
#include <vector>

namespace streamlike::check {

inline constexpr std::string_view process_record_schema = "streamlike.check.process/1";

struct process_facts {
  long pid = 0;
  long ppid = 0;
  std::vector<std::string> argv;
};

/// The calling process's pid, parent and arguments (/proc/self/cmdline).
[[nodiscard]] process_facts this_process();

/// The record's JSON. `log_json` is report_log::json() (its counts and reports), or empty for a
/// process that was never checked (counts 0, no reports); `why_unchecked` empty is null.
[[nodiscard]] std::string process_record(const process_facts& p, bool checked, std::string_view why_unchecked,
                                         bool summarized, std::string_view log_json);

/// Writes `text` to DIR/streamcheck-<pid>.json as a whole: a temporary file in DIR, then renamed
/// over the record, so that a reader sees the old record or the new one. False, with `error` set,
/// when it cannot.
bool write_process_record(const std::string& dir, long pid, std::string_view text, std::string& error);

} // namespace streamlike::check

#endif // STREAMLIKE_SRC_STREAMCHECK_PROCESS_RECORD_HPP
