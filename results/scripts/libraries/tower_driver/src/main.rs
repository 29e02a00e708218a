//! tower's retry with its TpsBudget, configured as linkerd2-proxy
//! configures it from a ServiceProfile (the file `herdsim import` reads):
//! the profile's retryBudget becomes `TpsBudget::new(ttl,
//! minRetriesPerSecond, retryRatio)`, a 5xx on a retryable route is retried
//! at once while the budget allows (any other response deposits), and
//! the route's timeout bounds the call with all its retries. Poisson calls
//! at --rate for --duration to herdsim serve over HTTP/1.1, one x-call-id
//! per call; writes the client's record (call, start_ms, end_ms, outcome).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::retry::budget::{Budget, TpsBudget};
use tower::retry::{Policy, Retry};
use tower::timeout::Timeout;
use tower::{Service, ServiceExt};

/// A call's request: cloned for each attempt.
#[derive(Clone)]
struct Call {
    uri: String,
    id: String,
}

#[derive(Clone)]
struct ProfilePolicy {
    budget: Arc<TpsBudget>,
}

impl<E> Policy<Call, u16, E> for ProfilePolicy {
    type Future = std::future::Ready<()>;

    /// As linkerd2-proxy's `RetryPolicy::retry`: a failure withdraws and
    /// is retried at once if the withdrawal succeeds (if not, it neither
    /// retries nor deposits); any other response deposits.
    fn retry(&mut self, _: &mut Call, result: &mut Result<u16, E>) -> Option<Self::Future> {
        if matches!(result, Ok(status) if *status >= 500) {
            return self.budget.withdraw().then(|| std::future::ready(()));
        }
        self.budget.deposit();
        None
    }

    fn clone_request(&mut self, call: &Call) -> Option<Call> {
        Some(call.clone())
    }
}

/// The profile's retryBudget and its retryable route's timeout, read line
/// by line (the profile is the runner's own, one route).
fn profile(path: &str) -> (Duration, u32, f32, Duration) {
    let text = std::fs::read_to_string(path).expect("the ServiceProfile");
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("{path}: no {key}"))
    };
    let seconds = |v: String| Duration::from_secs_f64(v.trim_end_matches('s').parse().unwrap());
    (
        seconds(value("ttl:")),
        value("minRetriesPerSecond:").parse().unwrap(),
        value("retryRatio:").parse().unwrap(),
        seconds(value("timeout:")),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .unwrap_or_else(|| panic!("{name} is required"))
            .clone()
    };
    let (port, rate, duration): (u16, f64, f64) = (
        arg("--port").parse().unwrap(),
        arg("--rate").parse().unwrap(),
        arg("--duration").parse().unwrap(),
    );
    let seed: u64 = arg("--seed").parse().unwrap();
    let (ttl, min_per_sec, ratio, timeout) = profile(&arg("--config"));
    let out = arg("--out");

    // Poisson arrivals from a splitmix64 stream.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut times = Vec::new();
    let mut t = 0.0;
    while times.len() < 100_000 {
        t += -(1.0 - uniform()).ln() / rate;
        if t >= duration {
            break;
        }
        times.push(t);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rows = Arc::new(Mutex::new(Vec::new()));
    runtime.block_on(async {
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
        let attempt = tower::service_fn(move |call: Call| {
            let client = client.clone();
            async move {
                let request = hyper::Request::post(call.uri.as_str())
                    .header("x-call-id", call.id.as_str())
                    .body(Full::new(Bytes::from_static(b"herdsim")))
                    .unwrap();
                let response = client.request(request).await?;
                let status = response.status().as_u16();
                let _ = response.into_body().collect().await;
                Ok::<u16, hyper_util::client::legacy::Error>(status)
            }
        });
        let policy = ProfilePolicy {
            budget: Arc::new(TpsBudget::new(ttl, min_per_sec, ratio)),
        };
        let service = Timeout::new(Retry::new(policy, attempt), timeout);
        let start = Instant::now();
        let mut tasks = Vec::new();
        for (n, at) in times.iter().enumerate() {
            tokio::time::sleep_until((start + Duration::from_secs_f64(*at)).into()).await;
            let mut service = service.clone();
            let rows = Arc::clone(&rows);
            let call = Call {
                uri: format!("http://127.0.0.1:{port}/call"),
                id: format!("tower-{seed}-{n}"),
            };
            tasks.push(tokio::spawn(async move {
                let sent = start.elapsed().as_secs_f64();
                let id = call.id.clone();
                let outcome = match service.ready().await {
                    Ok(s) => match s.call(call).await {
                        Ok(status) if status < 300 => "success".to_string(),
                        Ok(status) => status.to_string(),
                        Err(e) if e.is::<tower::timeout::error::Elapsed>() => "timeout".into(),
                        Err(_) => "error".into(),
                    },
                    Err(_) => "error".into(),
                };
                let end = start.elapsed().as_secs_f64();
                rows.lock().unwrap().push((id, sent, end, outcome));
            }));
        }
        for task in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(30), task).await;
        }
    });
    let mut rows = rows.lock().unwrap().clone();
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut text = String::from("call,start_ms,end_ms,outcome\n");
    for (id, sent, end, outcome) in &rows {
        text.push_str(&format!("{id},{:.3},{:.3},{outcome}\n", sent * 1e3, end * 1e3));
    }
    std::fs::write(&out, text).expect("the client record");
    println!("tower 0.5.3 (TpsBudget): {} calls, {} ended", times.len(), rows.len());
}
