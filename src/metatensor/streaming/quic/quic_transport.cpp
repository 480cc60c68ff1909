// The client side of the QUIC protocol (spec 06 §10.2–§10.6) as a
// `transport` for `remote_file`.
//
// Control stream: OPEN, then OPENED and HEADER (or ERROR) — `open` waits for
// them.  Each request gets its own client bidirectional stream: GET + FIN out;
// RESPONSE, DATA, FIN in.  The DATA payload is not buffered: its bytes are
// copied into the request's destination as they arrive, after the frame's
// type and length have been checked against the request (§10.4 step 3).
//
// Everything below runs on the QUIC engine's loop thread except `open`,
// `start`, `update_priority`, `cancel` and `close`, which post work to it.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quic_engine.hpp"
#include "send_queue.hpp"
#include "src/metatensor/streaming/transport.hpp"
#include "tensogram/core/error.hpp"

namespace metatensor::streaming::detail {

namespace {

constexpr std::int64_t control_stream_id = 0;

std::exception_ptr closed_error(std::uint64_t app_error, const std::string& reason, bool by_peer) {
  if (app_error != 0) {
    const auto code = stream_errc_from(app_error);
    return std::make_exception_ptr(
        protocol_error(code, std::string("connection closed") + (by_peer ? " by the server" : "") + " with " +
                                 stream_errc_name(app_error) + (reason.empty() ? "" : ": " + reason)));
  }
  return std::make_exception_ptr(tensogram::remote_error(std::string("connection closed") +
                                                         (by_peer ? " by the server" : "") +
                                                         (reason.empty() ? "" : ": " + reason)));
}

// One tensor stream: the GET going out, the receiver writing what comes in
// straight into the request's destination.
struct tensor_stream {
  transport_request request;
  tensor_stream_receiver receiver;
  send_queue out;
  bool finished = false;  // reported to the listener (complete, failed or cancelled)
};

class quic_transport final : public transport, private quic::connection_handler {
 public:
  quic_transport(remote_url url, client_options options, transport_listener& listener)
      : url_(std::move(url)), options_(std::move(options)), listener_(listener) {}

  ~quic_transport() override { close(stream_errc::no_error, "closed"); }

  opened_file open() override {
    quic::client_config config;
    config.host = url_.host;
    config.port = url_.port;
    config.server_name = options_.server_name.empty() ? url_.host : options_.server_name;
    config.verify_peer = options_.verify_peer;
    config.ca_file = options_.ca_file;
    endpoint_ = std::make_unique<quic::client_endpoint>(std::move(config),
                                                        static_cast<quic::connection_handler&>(*this));
    std::unique_lock lock(open_mutex_);
    if (!open_cv_.wait_for(lock, options_.open_timeout, [&] { return open_done_; })) {
      lock.unlock();
      close(stream_errc::no_error, "timed out");
      throw tensogram::timeout_error(url_.text + ": no header within " +
                                     std::to_string(options_.open_timeout.count()) + " ms");
    }
    if (open_error_) {
      const auto e = open_error_;
      lock.unlock();
      close(stream_errc::no_error, "open failed");
      std::rethrow_exception(e);
    }
    return std::move(opened_);
  }

  void start(transport_request request) override {
    post([this, r = std::move(request)](quic::connection& c) mutable {
      waiting_.push_back(std::move(r));
      launch_waiting(c);
    });
  }

  void update_priority(std::uint64_t id, stream_priority p) override {
    post([this, id, p](quic::connection& c) {
      for (auto& w : waiting_) {
        if (w.id == id) {
          w.get.urgency = p.urgency;
          w.get.incremental = p.incremental;
          return;
        }
      }
      const auto it = stream_of_.find(id);
      if (it == stream_of_.end()) return;
      queue_control(c, encode(priority_update_payload{static_cast<std::uint64_t>(it->second), p.urgency,
                                                      p.incremental}));
    });
  }

  void cancel(std::uint64_t id) override {
    post([this, id](quic::connection& c) {
      for (auto w = waiting_.begin(); w != waiting_.end(); ++w) {
        if (w->id == id) {
          waiting_.erase(w);
          listener_.on_cancelled(id);
          return;
        }
      }
      const auto it = stream_of_.find(id);
      if (it == stream_of_.end()) return;
      auto s = streams_.find(it->second);
      if (s == streams_.end() || s->second.finished) return;
      // §10.4 cancellation: STOP_SENDING with MT_CANCELLED; the server
      // answers with RESET_STREAM, which needs no waiting here.
      c.stop_sending(it->second, static_cast<std::uint64_t>(stream_errc::cancelled));
      if (!s->second.out.done())
        c.reset_stream(it->second, static_cast<std::uint64_t>(stream_errc::cancelled));
      s->second.finished = true;
      listener_.on_cancelled(id);
    });
  }

  void close(stream_errc code, std::string_view reason) override {
    std::unique_ptr<quic::client_endpoint> endpoint;
    {
      std::lock_guard lock(close_mutex_);
      if (!endpoint_) return;
      closing_ = true;
      endpoint = std::move(endpoint_);
    }
    endpoint->post([code, r = std::string(reason)](quic::connection& c) {
      c.close(static_cast<std::uint64_t>(code), r);
    });
    endpoint.reset();  // joins the loop thread: no listener call after this
  }

 private:
  void post(std::function<void(quic::connection&)> task) {
    std::lock_guard lock(close_mutex_);
    if (endpoint_) endpoint_->post(std::move(task));
  }

  // ---- open (§10.4 control steps 1–2) ------------------------------------------

  void finish_open(std::exception_ptr error) {
    {
      std::lock_guard lock(open_mutex_);
      if (open_done_) return;
      open_done_ = true;
      open_error_ = std::move(error);
    }
    open_cv_.notify_all();
  }

  void on_handshake_completed(quic::connection& c) override {
    const auto id = c.open_bidi_stream();
    if (!id || *id != control_stream_id) {
      finish_open(std::make_exception_ptr(tensogram::remote_error("cannot open the control stream")));
      c.close(static_cast<std::uint64_t>(stream_errc::internal_error), "no control stream");
      return;
    }
    queue_control(c, encode(open_payload{url_.resource, {"1"}}));
  }

  void queue_control(quic::connection& c, std::vector<std::byte> frame) {
    control_out_.owned.push_back(std::move(frame));
    c.want_write();
  }

  void on_control(quic::connection& c, std::span<const std::byte> data, bool fin) {
    control_in_.feed(data);
    while (auto f = control_in_.next()) {
      if (f->type == frame_type::error) {
        const auto e = parse_error(f->payload);
        const auto code = stream_errc_from(e.code);
        throw protocol_error(code, "server error " + stream_errc_name(e.code) + ": " + e.message);
      }
      switch (state_) {
        case state::awaiting_opened: {
          if (f->type != frame_type::opened) {
            throw protocol_error(stream_errc::protocol_error,
                                 std::string(frame_type_name(f->type)) + " where OPENED was expected");
          }
          opened_.info = parse_opened(f->payload);
          if (opened_.info.version != "1") {
            throw protocol_error(stream_errc::version_mismatch,
                                 "server chose version " + opened_.info.version);
          }
          // §2 rule 2 / §8.4: a header is at most 100,000,000 bytes.
          if (opened_.info.header_size < 8 || opened_.info.header_size - 8 > safetensors::max_header_length ||
              opened_.info.header_size > opened_.info.file_size) {
            throw protocol_error(stream_errc::limit_exceeded,
                                 "OPENED announces a header of " + std::to_string(opened_.info.header_size) +
                                     " bytes in a file of " + std::to_string(opened_.info.file_size));
          }
          control_in_.expect_payload_limit(opened_.info.header_size);
          state_ = state::awaiting_header;
          break;
        }
        case state::awaiting_header: {
          if (f->type != frame_type::header) {
            throw protocol_error(stream_errc::protocol_error,
                                 std::string(frame_type_name(f->type)) + " where HEADER was expected");
          }
          if (f->payload.size() != opened_.info.header_size) {
            throw protocol_error(stream_errc::protocol_error,
                                 "HEADER of " + std::to_string(f->payload.size()) +
                                     " bytes, OPENED announced " + std::to_string(opened_.info.header_size));
          }
          opened_.header = std::move(f->payload);
          state_ = state::ready;
          finish_open(nullptr);
          break;
        }
        case state::ready: {
          if (f->type == frame_type::goaway) {
            goaway_ = parse_goaway(f->payload).last_stream;
            break;
          }
          throw protocol_error(stream_errc::protocol_error,
                               std::string(frame_type_name(f->type)) + " on the control stream after HEADER");
        }
        case state::closed: return;
      }
    }
    if (fin) throw protocol_error(stream_errc::protocol_error, "the server closed the control stream");
    (void)c;
  }

  // ---- requests ----------------------------------------------------------------------

  void launch_waiting(quic::connection& c) {
    while (!waiting_.empty() && state_ == state::ready) {
      const auto id = c.open_bidi_stream();
      if (!id) return;  // stream credit exhausted: retried when a stream closes
      transport_request r = std::move(waiting_.front());
      waiting_.pop_front();
      if (goaway_ && static_cast<std::uint64_t>(*id) > *goaway_) {
        listener_.on_failed(r.id, std::make_exception_ptr(tensogram::remote_error(
                                      "the server is going away (GOAWAY) and serves no new requests")));
        c.reset_stream(*id, static_cast<std::uint64_t>(stream_errc::cancelled));
        continue;
      }
      try {
        tensor_stream s{r,
                        tensor_stream_receiver(r.get, r.tensor_offset, r.tensor_size, r.destination, r.file),
                        {},
                        false};
        s.out.owned.push_back(encode(r.get));
        s.out.fin_queued = true;  // §10.4 tensor stream step 1: GET, then FIN
        stream_of_[r.id] = *id;
        streams_.emplace(*id, std::move(s));
      } catch (...) {
        listener_.on_failed(r.id, std::current_exception());
        c.reset_stream(*id, static_cast<std::uint64_t>(stream_errc::cancelled));
        continue;
      }
    }
    c.want_write();
  }

  void fail_stream(tensor_stream& s, std::exception_ptr e) {
    if (s.finished) return;
    s.finished = true;
    listener_.on_failed(s.request.id, std::move(e));
  }

  void on_tensor_data(quic::connection& c, std::int64_t id, std::span<const std::byte> data, bool fin) {
    auto it = streams_.find(id);
    if (it == streams_.end()) return;  // a stream we already gave up on
    tensor_stream& s = it->second;
    if (s.finished) return;
    try {
      if (!data.empty()) {
        s.receiver.feed(data);
        listener_.on_progress(s.request.id, s.receiver.data_received());
      }
      if (fin) {
        s.receiver.finish();
        s.finished = true;
        listener_.on_complete(s.request.id);
      }
    } catch (const protocol_error& e) {
      fail_stream(s, std::current_exception());
      // An ERROR from the server answers this request alone; any other
      // violation of §10.4 is a connection error (§10.3).
      if (!s.receiver.refused()) c.close(static_cast<std::uint64_t>(e.code()), e.what());
    } catch (const tensogram::io_error&) {
      // The destination file could not be written (client_options::image_fd):
      // this request fails, the server stops sending it (§10.6).
      fail_stream(s, std::current_exception());
      c.stop_sending(id, static_cast<std::uint64_t>(stream_errc::cancelled));
    }
  }

  // ---- connection_handler ------------------------------------------------------------

  void on_stream_opened(quic::connection& c, std::int64_t id) override {
    // §10.2: servers open no streams in version 1.
    if (id % 2 == 1) {
      c.close(static_cast<std::uint64_t>(stream_errc::protocol_error), "the server opened a stream");
    }
  }

  void on_stream_data(quic::connection& c, std::int64_t id, std::span<const std::byte> data,
                      bool fin) override {
    if (id != control_stream_id) return on_tensor_data(c, id, data, fin);
    try {
      on_control(c, data, fin);
    } catch (const protocol_error& e) {
      finish_open(std::current_exception());
      c.close(static_cast<std::uint64_t>(e.code()), e.what());
    }
  }

  void on_stream_reset(quic::connection& c, std::int64_t id, std::uint64_t app_error) override {
    if (id == control_stream_id) {
      c.close(static_cast<std::uint64_t>(stream_errc::protocol_error), "the server reset the control stream");
      return;
    }
    auto it = streams_.find(id);
    if (it == streams_.end() || it->second.finished) return;
    const auto code = stream_errc_from(app_error);
    fail_stream(it->second, std::make_exception_ptr(protocol_error(
                                code, "tensor stream for \"" + it->second.request.get.tensor +
                                          "\" reset by the server with " + stream_errc_name(app_error))));
  }

  void on_stop_sending(quic::connection&, std::int64_t, std::uint64_t) override {}

  void on_stream_closed(quic::connection& c, std::int64_t id, std::uint64_t) override {
    auto it = streams_.find(id);
    if (it == streams_.end()) return;
    if (!it->second.finished) {
      fail_stream(it->second,
                  std::make_exception_ptr(protocol_error(
                      stream_errc::protocol_error,
                      "tensor stream for \"" + it->second.request.get.tensor + "\" closed early")));
    }
    stream_of_.erase(it->second.request.id);
    streams_.erase(it);
    launch_waiting(c);
  }

  std::optional<quic::outgoing> next_outgoing(quic::connection&) override {
    if (!control_out_.done()) return control_out_.next(control_stream_id);
    for (auto& [id, s] : streams_) {
      if (!s.out.done() && !s.finished) return s.out.next(id);
    }
    return std::nullopt;
  }

  void on_sent(quic::connection&, std::int64_t id, std::size_t bytes, bool fin_sent) override {
    if (id == control_stream_id) return control_out_.consume(bytes, fin_sent);
    if (auto it = streams_.find(id); it != streams_.end()) it->second.out.consume(bytes, fin_sent);
  }

  void on_stream_blocked(quic::connection&, std::int64_t) override {}
  void on_stream_credit(quic::connection& c) override { launch_waiting(c); }
  void on_stream_unblocked(quic::connection& c, std::int64_t) override { c.want_write(); }

  void on_closed(quic::connection&, std::uint64_t app_error, const std::string& reason,
                 bool by_peer) override {
    const auto error = closed_error(app_error, reason, by_peer);
    finish_open(error);
    state_ = state::closed;
    if (!closing_) listener_.on_connection_lost(error);
  }

  enum class state { awaiting_opened, awaiting_header, ready, closed };

  remote_url url_;
  client_options options_;
  transport_listener& listener_;

  std::mutex close_mutex_;  // guards endpoint_ against close() racing post()
  std::unique_ptr<quic::client_endpoint> endpoint_;
  std::atomic<bool> closing_ = false;

  std::mutex open_mutex_;
  std::condition_variable open_cv_;
  bool open_done_ = false;
  std::exception_ptr open_error_;
  opened_file opened_;

  // Loop-thread state.
  state state_ = state::awaiting_opened;
  frame_reader control_in_{max_control_json};
  send_queue control_out_;
  std::optional<std::uint64_t> goaway_;
  std::deque<transport_request> waiting_;
  std::map<std::int64_t, tensor_stream> streams_;
  std::map<std::uint64_t, std::int64_t> stream_of_;  // request id -> stream id
};

}  // namespace

std::unique_ptr<transport> make_quic_transport(const remote_url& url, const client_options& options,
                                               transport_listener& listener) {
  return std::make_unique<quic_transport>(url, options, listener);
}

}  // namespace metatensor::streaming::detail
