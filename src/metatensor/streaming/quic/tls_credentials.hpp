// GnuTLS credentials and sessions for the QUIC engine (spec 06 §10.2): TLS 1.3
// only, ALPN "metatensor/1", peer verification on the client.  Private to
// the streaming library.
#pragma once

#include <gnutls/gnutls.h>

#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>

namespace metatensor::streaming::quic::detail {

struct credentials_deleter {
  void operator()(gnutls_certificate_credentials_t c) const noexcept {
    gnutls_certificate_free_credentials(c);
  }
};
using credentials_ptr =
    std::unique_ptr<std::remove_pointer_t<gnutls_certificate_credentials_t>, credentials_deleter>;

struct session_deleter {
  void operator()(gnutls_session_t s) const noexcept { gnutls_deinit(s); }
};
using session_ptr = std::unique_ptr<std::remove_pointer_t<gnutls_session_t>, session_deleter>;

/// The server's certificate chain and key (PEM).  Throws `tensogram::io_error`
/// naming the file and GnuTLS's reason.
credentials_ptr load_server_credentials(const std::filesystem::path& cert_pem,
                                        const std::filesystem::path& key_pem);

/// Trust anchors of a client: the system store (when available) plus
/// `ca_file` when not empty; none when `verify_peer` is false.  Throws
/// `tensogram::io_error` when `ca_file` cannot be read or holds no
/// certificate.
credentials_ptr load_client_credentials(bool verify_peer, const std::filesystem::path& ca_file);

/// A server session configured for QUIC (ngtcp2's GnuTLS glue is installed
/// by the caller, which owns the `ngtcp2_crypto_conn_ref`).  Returns null on
/// failure (the caller refuses the connection).
session_ptr make_server_session(gnutls_certificate_credentials_t credentials);

/// A client session: SNI `server_name` (omitted for IP literals, RFC 6066
/// §3), verification against `server_name` when `verify_peer`.  Throws
/// `tensogram::io_error`.
session_ptr make_client_session(gnutls_certificate_credentials_t credentials, const std::string& server_name,
                                bool verify_peer);

/// Why the handshake of a client session failed, in words: the certificate
/// verification status when verification ran and refused the peer, else an
/// empty string.
std::string certificate_failure(gnutls_session_t session);

}  // namespace metatensor::streaming::quic::detail
