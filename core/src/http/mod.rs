//! The HTTP endpoint's pure parts: what `gateway.http_listen` and the token
//! keys accept, who may listen where, reading a request head, checking the
//! token, and the shape of a response. The main crate's `http` module is the
//! IO around them (sockets, timeouts, the ledger reads).
//!
//! - `listen.rs`: the listen address (canonical form, loopback or not) and
//!   the rule that a non-loopback address needs a token;
//! - `token.rs`: what a token and a token file path must be;
//! - `request.rs`: a request head from bytes (request line, headers), bounded;
//! - `auth.rs`: `Authorization: Bearer` or `Basic` against the token;
//! - `route.rs`: which resource a method and target ask for;
//! - `response.rs`: a response and its bytes on the wire.

pub mod auth;
pub mod listen;
pub mod request;
pub mod response;
pub mod route;
pub mod token;
