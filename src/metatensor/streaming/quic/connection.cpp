#include "connection.hpp"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "tensogram/core/error.hpp"

namespace metatensor::streaming::quic::detail {

void random_bytes(std::uint8_t* dest, std::size_t n) noexcept {
  // GNUTLS_RND_NONCE: unpredictable, not key material (CIDs, tokens).
  if (gnutls_rnd(GNUTLS_RND_NONCE, dest, n) != 0) {
    // Practically unreachable; CIDs then merely lose unpredictability.
    for (std::size_t i = 0; i < n; ++i) dest[i] = static_cast<std::uint8_t>(now_ns() >> (i % 8));
  }
}

bool reset_token_for(std::span<const std::uint8_t> secret, const ngtcp2_cid& cid,
                     std::uint8_t (&token)[NGTCP2_STATELESS_RESET_TOKENLEN]) noexcept {
  return !secret.empty() &&
         ngtcp2_crypto_generate_stateless_reset_token(token, secret.data(), secret.size(), &cid) == 0;
}

ngtcp2_cid random_cid() noexcept {
  ngtcp2_cid cid{};
  cid.datalen = cid_length;
  random_bytes(cid.data, cid_length);
  return cid;
}

conn_impl::conn_impl(endpoint_base& ep, session_ptr session, const transport_setup& setup)
    : ep_(ep),
      session_(std::move(session)),
      local_(setup.local),
      remote_(setup.remote),
      server_(setup.server),
      hold_credit_(setup.hold_credit),
      reset_secret_(setup.reset_secret.begin(), setup.reset_secret.end()) {
  payload_ = is_loopback(setup.remote.sa()) ? loopback_payload : network_payload;

  ngtcp2_callbacks cb{};
  if (server_) {
    cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  } else {
    cb.client_initial = ngtcp2_crypto_client_initial_cb;
    cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
    cb.recv_stateless_reset = &conn_impl::cb_recv_stateless_reset;
  }
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  cb.handshake_completed = &conn_impl::cb_handshake_completed;
  cb.handshake_confirmed = &conn_impl::cb_handshake_confirmed;
  cb.recv_stream_data = &conn_impl::cb_recv_stream_data;
  cb.stream_open = &conn_impl::cb_stream_open;
  cb.stream_close = &conn_impl::cb_stream_close;
  cb.stream_reset = &conn_impl::cb_stream_reset;
  cb.extend_max_stream_data = &conn_impl::cb_extend_max_stream_data;
  cb.extend_max_local_streams_bidi = &conn_impl::cb_extend_max_local_streams_bidi;
  cb.rand = &conn_impl::cb_rand;
  cb.get_new_connection_id = &conn_impl::cb_get_new_connection_id;
  cb.remove_connection_id = &conn_impl::cb_remove_connection_id;

  const ngtcp2_tstamp ts = now_ns();
  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = ts;
  settings.cc_algo = NGTCP2_CC_ALGO_CUBIC;
  settings.max_tx_udp_payload_size = payload_;
  if (payload_ == loopback_payload) {
    // Loopback: no path MTU to discover; send the large datagrams from
    // the start (bounded by the peer's max_udp_payload_size).  BBR keeps
    // the pipe full where CUBIC backs off on the occasional overflow of
    // a socket buffer (measured 1.3 GB/s against 1 GB/s).
    settings.no_tx_udp_payload_size_shaping = 1;
    settings.no_pmtud = 1;
    settings.cc_algo = NGTCP2_CC_ALGO_BBR;
  }
  const auto hs = to_ns(setup.limits.handshake_timeout);
  settings.handshake_timeout = hs == 0 ? UINT64_MAX : hs;
  handshake_deadline_ = hs == 0 ? UINT64_MAX : ts + hs;
  if (!setup.token.empty()) {
    // RFC 9000 §8.1: the validated token (ngtcp2 copies it).
    settings.token.base = const_cast<std::uint8_t*>(setup.token.data());
    settings.token.len = setup.token.size();
  }

  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  // §10.8 windows; §10.2: only client-initiated bidirectional streams, so
  // the client grants none to the server and nobody grants uni streams
  // (a peer exceeding them gets STREAM_LIMIT_ERROR, RFC 9000 §4.6).
  params.initial_max_stream_data_bidi_local = setup.limits.stream_window;
  params.initial_max_stream_data_bidi_remote = setup.limits.stream_window;
  params.initial_max_stream_data_uni = 0;
  params.initial_max_data = setup.limits.connection_window;
  params.initial_max_streams_bidi = server_ ? setup.limits.max_bidi_streams : 0;
  params.initial_max_streams_uni = 0;
  params.max_idle_timeout = to_ns(setup.limits.idle_timeout);
  if (server_) {
    params.original_dcid = setup.original_dcid;
    if (setup.retry_scid) {
      params.retry_scid = *setup.retry_scid;
      params.retry_scid_present = 1;
    }
    // The token of the CID of the handshake (RFC 9000 §18.2), so that a
    // client hears a stateless reset for it too.
    params.stateless_reset_token_present =
        reset_token_for(reset_secret_, setup.scid, params.stateless_reset_token) ? 1 : 0;
  }

  ngtcp2_path path{{const_cast<sockaddr*>(local_.sa()), local_.len},
                   {const_cast<sockaddr*>(remote_.sa()), remote_.len},
                   nullptr};
  ngtcp2_conn* raw = nullptr;
  const int rv = server_ ? ngtcp2_conn_server_new(&raw, &setup.dcid, &setup.scid, &path, setup.version, &cb,
                                                  &settings, &params, nullptr, this)
                         : ngtcp2_conn_client_new(&raw, &setup.dcid, &setup.scid, &path, setup.version, &cb,
                                                  &settings, &params, nullptr, this);
  if (rv != 0)
    throw tensogram::io_error(std::string("cannot create a QUIC connection: ") + ngtcp2_strerror(rv));
  conn_.reset(raw);

  conn_ref_.get_conn = [](ngtcp2_crypto_conn_ref* ref) -> ngtcp2_conn* {
    return static_cast<conn_impl*>(ref->user_data)->conn_.get();
  };
  conn_ref_.user_data = this;
  const int crv = server_ ? ngtcp2_crypto_gnutls_configure_server_session(session_.get())
                          : ngtcp2_crypto_gnutls_configure_client_session(session_.get());
  if (crv != 0) throw tensogram::io_error("cannot configure the TLS session for QUIC");
  gnutls_session_set_ptr(session_.get(), &conn_ref_);
  ngtcp2_conn_set_tls_native_handle(conn_.get(), session_.get());
}

conn_impl::~conn_impl() {
  // The session refers to conn_ref_ and the connection to the session's
  // keys; both go together, the connection first (its deleters of crypto
  // contexts do not touch the session).
  conn_.reset();
  session_.reset();
}

void conn_impl::own_handler(std::unique_ptr<connection_handler> h) noexcept {
  owned_handler_ = std::move(h);
  handler_ = owned_handler_.get();
}

std::optional<std::int64_t> conn_impl::open_bidi_stream() {
  if (state_ != state::open) return std::nullopt;
  std::int64_t id = -1;
  if (ngtcp2_conn_open_bidi_stream(conn_.get(), &id, nullptr) != 0) return std::nullopt;
  streams_.try_emplace(id);
  return id;
}

void conn_impl::stop_sending(std::int64_t stream_id, std::uint64_t app_error) {
  if (state_ != state::open) return;
  deferred_.push_back({op::stop_sending, stream_id, app_error, {}});
  if (busy_ == 0) apply_deferred();
}

void conn_impl::reset_stream(std::int64_t stream_id, std::uint64_t app_error) {
  if (state_ != state::open) return;
  deferred_.push_back({op::reset, stream_id, app_error, {}});
  if (busy_ == 0) apply_deferred();
}

void conn_impl::close(std::uint64_t app_error, std::string_view reason) {
  if (state_ != state::open) return;
  deferred_.push_back({op::close, -1, app_error, std::string(reason)});
  if (busy_ == 0) apply_deferred();
}

void conn_impl::receive(const std::uint8_t* data, std::size_t len, const sockaddr* from, socklen_t from_len,
                        ngtcp2_tstamp ts) {
  if (state_ == state::closing) {
    // RFC 9000 §10.2.1: answer packets in the closing state with the
    // CONNECTION_CLOSE again, at a decreasing rate.
    ++packets_while_closing_;
    if ((packets_while_closing_ & (packets_while_closing_ - 1)) == 0 && !close_packet_.empty()) {
      ep_.io().send_one(close_packet_.data(), close_packet_.size(), ep_.connected_socket() ? nullptr : from,
                        from_len);
    }
    return;
  }
  if (state_ != state::open) return;
  address remote;
  remote.assign(from, from_len);
  ngtcp2_path path{{const_cast<sockaddr*>(local_.sa()), local_.len}, {remote.sa(), remote.len}, nullptr};
  ngtcp2_pkt_info pi{};
  int rv = 0;
  {
    busy_scope busy(*this);
    rv = ngtcp2_conn_read_pkt(conn_.get(), &path, &pi, data, len, ts);
  }
  if (rv != 0) {
    on_ngtcp2_error(rv, ts);
    return;
  }
  apply_deferred();
}

ngtcp2_tstamp conn_impl::deadline() const noexcept {
  switch (state_) {
    case state::open:
      if (write_wanted_) return 0;
      // ngtcp2 checks the handshake timeout only when one of its timers
      // fires, and a server blocked by the anti-amplification limit (RFC
      // 9000 §8.1: a client that never answers) arms none before the idle
      // timeout: the deadline is ours to keep.
      return std::min(ngtcp2_conn_get_expiry(conn_.get()),
                      handshake_done_ ? UINT64_MAX : handshake_deadline_);
    case state::closing:
    case state::draining: return close_deadline_;
    case state::dead: break;
  }
  return UINT64_MAX;
}

void conn_impl::on_timer(ngtcp2_tstamp ts) {
  if (state_ == state::closing || state_ == state::draining) {
    if (ts >= close_deadline_) state_ = state::dead;
    return;
  }
  if (state_ != state::open) return;
  if (!handshake_done_ && ts >= handshake_deadline_) {
    on_ngtcp2_error(NGTCP2_ERR_HANDSHAKE_TIMEOUT, ts);
    return;
  }
  if (ts < ngtcp2_conn_get_expiry(conn_.get())) return;
  int rv = 0;
  {
    busy_scope busy(*this);
    rv = ngtcp2_conn_handle_expiry(conn_.get(), ts);
  }
  if (rv != 0) {
    on_ngtcp2_error(rv, ts);
    return;
  }
  apply_deferred();
}

void conn_impl::write(ngtcp2_tstamp ts) {
  write_wanted_ = false;
  if (state_ != state::open) return;
  apply_deferred();
  if (state_ != state::open) return;

  std::array<std::size_t, tx_batch> sizes{};
  std::size_t count = 0;
  ngtcp2_path_storage ps;
  ngtcp2_path_storage_zero(&ps);
  ngtcp2_pkt_info pi{};
  // Until the handshake is confirmed, datagrams are at most 1200 bytes:
  // ngtcp2 pads every datagram that carries an Initial packet to the size
  // offered (RFC 9000 §14.1 asks for at least 1200 bytes), which with the
  // 32 KiB of loopback cost ~100 KB per connection before the first tensor
  // byte. Completion is not enough: a client's Handshake-level
  // acknowledgements and retransmissions continue until the server's
  // HANDSHAKE_DONE confirms it (RFC 9001 §4.1.2), and a datagram padded to
  // 32 KiB then still cost ~33 KB per connection.
  const std::size_t max_udp = handshake_confirmed_
                                  ? std::min(payload_, ngtcp2_conn_get_max_tx_udp_payload_size(conn_.get()))
                                  : std::min<std::size_t>(payload_, NGTCP2_MAX_UDP_PAYLOAD_SIZE);
  // Send at most a "send quantum" (the burst the congestion controller's
  // pacer allows) per pass; the pacer's next send time is part of
  // ngtcp2_conn_get_expiry, which brings the loop back.
  const std::size_t quantum = ngtcp2_conn_get_send_quantum(conn_.get());
  const std::size_t max_packets = std::clamp<std::size_t>(quantum / std::max<std::size_t>(max_udp, 1), 1, 64);
  std::size_t packets = 0;
  // A handler that keeps offering a stream the engine has just refused
  // would spin this loop; after this many refusals the pass stops asking.
  int refusals = 0;
  bool offer_data = true;
  bool failed = false;
  int fatal = 0;

  // The batch goes to one address; ngtcp2 names the path of every packet
  // (a probe during path validation, RFC 9000 §9, may go elsewhere).
  address batch_to;
  auto flush = [&] {
    if (count == 0) return;
    ep_.io().send(sizes.data(), count, ep_.connected_socket() ? nullptr : batch_to.sa(), batch_to.len);
    count = 0;
  };

  {
    busy_scope busy(*this);
    for (;;) {
      std::optional<outgoing> out;
      if (offer_data && handshake_done_) {
        if (!call_handler([&] { out = handler_->next_outgoing(*this); })) {
          failed = true;
          break;
        }
        if (out && out->stream_id < 0) out.reset();
      }
      ngtcp2_vec vec{};
      std::uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_NONE;
      std::int64_t sid = -1;
      if (out) {
        vec.base = reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(out->data.data()));
        vec.len = out->data.size();
        flags = NGTCP2_WRITE_STREAM_FLAG_MORE;
        if (out->fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
        sid = out->stream_id;
      }
      ngtcp2_ssize consumed = -1;
      const ngtcp2_ssize n =
          ngtcp2_conn_writev_stream(conn_.get(), &ps.path, &pi, ep_.io().slot(count), max_udp, &consumed,
                                    flags, sid, out ? &vec : nullptr, out ? 1 : 0, ts);
      if (n < 0) {
        if (n == NGTCP2_ERR_WRITE_MORE) {
          // The packet has room left: the data went in, ask for more.
          if (out && !report_sent(*out, consumed)) {
            failed = true;
            break;
          }
          continue;
        }
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR ||
            n == NGTCP2_ERR_STREAM_NOT_FOUND) {
          if (!refuse_stream(sid, static_cast<int>(n))) {
            failed = true;
            break;
          }
          if (++refusals > 64) offer_data = false;
          continue;
        }
        fatal = static_cast<int>(n);
        break;
      }
      if (out && consumed >= 0 && !report_sent(*out, consumed)) {
        failed = true;
        break;
      }
      if (n == 0) break;  // nothing to send, or congestion/flow-control limited
      // A packet without any of the offered data: either the peer's
      // connection-level window is used up (RFC 9000 §4.1; its MAX_DATA
      // brings the loop back) or the packet was full of other frames, and
      // then another pass follows at once.
      if (out && consumed < 0) {
        offer_data = false;
        if (ngtcp2_conn_get_max_data_left(conn_.get()) > 0) write_wanted_ = true;
      }
      const bool same_path =
          count == 0 || (batch_to.len == ps.path.remote.addrlen &&
                         std::memcmp(batch_to.sa(), ps.path.remote.addr, batch_to.len) == 0);
      if (!same_path) {
        const std::size_t pending = count;
        flush();
        std::memmove(ep_.io().slot(0), ep_.io().slot(pending), static_cast<std::size_t>(n));
      }
      if (count == 0) batch_to.assign(ps.path.remote.addr, ps.path.remote.addrlen);
      sizes[count++] = static_cast<std::size_t>(n);
      if (count == tx_batch) flush();
      if (++packets >= max_packets) {
        write_wanted_ = true;
        break;
      }
    }
    flush();
    ngtcp2_conn_update_pkt_tx_time(conn_.get(), ts);
  }
  if (failed) {
    close_with_app_error(mt_internal_error, "internal error: " + handler_error_, ts);
    return;
  }
  if (fatal != 0) {
    on_ngtcp2_error(fatal, ts);
    return;
  }
  apply_deferred();
}

void conn_impl::refused_before_handshake(const std::string& reason) {
  if (state_ != state::open || ngtcp2_conn_get_handshake_completed(conn_.get()) != 0) return;
  state_ = state::dead;
  report_closed(0, reason, false);
}

void conn_impl::shutdown(const std::string& reason) {
  if (state_ == state::open) close_with_app_error(0, reason, now_ns());
  state_ = state::dead;
}

bool conn_impl::report_sent(const outgoing& out, ngtcp2_ssize consumed) {
  const auto bytes = static_cast<std::size_t>(consumed);
  const bool fin_sent = out.fin && bytes == out.data.size();
  if (bytes == 0 && !fin_sent) return true;
  return call_handler([&] { handler_->on_sent(*this, out.stream_id, bytes, fin_sent); });
}

bool conn_impl::refuse_stream(std::int64_t sid, int why) {
  auto& st = streams_[sid];
  if (why == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
    // Stream-level flow control (RFC 9000 §4.1); extend_max_stream_data
    // unblocks it.
    if (st.blocked) return true;
    st.blocked = true;
    return call_handler([&] { handler_->on_stream_blocked(*this, sid); });
  }
  if (st.write_refused || st.local_reset) return true;
  // The write side is shut without our reset: the peer sent STOP_SENDING,
  // which ngtcp2 has already answered with RESET_STREAM (RFC 9000 §3.5).
  // The handler hears on_stop_sending, with the code, when the stream
  // closes; until then it is told the stream is blocked so that it stops
  // offering it.
  st.write_refused = true;
  if (st.blocked) return true;
  st.blocked = true;
  return call_handler([&] { handler_->on_stream_blocked(*this, sid); });
}

void conn_impl::apply_deferred() {
  if (busy_ != 0) return;
  while (!deferred_.empty() && state_ == state::open) {
    auto d = std::move(deferred_.front());
    deferred_.erase(deferred_.begin());
    switch (d.kind) {
      case op::stop_sending:
        streams_[d.stream_id].local_stop = true;
        (void)ngtcp2_conn_shutdown_stream_read(conn_.get(), d.stream_id, d.code);
        write_wanted_ = true;
        break;
      case op::reset:
        streams_[d.stream_id].local_reset = true;
        (void)ngtcp2_conn_shutdown_stream_write(conn_.get(), d.stream_id, d.code);
        write_wanted_ = true;
        break;
      case op::close: close_with_app_error(d.code, d.reason, now_ns()); break;
    }
  }
  if (state_ != state::open) deferred_.clear();
}

void conn_impl::report_closed(std::uint64_t app_error, const std::string& reason, bool by_peer) noexcept {
  if (reported_) return;
  reported_ = true;
  if (handler_ == nullptr) return;
  try {
    handler_->on_closed(*this, app_error, reason, by_peer);
  } catch (...) {
    // Nothing left to tell: the connection is over.
  }
}

ngtcp2_tstamp conn_impl::closing_period_end(ngtcp2_tstamp ts) const noexcept {
  // RFC 9000 §10.2: the closing and draining states last three PTOs.
  return ts + 3 * ngtcp2_conn_get_pto(conn_.get());
}

void conn_impl::send_close(const ngtcp2_connection_close_error& ccerr, ngtcp2_tstamp ts) {
  close_packet_.resize(std::max<std::size_t>(payload_, NGTCP2_MAX_UDP_PAYLOAD_SIZE));
  ngtcp2_path_storage ps;
  ngtcp2_path_storage_zero(&ps);
  ngtcp2_pkt_info pi{};
  const auto n = ngtcp2_conn_write_connection_close(conn_.get(), &ps.path, &pi, close_packet_.data(),
                                                    close_packet_.size(), &ccerr, ts);
  if (n <= 0) {
    close_packet_.clear();
    state_ = state::dead;
    return;
  }
  close_packet_.resize(static_cast<std::size_t>(n));
  ep_.io().send_one(close_packet_.data(), close_packet_.size(),
                    ep_.connected_socket() ? nullptr : ps.path.remote.addr, ps.path.remote.addrlen);
  state_ = state::closing;
  close_deadline_ = closing_period_end(ts);
}

void conn_impl::close_with_app_error(std::uint64_t code, const std::string& reason, ngtcp2_tstamp ts) {
  if (state_ != state::open) return;
  ngtcp2_connection_close_error ccerr;
  ngtcp2_connection_close_error_default(&ccerr);
  ngtcp2_connection_close_error_set_application_error(
      &ccerr, code, reinterpret_cast<const std::uint8_t*>(reason.data()), reason.size());
  send_close(ccerr, ts);
  report_closed(code, reason.empty() ? "closed by the application" : reason, false);
}

std::string conn_impl::describe_transport_error(std::uint64_t code) {
  if (code >= 0x100 && code <= 0x1ff) {
    const char* alert = gnutls_alert_get_name(static_cast<gnutls_alert_description_t>(code - 0x100));
    return std::string("TLS alert: ") + (alert ? alert : std::to_string(code - 0x100).c_str());
  }
  switch (code) {
    case 0x0: return "no error";
    case 0x1: return "internal error";
    case 0x2: return "connection refused";
    case 0x3: return "flow control error";
    case 0x4: return "stream limit error";
    case 0x5: return "stream state error";
    case 0x6: return "final size error";
    case 0x7: return "frame encoding error";
    case 0x8: return "transport parameter error";
    case 0x9: return "connection ID limit error";
    case 0xa: return "protocol violation";
    case 0xb: return "invalid token";
    case 0xc: return "application error";
    case 0xd: return "crypto buffer exceeded";
    case 0xe: return "key update error";
    case 0xf: return "AEAD limit reached";
    case 0x10: return "no viable path";
    default:
      return "transport error 0x" + [&] {
        std::array<char, 24> b{};
        std::snprintf(b.data(), b.size(), "%llx", static_cast<unsigned long long>(code));
        return std::string(b.data());
      }();
  }
}

void conn_impl::on_ngtcp2_error(int rv, ngtcp2_tstamp ts) {
  deferred_.clear();
  if (end_cause_ == 0) end_cause_ = rv;
  switch (rv) {
    case NGTCP2_ERR_DRAINING: {
      if (stateless_reset_) {
        // RFC 9000 §10.3: the peer has no state for this connection (it
        // restarted, or lost it): nothing more can be sent on it.
        state_ = state::draining;
        close_deadline_ = closing_period_end(ts);
        report_closed(0, "stateless reset: the server no longer knows this connection (e.g. it restarted)",
                      true);
        return;
      }
      // The peer closed (RFC 9000 §10.2.2): report its code and reason.
      ngtcp2_connection_close_error ccerr;
      ngtcp2_conn_get_connection_close_error(conn_.get(), &ccerr);
      std::string reason(reinterpret_cast<const char*>(ccerr.reason), ccerr.reason ? ccerr.reasonlen : 0);
      std::uint64_t code = 0;
      if (ccerr.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION) {
        code = ccerr.error_code;
        if (reason.empty()) reason = "closed by the peer";
      } else {
        const auto what = describe_transport_error(ccerr.error_code);
        reason = "closed by the peer (" + what + ")" + (reason.empty() ? "" : ": " + reason);
      }
      state_ = state::draining;
      close_deadline_ = closing_period_end(ts);
      report_closed(code, reason, true);
      return;
    }
    case NGTCP2_ERR_CLOSING: return;
    case NGTCP2_ERR_DROP_CONN:
    case NGTCP2_ERR_RETRY:
      state_ = state::dead;
      report_closed(0, "connection dropped", false);
      return;
    case NGTCP2_ERR_IDLE_CLOSE:
      // RFC 9000 §10.1: silently closed.
      state_ = state::dead;
      report_closed(0, "idle timeout", false);
      return;
    case NGTCP2_ERR_HANDSHAKE_TIMEOUT:
      state_ = state::dead;
      report_closed(0, "QUIC handshake timed out" + timeout_hint_, false);
      return;
    case NGTCP2_ERR_CRYPTO: {
      const std::uint8_t alert = ngtcp2_conn_get_tls_alert(conn_.get());
      std::string reason = server_ ? std::string() : certificate_failure(session_.get());
      if (reason.empty()) {
        const char* name = gnutls_alert_get_name(static_cast<gnutls_alert_description_t>(alert));
        reason =
            std::string("TLS handshake failed") + (alert != 0 && name ? std::string(" (") + name + ")" : "");
      }
      ngtcp2_connection_close_error ccerr;
      ngtcp2_connection_close_error_default(&ccerr);
      ngtcp2_connection_close_error_set_transport_error_tls_alert(&ccerr, alert, nullptr, 0);
      send_close(ccerr, ts);
      report_closed(0, reason, false);
      return;
    }
    case NGTCP2_ERR_CALLBACK_FAILURE:
      if (!handler_error_.empty()) {
        close_with_app_error(mt_internal_error, "internal error: " + handler_error_, ts);
        state_ = state_ == state::open ? state::dead : state_;
        return;
      }
      [[fallthrough]];
    default: {
      const std::string reason = std::string("QUIC error: ") + ngtcp2_strerror(rv);
      ngtcp2_connection_close_error ccerr;
      ngtcp2_connection_close_error_default(&ccerr);
      ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, rv, nullptr, 0);
      send_close(ccerr, ts);
      if (state_ == state::open) state_ = state::dead;
      report_closed(0, reason, false);
      return;
    }
  }
}

void conn_impl::note_remote_stream(std::int64_t id) {
  if (ngtcp2_conn_is_local_stream(conn_.get(), id) != 0) return;
  auto [it, inserted] = streams_.try_emplace(id);
  if (inserted && live()) {
    if (!call_handler([&] { handler_->on_stream_opened(*this, id); })) callback_failed_ = true;
  }
}

int conn_impl::cb_handshake_completed(ngtcp2_conn* /*conn*/, void* user_data) {
  auto& c = self(user_data);
  c.handshake_done_ = true;
  // At the server the handshake is confirmed when it completes (RFC 9001
  // §4.1.2); ngtcp2 signals confirmation to clients only.
  if (c.server_) c.handshake_confirmed_ = true;
  c.write_wanted_ = true;
  if (!c.live()) return 0;
  return c.call_handler([&] { c.handler_->on_handshake_completed(c); }) ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

int conn_impl::cb_handshake_confirmed(ngtcp2_conn* /*conn*/, void* user_data) {
  auto& c = self(user_data);
  c.handshake_confirmed_ = true;
  c.write_wanted_ = true;
  return 0;
}

int conn_impl::cb_stream_open(ngtcp2_conn* /*conn*/, std::int64_t stream_id, void* user_data) {
  auto& c = self(user_data);
  c.note_remote_stream(stream_id);
  return std::exchange(c.callback_failed_, false) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

int conn_impl::cb_recv_stream_data(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id,
                                   std::uint64_t /*offset*/, const std::uint8_t* data, std::size_t datalen,
                                   void* user_data, void* /*stream_user_data*/) {
  auto& c = self(user_data);
  c.note_remote_stream(stream_id);
  if (std::exchange(c.callback_failed_, false)) return NGTCP2_ERR_CALLBACK_FAILURE;
  auto& st = c.streams_[stream_id];
  const bool fin = (flags & NGTCP2_STREAM_DATA_FLAG_FIN) != 0;
  if (c.live() && !st.local_stop) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), datalen);
    if (!c.call_handler([&] { c.handler_->on_stream_data(c, stream_id, bytes, fin); })) {
      return NGTCP2_ERR_CALLBACK_FAILURE;
    }
  }
  // The application has consumed the bytes: return their credit (RFC 9000
  // §4.1), which keeps the windows of §10.8 sliding.
  if (datalen > 0 && !c.hold_credit_) {
    (void)ngtcp2_conn_extend_max_stream_offset(conn, stream_id, datalen);
    ngtcp2_conn_extend_max_offset(conn, datalen);
  }
  return 0;
}

int conn_impl::cb_stream_reset(ngtcp2_conn* /*conn*/, std::int64_t stream_id, std::uint64_t /*final_size*/,
                               std::uint64_t app_error_code, void* user_data, void* /*stream_user_data*/) {
  auto& c = self(user_data);
  c.note_remote_stream(stream_id);
  if (std::exchange(c.callback_failed_, false)) return NGTCP2_ERR_CALLBACK_FAILURE;
  c.streams_[stream_id].peer_reset = true;
  // Bytes up to the final size that were never delivered still count
  // against the connection window (RFC 9000 §4.5); ngtcp2 returns their
  // credit itself (as for data arriving after our STOP_SENDING), which
  // the CancellationsReturnConnectionCredit test checks.
  if (!c.live()) return 0;
  return c.call_handler([&] { c.handler_->on_stream_reset(c, stream_id, app_error_code); })
             ? 0
             : NGTCP2_ERR_CALLBACK_FAILURE;
}

int conn_impl::cb_stream_close(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id,
                               std::uint64_t app_error_code, void* user_data, void* /*stream_user_data*/) {
  auto& c = self(user_data);
  const bool has_code = (flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET) != 0;
  const std::uint64_t code = has_code ? app_error_code : 0;
  stream_info st;
  if (auto it = c.streams_.find(stream_id); it != c.streams_.end()) {
    st = it->second;
    c.streams_.erase(it);
  }
  // A peer may open another stream in its place (RFC 9000 §4.6).
  if (ngtcp2_conn_is_local_stream(conn, stream_id) == 0 && (stream_id & 0x2) == 0) {
    ngtcp2_conn_extend_max_streams_bidi(conn, 1);
  }
  if (!c.live()) return 0;
  // A code nobody on this side chose and no RESET_STREAM from the peer:
  // it came with the peer's STOP_SENDING.
  if (has_code && !st.local_stop && !st.local_reset && !st.peer_reset &&
      !c.call_handler([&] { c.handler_->on_stop_sending(c, stream_id, code); })) {
    return NGTCP2_ERR_CALLBACK_FAILURE;
  }
  return c.call_handler([&] { c.handler_->on_stream_closed(c, stream_id, code); })
             ? 0
             : NGTCP2_ERR_CALLBACK_FAILURE;
}

int conn_impl::cb_extend_max_stream_data(ngtcp2_conn* /*conn*/, std::int64_t stream_id,
                                         std::uint64_t /*max_data*/, void* user_data,
                                         void* /*stream_user_data*/) {
  auto& c = self(user_data);
  auto it = c.streams_.find(stream_id);
  if (it == c.streams_.end() || !it->second.blocked || it->second.write_refused) return 0;
  it->second.blocked = false;
  c.write_wanted_ = true;
  if (!c.live()) return 0;
  return c.call_handler([&] { c.handler_->on_stream_unblocked(c, stream_id); }) ? 0
                                                                                : NGTCP2_ERR_CALLBACK_FAILURE;
}

int conn_impl::cb_extend_max_local_streams_bidi(ngtcp2_conn* /*conn*/, std::uint64_t /*max_streams*/,
                                                void* user_data) {
  auto& c = self(user_data);
  c.write_wanted_ = true;
  if (!c.live()) return 0;
  return c.call_handler([&] { c.handler_->on_stream_credit(c); }) ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

void conn_impl::cb_rand(std::uint8_t* dest, std::size_t destlen, const ngtcp2_rand_ctx* /*ctx*/) {
  random_bytes(dest, destlen);
}

int conn_impl::cb_get_new_connection_id(ngtcp2_conn* /*conn*/, ngtcp2_cid* cid, std::uint8_t* token,
                                        std::size_t cidlen, void* user_data) {
  auto& c = self(user_data);
  cid->datalen = std::min<std::size_t>(cidlen, NGTCP2_MAX_CIDLEN);
  random_bytes(cid->data, cid->datalen);
  // Server: derived from the secret (RFC 9000 §10.3.2); client (which
  // never sends stateless resets): only unguessable.
  std::uint8_t derived[NGTCP2_STATELESS_RESET_TOKENLEN];
  if (reset_token_for(c.reset_secret_, *cid, derived)) {
    std::memcpy(token, derived, sizeof(derived));
  } else {
    random_bytes(token, NGTCP2_STATELESS_RESET_TOKENLEN);
  }
  try {
    c.ep_.add_cid(*cid, c);
    c.cids_.emplace_back(*cid);
  } catch (...) {
    return NGTCP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int conn_impl::cb_recv_stateless_reset(ngtcp2_conn* /*conn*/, const ngtcp2_pkt_stateless_reset* /*sr*/,
                                       void* user_data) {
  // ngtcp2 checked the token; read_pkt returns NGTCP2_ERR_DRAINING next.
  self(user_data).stateless_reset_ = true;
  return 0;
}

int conn_impl::cb_remove_connection_id(ngtcp2_conn* /*conn*/, const ngtcp2_cid* cid, void* user_data) {
  auto& c = self(user_data);
  c.ep_.remove_cid(*cid);
  const cid_key key(*cid);
  std::erase(c.cids_, key);
  return 0;
}

}  // namespace metatensor::streaming::quic::detail
