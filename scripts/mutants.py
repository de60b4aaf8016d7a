"""The mutants scripts/mutate runs (docs/mutation.md): each an exact text replacement in one file of
the tree, which must match exactly once, and the tests likely to kill it (tried first, only to save
time). Kept apart from the runner so that adding a mutant touches no code that runs them."""


class Mutant:
    def __init__(self, ident, path, old, new, what, first=(), equivalent=None):
        self.ident, self.path, self.old, self.new, self.what = ident, path, old, new, what
        self.first = list(first)  # tests likely to kill it: tried first, only to save time
        self.equivalent = equivalent  # why no test can kill it, if so


GS = "include/streamlike/get_stream.hpp"
SV = "include/streamlike/stream_view.hpp"
SS = "include/streamlike/shared_stream.hpp"
US = "include/streamlike/unique_stream.hpp"
OO = "include/streamlike/detail/owner_operations.hpp"
SE = "include/streamlike/stream_encodings.hpp"
ES = "include/streamlike/export_stream.hpp"
EX = "include/streamlike/detail/export.hpp"
CC = "src/capture_checks.cpp"
EV = "src/event.cpp"
SO = "src/streamcheck/stream_order.cpp"
CK = "src/streamcheck/checker.cpp"
CR = "src/current_stream_registry.cpp"
CS = "src/current_stream.cpp"  # being split into smaller files: these mutants may need their path updated
SH = "src/current_stream_shared.cpp"
PT = "src/partition.cpp"
SP = "src/stream_pool.cpp"

MUTANTS = [
    # --- integer routes (get_stream.hpp, stream_encodings.hpp) ---------------------------------------
    Mutant(
        "int-not-refused",
        GS,
        "concept never_a_stream = std::integral<U> ||",
        "concept never_a_stream = false ||",
        "integers are no longer refused by name (get_stream(0) falls through to 'no route')",
        ["get_stream_of_int_zero"],
    ),
    Mutant(
        "nullptr-not-refused",
        GS,
        "std::same_as<U, std::nullptr_t> ||",
        "false ||",
        "nullptr is no longer refused: it converts to cudaStream_t, so get_stream(nullptr) views handle 0",
        ["get_stream_of_nullptr"],
    ),
    Mutant(
        "void-pointer-not-refused",
        GS,
        "std::conjunction_v<std::is_pointer<U>, std::is_void<std::remove_pointer_t<U>>>;",
        "false;",
        "void* is no longer refused by name",
        ["get_stream_of_void_pointer"],
    ),
    Mutant(
        "handle-accepts-nullptr",
        GS,
        "concept handle = !never_a_stream<std::remove_cvref_t<T>> &&",
        "concept handle =",
        "a member or tag_invoke returning std::nullptr_t counts as returning a handle",
        ["get_stream"],
    ),
    Mutant(
        "from-address-bool",
        SE,
        "requires(std::integral<Integer> && !std::same_as<Integer, bool>)",
        "requires(std::integral<Integer>)",
        "from_address accepts a bool",
        ["stream_encodings"],
    ),
    Mutant(
        "from-address-negative",
        SE,
        '    if (address < 0) {\n      detail::throw_bad_stream_encoding("from_address',
        '    if (address < -1000) {\n      detail::throw_bad_stream_encoding("from_address',
        "from_address accepts negative addresses",
        ["stream_encodings"],
    ),
    Mutant(
        "dlpack-zero",
        SE,
        "if (value == 0 || value < -1)",
        "if (value < -1)",
        "from_dlpack_stream accepts the ambiguous 0",
        ["stream_encodings"],
    ),
    # --- route order (get_stream.hpp) -----------------------------------------------------------------
    Mutant(
        "order-handle-before-tag_invoke",
        GS,
        "  } else if constexpr (tag_invocable<const get_stream_t&, T>) {",
        "  } else if constexpr (handle<T>) {\n    return route::handle;\n"
        "  } else if constexpr (tag_invocable<const get_stream_t&, T>) {",
        "an implicit conversion to a handle wins over tag_invoke",
        ["get_stream"],
    ),
    Mutant(
        "order-stream-before-get_stream",
        GS,
        "  } else if constexpr (member_get_stream<T>) {\n    return route::member_get_stream;\n"
        "  } else if constexpr (member_stream<T>) {\n    return route::member_stream;\n",
        "  } else if constexpr (member_stream<T>) {\n    return route::member_stream;\n"
        "  } else if constexpr (member_get_stream<T>) {\n    return route::member_get_stream;\n",
        "member stream() wins over member get_stream()",
        ["get_stream"],
    ),
    Mutant(
        "order-disabled-after-tag_invoke",
        GS,
        "  } else if constexpr (disable_stream_like<U>) {\n    return route::disabled;\n"
        "  } else if constexpr (tag_invocable<const get_stream_t&, T>) { // the tag as the call passes it: *this\n"
        "    if constexpr (handle<tag_invoke_result_t<const get_stream_t&, T>>) {\n"
        "      return route::tag_invoke;\n"
        "    } else {\n"
        "      return route::tag_invoke_returns_no_handle;\n"
        "    }\n",
        "  } else if constexpr (tag_invocable<const get_stream_t&, T>) { // the tag as the call passes it: *this\n"
        "    if constexpr (handle<tag_invoke_result_t<const get_stream_t&, T>>) {\n"
        "      return route::tag_invoke;\n"
        "    } else {\n"
        "      return route::tag_invoke_returns_no_handle;\n"
        "    }\n"
        "  } else if constexpr (disable_stream_like<U>) {\n    return route::disabled;\n",
        "disable_stream_like is checked after tag_invoke: an opted-out type with a tag_invoke is viewed",
        ["disable_stream_like"],
    ),
    # --- disable_stream_like --------------------------------------------------------------------------
    Mutant(
        "disable-stream-like-ignored",
        GS,
        "} else if constexpr (disable_stream_like<U>) {",
        "} else if constexpr (false) {",
        "disable_stream_like<T> is ignored: an opted-out type is viewed through its routes",
        ["get_stream_of_disabled_type", "disable_stream_like"],
    ),
    # --- rvalue owners --------------------------------------------------------------------------------
    Mutant(
        "rvalue-owner-allowed",
        GS,
        "if constexpr (view_dangles_from_temporary<U> && !std::is_lvalue_reference_v<T>) {",
        "if constexpr (false) {",
        "a temporary owner is viewed (the view dangles when it dies)",
        ["get_stream_of_rvalue_owner"],
    ),
    Mutant(
        "rvalue-owner-prvalue-allowed",
        GS,
        "if constexpr (view_dangles_from_temporary<U> && !std::is_lvalue_reference_v<T>) {",
        "if constexpr (view_dangles_from_temporary<U> && std::is_rvalue_reference_v<T>) {",
        "is_rvalue_reference_v<T>, never true for a deduced T: every temporary owner is viewed",
        ["get_stream_of_rvalue_owner"],
    ),
    Mutant(
        "rvalue-owner-xvalue-allowed",
        GS,
        "if constexpr (view_dangles_from_temporary<U> && !std::is_lvalue_reference_v<T>) {",
        "if constexpr (view_dangles_from_temporary<U> && !std::is_reference_v<T>) {",
        "!is_reference_v<T> in place of !is_lvalue_reference_v<T> (meant to let std::move(owner) through)",
        ["get_stream_of_moved_owner"],
        equivalent="a forwarding reference deduces T as a non-reference type for every rvalue, prvalue or "
        "xvalue alike, so !is_reference_v<T> and !is_lvalue_reference_v<T> agree on every call; only an "
        "explicit get_stream.operator()<U&&>(...) could tell them apart",
    ),
    Mutant(
        "rvalue-owner-const-allowed",
        GS,
        "if constexpr (view_dangles_from_temporary<U> && !std::is_lvalue_reference_v<T>) {",
        "if constexpr (view_dangles_from_temporary<std::remove_reference_t<T>> && !std::is_lvalue_reference_v<T>) {",
        "a const temporary owner is viewed (enable_stream_owner<const T> is false)",
        ["unique_stream"],
    ),
    Mutant(
        "shared-stream-temporary-not-flagged",
        SS,
        "inline constexpr bool view_dangles_from_temporary<shared_stream> = true;",
        "inline constexpr bool view_dangles_from_temporary<shared_stream> = false;",
        "a temporary shared_stream is not flagged as one whose view would dangle",
        ["get_stream_of_temporary_shared_stream"],
    ),
    Mutant(
        "owner-get_stream-member-on-rvalue",
        OO,
        "  void get_stream() && = delete;\n  void get_stream() const&& = delete;\n",
        "",
        "the owners' member get_stream() serves rvalues (CCCL's cuda::get_stream would view a temporary)",
        ["unique_stream"],
    ),
    Mutant(
        "owner-rvalue-to-stream_view",
        OO,
        "  using refusals::operator stream_view;\n",
        "",
        "a temporary owner converts to stream_view (the refusal naming export_stream is gone)",
        ["shared_stream_temporary_into_view"],
    ),
    Mutant(
        "owner-rvalue-to-stream_ref",
        OO,
        "  using refusals::operator cuda::stream_ref;\n",
        "",
        "a temporary owner converts to cuda::stream_ref",
        ["owner_temporary_to_stream_ref"],
    ),
    # --- noexcept -------------------------------------------------------------------------------------
    Mutant(
        "noexcept-unconditional",
        GS,
        "operator()(T&& t) const noexcept(detail::get_stream_routes::nothrow<T>) {",
        "operator()(T&& t) const noexcept {",
        "get_stream is noexcept whatever the route (a throwing route would terminate)",
        ["get_stream"],
    ),
    Mutant(
        "noexcept-member-call-ignored",
        GS,
        "    noexcept(std::declval<T>().get_stream()) && nothrow_handle<decltype(std::declval<T>().get_stream())>;",
        "    nothrow_handle<decltype(std::declval<T>().get_stream())>;",
        "a throwing member get_stream() is reported noexcept",
        ["get_stream"],
    ),
    Mutant(
        "noexcept-conversion-ignored",
        GS,
        "                                            ? std::is_nothrow_convertible_v<T, cudaStream_t>",
        "                                            ? true",
        "a throwing conversion to cudaStream_t is reported noexcept",
        ["get_stream"],
    ),
    # --- deleted overloads ----------------------------------------------------------------------------
    Mutant(
        "view-integer-ctor",
        SV,
        "  template <class Integer>\n    requires std::integral<Integer> stream_view(Integer)\n  = delete;\n",
        "",
        "stream_view{0} compiles (0 becomes a null cudaStream_t)",
        ["stream_view", "stream_view_from_int_zero"],
    ),
    Mutant(
        "view-nullptr-ctor",
        SV,
        "  stream_view(std::nullptr_t) = delete;\n",
        "",
        "stream_view v = nullptr compiles",
        ["stream_view_copy_init_from_nullptr"],
    ),
    Mutant(
        "view-default-ctor",
        SV,
        "  stream_view() = delete;\n",
        "",
        "the deleted default constructor is removed (none is declared implicitly: only the diagnostic changes)",
        ["stream_view_default_constructed"],
    ),
    Mutant(
        "view-wait-integer",
        SV,
        "  template <class Integer>\n    requires std::integral<Integer>\n  void wait(Integer) const = delete;\n"
        "  void wait(std::nullptr_t) const = delete;\n  /// A new event",
        "  void wait(std::nullptr_t) const = delete;\n  /// A new event",
        "stream_view's deleted wait(Integer) is removed (view.wait(0) becomes an ambiguity)",
        ["stream_view_wait_on_zero"],
    ),
    Mutant(
        "view-wait-nullptr",
        SV,
        "  void wait(std::nullptr_t) const = delete;\n  /// A new event",
        "  /// A new event",
        "view.wait(nullptr) compiles (a null cudaEvent_t)",
        ["stream_view_wait_on_nullptr"],
    ),
    Mutant(
        "view-equals-integer",
        SV,
        "  template <class Integer>\n    requires std::integral<Integer>\n"
        "  friend bool operator==(stream_view, Integer) = delete;\n",
        "",
        "the deleted operator==(stream_view, Integer) is removed (view == 0 becomes an ambiguity)",
        ["stream_view_equals_int_zero", "stream_view_equals_long_variable"],
    ),
    Mutant(
        "view-equals-nullptr",
        SV,
        "  friend bool operator==(stream_view, std::nullptr_t) = delete;\n",
        "",
        "view == nullptr compiles (against a null cudaStream_t)",
        ["stream_view_equals_nullptr"],
    ),
    Mutant(
        "owner-wait-nullptr",
        OO,
        "  void wait(std::nullptr_t) const = delete;\n",
        "",
        "an owner's wait(nullptr) compiles (a null cudaEvent_t)",
        ["shared_stream"],
    ),
    Mutant(
        "owner-wait-integer",
        OO,
        "  template <class Integer>\n    requires std::integral<Integer>\n  void wait(Integer) const = delete;\n",
        "",
        "the owners' deleted wait(Integer) is removed (owner.wait(0) becomes an ambiguity)",
        ["owner_wait_on_zero"],
    ),
    Mutant(
        "unique-copy-defaulted",
        US,
        "  unique_stream(const unique_stream&) = delete;\n",
        "  unique_stream(const unique_stream&) = default;\n",
        "unique_stream is copyable (two owners destroy one stream)",
        ["unique_stream_copied"],
    ),
    # --- export rules (export_stream.hpp, detail/export.hpp) ------------------------------------------
    Mutant(
        "export-lvalue-owner",
        ES,
        "return std::is_lvalue_reference_v<T> || std::is_const_v<std::remove_reference_t<T>> ? route::lvalue_owner",
        "return std::is_const_v<std::remove_reference_t<T>> ? route::lvalue_owner",
        "export_stream of an lvalue owner is not refused by its own rule (no std::move in the message)",
        ["export_stream_of_lvalue_owner"],
    ),
    Mutant(
        "export-view",
        ES,
        "  } else if constexpr (std::same_as<U, shared_stream>) {\n    return route::shared;",
        "  } else if constexpr (std::same_as<U, shared_stream> || std::same_as<U, stream_view>) {\n"
        "    return route::shared;",
        "a stream_view is exportable (nothing keeps its stream alive)",
        ["export_stream_of_view"],
    ),
    Mutant(
        "export-null-shared_ptr",
        ES,
        "      if (!t)\n        throw std::invalid_argument(",
        "      if (false)\n        throw std::invalid_argument(",
        "export_stream of a null std::shared_ptr dereferences it instead of throwing",
        ["export_stream"],
    ),
    Mutant(
        "export-api-hidden",
        EX,
        '#  define STREAMLIKE_API __attribute__((visibility("default")))',
        '#  define STREAMLIKE_API __attribute__((visibility("hidden")))',
        "libstreamlike exports nothing (its functions and classes are hidden)",
        ["stream_view"],
    ),
    # --- the owned-stream C ABI's edges (src/owned_stream.cpp) and const temporary owners ----------
    Mutant(
        "abi-major-zero-accepted",
        "src/owned_stream.cpp",
        "if (owned->major_version != STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {",
        "if (owned->major_version > STREAMLIKE_OWNED_STREAM_MAJOR_VERSION) {",
        "from_owned_stream accepts major version 0",
        ["owned_stream"],
    ),
    Mutant(
        "abi-legacy-handle-unflagged",
        "src/owned_stream.cpp",
        "      (!legacy && handle == cudaStreamLegacy) || ",
        "      ",
        "handle 0x1 (CU_STREAM_LEGACY) is accepted without its flag",
        ["owned_stream"],
    ),
    Mutant(
        "abi-per-thread-flag-any-handle",
        "src/owned_stream.cpp",
        "if ((legacy && handle != cudaStreamLegacy) || (per_thread && handle != cudaStreamPerThread) ||",
        "if ((legacy && handle != cudaStreamLegacy) ||",
        "the per-thread flag is accepted with another handle",
        ["owned_stream"],
    ),
    Mutant(
        "abi-context-id-zero",
        "src/owned_stream.cpp",
        "    abi.context_id = facts->primary_context_id;",
        "    abi.context_id = 0;",
        "to_owned_stream exports no context id",
        ["exported-facts"],
    ),
    Mutant(
        "owner-const-rvalue-to-stream_ref",
        OO,
        "  operator cuda::stream_ref() const&& = delete;      "
        "// would dangle: name the owner, or export_stream(std::move(owner))\n",
        "",
        "a const temporary owner (shared_stream, unique_stream) converts to cuda::stream_ref",
        ["shared_stream", "unique_stream"],
    ),
    # --- capture safety (src/; killed without a GPU by test/host/capture_safety.cpp) -----------------
    Mutant(
        "capture-check-ignores-invalidated",
        CC,
        "if (status_or_none(stream) != cudaStreamCaptureStatusNone) [[unlikely]]",
        "if (status_or_none(stream) == cudaStreamCaptureStatusActive) [[unlikely]]",
        "refuse_if_capturing lets a stream whose capture is invalidated through",
        ["capture_safety"],
    ),
    Mutant(
        "capture-check-never-refuses",
        CC,
        "    throw_capturing(type, operation, why);\n}",
        "    (void)why;\n}",
        "refuse_if_capturing never refuses",
        ["capture_safety"],
    ),
    Mutant(
        "capture-status-always-none",
        CC,
        "      status = static_cast<cudaStreamCaptureStatus>(driver_status);",
        "      status = cudaStreamCaptureStatusNone;",
        "the driver's capture status is read as none",
        ["capture_safety"],
    ),
    Mutant(
        "view-id-unchecked",
        "src/stream_operations.cpp",
        '  capture::refuse_if_capturing(stream, type, "id", "cudaStreamGetId");\n',
        "",
        "stream_view::id asks cudaStreamGetId on a capturing stream",
        ["capture_safety"],
    ),
    Mutant(
        "view-sync-unchecked",
        "src/stream_operations.cpp",
        '  capture::refuse_if_capturing(stream, type, "sync", "cudaStreamSynchronize");\n',
        "",
        "sync() synchronizes a capturing stream",
        ["capture_safety"],
    ),
    Mutant(
        "view-is-done-unchecked",
        "src/stream_operations.cpp",
        '  capture::refuse_if_capturing(stream, type, "is_done", "cudaStreamQuery");\n',
        "",
        "is_done() queries a capturing stream",
        ["capture_safety"],
    ),
    Mutant(
        "facts-unchecked",
        "src/stream_lifecycle.cpp",
        "  capture::refuse_if_capturing(handle, type, operation,",
        "  if (false) capture::refuse_if_capturing(handle, type, operation,",
        "adopt and a keep-alive's first id/flags query ask a capturing stream",
        ["capture_safety"],
    ),
    Mutant(
        "retain-accepts-invalidated",
        "src/retain_until_done.cpp",
        "if (status == cudaStreamCaptureStatusInvalidated) {",
        "if (false) {",
        "retain_until_done accepts a stream whose capture is invalidated",
        ["capture_safety"],
    ),
    Mutant(
        "wait-accepts-invalidated",
        "src/ordering.cpp",
        "if (consumer_state.status == capture_status::invalidated) {",
        "if (false) {",
        "wait() on a consumer whose capture is invalidated is passed to CUDA",
        ["capture_safety"],
    ),
    Mutant(
        "wait-unchecked",
        "src/ordering.cpp",
        "if (capture::status_or_none(consumer) != cudaStreamCaptureStatusNone) [[unlikely]]",
        "if (false)",
        "a capturing consumer waits on a producer outside its capture",
        ["capture_safety"],
    ),
    Mutant(
        "graph-launch-unchecked",
        "src/graph.cpp",
        '  detail::capture::refuse_if_capturing(stream.get(), "graph_exec", "launch", '
        '"launching a graph (cudaGraphLaunch)");\n',
        "",
        "graph_exec::launch launches on a capturing stream",
        ["capture_safety"],
    ),
    Mutant(
        "capture-begin-unchecked",
        "src/capture.cpp",
        '  detail::capture::refuse_if_capturing(stream.get(), "capture_scope", "begin",',
        '  if (false) detail::capture::refuse_if_capturing(stream.get(), "capture_scope", "begin",',
        "capture_scope::begin begins a second capture on a capturing stream",
        ["capture_safety"],
    ),
    Mutant(
        "destroy-asks-device",
        "src/stream_lifecycle.cpp",
        "  destroy_stream_on_device(handle, devices::of_or_minus_one(handle));",
        "  int device = -1;\n  (void)cudaStreamGetDevice(handle, &device);\n"
        "  destroy_stream_on_device(handle, device);",
        "destroying an owner asks cudaStreamGetDevice (invalidating a capture the stream is in)",
        ["capture_safety"],
    ),
    Mutant(
        "drop-ignores-current-context",
        "src/stream_lifecycle.cpp",
        "  if (cuda_context::current_id() != context_id) return false;",
        "  if (context_id != 0) return false;",
        "a shared_stream's drop asks the primary context and the runtime where the driver's destroy would do",
        ["stream_creation_calls"],
    ),
    # --- the judges: CI's count (.ci/count_results.py) and the benchmark judge (bench/) --------------
    Mutant(
        "count-skip-passes",
        ".ci/count_results.py",
        "            if any(r in PASSED for r in got):\n                continue\n            what = ",
        "            if any(r in PASSED or r in SKIPPED for r in got):\n                continue\n            what = ",
        "a registered test that only skipped counts as passed on CI",
        ["count_results"],
    ),
    Mutant(
        "count-missing-ignored",
        ".ci/count_results.py",
        "            elif not got:",
        "            elif False:",
        "a registered test missing from the log is not named",
        ["count_results"],
    ),
    Mutant(
        "judge-crash-unchecked",
        "bench/tools/run_all.sh",
        '  judge_exit "$name" "$status" "$output" "${shown_only:-0}"\n',
        "",
        "run_all.sh takes a program's verdicts from its output alone: a crash of ratios.py drops its claims",
        ["bench_run_all"],
    ),
    Mutant(
        "ratios-fail-passes",
        "bench/tools/ratios.py",
        "            ratio = ratio_of(row, base)\n            ok = check(ratio, target)",
        "            ratio = ratio_of(row, base)\n            ok = True",
        "ratios.py passes every --compare row whatever its ratio",
        ["bench_ratios", "bench_run_all"],
    ),
    Mutant(
        "ratios-control-ignored",
        "bench/tools/ratios.py",
        "            good = abs(ratio - 1) <= float(tolerance)",
        "            good = True",
        "ratios.py ignores an off control row (a noisy run judged)",
        ["bench_ratios", "bench_run_all"],
    ),
    Mutant(
        "ratios-faster-inverted",
        "bench/tools/ratios.py",
        '"faster>=": (lambda ratio, target: 1 / ratio >= target,',
        '"faster>=": (lambda ratio, target: ratio >= 1 / target,',
        "ratios.py's 'faster>=' compares the wrong way round at its boundary",
        ["bench_ratios"],
    ),
    Mutant(
        "device-without-context",
        "src/devices.cpp",
        "  } else if (device = driver_device_of(stream); device >= 0) [[likely]] {",
        "  } else if (false) {",
        "stream_view::device() skips the context route (and refuses on a capturing stream)",
        ["capture_safety"],
    ),
    # --- events (src/event.cpp) ----------------------------------------------------------------------
    Mutant(
        "event-record-forgets-capture",
        EV,
        "  e.capture_id_.store(id, std::memory_order_relaxed);",
        "  e.capture_id_.store(0, std::memory_order_relaxed);",
        "record() forgets the capture it recorded in (sync/is_done of a captured event reach CUDA)",
        ["event_capture_safety", "capture_safety"],
    ),
    Mutant(
        "event-is-done-captured-unchecked",
        EV,
        "  if (const unsigned long long capture = capture_id(); capture != 0) [[unlikely]]\n"
        '    throw_captured("is_done"',
        '  if (const unsigned long long capture = capture_id(); false)\n    throw_captured("is_done"',
        "is_done() of an event recorded in a capture asks cudaEventQuery instead of refusing",
        ["event_capture_safety"],
    ),
    Mutant(
        "event-elapsed-start-unchecked",
        EV,
        "  if (const unsigned long long capture = start.capture_id(); capture != 0) [[unlikely]]",
        "  if (const unsigned long long capture = start.capture_id(); false)",
        "elapsed_ms() with a start event recorded in a capture asks cudaEventElapsedTime",
        ["event_capture_safety"],
    ),
    # --- streamcheck's order of stream work (src/streamcheck/stream_order.cpp, checker.cpp) -------------
    Mutant(
        "order-wait-ignored",
        SO,
        "    join(s.known, taken->second);\n    note_blocking_work(s);",
        "    note_blocking_work(s);",
        "a cuStreamWaitEvent (or a memory-word wait) orders nothing",
        ["streamcheck_stream_order", "streamcheck_checker"],
    ),
    Mutant(
        "order-record-empty",
        SO,
        "  taken.clear();\n  join(taken, s);",
        "  taken.clear();",
        "an event record (or a memory-word write) takes an empty clock",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-host-not-passed-on",
        SO,
        "      join(s.known, host->second->known);\n",
        "",
        "the host's waits are not passed on to the work it queues",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-fast-path-ignores-host",
        SO,
        "    return false; // the host waited since: its order to pass on",
        "    (void)0;",
        "the lock-free path ignores a wait the host made since",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-fast-path-ignores-legacy",
        SO,
        "s.legacy_seen.load(std::memory_order_relaxed)) {\n    return false;",
        "s.legacy_seen.load(std::memory_order_relaxed)) {\n    (void)0;",
        "the lock-free path ignores the legacy stream's new work",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-legacy-waits-for-nothing",
        SO,
        "        if (other->device == s.device && other->blocking && !other->legacy) join(s.known, *other);",
        "        (void)other;",
        "the legacy stream's work waits for no blocking stream",
        ["streamcheck_stream_order", "streamcheck_checker"],
    ),
    Mutant(
        "order-blocking-ignores-legacy",
        SO,
        "        join(s.known, *legacy);\n        s.legacy_seen",
        "        s.legacy_seen",
        "a blocking stream's work does not wait for the legacy stream's",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-device-sync-all-devices",
        SO,
        "    if (s->device == device) join(h.known, *s);",
        "    join(h.known, *s);",
        "cuCtxSynchronize waits for the streams of every device",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-remade-stream-inherits",
        SO,
        "    forget(*old->second);\n    streams_.erase(old);",
        "    (void)old;",
        "a stream made with a destroyed one's handle inherits its order",
        ["streamcheck_stream_order"],
    ),
    Mutant(
        "order-thread-not-forgotten",
        SO,
        "  if (hosts_.erase(thread) != 0) changed();",
        "  (void)thread;",
        "an exited thread's host waits pass to a new thread of its id",
        ["streamcheck_stream_order", "streamcheck_checker"],
    ),
    Mutant(
        "order-empty-current-orders-default",
        CK,
        "on_default ? j.implicit || (j.ordered && j.current_has_work)",
        "on_default ? j.implicit || j.ordered",
        "a default stream counts as ordered with an empty current stream",
        ["streamcheck_checker"],
    ),
    Mutant(
        "order-library-streams-judged",
        CK,
        " : j.ordered || j.library_stream)",
        " : j.ordered) return verdict::fine;",
        "a library's own streams are judged",
        ["streamcheck_checker"],
    ),
    Mutant(
        "order-strict-ignored",
        CK,
        "  if (!options_.strict_stream) {\n    // A default stream stays",
        "  if (true) {\n    // A default stream stays",
        "wrong-stream=strict judges by order",
        ["streamcheck_checker"],
    ),
    Mutant(
        "order-failed-sync-orders",
        CK,
        "  if (!options_.wrong_stream || !e.succeeded) return;",
        "  if (!options_.wrong_stream) return;",
        "a failed synchronization orders the host",
        ["streamcheck_checker"],
    ),
    # --- the current stream: which answer wins, restore, versions, devices --------------------------
    Mutant(
        "current-package-before-frameworks",
        CR,
        "[](const provider& a, const provider& b) { return a.table.priority < b.table.priority; });",
        "[](const provider& a, const provider& b) { return a.table.priority > b.table.priority; });",
        "the registry orders providers by falling priority: streamlike's own answers before torch's",
        ["current_stream"],
    ),
    Mutant(
        "current-provider-major-any",
        CR,
        "  } else if (provider.major_version != known) {",
        "  } else if (false) {",
        "register_current_stream_provider accepts a provider table of another major version",
        ["current_stream"],
    ),
    Mutant(
        "current-registry-major-any",
        SH,
        "  if (h.major_version != STREAMLIKE_CURRENT_STREAM_REGISTRY_MAJOR_VERSION) {",
        "  if (false) {",
        "a copy uses a published registry of another major version",
        ["current_stream_shared_another_major"],
    ),
    Mutant(
        "current-framework-block-ignored",
        CS,
        "      by = static_cast<std::ptrdiff_t>(i);\n      return now;\n",
        "      (void)now;\n",
        "inside a scope, a framework block opened inside it no longer wins (the scope's stream answers)",
        ["current_stream"],
    ),
    Mutant(
        "current-outer-scope-answers",
        "src/current_stream_scope.hpp",
        "  for (const saved_streams* s = mine.innermost_scope; s != nullptr; s = s->outer)\n"
        "    if (s->device == device) return s;\n  return nullptr;",
        "  const saved_streams* found = nullptr;\n"
        "  for (const saved_streams* s = mine.innermost_scope; s != nullptr; s = s->outer)\n"
        "    if (s->device == device) found = s;\n  return found;",
        "the outermost open scope on a device answers, not the innermost",
        ["current_stream"],
    ),
    Mutant(
        "current-restore-by-published-list",
        "src/scoped_current_stream.cpp",
        "    const provider& p = saved.list->entries[i];",
        "    const provider& p = providers().entries[std::min(i, providers().entries.size() - 1)];",
        "a scope restores through the providers registered now, not the ones it set",
        ["current_stream"],
    ),
    Mutant(
        "current-stream-of-another-device",
        "src/scoped_current_stream.cpp",
        "if (const int own = current::device_of_or(stream, device_); own != device_) {",
        "if (const int own = current::device_of_or(stream, device_); false) {",
        "scoped_current_stream makes a stream current on a device it does not belong to",
        ["current_stream"],
    ),
    Mutant(
        "current-device-below-minus-one",
        "src/current_stream_registry.hpp",
        "  if (device != -1) throw_bad_device(device, operation);",
        "",
        "a device below -1 is read as the current device",
        ["current_stream"],
    ),
    # --- partitions (src/partition.cpp, src/stream_pool.cpp) ----------------------------------------
    Mutant(
        "get-for-plain-sub-pool",
        SP,
        "shared_stream::create({.priority = priority_, .partition = on})",
        "shared_stream::create({.priority = priority_})",
        "get_for's sub-pool streams are made outside the caller's partition (plain streams)",
        ["partition"],
    ),
    Mutant(
        "get-for-priority-dropped",
        SP,
        "shared_stream::create({.priority = priority_, .partition = on})",
        "shared_stream::create({.partition = on})",
        "get_for's sub-pools have the default priority, not the pool's",
        ["partition"],
    ),
    Mutant(
        "get-for-other-device-accepted",
        SP,
        "  if (on.device() != device_) check_device_of(caller, &on); // throws, naming the device\n",
        "",
        "get_for makes a sub-pool for a green stream of another device than the pool's",
        ["partition"],
    ),
    Mutant(
        "get-for-dead-sub-pool-kept",
        SP,
        "if (known->borrowed && !detail::green_context_alive(known->green_context, known->context_id)) {",
        "if (false) {",
        "a borrowed sub-pool whose green context is gone is kept, with its streams",
        ["partition"],
    ),
    Mutant(
        "get-for-by-green-handle",
        PT,
        "      if (auto live = it->second.lock()) return partition_access::make(std::move(live));\n"
        "    }\n  }\n  return partition::borrow(green_context);",
        "      if (auto live = it->second.lock()) return partition_access::make(std::move(live));\n"
        "    }\n    for (const auto& [id, weak] : registry())\n"
        "      if (auto live = weak.lock(); live && live->green == green_context)\n"
        "        return partition_access::make(live);\n"
        "  }\n  return partition::borrow(green_context);",
        "get_for takes the live partition of the caller's green context handle, even of a destroyed one's id",
        ["partition"],
    ),
    Mutant(
        "partition-of-device-sms",
        PT,
        "    detail::check(detail::require(drv.green_ctx_get_dev_resource, who,\n"
        '                                  "cuGreenCtxGetDevResource")(green, &sms, CU_DEV_RESOURCE_TYPE_SM),\n'
        '                  who, "cuGreenCtxGetDevResource");\n  } else if',
        "    detail::check(drv.device_get_dev_resource(device, &sms, CU_DEV_RESOURCE_TYPE_SM), who,\n"
        '                  "cuDeviceGetDevResource");\n  } else if',
        "partition_of reports every SM of the device for a green stream, not its green context's",
        ["partition"],
    ),
    Mutant(
        "partition-equal-by-owner",
        "include/streamlike/partition.hpp",
        "{ return a.id_or_zero() == b.id_or_zero(); }",
        "{ return a.state_ == b.state_; }",
        "partitions compare equal only as copies of one owner, not by context id",
        ["partition"],
    ),
    # --- the package's Python files (python/streamlike/) ---------------------------------------------
    Mutant(
        "package-stub-drops-name",
        "python/streamlike/__init__.pyi",
        '    "wait_external",\n]',
        "]",
        "the type stub's __all__ leaves out a name the package exports",
        ["package-names"],
    ),
    Mutant(
        "package-all-unsorted",
        "python/streamlike/__init__.py",
        '    "wait",\n    "wait_external",\n]',
        '    "wait_external",\n    "wait",\n]',
        "the package's __all__ in another order than the stub's",
        ["package-names"],
    ),
    # --- the fake CUDA the host tests run against (test/fake_cuda/) ------------------------------
    Mutant(
        "fake-getters-never-invalidate",
        "test/fake_cuda/fake_cuda_model.hpp",
        "  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);\n"
        "  if (f.unsafe_on(*s, name)) return fail(cudaErrorStreamCaptureUnsupported);\n"
        "  if (out == nullptr)",
        "  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle);\n  if (out == nullptr)",
        "the fake's cudaStreamGetId/Flags/Device answer on a capturing stream (CUDA invalidates it)",
        ["capture_safety"],
    ),
    Mutant(
        "fake-record-forgets-capture",
        "test/fake_cuda/fake_cuda_model.cpp",
        "  e->second.capture_id = s->status == fake_cuda_active ? s->capture_id : 0;",
        "  e->second.capture_id = 0;",
        "the fake's event record forgets the capture (a capturing stream then waits on it unrefused)",
        ["event_capture_safety"],
    ),
    Mutant(
        "fake-driver-never-capturing",
        "test/fake_cuda/fake_cuda_driver.cpp",
        '  f.count("cuStreamIsCapturing");\n  stream_state* s = f.find(stream);\n'
        "  if (s == nullptr || status == nullptr) return CUDA_ERROR_INVALID_HANDLE;\n"
        "  *status = static_cast<CUstreamCaptureStatus>(s->status);",
        '  f.count("cuStreamIsCapturing");\n  stream_state* s = f.find(stream);\n'
        "  if (s == nullptr || status == nullptr) return CUDA_ERROR_INVALID_HANDLE;\n"
        "  *status = CU_STREAM_CAPTURE_STATUS_NONE;",
        "the fake's cuStreamIsCapturing says no stream ever captures",
        ["capture_safety"],
    ),
    # --- one home for the device count and the current device, and the facts' errors ----------------
    Mutant(
        "device-asked-outside-home",
        "src/device_guard.cpp",
        '  previous_ = detail::devices::current("device_guard");',
        '  detail::throw_if_error(cudaGetDevice(&previous_), "device_guard: cudaGetDevice");',
        "device_guard asks cudaGetDevice itself again, not through src/devices.hpp",
        ["device_home"],
    ),
    Mutant(
        "device-count-not-remembered",
        "src/devices.cpp",
        "    remembered_count.store(answer.count, std::memory_order_relaxed);",
        "    (void)answer;",
        "the device count is asked of CUDA on every check of a named device",
        ["devices"],
    ),
    Mutant(
        "device-count-runtime-first",
        "src/devices.cpp",
        "  if (const auto get_count = driver::get().device_get_count) {",
        "  if (const auto get_count = driver::get().device_get_count; false) {",
        "the device count is asked of the runtime, not of the driver first",
        ["devices"],
    ),
    Mutant(
        "device-absence-not-remembered",
        "src/devices.cpp",
        "    remembered_absence.store(answer.error, std::memory_order_relaxed);",
        "    (void)answer;",
        "CUDA's absence is asked again on every check of a named device (current_stream(device) too)",
        ["devices_without_a_device", "devices_without_a_driver"],
    ),
    Mutant(
        "facts-error-unnamed",
        "src/stream_lifecycle.cpp",
        '      throw_error_of(code, type, std::string(operation) + ": " + call);',
        "      throw_if_error(code, call);",
        "a failed facts query no longer names the operation that asked (shared_stream::device)",
        ["shared_stream"],
    ),
]
