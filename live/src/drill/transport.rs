//! How `drill` reaches its target: HTTP/1.1 (`http://HOST:PORT/PATH`, a
//! POST of a small body on pooled keep-alive connections) or gRPC
//! (`grpc://HOST:PORT`, `herdsim.Herdsim/Call` over one HTTP/2 connection
//! without TLS), and what a reply means to the client model.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::CONTENT_TYPE;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use herdsim::model::server::Nanos;

use crate::grpc;
use crate::server::CLOCK_HEADER;

/// The body every call sends (the server echoes it).
const PAYLOAD: &[u8] = b"herdsim drill";

/// Where the calls go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `http://…/path` for HTTP/1.1, the method's URL for gRPC.
    pub url: String,
    pub grpc: bool,
    /// `HOST:PORT`.
    pub authority: String,
    /// As the user gave it.
    pub given: String,
}

impl Target {
    /// Reads `--target`: `http://HOST:PORT[/PATH]` (path `/call` if none)
    /// or `grpc://HOST:PORT`.
    pub fn parse(text: &str) -> Result<Target, String> {
        let refuse = || "expected http://HOST:PORT[/PATH] or grpc://HOST:PORT".to_string();
        let (grpc, rest) = if let Some(rest) = text.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = text.strip_prefix("grpc://") {
            (true, rest)
        } else {
            return Err(refuse());
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let port_ok = authority
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !port_ok || (grpc && !path.is_empty() && path != "/") {
            return Err(refuse());
        }
        let url = if grpc {
            format!("http://{authority}{}", grpc::METHOD)
        } else {
            let path = if path.is_empty() { "/call" } else { path };
            format!("http://{authority}{path}")
        };
        url.parse::<hyper::Uri>().map_err(|_| refuse())?;
        Ok(Target {
            url,
            grpc,
            authority: authority.to_string(),
            given: text.to_string(),
        })
    }

    /// Connects once before the drill starts, so that a target nobody
    /// listens at is one line, not a run of failures.
    pub fn check_reachable(&self) -> Result<(), String> {
        use std::net::{TcpStream, ToSocketAddrs};
        let fail = |why: String| format!("--target {}: cannot connect: {why}", self.given);
        let addrs: Vec<_> = self
            .authority
            .to_socket_addrs()
            .map_err(|e| fail(e.to_string()))?
            .collect();
        let mut last = String::from("no address");
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(3)) {
                Ok(_) => return Ok(()),
                Err(e) => last = e.to_string(),
            }
        }
        Err(fail(last))
    }
}

/// How an attempt ended, as the client model reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Success,
    /// A failure: any other HTTP status, any other gRPC status, or a
    /// connection that failed.
    Failure,
    /// Refused by the server: HTTP 429, gRPC RESOURCE_EXHAUSTED.
    Rejected,
}

/// A client of the target, its connections pooled.
#[derive(Clone)]
pub struct Transport {
    client: Client<HttpConnector, Full<Bytes>>,
    target: Target,
}

impl Transport {
    pub fn new(target: Target) -> Self {
        let mut connector = HttpConnector::new();
        // Small requests go out at once (no Nagle delay).
        connector.set_nodelay(true);
        let mut builder = Client::builder(TokioExecutor::new());
        builder.http2_only(target.grpc);
        Transport {
            client: builder.build(connector),
            target,
        }
    }

    /// One attempt, sent at drill time `sent`: sends the call and reads
    /// its answer to the end. The request carries `sent`
    /// ([`CLOCK_HEADER`]), so that a `serve` starts its clock on the
    /// drill's (other servers ignore it).
    pub async fn call(&self, sent: Nanos) -> Answer {
        let mut request =
            Request::post(&self.target.url).header(CLOCK_HEADER, sent.ticks().to_string());
        let body = if self.target.grpc {
            request = request
                .header(CONTENT_TYPE, "application/grpc")
                .header("te", "trailers");
            grpc::frame(PAYLOAD)
        } else {
            Bytes::from_static(PAYLOAD)
        };
        let Ok(request) = request.body(Full::new(body)) else {
            return Answer::Failure;
        };
        let Ok(response) = self.client.request(request).await else {
            return Answer::Failure;
        };
        let status = response.status();
        // A Trailers-Only reply (a failure) holds grpc-status in its headers.
        let header_code = response.headers().get("grpc-status").cloned();
        let collected = match response.into_body().collect().await {
            Ok(collected) => collected,
            Err(_) => return Answer::Failure,
        };
        if self.target.grpc {
            let code = collected
                .trailers()
                .and_then(|t| t.get("grpc-status"))
                .or(header_code.as_ref())
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u8>().ok());
            return match code {
                Some(0) => Answer::Success,
                Some(8) => Answer::Rejected,
                _ => Answer::Failure,
            };
        }
        match status.as_u16() {
            200..=299 => Answer::Success,
            429 => Answer::Rejected,
            _ => Answer::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_read_as_urls_and_bad_ones_name_the_flag() {
        let http = Target::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(http.url, "http://127.0.0.1:8080/call");
        assert!(!http.grpc);
        assert_eq!(
            Target::parse("http://localhost:80/api/x").unwrap().url,
            "http://localhost:80/api/x"
        );
        let grpc = Target::parse("grpc://127.0.0.1:9000").unwrap();
        assert_eq!(grpc.url, "http://127.0.0.1:9000/herdsim.Herdsim/Call");
        assert!(grpc.grpc);
        for bad in [
            "127.0.0.1:80",
            "http://127.0.0.1",
            "https://x:1",
            "grpc://h:1/path",
            "http://:80",
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert!(e.contains("http://HOST:PORT"), "{bad}: {e}");
        }
    }
}
