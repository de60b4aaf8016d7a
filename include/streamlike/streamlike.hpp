// streamlike/streamlike.hpp: the whole core vocabulary. Adapters (streamlike/adapters/) and the
// Python casters (streamlike/python/) are opt-in and included on their own.
#ifndef STREAMLIKE_STREAMLIKE_HPP
#define STREAMLIKE_STREAMLIKE_HPP

#include <streamlike/capture.hpp>
#include <streamlike/capture_state.hpp>
#include <streamlike/config.hpp>
#include <streamlike/current_stream.hpp>
#include <streamlike/current_stream_check.hpp>
#include <streamlike/current_stream_providers.hpp>
#include <streamlike/default_stream.hpp>
#include <streamlike/device_guard.hpp>
#include <streamlike/disable_stream_like.hpp>
#include <streamlike/enable_stream_owner.hpp>
#include <streamlike/error.hpp>
#include <streamlike/event.hpp>
#include <streamlike/export_stream.hpp>
#include <streamlike/get_stream.hpp>
#include <streamlike/graph.hpp>
#include <streamlike/ordering.hpp>
#include <streamlike/partition.hpp>
#include <streamlike/retain_until_done.hpp>
#include <streamlike/shared_stream.hpp>
#include <streamlike/stream_encodings.hpp>
#include <streamlike/stream_exporter.hpp>
#include <streamlike/stream_like.hpp>
#include <streamlike/stream_options.hpp>
#include <streamlike/stream_owner.hpp>
#include <streamlike/stream_pool.hpp>
#include <streamlike/stream_view.hpp>
#include <streamlike/tag_invoke.hpp>
#include <streamlike/unique_stream.hpp>

#endif // STREAMLIKE_STREAMLIKE_HPP
